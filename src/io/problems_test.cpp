#include "io/problems.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "io/matrix_info.hpp"
#include "mpmg/errors.hpp"
#include "structured/coarsen.hpp"

namespace mpmg {
namespace {

constexpr double kFp16Max = 65504.0;

enum class Range { inside, near, far };  // against FP16, as DESIGN.md's problem table claims

struct Claim {
    const char* name;
    const char* stencil;
    int block;
    bool symmetric;
    bool seeded;  // does the seed change the matrix?
    Range range;
    SolverKind solver;
};

const Claim kClaims[] = {
    {"rhd", "3d7", 1, true, true, Range::far, SolverKind::cg},
    {"oil", "3d7", 1, false, true, Range::inside, SolverKind::gmres},
    {"weather", "3d19", 1, false, true, Range::near, SolverKind::gmres},
    {"rhd3t", "3d7", 3, true, true, Range::far, SolverKind::cg},
    {"oil4c", "3d7", 4, false, true, Range::near, SolverKind::gmres},
    {"solid3d", "3d27", 3, true, false, Range::far, SolverKind::cg},
    {"jump7", "3d7", 1, true, false, Range::inside, SolverKind::cg},
};

StructuredProblem build(const std::string& name, std::uint64_t seed, int nx = 10, int ny = 9,
                        int nz = 16) {
    ProblemOptions o;
    o.name = name;
    o.grid = {nx, ny, nz};
    o.seed = seed;
    return make_problem(o);
}

class ProblemSuite : public ::testing::TestWithParam<Claim> {};

TEST_P(ProblemSuite, MatchesItsClaims) {
    const Claim& c = GetParam();
    const StructuredProblem p = build(c.name, 1);
    EXPECT_EQ(p.name, c.name);
    EXPECT_EQ(p.a.stencil().name(), c.stencil);
    EXPECT_EQ(p.a.block(), c.block);
    EXPECT_EQ(p.a.box(), (Box{10, 9, 16}));
    EXPECT_EQ(p.solver, c.solver);

    const CsrMatrix a = to_csr(p.a);
    const MatrixInfo info = analyse_matrix(a);
    EXPECT_EQ(info.nonpositive_diag, 0);
    EXPECT_GT(info.min_diag, 0.0);
    if (c.symmetric) {  // bitwise: the generators assemble mirror entries identically
        const CsrMatrix t = a.transpose();
        EXPECT_EQ(t.col, a.col);
        EXPECT_EQ(t.val, a.val);
    } else {
        EXPECT_TRUE(info.structurally_symmetric);
        EXPECT_FALSE(info.numerically_symmetric);
    }
    switch (c.range) {
        case Range::inside:
            EXPECT_EQ(info.verdict, Fp16Verdict::inside) << info.verdict_reason;
            break;
        case Range::near:  // a few entries out, within a factor 10 of the FP16 range
            EXPECT_EQ(info.verdict, Fp16Verdict::scalable) << info.verdict_reason;
            EXPECT_GT(info.above_fp16_max + info.below_fp16_min_normal, 0);
            EXPECT_LT(info.max_abs, 10.0 * kFp16Max);
            EXPECT_GT(info.min_abs_nonzero, 0x1.0p-14 / 10.0);
            break;
        case Range::far:  // orders of magnitude beyond FP16 max, yet scalable
            EXPECT_EQ(info.verdict, Fp16Verdict::scalable) << info.verdict_reason;
            EXPECT_GT(info.max_abs, 1e3 * kFp16Max);
            break;
    }

    // b = A x_exact, x_exact smooth and not constant (jump7: A * 1 by definition).
    ASSERT_EQ(p.x_exact.size(), static_cast<std::size_t>(p.a.rows()));
    ASSERT_EQ(p.b.size(), p.x_exact.size());
    std::vector<double> ax(p.b.size());
    a.multiply(p.x_exact.data(), ax.data());
    double num = 0.0, den = 0.0;
    for (std::size_t i = 0; i < ax.size(); ++i) {
        num = std::max(num, std::abs(ax[i] - p.b[i]));
        den = std::max(den, std::abs(ax[i]));
    }
    EXPECT_LE(num, 1e-12 * den);
    const auto [lo, hi] = std::minmax_element(p.x_exact.begin(), p.x_exact.end());
    if (std::string(c.name) == "jump7") {
        EXPECT_EQ(*lo, 1.0);
        EXPECT_EQ(*hi, 1.0);
    } else {
        EXPECT_LT(*lo, *hi);
    }
}

TEST_P(ProblemSuite, IsDeterministicInItsSeed) {
    const Claim& c = GetParam();
    const StructuredProblem p1 = build(c.name, 7, 6, 5, 4);
    const StructuredProblem p2 = build(c.name, 7, 6, 5, 4);
    EXPECT_EQ(p1.a.values(), p2.a.values());  // bitwise
    EXPECT_EQ(p1.b, p2.b);
    const StructuredProblem p3 = build(c.name, 8, 6, 5, 4);
    if (c.seeded) {
        EXPECT_NE(p1.a.values(), p3.a.values());
    } else {
        EXPECT_EQ(p1.a.values(), p3.a.values());
    }
}

INSTANTIATE_TEST_SUITE_P(Problems, ProblemSuite, ::testing::ValuesIn(kClaims),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

/// SplitMix64 as DESIGN.md writes it, independently of the generator's copy.
double jump7_kappa(int t) {
    std::uint64_t state = 20240611, z = 0;
    for (int i = 0; i <= t; ++i) {
        state += 0x9E3779B97F4A7C15ULL;
        z = state;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
    }
    const double u = static_cast<double>(z >> 11) * 0x1.0p-53;
    return std::pow(10.0, -4.0 + 8.0 * u);
}

TEST(Jump7, PinsTheDefinition) {
    const double k0 = jump7_kappa(0), k1 = jump7_kappa(1);
    EXPECT_NEAR(k0, 1.5634493056915054e-4, 1e-18);  // first draw: z = 0x0635ef3cd5c35877
    EXPECT_NEAR(k1, 5015.42026288946, 1e-9);
    const StructuredProblem p = build("jump7", 99, 16, 16, 16);  // seed is ignored
    const SgDiaMatrix<double>& a = p.a;
    const int centre = a.stencil().center();
    const int xp = a.stencil().find(Offset{1, 0, 0});
    // Cell 0 (corner, inside block 0): 3 inner faces and 3 boundary faces, each kappa_0.
    EXPECT_DOUBLE_EQ(a.value(centre, 0, 0, 0), 6.0 * k0);
    EXPECT_DOUBLE_EQ(a.value(xp, 0, 0, 0), -k0);
    // Cell (7,0,0): its +x face meets block 1 (harmonic mean), 2 boundary faces.
    const double h = 2.0 * k0 * k1 / (k0 + k1);
    EXPECT_DOUBLE_EQ(a.value(xp, 7, 0, 0), -h);
    EXPECT_DOUBLE_EQ(a.value(centre, 7, 0, 0), 5.0 * k0 + h);
    // Cell (8,0,0) sits in block 1 (t = 1).
    EXPECT_DOUBLE_EQ(a.value(centre, 8, 0, 0), 5.0 * k1 + h);
    // b = A * 1: row sums, i.e. the boundary faces' kappa only.
    EXPECT_DOUBLE_EQ(p.b[0], 3.0 * k0);
}

TEST(Problems, NamesAndErrors) {
    const std::vector<std::string> names = problem_names();
    for (const char* n : {"laplace27", "laplace27e8", "rhd", "oil", "weather", "rhd3t", "oil4c",
                          "solid3d", "jump7"}) {
        EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
    }
    ProblemOptions o;
    o.name = "nope";
    o.n = 4;
    try {
        make_problem(o);
        FAIL() << "expected InvalidInput";
    } catch (const InvalidInput& e) {
        EXPECT_NE(std::string(e.what()).find("solid3d"), std::string::npos) << e.what();
    }
    o.name = "rhd3t";
    o.grid = {4, 4, 4};
    o.components = 2;
    EXPECT_THROW(make_problem(o), InvalidInput);
    o.components = 3;
    EXPECT_EQ(make_problem(o).a.block(), 3);
    o.name = "solid3d";
    o.grid = {4, 1, 4};
    o.components = 0;
    EXPECT_THROW(make_problem(o), InvalidInput);
}

// make_problem_rows: a window's rows, b (where its rows are whole) and x_exact are the whole
// problem's, bit for bit (the distributed solve generates each process's rows this way), for
// every problem and windows inside the grid, on its faces and corners, one cell thick, and
// the whole grid.
TEST(ProblemRows, AreTheWholeProblemsRowsBitForBit) {
    const Box grid{11, 9, 10};
    const GridWindow windows[] = {{{3, 2, 4}, Box{5, 4, 3}},
                                  {{0, 0, 0}, Box{4, 9, 2}},
                                  {{6, 5, 7}, Box{5, 4, 3}},
                                  {{10, 0, 5}, Box{1, 1, 5}},
                                  {{0, 0, 0}, grid}};
    for (const std::string& name : problem_names()) {
        ProblemOptions opt;
        opt.name = name;
        opt.grid = {grid.nx, grid.ny, grid.nz};
        opt.seed = 5;
        const StructuredProblem whole = make_problem(opt);
        const SgDiaMatrix<double>& a = whole.a;
        const int r = a.block();
        for (const GridWindow& w : windows) {
            SCOPED_TRACE(name + " window at " + std::to_string(w.lo[0]) + "," +
                         std::to_string(w.lo[1]) + "," + std::to_string(w.lo[2]));
            const StructuredProblem part = make_problem_rows(opt, w);
            ASSERT_EQ(part.a.box(), w.box);
            ASSERT_EQ(part.a.stencil().offsets(), a.stencil().offsets());
            EXPECT_EQ(part.x_exact, whole.x_exact);
            EXPECT_EQ(part.solver, whole.solver);
            EXPECT_EQ(part.smoother, whole.smoother);
            EXPECT_EQ(part.interpolation, whole.interpolation);
            ASSERT_EQ(part.b.size(), static_cast<std::size_t>(w.box.cells() * r));
            std::int64_t bad = 0, bad_b = 0;
            for (int k = 0; k < w.box.nz; ++k) {
                for (int j = 0; j < w.box.ny; ++j) {
                    for (int i = 0; i < w.box.nx; ++i) {
                        const std::int64_t c = (std::int64_t{k} * w.box.ny + j) * w.box.nx + i;
                        const std::int64_t g =
                            (std::int64_t{k + w.lo[2]} * grid.ny + (j + w.lo[1])) * grid.nx + i +
                            w.lo[0];
                        // b: where the row is whole (one cell inside, or on the grid's boundary).
                        const auto inner = [](int at, int n, int first, int all) {
                            return (at > 0 || first == 0) && (at < n - 1 || first + n == all);
                        };
                        if (inner(i, w.box.nx, w.lo[0], grid.nx) &&
                            inner(j, w.box.ny, w.lo[1], grid.ny) &&
                            inner(k, w.box.nz, w.lo[2], grid.nz)) {
                            for (int x = 0; x < r; ++x) {
                                bad_b += part.b[static_cast<std::size_t>(c * r + x)] !=
                                         whole.b[static_cast<std::size_t>(g * r + x)];
                            }
                        }
                        for (int d = 0; d < a.stencil().size(); ++d) {
                            const Offset& o = a.stencil()[d];
                            const bool in = i + o.dx >= 0 && i + o.dx < w.box.nx && j + o.dy >= 0 &&
                                            j + o.dy < w.box.ny && k + o.dz >= 0 &&
                                            k + o.dz < w.box.nz;
                            for (int x = 0; x < r; ++x) {
                                for (int y = 0; y < r; ++y) {
                                    const double want = in ? a.value(d, g, x, y) : 0.0;
                                    bad += std::bit_cast<std::uint64_t>(part.a.value(d, c, x, y)) !=
                                           std::bit_cast<std::uint64_t>(want);
                                }
                            }
                        }
                    }
                }
            }
            EXPECT_EQ(bad, 0) << "entries of A";
            EXPECT_EQ(bad_b, 0) << "entries of b";
        }
    }
    ProblemOptions opt;
    opt.name = "rhd";
    opt.n = 8;
    EXPECT_THROW(make_problem_rows(opt, {{4, 0, 0}, Box{5, 8, 8}}), InvalidInput);
}

}  // namespace
}  // namespace mpmg
