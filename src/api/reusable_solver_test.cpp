// mpmg::Solver: a matrix in memory, set up once, solved for several right-hand sides; the same
// results as mpmg::solve on the same system, and clear errors for bad input.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "io/matrix_market.hpp"
#include "io/problems.hpp"
#include "mpmg/errors.hpp"
#include "mpmg/solver.hpp"
#include "mpmg_paths.hpp"
#include "structured/coarsen.hpp"
#include "unstructured/csr_test_util.hpp"

namespace mpmg {
namespace {

SolverOptions options(const char* precision) {
    SolverOptions o;
    o.precision = parse_precision(precision);
    o.rtol = 1e-10;
    o.max_iter = 200;
    return o;
}

/// mpmg::solve of the built-in problem itself (b = A 1), as the reference.
SolveResult reference(const char* name, int n, SolverOptions o, MethodKind method) {
    o.problem.name = name;
    o.problem.n = n;
    o.method = method;
    return solve(o);
}

double relative_difference(const std::vector<double>& x, const std::vector<double>& y) {
    double num = 0.0, den = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        num += (x[i] - y[i]) * (x[i] - y[i]);
        den += y[i] * y[i];
    }
    return std::sqrt(num / den);
}

std::vector<double> times(const CsrMatrix& a, const std::vector<double>& x) {
    std::vector<double> y(x.size());
    a.multiply(x.data(), y.data());
    return y;
}

double residual(const CsrMatrix& a, const std::vector<double>& x, const std::vector<double>& b) {
    const std::vector<double> ax = times(a, x);
    double r2 = 0.0, b2 = 0.0;
    for (std::size_t i = 0; i < b.size(); ++i) {
        r2 += (b[i] - ax[i]) * (b[i] - ax[i]);
        b2 += b[i] * b[i];
    }
    return std::sqrt(r2 / b2);
}

// Each built-in problem of the structured path, given as an SG-DIA matrix: the same hierarchy,
// iterations and x as mpmg::solve, for FP16 storage where the problem allows it.
class StructuredInput : public ::testing::TestWithParam<const char*> {};

TEST_P(StructuredInput, SolvesLikeMpmgSolve) {
    const char* name = GetParam();
    const int n = 16;
    StructuredProblem p = make_problem(name, n);
    SolverOptions o = options("K64P32D16");
    o.solver = p.solver;  // a built-in problem's own choices, which setup cannot know
    o.multigrid.smoother = p.smoother;
    o.multigrid.interpolation = p.interpolation;
    const SolveResult ref = reference(name, n, o, MethodKind::structured);
    ASSERT_TRUE(ref.converged) << ref.message;

    Solver s(o);
    const SetupResult setup = s.setup(std::move(p.a));
    ASSERT_TRUE(s.ready());
    EXPECT_GT(setup.setup_s, 0.0);
    ASSERT_EQ(setup.levels.size(), ref.levels.size());
    for (std::size_t l = 0; l < ref.levels.size(); ++l) {
        EXPECT_EQ(setup.levels[l].storage, ref.levels[l].storage) << "level " << l;
        EXPECT_EQ(setup.levels[l].rows, ref.levels[l].rows) << "level " << l;
    }
    std::vector<double> x(p.b.size(), 0.0);
    const SolveResult r = s.solve(p.b, x);
    ASSERT_TRUE(r.converged) << r.message;
    EXPECT_EQ(r.iterations, ref.iterations);
    EXPECT_EQ(r.setup_s, 0.0);
    EXPECT_TRUE(r.x.empty());
    EXPECT_LT(relative_difference(x, ref.x), 1e-12);
    EXPECT_LT(relative_difference(x, p.x_exact), 1e-7);
}

INSTANTIATE_TEST_SUITE_P(Problems, StructuredInput,
                         ::testing::Values("laplace27", "laplace27e8", "rhd", "oil", "weather",
                                           "rhd3t", "oil4c", "solid3d", "jump7"));

TEST(Solver, ReusesTheHierarchyForManyRightHandSides) {
    StructuredProblem p = make_problem("rhd", 24);
    const CsrMatrix csr = to_csr(p.a);
    Solver s(options("auto"));
    s.setup(std::move(p.a));
    // Three unrelated right-hand sides, each solved from zero on the one hierarchy.
    int first_iterations = 0;
    for (int k = 0; k < 3; ++k) {
        std::vector<double> xt(p.b.size());
        for (std::size_t i = 0; i < xt.size(); ++i) {
            xt[i] = std::sin(0.37 * static_cast<double>(i) * (k + 1)) + 0.5 * k;
        }
        const std::vector<double> b = times(csr, xt);
        std::vector<double> x(b.size(), 0.0);
        const SolveResult r = s.solve(b, x);
        ASSERT_TRUE(r.converged) << r.message;
        EXPECT_TRUE(r.guard_events.empty());
        EXPECT_EQ(r.setup_s, 0.0);
        EXPECT_LE(residual(csr, x, b), 1e-9);
        EXPECT_LT(relative_difference(x, xt), 1e-6);
        if (k == 0) first_iterations = r.iterations;
        EXPECT_LE(r.iterations, first_iterations + 3);
    }
}

// Values whose neighbour lies outside the grid are not A's: whatever is there is ignored.
TEST(Solver, IgnoresValuesOutsideTheGrid) {
    StructuredProblem p = make_problem("rhd", 10);
    SgDiaMatrix<double> messy = p.a;
    for (int d = 0; d < messy.stencil().size(); ++d) {
        for (std::int64_t c = 0; c < messy.box().cells(); ++c) {
            if (!messy.neighbour_inside(c, d)) messy.value(d, c, 0, 0) = c % 2 ? NAN : 1e300;
        }
    }
    Solver clean(options("auto")), dirty(options("auto"));
    clean.setup(std::move(p.a));
    EXPECT_EQ(dirty.setup(std::move(messy)).a_exponent, 0);
    std::vector<double> x(p.b.size(), 0.0), y(p.b.size(), 0.0);
    const SolveResult rc = clean.solve(p.b, x), rd = dirty.solve(p.b, y);
    ASSERT_TRUE(rd.converged) << rd.message;
    EXPECT_EQ(rd.iterations, rc.iterations);
    EXPECT_EQ(x, y);
}

TEST(Solver, StartsFromTheInitialGuess) {
    StructuredProblem p = make_problem("laplace27", 20);
    Solver s(options("K64P32D16"));
    s.setup(std::move(p.a));
    std::vector<double> x(p.b.size(), 0.0);
    const SolveResult cold = s.solve(p.b, x);
    ASSERT_TRUE(cold.converged);
    ASSERT_GT(cold.iterations, 2);
    // From the solution: converged before the first iteration, x unchanged.
    const std::vector<double> solved = x;
    const SolveResult again = s.solve(p.b, x);
    EXPECT_TRUE(again.converged);
    EXPECT_EQ(again.iterations, 0);
    EXPECT_EQ(x, solved);
    // From a nearby x (a time step's last solution): fewer iterations than from zero.
    std::vector<double> near = p.x_exact;
    for (std::size_t i = 0; i < near.size(); i += 7) near[i] += 1e-4;
    const SolveResult warm = s.solve(p.b, near);
    ASSERT_TRUE(warm.converged);
    EXPECT_LT(warm.iterations, cold.iterations);
    EXPECT_LT(relative_difference(near, p.x_exact), 1e-7);
}

TEST(Solver, CsrMatrixTakesTheAmgPathLikeMpmgSolve) {
    const int n = 14;
    StructuredProblem p = make_problem("laplace27", n);
    SolverOptions o = options("K64P32D16");
    const SolveResult ref = reference("laplace27", n, o, MethodKind::amg);
    ASSERT_TRUE(ref.converged) << ref.message;
    Solver s(o);
    const SetupResult setup = s.setup(to_csr(p.a));
    EXPECT_EQ(setup.options.method, MethodKind::amg);
    EXPECT_EQ(setup.options.solver, SolverKind::cg);  // A is symmetric
    std::vector<double> x(p.b.size(), 0.0);
    const SolveResult r = s.solve(p.b, x);
    ASSERT_TRUE(r.converged) << r.message;
    EXPECT_EQ(r.iterations, ref.iterations);
    EXPECT_LT(relative_difference(x, ref.x), 1e-12);
}

// Matrices of the public collections (../shared/data), read by the caller and given as CSR:
// the AMG path's choices (solver by symmetry, zeros dropped, the block size read from the
// pattern, the guard's smoothers) as `mpmg solve --matrix` makes them, so the same iterations.
class RealMatrix : public ::testing::TestWithParam<const char*> {};

TEST_P(RealMatrix, SolvesLikeTheFile) {
    const std::string path = std::string(MPMG_SHARED_DATA) + "/" + GetParam() + ".mtx.gz";
    SolverOptions o = options("auto");
    o.problem.matrix = path;
    const SolveResult ref = solve(o);
    o.problem.matrix.clear();
    const CsrMatrix a = read_matrix_market(path);
    const std::vector<double> b =
        times(a, std::vector<double>(static_cast<std::size_t>(a.rows), 1.0));
    Solver s(o);
    const SetupResult setup = s.setup(a);
    EXPECT_EQ(setup.options.solver, ref.options.solver);
    EXPECT_EQ(setup.block_size, ref.block_size);
    std::vector<double> x(b.size(), 0.0);
    const SolveResult r = s.solve(b, x);
    EXPECT_EQ(r.converged, ref.converged) << r.message;
    EXPECT_EQ(r.iterations, ref.iterations);
    EXPECT_EQ(r.guard_events.size(), ref.guard_events.size());
    EXPECT_LT(relative_difference(x, ref.x), 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Collections, RealMatrix,
                         ::testing::Values("1138_bus", "bcsstk15", "orsirr_1", "sherman5"));

// A saddle point [[L, B^T], [B, 0]] (a 30 x 30 Laplacian, a constraint per pair of cells)
// takes the block preconditioner in Solver as in mpmg::solve, again after update_values with
// other values of the same pattern.
TEST(Solver, SaddlePointTakesTheBlockPreconditioner) {
    const CsrMatrix l = csr_test::poisson(30, 2);
    const std::int64_t nu = l.rows, m = nu / 2;
    std::vector<std::vector<std::pair<std::int64_t, double>>> rows(
        static_cast<std::size_t>(nu + m));
    for (std::int64_t i = 0; i < nu; ++i) {
        for (std::int64_t q = l.row_ptr[static_cast<std::size_t>(i)];
             q < l.row_ptr[static_cast<std::size_t>(i) + 1]; ++q) {
            rows[static_cast<std::size_t>(i)].emplace_back(l.col[static_cast<std::size_t>(q)],
                                                           l.val[static_cast<std::size_t>(q)]);
        }
        rows[static_cast<std::size_t>(i)].emplace_back(nu + i / 2, i % 2 == 0 ? 1.0 : -0.5);
    }
    for (std::int64_t k = 0; k < m; ++k) {
        rows[static_cast<std::size_t>(nu + k)] = {{2 * k, 1.0}, {2 * k + 1, -0.5}};
    }
    CsrMatrix a = csr_test::from_rows(nu + m, rows);
    Solver s(options("auto"));
    for (const double scale : {1.0, 3.0}) {
        SCOPED_TRACE(scale);
        for (double& v : a.val) v *= scale;
        const SetupResult setup = scale == 1.0 ? s.setup(a) : s.update_values(a.val);
        EXPECT_EQ(setup.options.multigrid.saddle_point, SaddlePointKind::block);
        EXPECT_EQ(setup.options.solver, SolverKind::gmres);
        EXPECT_NE(setup.auto_reason.find("a saddle point"), std::string::npos) << setup.auto_reason;
        const std::vector<double> b =
            times(a, std::vector<double>(static_cast<std::size_t>(a.rows), 1.0));
        std::vector<double> x(b.size(), 0.0);
        const SolveResult r = s.solve(b, x);
        ASSERT_TRUE(r.converged) << r.message;
        EXPECT_LT(r.iterations, 60);
        EXPECT_TRUE(r.guard_events.empty());
        for (double v : x) ASSERT_NEAR(v, 1.0, 1e-6);
    }
}

TEST(Solver, RenumberedAmgHandsXBackInTheCallersOrder) {
    StructuredProblem p = make_problem("oil", 12);
    SolverOptions o = options("K64P32D16");
    o.multigrid.reorder = ReorderKind::rcm;
    const CsrMatrix csr = to_csr(p.a);
    Solver s(o);
    EXPECT_EQ(s.setup(csr).reordered, "rcm");
    std::vector<double> x(p.b.size(), 0.0);
    const SolveResult r = s.solve(p.b, x);
    ASSERT_TRUE(r.converged) << r.message;
    EXPECT_EQ(r.options.solver, SolverKind::gmres);  // oil is nonsymmetric
    EXPECT_LE(residual(csr, x, p.b), 1e-9);
}

TEST(Solver, CsrMatrixOnAGridTakesTheStructuredPath) {
    StructuredProblem p = make_problem("rhd3t", 10);
    SolverOptions o = options("K64P32D16");
    o.problem.grid = {10, 10, 10};
    o.problem.components = 3;
    Solver s(o);
    const CsrMatrix csr = to_csr(p.a);
    const SetupResult setup = s.setup(csr);
    EXPECT_EQ(setup.options.method, MethodKind::structured);
    EXPECT_EQ(setup.levels.front().block, 3);
    std::vector<double> x(p.b.size(), 0.0);
    const SolveResult r = s.solve(p.b, x);
    ASSERT_TRUE(r.converged) << r.message;
    EXPECT_LE(residual(csr, x, p.b), 1e-9);
}

TEST(Solver, NegativeAndHugeMatricesGiveTheSameX) {
    StructuredProblem p = make_problem("laplace27", 12);
    Solver plain(options("auto"));
    plain.setup(p.a);
    std::vector<double> x(p.b.size(), 0.0);
    ASSERT_TRUE(plain.solve(p.b, x).converged);

    // -A x = -b, and 2^100 A x = 2^-90 b (x scaled by 2^-190, exactly representable).
    SgDiaMatrix<double> neg = p.a, big = p.a;
    std::vector<double> neg_b = p.b, big_b = p.b;
    for (double& v : neg.values()) v = -v;
    for (double& v : neg_b) v = -v;
    for (double& v : big.values()) v = std::ldexp(v, 100);
    for (double& v : big_b) v = std::ldexp(v, -90);
    Solver negative(options("auto"));
    EXPECT_TRUE(negative.setup(std::move(neg)).negated);
    std::vector<double> xn(p.b.size(), 0.0);
    const SolveResult rn = negative.solve(neg_b, xn);
    ASSERT_TRUE(rn.converged) << rn.message;
    EXPECT_LT(relative_difference(xn, x), 1e-9);

    Solver huge(options("auto"));
    // The largest |a_ij|, 26 x 2^100, lies in [2^104, 2^105).
    EXPECT_EQ(huge.setup(std::move(big)).a_exponent, -104);
    std::vector<double> xh(p.b.size(), 0.0);
    const SolveResult rh = huge.solve(big_b, xh);
    ASSERT_TRUE(rh.converged) << rh.message;
    for (double& v : xh) v = std::ldexp(v, 190);
    EXPECT_LT(relative_difference(xh, x), 1e-9);
}

TEST(Solver, Fp32IterationsWork) {
    StructuredProblem p = make_problem("laplace27", 16);
    SolverOptions o = options("K32P32D16");
    o.rtol = 1e-6;
    Solver s(o);
    s.setup(std::move(p.a));
    std::vector<double> x(p.b.size(), 0.0);
    const SolveResult r = s.solve(p.b, x);
    ASSERT_TRUE(r.converged) << r.message;
    EXPECT_EQ(r.operator_storage, Precision::fp16);  // Laplace's stencil is exact in FP16
    EXPECT_LT(relative_difference(x, p.x_exact), 1e-4);
}

// The guard's rebuild in the first solve (FP16 without scaling overflows laplace27e8's levels)
// is kept: the next solve runs on the rebuilt hierarchy without an event.
TEST(Solver, KeepsTheGuardsRebuildForLaterSolves) {
    StructuredProblem p = make_problem("laplace27e8", 16);
    SolverOptions o = options("K64P32D16");
    o.multigrid.scaling = ScalingKind::none;
    o.multigrid.setup_fallback = false;
    Solver s(o);
    s.setup(std::move(p.a));
    std::vector<double> x(p.b.size(), 0.0);
    const SolveResult first = s.solve(p.b, x);
    ASSERT_TRUE(first.converged) << first.message;
    ASSERT_FALSE(first.guard_events.empty());
    EXPECT_GT(first.setup_s, 0.0);
    std::fill(x.begin(), x.end(), 0.0);
    const SolveResult second = s.solve(p.b, x);
    ASSERT_TRUE(second.converged) << second.message;
    EXPECT_TRUE(second.guard_events.empty());
    EXPECT_EQ(second.setup_s, 0.0);
    EXPECT_EQ(second.levels.front().storage, first.levels.front().storage);
    EXPECT_NE(second.levels.front().storage, Precision::fp16);
    EXPECT_LT(relative_difference(x, p.x_exact), 1e-7);
}

TEST(Solver, SetupAgainReplacesTheMatrix) {
    StructuredProblem a = make_problem("laplace27", 12);
    StructuredProblem b = make_problem("rhd", 14);
    Solver s(options("auto"));
    s.setup(std::move(a.a));
    std::vector<double> x(b.b.size(), 0.0);
    EXPECT_THROW(s.solve(b.b, x), InvalidInput);  // sized for the first matrix
    s.setup(std::move(b.a));
    const SolveResult r = s.solve(b.b, x);
    ASSERT_TRUE(r.converged) << r.message;
    EXPECT_LT(relative_difference(x, b.x_exact), 1e-7);
}

// SolverOptions::threads holds for the call only: the application's OpenMP thread count is
// what it was before (until the fortieth session, mpmg::solve left its own set).
TEST(Solver, LeavesTheCallersThreadCountAlone) {
    const int before = omp_get_max_threads();
    omp_set_num_threads(3);
    StructuredProblem p = make_problem("laplace27", 10);
    SolverOptions o = options("auto");
    o.threads = 1;
    Solver s(o);
    s.setup(p.a);
    EXPECT_EQ(omp_get_max_threads(), 3);
    std::vector<double> x(p.b.size(), 0.0);
    EXPECT_TRUE(s.solve(p.b, x).converged);
    EXPECT_EQ(omp_get_max_threads(), 3);
    o.problem.name = "laplace27";
    o.problem.n = 10;
    EXPECT_TRUE(solve(o).converged);
    EXPECT_EQ(omp_get_max_threads(), 3);
    omp_set_num_threads(before);
}

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const InvalidInput& e) {
        return e.what();
    }
    return "(no InvalidInput)";
}

