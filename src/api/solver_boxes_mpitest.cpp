// mpmg::Solver set up on the boxes of the grid that the processes hold (Solver::setup(block,
// first_cell, grid), the structured path distributed as the caller decomposed the grid).
// Against mpmg::solve under mpirun on a built-in problem with the same boxes (the same
// hierarchy and iterations, x bit for bit), against the true residual on a decomposition of the
// caller's own, and every process throwing the same error for what one process got wrong. Run
// by ctest under mpirun -np 2, 3 and 4 (tests/mpi_unit_main.cpp).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "distributed/mpi_test_util.hpp"
#include "distributed/partition.hpp"
#include "io/problems.hpp"
#include "mpmg/errors.hpp"
#include "mpmg/mpmg.h"
#include "mpmg/solver.hpp"
#include "structured/sgdia_ops.hpp"

namespace mpmg {
namespace {

using dist::testing::contains;
using dist::testing::rank;
using dist::testing::size;
using dist::testing::thrown;

/// The cells of `box` (first cell `lo`) of the whole-grid matrix `a`, with their entries
/// towards every cell of the grid (the neighbours' included).
SgDiaMatrix<double> box_of(const SgDiaMatrix<double>& a, const std::array<int, 3>& lo,
                           const Box& box) {
    SgDiaMatrix<double> m(box, a.stencil(), a.block());
    for (int d = 0; d < a.stencil().size(); ++d) {
        dist::copy_cells(a.diagonal(d), a.box(), {0, 0, 0}, m.diagonal(d), box, lo, lo, box,
                         std::int64_t{a.block()} * a.block());
    }
    return m;
}

/// The cells of `box` of a whole-grid vector, `r` values per cell.
std::vector<double> box_of(const std::vector<double>& v, const Box& grid, int r,
                           const std::array<int, 3>& lo, const Box& box) {
    std::vector<double> out(static_cast<std::size_t>(box.cells() * r));
    dist::copy_cells(v.data(), grid, {0, 0, 0}, out.data(), box, lo, lo, box, r);
    return out;
}

/// The whole-grid vector from every process's box of it (on every process).
std::vector<double> whole(const std::vector<double>& mine, const Box& grid, int r,
                          const std::array<int, 3>& lo, const Box& box) {
    std::vector<double> all(static_cast<std::size_t>(grid.cells() * r), 0.0);
    dist::copy_cells(mine.data(), box, lo, all.data(), grid, {0, 0, 0}, lo, box, r);
    MPI_Allreduce(MPI_IN_PLACE, all.data(), static_cast<int>(all.size()), MPI_DOUBLE, MPI_SUM,
                  MPI_COMM_WORLD);  // each entry is one process's, the others add zeros
    return all;
}

/// ||b - A x|| / ||b|| of the whole problem.
double true_residual(const SgDiaMatrix<double>& a, const std::vector<double>& b,
                     const std::vector<double>& x) {
    std::vector<double> ax(b.size());
    spmv(a, x.data(), ax.data());
    double r2 = 0.0, b2 = 0.0;
    for (std::size_t i = 0; i < b.size(); ++i) {
        r2 += (b[i] - ax[i]) * (b[i] - ax[i]);
        b2 += b[i] * b[i];
    }
    return std::sqrt(r2 / b2);
}

TEST(SolverBoxes, EqualsTheDistributedSolveOfTheBuiltInProblem) {
    struct Case {
        const char* problem;
        int n;
        const char* precision;
        double rtol;
    };
    // A scalar 27-point operator (FP16 storage), the same iterated in FP32, nodes of three
    // unknowns, and the strongly anisotropic, nonsymmetric weather operator.
    for (const Case c :
         {Case{"laplace27", 24, "auto", 1e-9}, Case{"laplace27", 20, "K32P32D16", 1e-5},
          Case{"solid3d", 12, "auto", 1e-9}, Case{"weather", 24, "auto", 1e-9}}) {
        SCOPED_TRACE(fmt::format("{} {}", c.problem, c.precision));
        SolverOptions whole_options;
        whole_options.problem.name = c.problem;
        whole_options.problem.n = c.n;
        whole_options.precision = parse_precision(c.precision);
        whole_options.rtol = c.rtol;
        const SolveResult want = solve(whole_options);
        ASSERT_TRUE(want.converged);
        ASSERT_TRUE(want.partition.has_value());
        const StructuredProblem p = make_problem(whole_options.problem);
        const Box grid = p.a.box();
        const int r = p.a.block();
        const auto& mine = want.partition->boxes[static_cast<std::size_t>(rank())];
        const std::array<int, 3> lo{mine[0], mine[1], mine[2]};
        const Box box{mine[3], mine[4], mine[5]};
        // The choices the CLI made from the problem (its smoother and interpolation), given.
        SolverOptions o = want.options;
        o.problem = ProblemOptions{};
        Solver s(o);
        const SetupResult setup = s.setup(box_of(p.a, lo, box), lo, grid);
        EXPECT_EQ(s.rows(), box.cells() * r);
        EXPECT_EQ(setup.rows, grid.cells() * r);
        EXPECT_EQ(setup.nnz, want.nnz);
        EXPECT_EQ(setup.levels.size(), want.levels.size());
        ASSERT_TRUE(setup.partition.has_value());
        EXPECT_EQ(setup.partition->dims, want.partition->dims);
        EXPECT_EQ(setup.partition->distributed_levels, want.partition->distributed_levels);
        std::vector<double> x(static_cast<std::size_t>(s.rows()), 0.0);
        const SolveResult got = s.solve(box_of(p.b, grid, r, lo, box), x);
        EXPECT_TRUE(got.converged);
        EXPECT_EQ(got.iterations, want.iterations);
        EXPECT_EQ(got.final_relative_residual, want.final_relative_residual);
        EXPECT_EQ(got.operator_storage, want.operator_storage);
        EXPECT_EQ(x, box_of(want.x, grid, r, lo, box));  // bit for bit
    }
}

/// Cuts of n cells into `parts` ranges of lengths growing 1 : 2 : ... (at least one cell each).
std::vector<int> growing_cuts(int n, int parts) {
    std::vector<int> c{0};
    const int weight = parts * (parts + 1) / 2;
    for (int q = 1; q < parts; ++q)
        c.push_back(std::max(c.back() + 1, n * q * (q + 1) / 2 / weight));
    c.push_back(n);
    return c;
}

// A decomposition of the caller's: uneven slabs along y, the automatic choices made on the
// whole operator (GMRES for the nonsymmetric oil, CG for rhd), the true residual reached, a
// solve from the solution at most one iteration, and apply() a fixed operator.
TEST(SolverBoxes, OwnDecompositionSolvesItsSystem) {
    for (const char* name : {"oil", "rhd"}) {
        SCOPED_TRACE(name);
        const StructuredProblem p = make_problem(name, 20);
        const Box grid = p.a.box();
        const int r = p.a.block();
        const std::vector<int> cuts = growing_cuts(grid.ny, size());
        const std::array<int, 3> lo{0, cuts[static_cast<std::size_t>(rank())], 0};
        const Box box{grid.nx, cuts[static_cast<std::size_t>(rank()) + 1] - lo[1], grid.nz};
        SolverOptions o;
        o.rtol = 1e-9;
        Solver s(o);
        const SetupResult setup = s.setup(box_of(p.a, lo, box), lo, grid);
        EXPECT_EQ(setup.options.solver,
                  std::string(name) == "oil" ? SolverKind::gmres : SolverKind::cg);
        EXPECT_EQ(setup.partition->dims, (std::array<int, 3>{1, size(), 1}));
        const std::vector<double> b = box_of(p.b, grid, r, lo, box);
        std::vector<double> x(b.size(), 0.0);
        ASSERT_TRUE(s.solve(b, x).converged);
        EXPECT_LT(true_residual(p.a, p.b, whole(x, grid, r, lo, box)), 1e-8);
        EXPECT_LE(s.solve(b, x).iterations, 1);
        std::vector<double> z(b.size()), z2(b.size());
        s.apply(b, z);
        s.apply(b, z2);
        EXPECT_EQ(z, z2);
    }
}

// The C interface: each process's box as offsets and values gives the C++ call's x.
TEST(SolverBoxes, CInterfaceTakesEachProcesssBox) {
    const StructuredProblem p = make_problem("solid3d", 10);
    const Box grid = p.a.box();
    const int r = p.a.block();
    // Slabs along x, the last one wider.
    const auto first_x = [&](int q) { return grid.nx * q / size(); };
    const std::array<int, 3> lo{first_x(rank()), 0, 0};
    const Box box{(rank() + 1 == size() ? grid.nx : first_x(rank() + 1)) - lo[0], grid.ny, grid.nz};
    const SgDiaMatrix<double> mine = box_of(p.a, lo, box);
    const std::vector<double> b = box_of(p.b, grid, r, lo, box);
    Solver s{SolverOptions{}};
    s.setup(mine, lo, grid);
    std::vector<double> want(b.size(), 0.0);
    ASSERT_TRUE(s.solve(b, want).converged);

    std::vector<int> offsets;
    std::vector<double> values;
    const std::int64_t per_offset = box.cells() * r * r;
    for (int d = 0; d < mine.stencil().size(); ++d) {
        const Offset o = mine.stencil()[d];
        offsets.insert(offsets.end(), {o.dx, o.dy, o.dz});
        values.insert(values.end(), mine.diagonal(d), mine.diagonal(d) + per_offset);
    }
    mpmg_solver* h = nullptr;
    ASSERT_EQ(mpmg_solver_create(nullptr, &h), MPMG_OK);
    const int first[3] = {lo[0], lo[1], lo[2]};
    const int whole_grid[3] = {grid.nx, grid.ny, grid.nz};
    ASSERT_EQ(mpmg_solver_setup_stencil_box(h, first, whole_grid, box.nx, box.ny, box.nz, r,
                                            mine.stencil().size(), offsets.data(), values.data()),
              MPMG_OK)
        << mpmg_last_error();
    std::vector<double> x(b.size(), 0.0);
    ASSERT_EQ(mpmg_solver_solve(h, b.data(), x.data(), nullptr, nullptr), MPMG_OK)
        << mpmg_last_error();
    EXPECT_EQ(x, want);
    // A box past the grid's end on the last process: every process fails alike.
    const int past[3] = {lo[0] + (rank() + 1 == size() ? 1 : 0), lo[1], lo[2]};
    EXPECT_EQ(mpmg_solver_setup_stencil_box(h, past, whole_grid, box.nx, box.ny, box.nz, r,
                                            mine.stencil().size(), offsets.data(), values.data()),
              MPMG_INVALID_INPUT);
    EXPECT_NE(std::string(mpmg_last_error()).find(fmt::format("rank {}: its block", size() - 1)),
              std::string::npos)
        << mpmg_last_error();
    mpmg_solver_destroy(h);
}

// Boxes in any rank order: the processes are numbered by their boxes' places (x fastest) for
// the hierarchy, and each still gives and gets its own cells.
TEST(SolverBoxes, AnyRankOrderOfTheBoxes) {
    const StructuredProblem p = make_problem("rhd", 16);
    const Box grid = p.a.box();
    // Rank q holds slab size - 1 - q along y: the reverse of the places' order.
    const int slab = size() - 1 - rank();
    const std::array<int, 3> lo{0, grid.ny * slab / size(), 0};
    const Box box{grid.nx, grid.ny * (slab + 1) / size() - lo[1], grid.nz};
    SolverOptions o;
    o.rtol = 1e-9;
    Solver s(o);
    const SetupResult setup = s.setup(box_of(p.a, lo, box), lo, grid);
    // The report lists the boxes by their places.
    ASSERT_TRUE(setup.partition.has_value());
    EXPECT_EQ(setup.partition->boxes[static_cast<std::size_t>(slab)][1], lo[1]);
    const std::vector<double> b = box_of(p.b, grid, 1, lo, box);
    std::vector<double> x(b.size(), 0.0);
    const SolveResult r = s.solve(b, x);
    ASSERT_TRUE(r.converged);
    EXPECT_LT(true_residual(p.a, p.b, whole(x, grid, 1, lo, box)), 1e-8);
    // The same boxes in rank order: the same iterations (the reductions may add in another
    // order).
    const std::array<int, 3> lo2{0, grid.ny * rank() / size(), 0};
    const Box box2{grid.nx, grid.ny * (rank() + 1) / size() - lo2[1], grid.nz};
    Solver ordered(o);
    ordered.setup(box_of(p.a, lo2, box2), lo2, grid);
    std::vector<double> x2(static_cast<std::size_t>(box2.cells()), 0.0);
    const SolveResult r2 = ordered.solve(box_of(p.b, grid, 1, lo2, box2), x2);
    EXPECT_NEAR(r.iterations, r2.iterations, 1);
}

TEST(SolverBoxes, EveryProcessThrowsTheSameError) {
    const StructuredProblem p = make_problem("laplace27", 12);
    const Box grid = p.a.box();
    const int last = size() - 1;
    // Slabs along z, one plane more for the first processes.
    const auto lo_of = [&](int q) { return std::array<int, 3>{0, 0, grid.nz * q / size()}; };
    const auto box_for = [&](int q) {
        const int end = q + 1 == size() ? grid.nz : lo_of(q + 1)[2];
        return Box{grid.nx, grid.ny, end - lo_of(q)[2]};
    };
    const std::array<int, 3> lo = lo_of(rank());
    const Box box = box_for(rank());
    Solver s{SolverOptions{}};
    // A box one plane too deep on the last process (outside the grid).
    std::string m = thrown<InvalidInput>([&] {
        const Box deeper{box.nx, box.ny, box.nz + (rank() == last ? 1 : 0)};
        SgDiaMatrix<double> a(deeper, p.a.stencil(), 1);
        s.setup(std::move(a), lo, grid);
    });
    EXPECT_TRUE(contains(m, fmt::format("Solver::setup: rank {}: its block holds cells", last)))
        << m;
    // A NaN on rank 0's first cell.
    m = thrown<InvalidInput>([&] {
        SgDiaMatrix<double> a = box_of(p.a, lo, box);
        if (rank() == 0) a.diagonal(a.stencil().find(Offset{0, 0, 0}))[0] = std::nan("");
        s.setup(std::move(a), lo, grid);
    });
    EXPECT_TRUE(contains(m, "rank 0: A has the non-finite value nan at cell 0")) << m;
    // The last process starts one plane early: the boxes overlap.
    m = thrown<InvalidInput>([&] {
        std::array<int, 3> early = lo;
        if (rank() == last) early[2] -= 1;
        s.setup(box_of(p.a, early, box), early, grid);
    });
    EXPECT_TRUE(contains(m, "the boxes' first cells cut the grid into")) << m;
    // Another grid on rank 0.
    m = thrown<InvalidInput>([&] {
        const Box other = rank() == 0 ? Box{grid.nx, grid.ny, grid.nz + 1} : grid;
        s.setup(box_of(p.a, lo, box), lo, other);
    });
    EXPECT_TRUE(contains(m, "every process gives the same grid")) << m;
    // The last box one plane short of the grid's end: a gap.
    m = thrown<InvalidInput>([&] {
        const Box b{box.nx, box.ny, box.nz - (rank() == last ? 1 : 0)};
        s.setup(box_of(p.a, lo, b), lo, grid);
    });
    EXPECT_TRUE(contains(
        m, fmt::format("Solver::setup: rank {} holds cells (0,0,{})", last, lo_of(last)[2])))
        << m;
    // The AMG path takes rows.
    SolverOptions amg;
    amg.method = MethodKind::amg;
    Solver a(amg);
    EXPECT_TRUE(contains(thrown<Unsupported>([&] { a.setup(box_of(p.a, lo, box), lo, grid); }),
                         "method amg"));
    // After all of them, the solver still sets up and solves; update_values does not apply.
    s.setup(box_of(p.a, lo, box), lo, grid);
    const std::vector<double> b = box_of(p.b, grid, 1, lo, box);
    std::vector<double> x(b.size(), 0.0);
    EXPECT_TRUE(s.solve(b, x).converged);
    EXPECT_LT(true_residual(p.a, p.b, whole(x, grid, 1, lo, box)), 1e-8);
    EXPECT_TRUE(contains(thrown<InvalidInput>([&] { s.update_values(std::vector<double>(3)); }),
                         "structured path"));
}

}  // namespace
}  // namespace mpmg
