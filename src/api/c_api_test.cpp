// The C interface: statuses and messages for every kind of mistake, the report JSON, and the
// same solve as mpmg::Solver.
#include "mpmg/mpmg.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/problems.hpp"
#include "mpmg/solver.hpp"
#include "structured/coarsen.hpp"

namespace mpmg {
namespace {

struct Handle {
    mpmg_solver* s = nullptr;
    ~Handle() { mpmg_solver_destroy(s); }
};

bool last_error_has(const std::string& part) {
    return std::string(mpmg_last_error()).find(part) != std::string::npos;
}

TEST(CInterface, CsrAndStencilSolveLikeTheSolver) {
    const StructuredProblem rhd = make_problem("rhd", 12);
    const CsrMatrix a = to_csr(rhd.a);
    const SolverOptions defaults;
    Solver reference(defaults);
    reference.setup(a);
    std::vector<double> xr(rhd.b.size(), 0.0);
    const SolveResult ref = reference.solve(rhd.b, xr);
    ASSERT_TRUE(ref.converged);

    Handle h;
    ASSERT_EQ(mpmg_solver_create(nullptr, &h.s), MPMG_OK);
    ASSERT_EQ(mpmg_solver_setup_csr(h.s, a.rows, a.row_ptr.data(), a.col.data(), a.val.data()),
              MPMG_OK);
    const nlohmann::json setup = nlohmann::json::parse(mpmg_solver_report(h.s));
    EXPECT_EQ(setup["rows"], a.rows);
    EXPECT_GE(setup["hierarchy"]["levels"].size(), 2u);
    std::vector<double> x(rhd.b.size(), 0.0);
    int iterations = -1;
    double rel = -1.0;
    ASSERT_EQ(mpmg_solver_solve(h.s, rhd.b.data(), x.data(), &iterations, &rel), MPMG_OK);
    EXPECT_EQ(iterations, ref.iterations);
    EXPECT_LE(rel, 1e-10);
    EXPECT_EQ(x, xr);
    // The same CSR with 32-bit indices.
    const std::vector<std::int32_t> row_ptr32(a.row_ptr.begin(), a.row_ptr.end());
    const std::vector<std::int32_t> col32(a.col.begin(), a.col.end());
    Handle h32;
    ASSERT_EQ(mpmg_solver_create(nullptr, &h32.s), MPMG_OK);
    ASSERT_EQ(mpmg_solver_setup_csr32(h32.s, static_cast<std::int32_t>(a.rows), row_ptr32.data(),
                                      col32.data(), a.val.data()),
              MPMG_OK);
    std::vector<double> x32(rhd.b.size(), 0.0);
    ASSERT_EQ(mpmg_solver_solve(h32.s, rhd.b.data(), x32.data(), nullptr, nullptr), MPMG_OK);
    EXPECT_EQ(x32, xr);
    const nlohmann::json solved = nlohmann::json::parse(mpmg_solver_report(h.s));
    EXPECT_EQ(solved["iterations"], ref.iterations);
    EXPECT_TRUE(solved["converged"]);

    // The same matrix as a stencil: offsets in another order than mpmg's, values per offset.
    const Stencil& st = rhd.a.stencil();
    std::vector<int> offsets;
    std::vector<double> values;
    for (int d = st.size() - 1; d >= 0; --d) {
        offsets.insert(offsets.end(), {st[d].dx, st[d].dy, st[d].dz});
        for (std::int64_t c = 0; c < rhd.a.box().cells(); ++c) {
            // Outside the grid: garbage, which must be ignored.
            values.push_back(rhd.a.neighbour_inside(c, d) ? rhd.a.value(d, c, 0, 0) : 1e300);
        }
    }
    Handle g;
    ASSERT_EQ(mpmg_solver_create("", &g.s), MPMG_OK);
    ASSERT_EQ(
        mpmg_solver_setup_stencil(g.s, 12, 12, 12, 1, st.size(), offsets.data(), values.data()),
        MPMG_OK)
        << mpmg_last_error();
    std::vector<double> xs(rhd.b.size(), 0.0);
    ASSERT_EQ(mpmg_solver_solve(g.s, rhd.b.data(), xs.data(), nullptr, nullptr), MPMG_OK);
    double num = 0.0, den = 0.0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
        num += (xs[i] - rhd.x_exact[i]) * (xs[i] - rhd.x_exact[i]);
        den += rhd.x_exact[i] * rhd.x_exact[i];
    }
    EXPECT_LT(std::sqrt(num / den), 1e-7);
}

// mpmg_solver_apply is Solver::apply: the same z for the same options and A, and statuses for
// the mistakes.
// Without mpirun, a process's rows are all of A from row 0 (the code written for mpirun runs
// unchanged), and part of A is an error.
TEST(CInterface, BoxOnOneProcessIsTheWholeGrid) {
    const StructuredProblem rhd = make_problem("rhd", 8);
    std::vector<int> offsets;
    std::vector<double> values;
    const std::int64_t per_offset = rhd.a.box().cells();
    for (int d = 0; d < rhd.a.stencil().size(); ++d) {
        const Offset o = rhd.a.stencil()[d];
        offsets.insert(offsets.end(), {o.dx, o.dy, o.dz});
        values.insert(values.end(), rhd.a.diagonal(d), rhd.a.diagonal(d) + per_offset);
    }
    const int n = rhd.a.box().nx, count = rhd.a.stencil().size();
    Handle reference, h;
    ASSERT_EQ(mpmg_solver_create(nullptr, &reference.s), MPMG_OK);
    ASSERT_EQ(
        mpmg_solver_setup_stencil(reference.s, n, n, n, 1, count, offsets.data(), values.data()),
        MPMG_OK);
    std::vector<double> xr(rhd.b.size(), 0.0), x(rhd.b.size(), 0.0);
    ASSERT_EQ(mpmg_solver_solve(reference.s, rhd.b.data(), xr.data(), nullptr, nullptr), MPMG_OK);
    // A communicator's handle without MPI running: one process.
    ASSERT_EQ(mpmg_solver_create_comm(nullptr, 3, &h.s), MPMG_OK) << mpmg_last_error();
    const int first[3] = {0, 0, 0}, grid[3] = {n, n, n}, larger[3] = {n, n, n + 1};
    ASSERT_EQ(mpmg_solver_setup_stencil_box(h.s, first, grid, n, n, n, 1, count, offsets.data(),
                                            values.data()),
              MPMG_OK)
        << mpmg_last_error();
    ASSERT_EQ(mpmg_solver_solve(h.s, rhd.b.data(), x.data(), nullptr, nullptr), MPMG_OK);
    EXPECT_EQ(x, xr);
    EXPECT_EQ(mpmg_solver_setup_stencil_box(h.s, first, larger, n, n, n, 1, count, offsets.data(),
                                            values.data()),
              MPMG_INVALID_INPUT);
    EXPECT_TRUE(
        last_error_has("mpmg_solver_setup_stencil_box: Solver::setup: cells (0,0,0) .. "
                       "(7,7,7) of a 8x8x9 grid, on one process"))
        << mpmg_last_error();
    EXPECT_EQ(mpmg_solver_setup_stencil_box(h.s, nullptr, grid, n, n, n, 1, count, offsets.data(),
                                            values.data()),
              MPMG_INVALID_INPUT);
    EXPECT_TRUE(last_error_has("first_cell is NULL")) << mpmg_last_error();
}

TEST(CInterface, RowsOnOneProcessAreTheWholeMatrix) {
    const StructuredProblem rhd = make_problem("rhd", 10);
    const CsrMatrix a = to_csr(rhd.a);
    Solver reference{SolverOptions{}};
    reference.setup(a);
    std::vector<double> xr(rhd.b.size(), 0.0);
    ASSERT_TRUE(reference.solve(rhd.b, xr).converged);
    Handle h;
    ASSERT_EQ(mpmg_solver_create(nullptr, &h.s), MPMG_OK);
    ASSERT_EQ(mpmg_solver_setup_rows(h.s, 0, a.rows, a.rows, a.row_ptr.data(), a.col.data(),
                                     a.val.data()),
              MPMG_OK)
        << mpmg_last_error();
    std::vector<double> x(rhd.b.size(), 0.0);
    ASSERT_EQ(mpmg_solver_solve(h.s, rhd.b.data(), x.data(), nullptr, nullptr), MPMG_OK);
    EXPECT_EQ(x, xr);
    EXPECT_EQ(
        mpmg_solver_setup_rows(h.s, 0, 5, a.rows, a.row_ptr.data(), a.col.data(), a.val.data()),
        MPMG_INVALID_INPUT);
    EXPECT_TRUE(
        last_error_has("mpmg_solver_setup_rows: Solver::setup: rows 0 .. 4 of a matrix "
                       "with 1000 columns, on one process"))
        << mpmg_last_error();
    EXPECT_EQ(mpmg_solver_setup_rows(h.s, 0, -1, a.rows, nullptr, nullptr, nullptr),
              MPMG_INVALID_INPUT);
    EXPECT_TRUE(last_error_has("rows = -1 of n = 1000")) << mpmg_last_error();
    EXPECT_EQ(mpmg_solver_setup_rows(h.s, 0, a.rows, a.rows, nullptr, nullptr, nullptr),
              MPMG_INVALID_INPUT);
    EXPECT_TRUE(last_error_has("row_ptr is NULL")) << mpmg_last_error();
}

TEST(CInterface, ApplyIsOneCycleAsTheSolversApply) {
    const StructuredProblem rhd = make_problem("rhd", 12);
    const CsrMatrix a = to_csr(rhd.a);
    Solver reference;
    reference.setup(a);
    std::vector<double> zr(rhd.b.size());
    reference.apply(rhd.b, zr);

    Handle h;
    const double one = 1.0;
    double z1 = 0.0;
    EXPECT_EQ(mpmg_solver_apply(nullptr, &one, &z1), MPMG_INVALID_INPUT);
    EXPECT_TRUE(last_error_has("solver is NULL")) << mpmg_last_error();
    ASSERT_EQ(mpmg_solver_create(nullptr, &h.s), MPMG_OK);
    EXPECT_EQ(mpmg_solver_apply(h.s, &one, &z1), MPMG_INVALID_INPUT);
    EXPECT_TRUE(last_error_has("mpmg_solver_apply: no matrix yet")) << mpmg_last_error();
    ASSERT_EQ(mpmg_solver_setup_csr(h.s, a.rows, a.row_ptr.data(), a.col.data(), a.val.data()),
              MPMG_OK);
    std::vector<double> z(rhd.b.size(), NAN);
    EXPECT_EQ(mpmg_solver_apply(h.s, nullptr, z.data()), MPMG_INVALID_INPUT);
    EXPECT_TRUE(last_error_has("r is NULL")) << mpmg_last_error();
    ASSERT_EQ(mpmg_solver_apply(h.s, rhd.b.data(), z.data()), MPMG_OK) << mpmg_last_error();
    EXPECT_EQ(z, zr);
    std::vector<double> bad = rhd.b;
    bad[5] = INFINITY;
    EXPECT_EQ(mpmg_solver_apply(h.s, bad.data(), z.data()), MPMG_INVALID_INPUT);
    EXPECT_TRUE(last_error_has("r[5] = inf")) << mpmg_last_error();
}

// mpmg_solver_update_values is Solver::update_values, with its report and statuses.
TEST(CInterface, UpdateValuesKeepsThePatternsAggregates) {
    const CsrMatrix a = to_csr(make_problem("rhd", 10).a);
    Handle h;
    ASSERT_EQ(mpmg_solver_create(nullptr, &h.s), MPMG_OK);
    EXPECT_EQ(mpmg_solver_update_values(h.s, a.nnz(), a.val.data()), MPMG_INVALID_INPUT);
    EXPECT_TRUE(last_error_has("call setup() first")) << mpmg_last_error();
    ASSERT_EQ(mpmg_solver_setup_csr(h.s, a.rows, a.row_ptr.data(), a.col.data(), a.val.data()),
              MPMG_OK);
    std::vector<double> doubled = a.val;
    for (double& v : doubled) v *= 2.0;
    ASSERT_EQ(mpmg_solver_update_values(h.s, a.nnz(), doubled.data()), MPMG_OK)
        << mpmg_last_error();
    EXPECT_EQ(nlohmann::json::parse(mpmg_solver_report(h.s))["reused_aggregates"], true);
    std::vector<double> b(static_cast<std::size_t>(a.rows), 1.0), x(b.size(), 0.0), ax(b.size());
    ASSERT_EQ(mpmg_solver_solve(h.s, b.data(), x.data(), nullptr, nullptr), MPMG_OK);
    a.multiply(x.data(), ax.data());
    for (std::size_t i = 0; i < b.size(); ++i) EXPECT_NEAR(2.0 * ax[i], 1.0, 1e-8) << i;
    EXPECT_EQ(mpmg_solver_update_values(h.s, a.nnz() - 1, doubled.data()), MPMG_INVALID_INPUT);
    EXPECT_TRUE(last_error_has("values; the matrix of the last setup has")) << mpmg_last_error();
    EXPECT_EQ(mpmg_solver_update_values(h.s, a.nnz(), nullptr), MPMG_INVALID_INPUT);
    EXPECT_EQ(mpmg_solver_update_values(h.s, -1, doubled.data()), MPMG_INVALID_INPUT);
}

TEST(CInterface, MistakesAreStatusesWithMessages) {
    mpmg_solver* s = reinterpret_cast<mpmg_solver*>(&s);  // must be reset to NULL on failure
    EXPECT_EQ(mpmg_solver_create("{\"rtol\": 2}", &s), MPMG_INVALID_INPUT);
    EXPECT_EQ(s, nullptr);
    EXPECT_TRUE(last_error_has("--rtol 2")) << mpmg_last_error();
    EXPECT_EQ(mpmg_solver_create("{\"rtol\": ", &s), MPMG_INVALID_INPUT);
    EXPECT_TRUE(last_error_has("options: ")) << mpmg_last_error();
    EXPECT_EQ(mpmg_solver_create("{\"problem\": {\"name\": \"rhd\"}}", &s), MPMG_INVALID_INPUT);
    EXPECT_TRUE(last_error_has("takes its matrix from setup")) << mpmg_last_error();
    EXPECT_EQ(mpmg_solver_create(nullptr, nullptr), MPMG_INVALID_INPUT);

    const double one = 1.0;
    double x = 0.0;
    EXPECT_EQ(mpmg_solver_solve(nullptr, &one, &x, nullptr, nullptr), MPMG_INVALID_INPUT);
    EXPECT_TRUE(last_error_has("solver is NULL")) << mpmg_last_error();
    Handle h;
    ASSERT_EQ(mpmg_solver_create(nullptr, &h.s), MPMG_OK);
    EXPECT_STREQ(mpmg_last_error(), "");
    EXPECT_STREQ(mpmg_solver_report(h.s), "");
    EXPECT_EQ(mpmg_solver_solve(h.s, &one, &x, nullptr, nullptr), MPMG_INVALID_INPUT);
    EXPECT_TRUE(last_error_has("call a mpmg_solver_setup_* first")) << mpmg_last_error();

    const std::int64_t row_ptr[3] = {0, 2, 3};
    const std::int64_t col[3] = {1, 0, 1};  // row 0 out of order
    const double val[3] = {-1.0, 2.0, 2.0};
    EXPECT_EQ(mpmg_solver_setup_csr(h.s, 2, row_ptr, col, val), MPMG_INVALID_INPUT);
    EXPECT_TRUE(last_error_has("row 0: columns 1 and 0")) << mpmg_last_error();
    EXPECT_EQ(mpmg_solver_setup_csr(h.s, 0, row_ptr, col, val), MPMG_INVALID_INPUT);
    const std::int32_t bad_start[3] = {1, 2, 3};
    EXPECT_EQ(mpmg_solver_setup_csr32(h.s, 2, bad_start, nullptr, nullptr), MPMG_INVALID_INPUT);
    EXPECT_TRUE(last_error_has("mpmg_solver_setup_csr32: row_ptr runs from 1"))
        << mpmg_last_error();

    const int twice[6] = {0, 0, 0, 0, 0, 0};
    const int no_centre[3] = {1, 0, 0};
    const int far[6] = {0, 0, 0, 2, 0, 0};
    const std::vector<double> values(2 * 8, 1.0);
    EXPECT_EQ(mpmg_solver_setup_stencil(h.s, 2, 2, 2, 1, 2, twice, values.data()),
              MPMG_INVALID_INPUT);
    EXPECT_TRUE(last_error_has("given twice")) << mpmg_last_error();
    EXPECT_EQ(mpmg_solver_setup_stencil(h.s, 2, 2, 2, 1, 1, no_centre, values.data()),
              MPMG_INVALID_INPUT);
    EXPECT_TRUE(last_error_has("no centre")) << mpmg_last_error();
    EXPECT_EQ(mpmg_solver_setup_stencil(h.s, 2, 2, 2, 1, 2, far, values.data()),
              MPMG_INVALID_INPUT);
    EXPECT_TRUE(last_error_has("outside the 27-point")) << mpmg_last_error();
    EXPECT_EQ(mpmg_solver_setup_stencil(h.s, 0, 2, 2, 1, 1, twice, values.data()),
              MPMG_INVALID_INPUT);
    EXPECT_EQ(mpmg_solver_setup_stencil(h.s, 2, 2, 2, 9, 1, twice, values.data()),
              MPMG_INVALID_INPUT);
    EXPECT_EQ(mpmg_solver_setup_stencil(h.s, 2, 2, 2, 1, 1, twice, nullptr), MPMG_INVALID_INPUT);
    EXPECT_TRUE(last_error_has("values is NULL")) << mpmg_last_error();
}

TEST(CInterface, KeepFreedMemorySaysWhetherTheAllocatorTookIt) {
    const int taken = mpmg_keep_freed_memory();
#if defined(__SANITIZE_ADDRESS__)
    EXPECT_EQ(taken, 0);  // ASan's allocator serves malloc
#elif defined(__GLIBC__)
    EXPECT_EQ(taken, 1);
#endif
    EXPECT_EQ(taken, mpmg::keep_freed_memory() ? 1 : 0);
}

TEST(CInterface, ASolveThatDoesNotConvergeSaysSo) {
    const StructuredProblem lap = make_problem("laplace27", 16);
    const CsrMatrix a = to_csr(lap.a);
    Handle h;
    ASSERT_EQ(mpmg_solver_create("{\"max_iter\": 2, \"solver\": \"cg\"}", &h.s), MPMG_OK)
        << mpmg_last_error();
    ASSERT_EQ(mpmg_solver_setup_csr(h.s, a.rows, a.row_ptr.data(), a.col.data(), a.val.data()),
              MPMG_OK);
    std::vector<double> x(lap.b.size(), 0.0);
    int iterations = 0;
    double rel = 0.0;
    EXPECT_EQ(mpmg_solver_solve(h.s, lap.b.data(), x.data(), &iterations, &rel),
              MPMG_NOT_CONVERGED);
    EXPECT_EQ(iterations, 2);
    EXPECT_GT(rel, 1e-10);
    EXPECT_TRUE(last_error_has("max_iter")) << mpmg_last_error();
    for (double v : x) ASSERT_TRUE(std::isfinite(v));
    EXPECT_FALSE(nlohmann::json::parse(mpmg_solver_report(h.s))["converged"]);
}

}  // namespace
}  // namespace mpmg