// On one process, setup(rows, first_row) is setup(rows) for all of A from row 0 (the code a
// caller writes for mpirun runs unchanged without it), and an error for part of A.
TEST(Solver, RowsOnOneProcessAreTheWholeMatrix) {
    StructuredProblem p = make_problem("oil", 10);
    const CsrMatrix a = to_csr(p.a);
    const SolverOptions o = options("K64P32D16");
    Solver whole(o), rows(o);
    whole.setup(a);
    const SetupResult setup = rows.setup(a, 0);
    EXPECT_FALSE(setup.partition.has_value());
    EXPECT_EQ(rows.rows(), a.rows);
    std::vector<double> x1(p.b.size(), 0.0), x2(p.b.size(), 0.0);
    const SolveResult r1 = whole.solve(p.b, x1), r2 = rows.solve(p.b, x2);
    ASSERT_TRUE(r2.converged) << r2.message;
    EXPECT_EQ(r2.iterations, r1.iterations);
    EXPECT_EQ(x2, x1);
    // Part of A, or all of it from another row.
    CsrMatrix top = a;
    top.rows = 10;
    top.row_ptr.resize(11);
    top.col.resize(static_cast<std::size_t>(top.row_ptr.back()));
    top.val.resize(top.col.size());
    Solver part(o);
    EXPECT_NE(message_of([&] {
                  part.setup(top, 0);
              }).find("rows 0 .. 9 of a matrix with 1000 columns, on one process"),
              std::string::npos);
    EXPECT_NE(message_of([&] { part.setup(a, 5); }).find("rows 5 .. 1004"), std::string::npos);
    EXPECT_FALSE(part.ready());
}

