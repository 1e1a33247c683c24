// The system solve() takes in place of the user's (api/solve.cpp prepare_input): -A x = -b when
// A's diagonal is negative on every row; A and b scaled by powers of two when their largest
// magnitudes lie outside [2^-64, 2^64].
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "api/problem_input.hpp"
#include "core/power_of_two.hpp"
#include "io/matrix_market.hpp"
#include "io/problems.hpp"
#include "mpmg/solver.hpp"
#include "mpmg_paths.hpp"
#include "structured/coarsen.hpp"
#include "temp_dir.hpp"

namespace mpmg {
namespace {

namespace fs = std::filesystem;

TEST(Negate, SgDiaValuesFlipExactlyAndZerosStayPositive) {
    StructuredProblem p = make_problem("laplace27", 6);
    EXPECT_FALSE(diagonal_negative(p.a));
    const SgDiaMatrix<double> before = p.a;
    const std::vector<double> b = p.b;
    negate(p.a, p.b);
    EXPECT_TRUE(diagonal_negative(p.a));
    int zeros = 0;
    for (std::size_t i = 0; i < before.values().size(); ++i) {
        const double v = p.a.values()[i];
        ASSERT_EQ(v, -before.values()[i]) << i;
        if (v == 0.0) {
            EXPECT_FALSE(std::signbit(v)) << i;  // entries to cells outside the grid
            ++zeros;
        }
    }
    EXPECT_GT(zeros, 0);
    for (std::size_t i = 0; i < b.size(); ++i) ASSERT_EQ(p.b[i], -b[i]);
    negate(p.a, p.b);
    EXPECT_TRUE(p.a.values() == before.values());
}

TEST(Negate, BlockProblemsNeedEveryScalarDiagonalEntryNegative) {
    StructuredProblem p = make_problem("rhd3t", 4);  // 3 x 3 blocks
    ASSERT_EQ(p.a.block(), 3);
    negate(p.a, p.b);
    EXPECT_TRUE(diagonal_negative(p.a));
    const int c = p.a.stencil().center();
    double& v = p.a.value(c, p.a.box().cells() - 1, 2, 2);  // the last cell's third unknown
    v = -v;
    EXPECT_FALSE(diagonal_negative(p.a));
    v = 0.0;
    EXPECT_FALSE(diagonal_negative(p.a));
}

TEST(Negate, CsrRowsNumberedFromFirstRow) {
    // Rows 2 and 3 of a 4-column matrix (global columns), as a process of a distributed read
    // holds them.
    CsrMatrix a;
    a.rows = 2;
    a.cols = 4;
    a.row_ptr = {0, 2, 4};
    a.col = {1, 2, 2, 3};
    a.val = {1.0, -2.0, 5.0, -3.0};
    EXPECT_TRUE(diagonal_negative(a, 2));
    EXPECT_FALSE(diagonal_negative(a, 0));  // rows 0 and 1: a_00 missing
    a.val[1] = 0.0;
    EXPECT_FALSE(diagonal_negative(a, 2));
    a.val[1] = -2.0;
    a.col = {1, 3, 2, 3};  // row 2 without its diagonal entry
    EXPECT_FALSE(diagonal_negative(a, 2));
    CsrMatrix none;
    EXPECT_TRUE(diagonal_negative(none));  // no rows: nothing against it
}

fs::path temp_file(const std::string& name) {
    static const mpmg::test::TempDir dir("mpmg_negate_test_");
    return dir.path() / name;
}

SolveResult solve_file(const fs::path& path, bool on_grid, const char* precision) {
    SolverOptions o;
    o.problem.matrix = path.string();
    if (on_grid) o.problem.grid = {10, 10, 10};
    o.precision = parse_precision(precision);
    o.max_iter = 100;
    return solve(o);
}

// -A (Δ with the other sign) solves as A does on both paths: the same hierarchy, iterations,
// residuals and x to the bit, since 0 - (-a) = a and -A 1 = -(A 1) exactly. Without the negation
// CG stopped at iteration 1 ((r, z) < 0) and the guard's rebuilds could not help.
TEST(Negate, NegativeDefiniteFileSolvesAsItsNegative) {
    const CsrMatrix a = to_csr(make_problem("laplace27", 10).a);
    CsrMatrix neg = a;
    for (double& v : neg.val) v = -v;
    const fs::path pos_path = temp_file("a.mtx"), neg_path = temp_file("minus_a.mtx");
    write_matrix_market(pos_path.string(), a);
    write_matrix_market(neg_path.string(), neg);
    for (const bool on_grid : {false, true}) {  // AMG, structured
        for (const char* precision : {"K64P32D16", "K64P64D64"}) {
            SCOPED_TRACE(std::string(on_grid ? "structured " : "amg ") + precision);
            const SolveResult p = solve_file(pos_path, on_grid, precision);
            const SolveResult m = solve_file(neg_path, on_grid, precision);
            ASSERT_TRUE(p.converged) << p.message;
            ASSERT_TRUE(m.converged) << m.message;
            EXPECT_FALSE(p.negated);
            EXPECT_TRUE(m.negated);
            EXPECT_TRUE(m.guard_events.empty());
            EXPECT_EQ(m.residual_history, p.residual_history);
            EXPECT_EQ(m.x, p.x);
            EXPECT_LT(*m.error_vs_exact, 1e-8);
        }
    }
    // One diagonal entry left positive: not negative definite, so A is taken as given.
    for (std::int64_t q = neg.row_ptr[7]; q < neg.row_ptr[8]; ++q) {
        if (neg.col[static_cast<std::size_t>(q)] == 7) neg.val[static_cast<std::size_t>(q)] *= -1.0;
    }
    write_matrix_market(neg_path.string(), neg);
    const SolveResult mixed = solve_file(neg_path, false, "K64P64D64");
    EXPECT_FALSE(mixed.negated);
}

// saylr3 (Harwell-Boeing, reservoir): symmetric negative semidefinite. It failed for every
// configuration before (CG's (r, z) < 0 at iteration 1).
TEST(Negate, Saylr3Converges) {
    const fs::path path = fs::path(MPMG_SHARED_DATA) / "saylr3.mtx.gz";
    const SolveResult r = solve_file(path, false, "K64P32D16");
    EXPECT_TRUE(r.negated);
    EXPECT_TRUE(r.converged) << r.message;
    EXPECT_LE(r.final_relative_residual, 1e-10);
}

TEST(InputScale, ExponentsOnlyOutsideTheSafeRange) {
    EXPECT_EQ(normalising_exponent(0.0), 0);
    EXPECT_EQ(normalising_exponent(std::numeric_limits<double>::infinity()), 0);
    EXPECT_EQ(normalising_exponent(std::numeric_limits<double>::quiet_NaN()), 0);
    EXPECT_EQ(normalising_exponent(1.0), 0);
    EXPECT_EQ(normalising_exponent(2.6e9), 0);  // laplace27e8's range is left as it is
    EXPECT_EQ(normalising_exponent(std::ldexp(1.0, 64) * 0.999), 0);
    EXPECT_EQ(normalising_exponent(std::ldexp(1.0, 64)), -64);
    EXPECT_EQ(normalising_exponent(std::ldexp(1.0, -64)), 0);
    EXPECT_EQ(normalising_exponent(std::ldexp(1.0, -65)), 65);
    EXPECT_EQ(normalising_exponent(8e300), -999);  // 8e300 / 2^999 = 1.56
    const double tiny = std::numeric_limits<double>::denorm_min();
    EXPECT_EQ(normalising_exponent(tiny), 1074);
    EXPECT_EQ(std::ldexp(tiny, normalising_exponent(tiny)), 1.0);
    const double values[] = {3.0, -std::numeric_limits<double>::infinity(), -7.5,
                             std::numeric_limits<double>::quiet_NaN()};
    EXPECT_EQ(largest_abs(values), 7.5);
    EXPECT_EQ(inverse_power_of_two(12.0), 0.125);
    EXPECT_EQ(inverse_power_of_two(0.0), 1.0);
    EXPECT_EQ(inverse_power_of_two(tiny), std::ldexp(1.0, 1022));  // kept a normal number
}

SolveResult solve_with(const fs::path& a, const fs::path& b, bool on_grid, const char* precision) {
    SolverOptions o;
    o.problem.matrix = a.string();
    o.problem.rhs = b.string();
    if (on_grid) o.problem.grid = {10, 10, 10};
    o.precision = parse_precision(precision);
    o.max_iter = 100;
    return solve(o);
}

void write_vector(const fs::path& path, const std::vector<double>& v) {
    CsrMatrix m;
    m.rows = static_cast<std::int64_t>(v.size());
    m.cols = 1;
    m.row_ptr.assign(v.size() + 1, 0);
    for (std::size_t i = 0; i < v.size(); ++i) {
        m.row_ptr[i + 1] = static_cast<std::int64_t>(i + 1);
        m.col.push_back(0);
        m.val.push_back(v[i]);
    }
    write_matrix_market(path.string(), m);
}

// 2^ea A x = 2^eb b, with ea or eb beyond ±64, solves as A x = b to the bit: the solve scales
// both back to [1, 2) by powers of two (exact), then x = 2^(eb - ea) x. Before, 2^200 A failed
// in the setup (the diagonal scaling's products of entries overflowed FP64), 2^-600 A took
// b = 2^-600 A 1 for zero (||b||^2 underflowed) and returned x = 0 as converged.
TEST(InputScale, PowerOfTwoMultiplesSolveAsTheSystemItself) {
    const CsrMatrix a = to_csr(make_problem("laplace27", 10).a);
    std::vector<double> b(static_cast<std::size_t>(a.rows));
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = 1.0 + static_cast<double>(i % 7);
    const fs::path a_path = temp_file("a.mtx"), b_path = temp_file("b.mtx");
    const fs::path sa_path = temp_file("scaled_a.mtx"), sb_path = temp_file("scaled_b.mtx");
    write_matrix_market(a_path.string(), a);
    write_vector(b_path, b);
    for (const auto& [ea, eb] : {std::pair{200, 0}, {-600, -600}, {0, 300}, {-100, 80}}) {
        CsrMatrix sa = a;
        for (double& v : sa.val) v = std::ldexp(v, ea);
        std::vector<double> sb = b;
        for (double& v : sb) v = std::ldexp(v, eb);
        write_matrix_market(sa_path.string(), sa);
        write_vector(sb_path, sb);
        for (const bool on_grid : {false, true}) {
            for (const char* precision : {"K64P32D16", "K64P32D32", "K64P64D64"}) {
                SCOPED_TRACE(std::to_string(ea) + " " + std::to_string(eb) +
                             (on_grid ? " structured " : " amg ") + precision);
                const SolveResult p = solve_with(a_path, b_path, on_grid, precision);
                const SolveResult s = solve_with(sa_path, sb_path, on_grid, precision);
                ASSERT_TRUE(p.converged) << p.message;
                ASSERT_TRUE(s.converged) << s.message;
                EXPECT_EQ(p.a_exponent, 0);
                EXPECT_EQ(p.b_exponent, 0);
                // To [1, 2): A's largest |a| is 26 = 1.625 2^4, b's 7 = 1.75 2^2.
                EXPECT_EQ(s.a_exponent, ea == 0 ? 0 : -ea - 4);
                EXPECT_EQ(s.b_exponent, eb == 0 ? 0 : -eb - 2);
                EXPECT_EQ(s.residual_history, p.residual_history);
                ASSERT_EQ(s.x.size(), p.x.size());
                for (std::size_t i = 0; i < p.x.size(); ++i) {
                    ASSERT_EQ(s.x[i], std::ldexp(p.x[i], eb - ea)) << i;
                }
            }
        }
    }
}

// Not powers of two: 1e40 A and 1e-300 A (with b = A 1) converge with x = 1, on both paths and
// at every precision. 1e40 failed before ("level 1: entries overflow fp64 storage"), 1e-300
// returned x = 0 after 0 iterations, and both lost the exact solution (the test of 1 being in
// A's null space compared sums of squares that overflowed or underflowed).
TEST(InputScale, ExtremeMagnitudesConvergeToTheExactSolution) {
    const CsrMatrix a = to_csr(make_problem("laplace27", 10).a);
    const fs::path path = temp_file("extreme.mtx");
    for (const double scale : {1e40, 1e-300, 1e300, 1e-40}) {
        CsrMatrix sa = a;
        for (double& v : sa.val) v *= scale;
        write_matrix_market(path.string(), sa);
        for (const bool on_grid : {false, true}) {
            for (const char* precision : {"K64P32D16", "K64P32D32", "K64P64D64"}) {
                SCOPED_TRACE(std::to_string(scale) + (on_grid ? " structured " : " amg ") +
                             precision);
                const SolveResult r = solve_file(path, on_grid, precision);
                ASSERT_TRUE(r.converged) << r.message;
                EXPECT_GT(r.iterations, 0);
                ASSERT_TRUE(r.error_vs_exact.has_value());
                EXPECT_LT(*r.error_vs_exact, 1e-8);
                EXPECT_NE(r.a_exponent, 0);
                EXPECT_FALSE(r.a_flushed);  // laplace27's values span a factor 26 only
                EXPECT_FALSE(r.b_flushed);
            }
        }
    }
}

// Magnitudes spanning more than FP64 holds: diag(1e300, 1e-300, 1) with b = A 1. The scale
// 2^-996 that brings 1e300 to [1, 2) turns 1e-300 (in A and in b) into zero, so the second
// unknown is lost: the relative residual of what comes back is tiny (its row weighs 1e-300
// against 1e300), the error in x is not. The solve converges and says that the scale flushed
// values of A and b; diag(1e300, 3e299, 2e299), scaled by the same power, flushes nothing.
TEST(InputScale, ValuesTheScaleFlushesToZeroAreReported) {
    const fs::path path = temp_file("span.mtx");
    for (const bool flush : {true, false}) {
        SCOPED_TRACE(flush ? "1e-300" : "3e299");
        CsrMatrix a;
        a.rows = a.cols = 3;
        a.row_ptr = {0, 1, 2, 3};
        a.col = {0, 1, 2};
        a.val = flush ? std::vector<double>{1e300, 1e-300, 1.0}
                      : std::vector<double>{1e300, 3e299, 2e299};
        write_matrix_market(path.string(), a);
        const SolveResult r = solve_file(path, false, "K64P64D64");
        EXPECT_EQ(r.a_exponent, -996);
        EXPECT_EQ(r.a_flushed, flush);
        EXPECT_EQ(r.b_flushed, flush);
        ASSERT_TRUE(r.converged) << r.message;
        ASSERT_TRUE(r.error_vs_exact.has_value());
        if (flush) {
            EXPECT_GT(*r.error_vs_exact, 0.1);  // the lost unknown
        } else {
            EXPECT_LT(*r.error_vs_exact, 1e-12);
        }
    }
}

// An FP64 level 0 reads A itself and reports its subnormals. The input pass tells whether A
// holds any (zero or normal values only: no counting pass over A), so its answer must be the
// one after the input scale: 2^100 A with one symmetric pair at 2^-950 is scaled by 2^-104, and
// that pair becomes subnormal (2^-1054). A pass that looked at A before the scale would skip
// the count, and level 0 would report none.
TEST(InputScale, SubnormalsTheScaleMakesAreCountedOnAnFp64Level) {
    CsrMatrix a = to_csr(make_problem("laplace27", 10).a);
    for (double& v : a.val) v = std::ldexp(v, 100);
    const auto set = [&](std::int64_t i, std::int64_t j, double v) {
        for (std::int64_t q = a.row_ptr[i]; q < a.row_ptr[i + 1]; ++q) {
            if (a.col[static_cast<std::size_t>(q)] == j) a.val[static_cast<std::size_t>(q)] = v;
        }
    };
    const fs::path path = temp_file("subnormal.mtx");
    write_matrix_market(path.string(), a);
    const SolveResult normal = solve_file(path, true, "K64P64D64");
    ASSERT_TRUE(normal.converged) << normal.message;
    EXPECT_EQ(normal.a_exponent, -104);  // 26 2^100 = 1.625 2^104
    EXPECT_EQ(normal.levels.front().subnormal_count, 0);
    set(444, 445, -std::ldexp(1.0, -950));  // cells (4, 4, 4) and (5, 4, 4)
    set(445, 444, -std::ldexp(1.0, -950));
    write_matrix_market(path.string(), a);
    const SolveResult r = solve_file(path, true, "K64P64D64");
    ASSERT_TRUE(r.converged) << r.message;
    EXPECT_EQ(r.a_exponent, -104);
    ASSERT_EQ(r.levels.front().storage, Precision::fp64);
    EXPECT_EQ(r.levels.front().subnormal_count, 2);
}

// A symmetric indefinite A (laplace27 with 3 taken off its diagonal: one eigenvalue, about
// 2.1 - 3, below zero; the diagonal stays positive): CG breaks down ((r, z) <= 0) in every
// precision and with the robust smoother, and the guard then goes on with GMRES on the
// hierarchy as first built, which converges. Before, it stopped there with exit 3.
TEST(Guard, SymmetricIndefiniteSwitchesFromCgToGmres) {
    CsrMatrix a = to_csr(make_problem("laplace27", 10).a);
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t q = a.row_ptr[i]; q < a.row_ptr[i + 1]; ++q) {
            if (a.col[static_cast<std::size_t>(q)] == i) a.val[static_cast<std::size_t>(q)] -= 3.0;
        }
    }
    const fs::path path = temp_file("indefinite.mtx");
    write_matrix_market(path.string(), a);
    for (const bool on_grid : {false, true}) {
        SCOPED_TRACE(on_grid ? "structured" : "amg");
        const SolveResult r = solve_file(path, on_grid, "K64P32D16");
        ASSERT_TRUE(r.converged) << r.message;
        EXPECT_EQ(r.options.solver, SolverKind::cg);  // the choice for a symmetric A
        ASSERT_GE(r.guard_events.size(), 2u);
        const std::string& last = r.guard_events.back();
        EXPECT_NE(last.find("switched to GMRES"), std::string::npos) << last;
        EXPECT_EQ(last.rfind("cg: iteration", 0), 0u) << last;  // a CG breakdown
        // Its iteration is the run's own; the event says where that run began exactly when
        // the first run did iterations before breaking down (the structured path: it breaks
        // down in iteration 2; the AMG path in iteration 1).
        const bool earlier = r.guard_events.front().find("cg: iteration 1:") == std::string::npos;
        EXPECT_EQ(earlier, on_grid);
        EXPECT_EQ(last.find("(iterations counted from the rebuild after iteration 1)") !=
                      std::string::npos,
                  earlier)
            << last;
        // Before it: FP64, then the robust smoother, both still breaking down.
        ASSERT_GE(r.guard_events.size(), 3u);
        EXPECT_NE(r.guard_events[r.guard_events.size() - 3].find("K64P64D64"), std::string::npos);
        EXPECT_NE(r.guard_events[r.guard_events.size() - 2].find("jacobi"), std::string::npos);
        EXPECT_LT(*r.error_vs_exact, 1e-8);
        for (double v : r.x) ASSERT_TRUE(std::isfinite(v));
    }
}

