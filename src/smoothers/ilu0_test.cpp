#include "smoothers/ilu0.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>

#include "io/problems.hpp"
#include "mpmg/errors.hpp"
#include "structured/coarsen.hpp"

namespace mpmg {
namespace {

std::map<std::pair<std::int64_t, std::int64_t>, double> entries(const CsrMatrix& m) {
    std::map<std::pair<std::int64_t, std::int64_t>, double> out;
    for (std::int64_t i = 0; i < m.rows; ++i) {
        for (std::int64_t p = m.row_ptr[i]; p < m.row_ptr[i + 1]; ++p)
            out[{i, m.col[p]}] = m.val[p];
    }
    return out;
}

// ILU(0) reproduces A exactly on A's pattern: (L U)_ij = a_ij wherever a_ij is stored.
void expect_lu_matches_on_pattern(const SgDiaMatrix<double>& a) {
    const Ilu0Factors f = ilu0_factor(a);
    // Each factor stores its own half of the stencil and the centre, nothing else.
    const int c = a.stencil().center();
    ASSERT_EQ(f.l.stencil().size(), c + 1);
    ASSERT_EQ(f.u.stencil().size(), a.stencil().size() - c);
    for (int d = 0; d <= c; ++d) EXPECT_EQ(f.l.stencil()[d], a.stencil()[d]);
    for (int d = c; d < a.stencil().size(); ++d) EXPECT_EQ(f.u.stencil()[d - c], a.stencil()[d]);
    const auto lu = entries(multiply(to_csr(f.l), to_csr(f.u)));
    const auto ae = entries(to_csr(a));
    double scale = 0.0;
    for (const auto& [ij, v] : ae) scale = std::max(scale, std::fabs(v));
    for (const auto& [ij, v] : ae) {
        const auto it = lu.find(ij);
        const double got = it == lu.end() ? 0.0 : it->second;
        EXPECT_NEAR(got, v, 1e-12 * scale) << ij.first << "," << ij.second;
    }
}

TEST(Ilu0, ExactOnTheStencilPattern) {
    expect_lu_matches_on_pattern(laplace27(Box{4, 3, 5}));
    SgDiaMatrix<double> b(Box{3, 2, 3}, Stencil::named("3d7"), 2);
    for (int d = 0; d < b.stencil().size(); ++d) {
        for (std::int64_t c = 0; c < b.box().cells(); ++c) {
            if (!b.neighbour_inside(c, d)) continue;
            for (int i = 0; i < 2; ++i) {
                for (int j = 0; j < 2; ++j) {
                    const bool centre = d == b.stencil().center();
                    b.value(d, c, i, j) = centre
                                              ? (i == j ? 10.0 + static_cast<double>(c % 3) : 0.7)
                                              : -1.0 - 0.1 * i + 0.05 * j;
                }
            }
        }
    }
    expect_lu_matches_on_pattern(b);
}

// Nonsymmetric and variable coefficients, stencils of 19 and 7 offsets with 4 x 4 blocks, boxes
// with interior cells and thin directions.
TEST(Ilu0, ExactOnThePatternOfSuiteProblems) {
    expect_lu_matches_on_pattern(make_weather(Box{7, 6, 5}, 3).a);
    expect_lu_matches_on_pattern(make_oil4c(Box{5, 4, 3}, 2).a);
    expect_lu_matches_on_pattern(make_oil(Box{6, 1, 5}, 4).a);
}

TEST(Ilu0, OneDimensionalIsTheExactLu) {
    SgDiaMatrix<double> a(Box{6, 1, 1}, Stencil::named("3d7"), 1);
    for (std::int64_t c = 0; c < 6; ++c) {
        for (int d = 0; d < a.stencil().size(); ++d) {
            const Offset& o = a.stencil()[d];
            if (!a.neighbour_inside(c, d) || o.dy != 0 || o.dz != 0) continue;
            a.value(d, c, 0, 0) = o.dx == 0 ? 2.0 : -1.0;
        }
    }
    const Ilu0Factors f = ilu0_factor(a);
    const auto lu = entries(multiply(to_csr(f.l), to_csr(f.u)));
    const auto ae = entries(to_csr(a));
    for (const auto& [ij, v] : lu) {
        const auto it = ae.find(ij);
        EXPECT_NEAR(v, it == ae.end() ? 0.0 : it->second, 1e-14);
    }
    // U's last pivot of the 1D Laplacian: (n+1)/n = 7/6.
    EXPECT_NEAR(f.u.value(f.u.stencil().center(), 5, 0, 0), 7.0 / 6.0, 1e-14);
}

void expect_same_bits(const SgDiaMatrix<double>& got, const SgDiaMatrix<double>& want) {
    ASSERT_EQ(got.stencil().offsets(), want.stencil().offsets());
    for (int d = 0; d < got.stencil().size(); ++d) {
        EXPECT_EQ(std::memcmp(got.diagonal(d), want.diagonal(d),
                              static_cast<std::size_t>(got.diag_values()) * sizeof(double)),
                  0)
            << "offset " << d;
    }
}

// A matrix of `stencil` on `box` with random values, diagonally dominant, nonsymmetric.
SgDiaMatrix<double> random_matrix(Box box, const Stencil& stencil, unsigned seed) {
    SgDiaMatrix<double> a(box, stencil, 1);
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> u(-1.0, 0.1);
    for (int d = 0; d < a.stencil().size(); ++d) {
        for (std::int64_t c = 0; c < box.cells(); ++c) {
            if (!a.neighbour_inside(c, d)) continue;
            a.value(d, c, 0, 0) = d == a.stencil().center() ? 30.0 + u(gen) : u(gen);
        }
    }
    return a;
}

// The named stencil `name` without the offsets for which drop(o) is true.
Stencil named_without(const std::string& name, bool (*drop)(const Offset&)) {
    const Stencil all = Stencil::named(name);
    std::vector<Offset> keep;
    for (const Offset& o : all.offsets()) {
        if (!drop(o)) keep.push_back(o);
    }
    return Stencil(keep);
}

// The cells away from the faces go through a loop unrolled at compile time over the smallest
// named stencil holding the matrix's (factor_interior_run); it must give the general loop's
// bits exactly: on every named stencil, on stencils that are none (the coarse levels of
// weather and oil, and others), and on boxes with and without such cells.
TEST(Ilu0, InteriorPathEqualsTheGeneralLoop) {
    std::vector<SgDiaMatrix<double>> cases;
    cases.push_back(make_weather(Box{9, 8, 7}, 3).a);  // 3d19
    cases.push_back(make_oil(Box{8, 7, 6}, 4).a);      // 3d7
    cases.push_back(laplace27(Box{6, 5, 7}));          // 3d27
    cases.push_back(random_matrix(Box{7, 6, 5}, Stencil::named("3d15"), 1));
    cases.push_back(random_matrix(Box{5, 9, 4}, Stencil::named("3d27"), 2));
    cases.push_back(random_matrix(Box{3, 3, 3}, Stencil::named("3d19"), 3));  // one inside
    cases.push_back(random_matrix(Box{2, 6, 6}, Stencil::named("3d7"), 4));   // none inside
    // weather's coarse levels: 3d19 without the corners of the xy planes
    cases.push_back(random_matrix(
        Box{6, 7, 5},
        named_without("3d19", [](const Offset& o) { return o.dz == 0 && o.dx != 0 && o.dy != 0; }),
        5));
    // inside 3d7, 3d15 and 3d27 without being them
    cases.push_back(random_matrix(
        Box{6, 5, 5}, named_without("3d7", [](const Offset& o) { return o.dy != 0; }), 6));
    cases.push_back(random_matrix(
        Box{5, 6, 5},
        named_without("3d15", [](const Offset& o) { return o.dx + o.dy + o.dz == 1; }), 7));
    cases.push_back(random_matrix(
        Box{5, 5, 6},
        named_without("3d27", [](const Offset& o) { return o.dx == 1 && o.dz == -1; }), 8));
    for (const SgDiaMatrix<double>& a : cases) {
        SCOPED_TRACE(a.stencil().name());
        const Ilu0Factors got = ilu0_factor(a);
        const Ilu0Factors want = detail::ilu0_factor_general(a);
        expect_same_bits(got.l, want.l);
        expect_same_bits(got.u, want.u);
    }
}

// A zero pivot met in the unrolled loop names its row as the general loop does.
TEST(Ilu0, ZeroPivotInsideTheBoxNamesItsRow) {
    SgDiaMatrix<double> a = random_matrix(Box{5, 5, 5}, Stencil::named("3d19"), 5);
    const std::int64_t c = 2 + 5 * (2 + 5 * 2);  // the box's middle cell
    a.value(a.stencil().center(), c, 0, 0) = 0.0;
    for (int d = 0; d < a.stencil().center(); ++d) a.value(d, c, 0, 0) = 0.0;
    for (const bool general : {false, true}) {
        try {
            general ? detail::ilu0_factor_general(a) : ilu0_factor(a);
            ADD_FAILURE() << "no error";
        } catch (const NumericalError& e) {
            EXPECT_NE(std::string(e.what()).find("row 62;"), std::string::npos) << e.what();
        }
    }
}

TEST(Ilu0, ZeroPivotIsANumericalError) {
    SgDiaMatrix<double> a = laplace27(Box{2, 2, 2});
    a.value(a.stencil().center(), 0, 0, 0) = 0.0;
    EXPECT_THROW(ilu0_factor(a), NumericalError);
}

}  // namespace
}  // namespace mpmg