TEST(Solver, BoxOnOneProcessIsTheWholeGrid) {
    const StructuredProblem p = make_problem("rhd", 10);
    const SolverOptions o = options("K64P32D16");
    Solver whole(o), box(o);
    whole.setup(p.a);
    const SetupResult setup = box.setup(p.a, {0, 0, 0}, p.a.box());
    EXPECT_FALSE(setup.partition.has_value());
    std::vector<double> x1(p.b.size(), 0.0), x2(p.b.size(), 0.0);
    const SolveResult r1 = whole.solve(p.b, x1), r2 = box.solve(p.b, x2);
    ASSERT_TRUE(r2.converged) << r2.message;
    EXPECT_EQ(r2.iterations, r1.iterations);
    EXPECT_EQ(x2, x1);
    // Part of the grid, or all of it from another cell.
    Solver part(o);
    EXPECT_NE(message_of([&] {
                  part.setup(p.a, {0, 0, 0}, Box{10, 10, 11});
              }).find("cells (0,0,0) .. (9,9,9) of a 10x10x11 grid, on one process"),
              std::string::npos);
    EXPECT_NE(message_of([&] {
                  part.setup(p.a, {1, 0, 0}, p.a.box());
              }).find("cells (1,0,0)"),
              std::string::npos);
    EXPECT_FALSE(part.ready());
}

