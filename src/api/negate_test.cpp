// A matrix whose diagonal is negative on every row is solved as -A x = -b (api/solve.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "api/problem_input.hpp"
#include "io/matrix_market.hpp"
#include "io/problems.hpp"
#include "mpmg/solver.hpp"
#include "mpmg_paths.hpp"
#include "structured/coarsen.hpp"

namespace mpmg {
namespace {

namespace fs = std::filesystem;

StructuredProblem problem(const char* name, int n) {
    ProblemOptions po;
    po.name = name;
    po.n = n;
    return make_problem(po);
}

TEST(Negate, SgDiaValuesFlipExactlyAndZerosStayPositive) {
    StructuredProblem p = problem("laplace27", 6);
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
    StructuredProblem p = problem("rhd3t", 4);  // 3 x 3 blocks
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
    const fs::path dir =
        fs::temp_directory_path() / ("mpmg_negate_test_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    return dir / name;
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
    const CsrMatrix a = to_csr(problem("laplace27", 10).a);
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

}  // namespace
}  // namespace mpmg
