// exactly_symmetric and spmv_mirrored: the check accepts exactly the matrices that equal their
// transpose bit for bit, and the mirrored product is bit for bit the full one without reading
// the lower offsets' values (they are overwritten with NaN before it runs).
#include <gtest/gtest.h>

#include <omp.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "api/thread_scope.hpp"
#include "io/problems.hpp"
#include "kernels/sgdia_test_util.hpp"
#include "structured/sgdia_ops.hpp"

namespace mpmg {
namespace {

using testing::random_matrix;
using testing::random_vector;

using Case = testing::GridCase;
using testing::describe;

// Serial and parallel grids (4096 cells is the serial cut-off), grouped (3d19, 3d27) and
// ungrouped (3d7) r = 1 products, lines shorter than a vector (nx = 3), and r = 2, 3, 4.
const Case kCases[] = {
    {"3d27", 1, {65, 8, 8}}, {"3d19", 1, {30, 7, 3}}, {"3d7", 1, {7, 5, 6}}, {"3d27", 1, {3, 4, 5}},
    {"3d7", 2, {65, 8, 8}},  {"3d27", 3, {9, 5, 4}},  {"3d7", 4, {6, 3, 3}},
};

std::int64_t shift_of(const Box& b, const Offset& o) {
    return o.dx + std::int64_t{b.nx} * (o.dy + std::int64_t{b.ny} * o.dz);
}

/// random_matrix made symmetric (testing::symmetrize). Entries whose neighbour is outside the
/// box stay NaN.
SgDiaMatrix<double> symmetric_matrix(const Case& cs, unsigned seed) {
    SgDiaMatrix<double> a =
        random_matrix<double>(cs.box, Stencil::named(cs.stencil), cs.block, seed);
    testing::symmetrize(a);
    return a;
}

/// ad rounded to S value by value (the strides differ: padded in bytes), with `centre_add` +
/// |a_cc| in place of each centre value a_cc when centre_add > 0.
template <class S>
SgDiaMatrix<S> narrowed(const SgDiaMatrix<double>& ad, double centre_add = 0.0) {
    SgDiaMatrix<S> a(ad.box(), ad.stencil(), ad.block());
    for (int d = 0; d < ad.stencil().size(); ++d) {
        const bool centre = centre_add > 0.0 && d == ad.stencil().center();
        for (std::int64_t k = 0; k < ad.diag_values(); ++k) {
            const double v = ad.diagonal(d)[k];
            a.diagonal(d)[k] = from_double<S>(centre ? centre_add + std::abs(v) : v);
        }
    }
    return a;
}

/// Overwrites every value of the offsets before the centre with NaN.
template <class S>
void poison_lower(SgDiaMatrix<S>& a) {
    const S nan = from_double<S>(std::numeric_limits<double>::quiet_NaN());
    for (int d = 0; d < a.stencil().center(); ++d) {
        for (std::int64_t c = 0; c < a.box().cells(); ++c) {
            for (int ra = 0; ra < a.block(); ++ra) {
                for (int rb = 0; rb < a.block(); ++rb) a.value(d, c, ra, rb) = nan;
            }
        }
    }
}

/// The first cell (in storage order) whose neighbour along offset d is inside, or -1.
std::int64_t some_cell(const SgDiaMatrix<double>& a, int d, bool last) {
    std::int64_t found = -1;
    for (std::int64_t c = 0; c < a.box().cells(); ++c) {
        if (!a.neighbour_inside(c, d)) continue;
        found = c;
        if (!last) break;
    }
    return found;
}

TEST(ExactlySymmetric, AcceptsSymmetricAndRejectsAnyOneChangedValue) {
    unsigned seed = 3;
    for (const Case& cs : kCases) {
        SCOPED_TRACE(describe(cs));
        const SgDiaMatrix<double> a = symmetric_matrix(cs, ++seed);
        EXPECT_TRUE(exactly_symmetric(a));
        // Entries whose neighbour lies outside the box are not part of the matrix.
        {
            SgDiaMatrix<double> b = a;
            const int d = b.stencil().size() - 1;
            for (std::int64_t c = 0; c < b.box().cells(); ++c) {
                if (!b.neighbour_inside(c, d)) b.value(d, c, 0, 0) = 5.0;
            }
            EXPECT_TRUE(exactly_symmetric(b));
        }
        const Stencil& st = a.stencil();
        const int r = a.block();
        for (int d = 0; d < st.size(); ++d) {
            if (d == st.center() && r == 1) continue;
            for (const bool last : {false, true}) {
                SgDiaMatrix<double> b = a;
                const std::int64_t c = some_cell(b, d, last);
                ASSERT_GE(c, 0);
                const int ra = r - 1, rb = d == st.center() ? 0 : r - 1;
                double& v = b.value(d, c, ra, rb);
                v = std::nextafter(v, 1e9);  // one ulp
                EXPECT_FALSE(exactly_symmetric(b)) << "offset " << d << " cell " << c;
                v = -0.0;  // the sign bit alone
                b.value(st.find(Offset{-st[d].dx, -st[d].dy, -st[d].dz}),
                        c + shift_of(b.box(), st[d]), rb, ra) = 0.0;
                EXPECT_FALSE(exactly_symmetric(b)) << "-0 against 0, offset " << d;
            }
        }
    }
    // A stencil without every mirror.
    const Stencil one_sided(std::vector<Offset>{{0, 0, 0}, {1, 0, 0}});
    SgDiaMatrix<double> c(Box{4, 3, 2}, one_sided, 1);
    for (std::int64_t i = 0; i < c.box().cells(); ++i) c.value(0, i, 0, 0) = 2.0;
    EXPECT_FALSE(exactly_symmetric(c));
}

// The suite's CG problems are built symmetric bit for bit (so their Krylov products read half
// the offsets); the GMRES ones are not symmetric at all.
TEST(ExactlySymmetric, SuiteProblems) {
    for (const char* name : {"laplace27", "laplace27e8", "rhd", "rhd3t", "solid3d", "jump7"}) {
        ProblemOptions o;
        o.name = name;
        o.n = 10;
        EXPECT_TRUE(exactly_symmetric(make_problem(o).a)) << name;
    }
    for (const char* name : {"oil", "weather", "oil4c"}) {
        ProblemOptions o;
        o.name = name;
        o.n = 10;
        EXPECT_FALSE(exactly_symmetric(make_problem(o).a)) << name;
    }
}

template <class P>
class SpmvMirrored : public ::testing::Test {};
using MirroredPairs = ::testing::Types<testing::Pair<double, double>, testing::Pair<float, double>,
                                       testing::Pair<half, double>, testing::Pair<float, float>,
                                       testing::Pair<half, float>>;
TYPED_TEST_SUITE(SpmvMirrored, MirroredPairs);

TYPED_TEST(SpmvMirrored, EqualsTheFullProductBitForBitWithoutReadingLowerOffsets) {
    using S = typename TypeParam::Storage;
    using C = typename TypeParam::Compute;
    unsigned seed = 11;
    for (const Case& cs : kCases) {
        SCOPED_TRACE(describe(cs));
        const SgDiaMatrix<double> ad = symmetric_matrix(cs, ++seed);
        ASSERT_TRUE(exactly_symmetric(ad));
        SgDiaMatrix<S> a = narrowed<S>(ad);
        const auto x = random_vector<C>(a.rows(), ++seed);
        const auto n = static_cast<std::size_t>(a.rows());
        std::vector<C> want(n), got(n);
        spmv(a, x.data(), want.data());
        for (std::size_t k = 0; k < n; ++k) {
            ASSERT_TRUE(std::isfinite(static_cast<double>(want[k]))) << k;
        }
        EXPECT_TRUE(exactly_symmetric(a));  // a narrowed copy keeps equal values equal
        poison_lower(a);
        EXPECT_FALSE(exactly_symmetric(a));
        for (int threads = 1; threads <= 2; ++threads) {
            {
                const ThreadScope scope(threads);
                std::fill(got.begin(), got.end(), C(0));
                spmv_mirrored(a, x.data(), got.data());
            }
            EXPECT_EQ(got, want) << threads << " thread(s)";
        }
    }
}

template <class P>
class MirroredView : public ::testing::Test {};
using MirroredViewPairs =
    ::testing::Types<testing::Pair<double, double>, testing::Pair<half, double>,
                     testing::Pair<float, float>, testing::Pair<half, float>,
                     testing::Pair<bfloat16, float>>;
TYPED_TEST_SUITE(MirroredView, MirroredViewPairs);

// A view with mirror_lower (an exactly symmetric level, multigrid/level.cpp) sweeps, forms
// residuals and Jacobi steps bit for bit as the full matrix does, without reading the offsets
// before the centre (NaN here): forward from zero, backward and forward from x, in the block
// order and the wavefront, on 1 and 2 threads; lines shorter than a vector (nx = 3).
TYPED_TEST(MirroredView, SweepsAndResidualsEqualTheFullOnesWithoutReadingLowerOffsets) {
    using S = typename TypeParam::Storage;
    using C = typename TypeParam::Compute;
    unsigned seed = 71;
    for (const Case& cs : kCases) {
        if (cs.block != 1) continue;  // block levels read every offset (mirror_lower: r = 1)
        SCOPED_TRACE(describe(cs));
        const SgDiaMatrix<double> ad = symmetric_matrix(cs, ++seed);
        // A dominant diagonal keeps the sweeps' values bounded.
        const SgDiaMatrix<S> a = narrowed<S>(ad, 30.0);
        ASSERT_TRUE(exactly_symmetric(a));
        const auto x0 = random_vector<C>(a.rows(), ++seed);
        const auto b = random_vector<C>(a.rows(), ++seed);
        const auto n = static_cast<std::size_t>(a.rows());
        const std::size_t plane = static_cast<std::size_t>(cs.box.nx) * cs.box.ny;
        // Every result in turn: three sweeps, residual, -U x, a plane's residual, Jacobi.
        const auto results = [&](const SgDiaView<S>& v, GsOrder order) {
            std::vector<std::vector<C>> out;
            std::vector<C> x(n, C(0));
            gs_sweep(v, b.data(), x.data(), true, true, {}, order);
            out.push_back(x);
            gs_sweep(v, b.data(), x.data(), false, false, {}, order);
            out.push_back(x);
            x = x0;
            gs_sweep(v, b.data(), x.data(), true, false, {}, order);
            out.push_back(x);
            std::vector<C> r(n), u(n), pr(plane), xj(n);
            residual(v, b.data(), x0.data(), r.data());
            upper_residual(v, x0.data(), u.data());
            plane_residual(v, b.data(), x0.data(), pr.data(), cs.box.nz / 2, false);
            jacobi(v, b.data(), x0.data(), xj.data(), C(0.7));
            out.push_back(r);
            out.push_back(u);
            out.push_back(pr);
            out.push_back(xj);
            return out;
        };
        for (const GsOrder order : {GsOrder::blocks, GsOrder::wavefront}) {
            for (int threads = 1; threads <= 2; ++threads) {
                SCOPED_TRACE(std::to_string(threads) + " thread(s), " +
                             (order == GsOrder::blocks ? "blocks" : "wavefront"));
                const ThreadScope scope(threads);
                SgDiaMatrix<S> poisoned = a;
                const auto want = results(SgDiaView<S>(a), order);
                poison_lower(poisoned);
                SgDiaView<S> mirrored(poisoned);
                mirrored.mirror_lower = true;
                const auto got = results(mirrored, order);
                for (std::size_t q = 0; q < want.size(); ++q) {
                    for (const C v : want[q]) ASSERT_TRUE(std::isfinite(static_cast<double>(v)));
                    EXPECT_EQ(got[q], want[q]) << "result " << q;
                }
            }
        }
    }
}

}  // namespace
}  // namespace mpmg