// One process: every communicator is one process (Communicator::self(), or any handle without
// MPI running), and a Solver of it is the serial Solver.
TEST(Solver, CommunicatorOfOneProcessIsSerial) {
    const StructuredProblem p = make_problem("oil", 8);
    const CsrMatrix a = to_csr(p.a);
    const SolverOptions o = options("K64P32D16");
    Solver plain(o), self(o, Communicator::self()), handle(o, Communicator::from_fortran(7));
    std::vector<double> want(p.b.size(), 0.0);
    plain.setup(a);
    ASSERT_TRUE(plain.solve(p.b, want).converged);
    for (Solver* s : {&self, &handle}) {
        s->setup(a);
        std::vector<double> x(p.b.size(), 0.0);
        EXPECT_TRUE(s->solve(p.b, x).converged);
        EXPECT_EQ(x, want);
    }
}

TEST(Solver, BadInputIsNamed) {
    EXPECT_NE(message_of([] {
                  SolverOptions o;
                  o.problem.name = "laplace27";
                  Solver s(o);
              }).find("built-in problem 'laplace27'"),
              std::string::npos);
    EXPECT_NE(message_of([] {
                  SolverOptions o;
                  o.rtol = 2.0;
                  Solver s(o);
              }).find("--rtol"),
              std::string::npos);

    Solver s;
    std::vector<double> b(8, 1.0), x(8, 0.0);
    EXPECT_NE(message_of([&] { s.solve(b, x); }).find("call setup() first"), std::string::npos);

    CsrMatrix a;  // 2 x 2, columns out of order in row 1
    a.rows = a.cols = 2;
    a.row_ptr = {0, 1, 3};
    a.col = {0, 1, 0};
    a.val = {2.0, 2.0, -1.0};
    EXPECT_NE(message_of([&] { s.setup(a); }).find("row 1: columns 1 and 0"), std::string::npos);
    a.col = {0, 0, 1};
    a.val = {2.0, -1.0, NAN};
    EXPECT_NE(message_of([&] { s.setup(a); }).find("A(1, 1) = nan"), std::string::npos);
    a.cols = 3;
    EXPECT_NE(message_of([&] { s.setup(a); }).find("2 x 3"), std::string::npos);
    EXPECT_FALSE(s.ready());

    StructuredProblem p = make_problem("laplace27", 6);
    SgDiaMatrix<double> bad = p.a;
    bad.value(bad.stencil().center(), 5, 0, 0) = INFINITY;
    EXPECT_NE(message_of([&] { s.setup(bad); }).find("at cell 5 (offset 0,0,0)"),
              std::string::npos);

    s.setup(p.a);
    std::vector<double> short_b(p.b.size() - 1, 1.0), xs(p.b.size(), 0.0);
    EXPECT_NE(message_of([&] { s.solve(short_b, xs); }).find("b has 215 entries; A has 216 rows"),
              std::string::npos);
    std::vector<double> nan_b = p.b;
    nan_b[3] = NAN;
    EXPECT_NE(message_of([&] { s.solve(nan_b, xs); }).find("b[3] = nan"), std::string::npos);
    xs[9] = INFINITY;
    EXPECT_NE(message_of([&] { s.solve(p.b, xs); }).find("x[9] = inf"), std::string::npos);
    // A matrix that fails the checks leaves the one set up before.
    EXPECT_NE(message_of([&] { s.setup(a); }).find("2 x 3"), std::string::npos);
    ASSERT_TRUE(s.ready());
    std::fill(xs.begin(), xs.end(), 0.0);
    EXPECT_TRUE(s.solve(p.b, xs).converged);

    Solver moved = std::move(s);
    EXPECT_TRUE(moved.ready());
    EXPECT_FALSE(s.ready());  // NOLINT(bugprone-use-after-move): what a moved-from Solver says
    EXPECT_NE(message_of([&] { s.setup(p.a); }).find("moved from"), std::string::npos);

    SolverOptions structured;
    structured.method = MethodKind::structured;
    Solver t(structured);
    EXPECT_NE(message_of([&] { t.setup(to_csr(p.a)); }).find("options.problem.grid"),
              std::string::npos);
    SolverOptions wrong_grid;
    wrong_grid.problem.grid = {5, 6, 6};
    Solver u(wrong_grid);
    EXPECT_NE(message_of([&] { u.setup(to_csr(p.a)); }).find("Solver::setup"), std::string::npos);
}

}  // namespace
}  // namespace mpmg