/// A CSR matrix from dense rows (zeros not stored).
CsrMatrix from_rows(const std::vector<std::vector<double>>& rows) {
    CsrMatrix a;
    a.rows = a.cols = static_cast<std::int64_t>(rows.size());
    for (const auto& r : rows) {
        for (std::size_t j = 0; j < r.size(); ++j) {
            if (r[j] != 0.0) {
                a.col.push_back(static_cast<std::int64_t>(j));
                a.val.push_back(r[j]);
            }
        }
        a.row_ptr.push_back(static_cast<std::int64_t>(a.col.size()));
    }
    return a;
}

// The diagonal's signs, and what `auto` makes of them: a zero diagonal entry (a stored zero or
// none) and entries of both signs prove a symmetric A indefinite, so GMRES; a zero entry
// stops Gauss-Seidel, so l1-Jacobi. A negative diagonal on every row (negated before the
// solve) and a nonsymmetric A change nothing; a zero row counts in no sign; choices the user
// made stay.
TEST(AutoChoices, DiagonalSignsDecideSolverAndSmoother) {
    const CsrMatrix saddle = from_rows({{2, 0, 0, 1}, {0, 2, 0, 1}, {0, 0, 0, 0}, {1, 1, 0, 0}});
    DiagonalSigns s = diagonal_signs(saddle);
    EXPECT_EQ(s.positive, 2);
    EXPECT_EQ(s.negative, 0);
    EXPECT_EQ(s.zero, 1);  // row 3 (no diagonal stored); row 2 is zero
    EXPECT_EQ(s.first_zero, 3);
    SolverOptions o;
    std::string why = resolve_amg_auto(o, SolverKind::cg, s);
    EXPECT_EQ(o.solver, SolverKind::gmres);
    EXPECT_EQ(o.multigrid.smoother, SmootherKind::l1_jacobi);
    EXPECT_NE(why.find("zero on 1 row (first: row 3"), std::string::npos) << why;
    EXPECT_NE(why.find("solver gmres"), std::string::npos) << why;
    EXPECT_NE(why.find("smoother l1-jacobi"), std::string::npos) << why;
    // Rows numbered from 10 (a process's block): the diagonal in column 10 + i.
    const CsrMatrix block = [] {
        CsrMatrix b;
        b.rows = 2;
        b.cols = 20;
        b.row_ptr = {0, 2, 4};
        b.col = {10, 11, 0, 11};  // row 10: diagonal 3; row 11: diagonal -1
        b.val = {3, 1, 5, -1};
        return b;
    }();
    s = diagonal_signs(block, 10);
    EXPECT_EQ(s.positive, 1);
    EXPECT_EQ(s.negative, 1);
    EXPECT_EQ(s.zero, 0);
    o = SolverOptions{};
    why = resolve_amg_auto(o, SolverKind::cg, s);
    EXPECT_EQ(o.solver, SolverKind::gmres);
    EXPECT_EQ(o.multigrid.smoother, SmootherKind::symgs);
    EXPECT_NE(why.find("1 positive and 1 negative"), std::string::npos) << why;
    // One sign: as before, with no reason.
    for (const double sign : {1.0, -1.0}) {
        CsrMatrix a = from_rows({{2, -1, 0}, {-1, 2, -1}, {0, -1, 2}});
        for (double& v : a.val) v *= sign;
        o = SolverOptions{};
        EXPECT_EQ(resolve_amg_auto(o, SolverKind::cg, diagonal_signs(a)), "");
        EXPECT_EQ(o.solver, SolverKind::cg);
        EXPECT_EQ(o.multigrid.smoother, SmootherKind::symgs);
    }
    // A nonsymmetric A keeps GMRES; the smoother still changes.
    o = SolverOptions{};
    why = resolve_amg_auto(o, SolverKind::gmres, diagonal_signs(saddle));
    EXPECT_EQ(o.solver, SolverKind::gmres);
    EXPECT_EQ(o.multigrid.smoother, SmootherKind::l1_jacobi);
    EXPECT_EQ(why.find("solver gmres"), std::string::npos) << why;
    // Given choices stay.
    o = SolverOptions{};
    o.solver = SolverKind::cg;
    o.multigrid.smoother = SmootherKind::chebyshev;
    EXPECT_EQ(resolve_amg_auto(o, SolverKind::cg, diagonal_signs(saddle)), "");
    EXPECT_EQ(o.solver, SolverKind::cg);
    EXPECT_EQ(o.multigrid.smoother, SmootherKind::chebyshev);
}