namespace mpmg {
namespace {

/// Solver::apply's options: a hierarchy of one level, A factorised by LU in FP64, so that one
/// application is A^{-1} r to rounding.
SolverOptions one_lu_level() {
    SolverOptions o = options("K64P64D64");
    o.multigrid.max_levels = 1;
    o.multigrid.coarse_solver = CoarseSolverKind::direct;
    return o;
}

std::vector<double> applied(Solver& s, const std::vector<double>& r) {
    std::vector<double> z(r.size(), NAN);
    s.apply(r, z);
    return z;
}

// One application is M^{-1} r for the caller's A, r and z: in the caller's order (renumbered
// by RCM inside), for -A (negated inside) and for 2^100 A (scaled inside). With one LU level
// M = A, checked against A in FP64.
TEST(SolverApply, OneLuLevelIsTheInverseOfTheCallersA) {
    const CsrMatrix oil = to_csr(make_problem("oil", 8).a);  // nonsymmetric, 512 rows
    std::vector<double> r(static_cast<std::size_t>(oil.rows));
    for (std::size_t i = 0; i < r.size(); ++i) r[i] = std::sin(0.3 * static_cast<double>(i));
    CsrMatrix neg = oil, big = oil;
    for (double& v : neg.val) v = -v;
    for (double& v : big.val) v = std::ldexp(v, 100);
    struct Case {
        const char* name;
        const CsrMatrix& a;
        ReorderKind reorder;
    };
    for (const Case& c :
         {Case{"plain", oil, ReorderKind::none}, Case{"rcm", oil, ReorderKind::rcm},
          Case{"-A", neg, ReorderKind::none}, Case{"2^100 A", big, ReorderKind::rcm}}) {
        SCOPED_TRACE(c.name);
        SolverOptions o = one_lu_level();
        o.multigrid.reorder = c.reorder;
        Solver s(o);
        const SetupResult setup = s.setup(c.a);
        ASSERT_EQ(setup.levels.size(), 1u);
        EXPECT_EQ(setup.reordered, c.reorder == ReorderKind::rcm ? "rcm" : "");
        EXPECT_LE(residual(c.a, applied(s, r), r), 1e-12);
    }
}

// A power of two times r gives that power of two times z, bit for bit (the input scaling is
// undone exactly), and zero gives zero.
TEST(SolverApply, IsExactlyHomogeneous) {
    const StructuredProblem p = make_problem("laplace27", 10);
    Solver s(options("K64P32D16"));
    s.setup(p.a);
    const std::vector<double> z = applied(s, p.b);
    std::vector<double> scaled = p.b;
    for (double& v : scaled) v = std::ldexp(v, -300);
    const std::vector<double> zs = applied(s, scaled);
    for (std::size_t i = 0; i < z.size(); ++i) ASSERT_EQ(zs[i], std::ldexp(z[i], -300)) << i;
    for (double v : applied(s, std::vector<double>(p.b.size(), 0.0))) ASSERT_EQ(v, 0.0);
}

/// Preconditioned CG written out, M^{-1} = Solver::apply: the iterations to rtol.
int caller_pcg(const CsrMatrix& a, Solver& m, const std::vector<double>& b, double rtol,
               std::vector<double>& x) {
    const std::size_t n = b.size();
    const auto dot = [](const std::vector<double>& u, const std::vector<double>& v) {
        double s = 0.0;
        for (std::size_t i = 0; i < u.size(); ++i) s += u[i] * v[i];
        return s;
    };
    x.assign(n, 0.0);
    std::vector<double> r = b, z = applied(m, r), p = z, q(n);
    double rz = dot(r, z);
    const double bb = std::sqrt(dot(b, b));
    for (int it = 1; it <= 200; ++it) {
        a.multiply(p.data(), q.data());
        const double alpha = rz / dot(p, q);
        for (std::size_t i = 0; i < n; ++i) {
            x[i] += alpha * p[i];
            r[i] -= alpha * q[i];
        }
        if (std::sqrt(dot(r, r)) <= rtol * bb) return it;
        z = applied(m, r);
        const double rz_new = dot(r, z);
        for (std::size_t i = 0; i < n; ++i) p[i] = z[i] + rz_new / rz * p[i];
        rz = rz_new;
    }
    return -1;
}

// The caller's own CG preconditioned by apply takes the iterations of the Solver's CG on the
// same hierarchy (V-cycle, FP16 levels), on both paths.
TEST(SolverApply, PreconditionsTheCallersCgLikeSolve) {
    const StructuredProblem p = make_problem("laplace27", 16);
    const CsrMatrix csr = to_csr(p.a);
    for (const MethodKind method : {MethodKind::structured, MethodKind::amg}) {
        SCOPED_TRACE(to_string(method));
        SolverOptions o = options("K64P32D16");
        o.method = method;
        if (method == MethodKind::structured) o.problem.grid = {16, 16, 16};
        o.multigrid.cycle = CycleKind::v;
        o.rtol = 1e-8;
        Solver s(o);
        s.setup(csr);
        std::vector<double> x(p.b.size(), 0.0);
        const SolveResult own = s.solve(p.b, x);
        ASSERT_TRUE(own.converged) << own.message;
        EXPECT_EQ(own.options.method, method);
        const int its = caller_pcg(csr, s, p.b, 1e-8, x);
        ASSERT_GT(its, 0) << "the caller's CG did not converge";
        EXPECT_NEAR(its, own.iterations, 1) << "caller " << its << ", Solver " << own.iterations;
        EXPECT_LE(residual(csr, x, p.b), 1e-8);
    }
}

TEST(SolverApply, BadInputIsNamed) {
    Solver s;
    std::vector<double> r(216, 1.0), z(216);
    EXPECT_NE(message_of([&] { s.apply(r, z); }).find("Solver::apply: no matrix yet"),
              std::string::npos);
    s.setup(make_problem("laplace27", 6).a);
    std::vector<double> short_r(215, 1.0);
    EXPECT_NE(message_of([&] { s.apply(short_r, z); }).find("r has 215 entries; A has 216 rows"),
              std::string::npos);
    std::vector<double> short_z(215);
    EXPECT_NE(message_of([&] { s.apply(r, short_z); }).find("z has 215 entries"),
              std::string::npos);
    r[3] = NAN;
    EXPECT_NE(message_of([&] { s.apply(r, z); }).find("Solver::apply: r[3] = nan"),
              std::string::npos);
}

}  // namespace
}  // namespace mpmg

namespace mpmg {
namespace {

/// a with an explicitly stored zero added in row 1 (column a.cols - 1): a stored zero the AMG
/// path leaves out, so that update_values must map around it.
CsrMatrix with_a_stored_zero(const CsrMatrix& a) {
    CsrMatrix z;
    z.rows = a.rows;
    z.cols = a.cols;
    z.row_ptr.assign(1, 0);
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            z.col.push_back(a.col[p]);
            z.val.push_back(a.val[p]);
        }
        if (i == 1) {
            z.col.push_back(a.cols - 1);
            z.val.push_back(0.0);
        }
        z.row_ptr.push_back(z.nnz());
    }
    return z;
}

// The same values again give the setup's hierarchy and solve, bit for bit: the kept aggregates
// are PGM's, and the values land where they were (stored zero left out, renumbered by RCM).
TEST(SolverUpdate, TheSameValuesGiveTheSameSolve) {
    const StructuredProblem p = make_problem("rhd", 12);
    const CsrMatrix a = with_a_stored_zero(to_csr(p.a));
    for (const ReorderKind reorder : {ReorderKind::none, ReorderKind::rcm}) {
        SCOPED_TRACE(static_cast<int>(reorder));
        SolverOptions o = options("K64P32D16");
        o.multigrid.reorder = reorder;
        Solver s(o);
        const SetupResult first = s.setup(a);
        EXPECT_FALSE(first.reused_aggregates);
        std::vector<double> x1(p.b.size(), 0.0), x2(p.b.size(), 0.0);
        const SolveResult r1 = s.solve(p.b, x1);
        ASSERT_TRUE(r1.converged) << r1.message;
        const SetupResult again = s.update_values(a.val);
        EXPECT_TRUE(again.reused_aggregates);
        EXPECT_EQ(again.reordered, first.reordered);
        ASSERT_EQ(again.levels.size(), first.levels.size());
        for (std::size_t l = 0; l < first.levels.size(); ++l) {
            EXPECT_EQ(again.levels[l].rows, first.levels[l].rows) << l;
            EXPECT_EQ(again.levels[l].nnz, first.levels[l].nnz) << l;
        }
        const SolveResult r2 = s.solve(p.b, x2);
        EXPECT_EQ(r2.iterations, r1.iterations);
        EXPECT_EQ(x2, x1);
    }
}