// A saddle point ([A B^T; B 0]: A the 1D Laplacian on 1000 points, B pinning every other one of
// the first 1000) solves with the defaults, without any guard rebuild; before, the setup stopped
// with "diagonal 0" (SymGS) and exit 3. The same choices through Solver::setup, whose result says
// why. (A monolithic AMG is a weak preconditioner for harder saddle points: a 2D Stokes-like
// system of 864 unknowns takes about 650 GMRES iterations; README "Zero diagonal entries".)
TEST(AutoChoices, SaddlePointSolvesWithTheDefaults) {
    const int m = 1000, k = m / 2;
    std::vector<std::vector<double>> dense(static_cast<std::size_t>(m + k),
                                           std::vector<double>(static_cast<std::size_t>(m + k)));
    for (int i = 0; i < m; ++i) {
        dense[i][i] = 2.0;
        if (i > 0) dense[i][i - 1] = -1.0;
        if (i + 1 < m) dense[i][i + 1] = -1.0;
    }
    for (int c = 0; c < k; ++c) dense[m + c][2 * c] = dense[2 * c][m + c] = 1.0;
    const fs::path path = temp_file("saddle.mtx");
    write_matrix_market(path.string(), from_rows(dense));
    SolverOptions o;
    o.problem.matrix = path.string();
    const SolveResult r = solve(o);
    ASSERT_TRUE(r.converged) << r.message;
    EXPECT_TRUE(r.guard_events.empty()) << r.guard_events.front();
    EXPECT_EQ(r.options.solver, SolverKind::gmres);
    EXPECT_EQ(r.options.multigrid.smoother, SmootherKind::l1_jacobi);
    // Each constraint pins one unknown: one AMG on all of A, not the saddle-point blocks.
    EXPECT_EQ(r.options.multigrid.saddle_point, SaddlePointKind::none);
    EXPECT_LT(r.iterations, 100);
    EXPECT_NE(r.auto_reason.find("zero on 500 rows (first: row 1000"), std::string::npos)
        << r.auto_reason;
    EXPECT_LT(*r.error_vs_exact, 1e-6);
    Solver solver(SolverOptions{});
    const SetupResult set = solver.setup(read_matrix_market(path.string()));
    EXPECT_EQ(set.options.solver, SolverKind::gmres);
    EXPECT_EQ(set.options.multigrid.smoother, SmootherKind::l1_jacobi);
    EXPECT_EQ(set.auto_reason, r.auto_reason);
}

}  // namespace
}  // namespace mpmg