// New values on the pattern: the solve is of the new matrix, whatever they change: a larger
// mass term (a time step), -A (negated inside), 2^100 A (scaled inside), and nonsymmetric
// values on rhd's symmetric pattern (oil's: GMRES is chosen again).
TEST(SolverUpdate, NewValuesSolveTheNewMatrix) {
    const StructuredProblem rhd = make_problem("rhd", 12);
    const StructuredProblem oil = make_problem("oil", 12);
    const CsrMatrix a = to_csr(rhd.a);
    const CsrMatrix nonsymmetric = to_csr(oil.a);
    ASSERT_EQ(nonsymmetric.col, a.col);
    CsrMatrix heavier = a, negative = a, huge = a;
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            if (a.col[p] == i) heavier.val[p] *= 3.0;
        }
    }
    for (double& v : negative.val) v = -v;
    for (double& v : huge.val) v = std::ldexp(v, 100);
    Solver s(options("auto"));
    const SetupResult first = s.setup(a);
    const auto level_rows = [](const SetupResult& r) {
        std::vector<std::int64_t> rows;
        for (const LevelInfo& l : r.levels) rows.push_back(l.rows);
        return rows;
    };
    std::vector<double> x0(rhd.b.size(), 0.0);
    const SolveResult r0 = s.solve(rhd.b, x0);
    ASSERT_TRUE(r0.converged) << r0.message;
    struct Case {
        const char* name;
        const CsrMatrix& m;
        SolverKind solver;
    };
    for (const Case& c :
         {Case{"3x diagonal", heavier, SolverKind::cg}, Case{"-A", negative, SolverKind::cg},
          Case{"2^100 A", huge, SolverKind::cg},
          Case{"oil's values", nonsymmetric, SolverKind::gmres},
          Case{"A again", a, SolverKind::cg}}) {
        SCOPED_TRACE(c.name);
        const SetupResult u = s.update_values(c.m.val);
        EXPECT_EQ(u.options.solver, c.solver);
        EXPECT_EQ(level_rows(u), level_rows(first));  // the setup's aggregates
        const std::vector<double> b = times(c.m, std::vector<double>(rhd.b.size(), 1.0));
        std::vector<double> x(b.size(), 0.0);
        const SolveResult r = s.solve(b, x);
        ASSERT_TRUE(r.converged) << r.message;
        EXPECT_LE(residual(c.m, x, b), 1e-9);
        // Against a setup of its own: the kept aggregates were made for A's strengths, and
        // the 3x diagonal weakens them (measured: 24 CG iterations against a fresh setup's 16).
        Solver fresh(options("auto"));
        const SetupResult fresh_setup = fresh.setup(c.m);
        std::vector<double> xf(b.size(), 0.0);
        const SolveResult rf = fresh.solve(b, xf);
        ASSERT_TRUE(rf.converged) << rf.message;
        if (c.m.val == heavier.val) {  // PGM weighs the couplings by the diagonal: new pairs
            EXPECT_NE(level_rows(fresh_setup), level_rows(first));
        }
        EXPECT_LE(r.iterations, 2 * rf.iterations)
            << "kept " << r.iterations << ", fresh " << rf.iterations;
    }
    // Back to A: the setup's solve again, bit for bit.
    std::vector<double> x(rhd.b.size(), 0.0);
    const SolveResult back = s.solve(rhd.b, x);
    EXPECT_EQ(back.iterations, r0.iterations);
    EXPECT_EQ(x, x0);
}

TEST(SolverUpdate, BadInputIsNamed) {
    const CsrMatrix a = with_a_stored_zero(to_csr(make_problem("rhd", 6).a));
    Solver s;
    EXPECT_NE(message_of([&] { s.update_values(a.val); }).find("call setup() first"),
              std::string::npos);
    s.setup(a);
    const std::vector<double> short_values(a.val.begin(), a.val.end() - 1);
    EXPECT_NE(message_of([&] { s.update_values(short_values); })
                  .find(fmt::format("{} values; the matrix of the last setup has {} entries",
                                    a.nnz() - 1, a.nnz())),
              std::string::npos);
    std::vector<double> values = a.val;
    values[4] = NAN;
    EXPECT_NE(message_of([&] { s.update_values(values); }).find("values[4] = nan"),
              std::string::npos);
    values = a.val;
    const std::int64_t zero = a.row_ptr[2] - 1;  // row 1's stored zero, last in the row
    ASSERT_EQ(values[static_cast<std::size_t>(zero)], 0.0);
    values[static_cast<std::size_t>(zero)] = 1.0;
    EXPECT_NE(message_of([&] {
                  s.update_values(values);
              }).find(fmt::format("values[{}] = 1 where the last setup had a stored zero", zero)),
              std::string::npos);
    // A failed update leaves the matrix before it.
    ASSERT_TRUE(s.ready());
    std::vector<double> b(static_cast<std::size_t>(a.rows), 1.0), x(b.size(), 0.0);
    EXPECT_TRUE(s.solve(b, x).converged);

    SolverOptions grid;
    grid.problem.grid = {6, 6, 6};
    Solver structured(grid);
    const CsrMatrix on_grid = to_csr(make_problem("rhd", 6).a);
    structured.setup(on_grid);
    EXPECT_NE(message_of([&] { structured.update_values(on_grid.val); }).find("structured path"),
              std::string::npos);
    SolverOptions amg;
    amg.method = MethodKind::amg;
    Solver from_grid(amg);
    from_grid.setup(make_problem("rhd", 6).a);
    EXPECT_NE(message_of([&] { from_grid.update_values(on_grid.val); }).find("SgDiaMatrix"),
              std::string::npos);
}

}  // namespace
}  // namespace mpmg
