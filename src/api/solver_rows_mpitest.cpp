// mpmg::Solver set up on the rows each process holds (Solver::setup(rows, first_row), the AMG
// path distributed as the caller partitioned A). Against mpmg::solve under mpirun on the whole
// matrix with the same partition (the same hierarchy and iterations, x bit for bit), against
// the true residual on uneven and empty blocks, and every process throwing the same error for
// what one process got wrong. Run by ctest under mpirun -np 2, 3 and 4
// (tests/mpi_unit_main.cpp). Solvers on other communicators than MPI_COMM_WORLD: groups of
// processes solving their own systems side by side, and MPI_COMM_SELF's serial Solver.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "api/problem_input.hpp"
#include "distributed/dist_csr.hpp"
#include "distributed/mpi_test_util.hpp"
#include "mpmg/errors.hpp"
#include "mpmg/mpi.hpp"
#include "mpmg/mpmg.h"
#include "mpmg/solver.hpp"
#include "unstructured/rcm.hpp"

namespace mpmg {
namespace {

using dist::RowPartition;
using dist::testing::contains;
using dist::testing::rank;
using dist::testing::size;
using dist::testing::thrown;

/// Rows first .. first + count - 1 of a (global columns).
CsrMatrix block_of(const CsrMatrix& a, std::int64_t first, std::int64_t count) {
    CsrMatrix m;
    m.rows = count;
    m.cols = a.cols;
    m.row_ptr.assign(1, 0);
    for (std::int64_t i = first; i < first + count; ++i) {
        for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            m.col.push_back(a.col[static_cast<std::size_t>(k)]);
            m.val.push_back(a.val[static_cast<std::size_t>(k)]);
        }
        m.row_ptr.push_back(static_cast<std::int64_t>(m.col.size()));
    }
    return m;
}

std::vector<double> slice(const std::vector<double>& v, std::int64_t first, std::int64_t count) {
    return {v.begin() + first, v.begin() + first + count};
}

/// Every process's rows of v, whole on every process (of comm).
std::vector<double> gathered(const std::vector<double>& mine, const RowPartition& p,
                             MPI_Comm comm = MPI_COMM_WORLD) {
    std::vector<int> counts(static_cast<std::size_t>(p.size())), at(counts.size());
    for (int q = 0; q < p.size(); ++q) {
        counts[static_cast<std::size_t>(q)] = static_cast<int>(p.rows(q));
        at[static_cast<std::size_t>(q)] = static_cast<int>(p.first(q));
    }
    std::vector<double> all(static_cast<std::size_t>(p.global_rows()));
    MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(),
                   counts.data(), at.data(), MPI_DOUBLE, comm);
    return all;
}

/// ||b - A x|| / ||b||.
double true_residual(const CsrMatrix& a, const std::vector<double>& b,
                     const std::vector<double>& x) {
    std::vector<double> ax(b.size());
    a.multiply(x.data(), ax.data());
    double r2 = 0.0, b2 = 0.0;
    for (std::size_t i = 0; i < b.size(); ++i) {
        r2 += (b[i] - ax[i]) * (b[i] - ax[i]);
        b2 += b[i] * b[i];
    }
    return std::sqrt(r2 / b2);
}

/// Built-in problem `name` on the n^3 grid as CSR (load_csr), for each process to take its rows.
CsrProblem built_in(const char* name, int n) {
    ProblemOptions po;
    po.name = name;
    po.n = n;
    return load_csr(po);
}

SolverOptions amg_options() {
    SolverOptions o;
    o.method = MethodKind::amg;
    o.rtol = 1e-9;
    return o;
}

TEST(SolverRows, EqualsTheDistributedSolveOfTheWholeMatrix) {
    struct Case {
        const char* problem;
        int n;
        int block_size;
        AggregationKind aggregation = AggregationKind::automatic;
    };
    // CG with the K-cycle (laplace27), GMRES with row weights (oil), nodes of three unknowns
    // kept whole on each process (solid3d, asked for), and smoothed aggregation (distributed
    // P and R, dist_smoothed.hpp).
    for (const Case c : {Case{"laplace27", 28, 0}, Case{"oil", 28, 0}, Case{"solid3d", 16, 3},
                         Case{"laplace27", 28, 0, AggregationKind::smoothed}}) {
        SCOPED_TRACE(c.problem);
        SolverOptions whole = amg_options();
        whole.problem.name = c.problem;
        whole.problem.n = c.n;
        whole.multigrid.reorder = ReorderKind::none;  // as the rows are given
        whole.multigrid.block_size = c.block_size;
        whole.multigrid.aggregation = c.aggregation;
        const SolveResult want = solve(whole);
        ASSERT_TRUE(want.converged);
        ASSERT_TRUE(want.partition.has_value());
        const CsrProblem p = load_csr(whole.problem);
        // The partition the whole solve chose (blocks of about equal rows + nonzeros).
        std::vector<std::int64_t> counts;
        for (const auto& box : want.partition->boxes) counts.push_back(box[3]);
        const RowPartition rp = RowPartition::from_counts(counts);
        const std::int64_t first = rp.first(rank()), rows = rp.rows(rank());

        SolverOptions mine = whole;
        mine.problem = ProblemOptions{};
        Solver s(mine);
        const SetupResult setup = s.setup(block_of(p.a, first, rows), first);
        EXPECT_EQ(s.rows(), rows);
        EXPECT_EQ(setup.rows, p.a.rows);
        EXPECT_EQ(setup.levels.size(), want.levels.size());
        EXPECT_EQ(setup.options.solver, want.options.solver);
        EXPECT_EQ(setup.options.multigrid.cycle, want.options.multigrid.cycle);
        EXPECT_EQ(setup.block_size, want.block_size);
        ASSERT_TRUE(setup.partition.has_value());
        EXPECT_EQ(setup.partition->distributed_levels, want.partition->distributed_levels);
        // With 4096 rows or more on every process, the finest levels stay distributed.
        std::int64_t fewest = p.a.rows;
        for (int q = 0; q < size(); ++q) fewest = std::min(fewest, rp.rows(q));
        if (fewest >= 4096) {
            EXPECT_GT(setup.partition->distributed_levels, 0);
        }
        std::vector<double> x(static_cast<std::size_t>(rows), 0.0);
        const SolveResult got = s.solve(slice(p.b, first, rows), x);
        EXPECT_TRUE(got.converged);
        EXPECT_EQ(got.iterations, want.iterations);
        EXPECT_EQ(got.final_relative_residual, want.final_relative_residual);
        EXPECT_EQ(got.rows, p.a.rows);
        EXPECT_EQ(x, slice(want.x, first, rows));  // bit for bit
    }
}

TEST(SolverRows, UnevenAndEmptyBlocksSolveTheirSystem) {
    SolverOptions o = amg_options();
    const CsrProblem p = built_in("oil", 24);  // nonsymmetric: GMRES
    const std::int64_t n = p.a.rows;
    // Rank q holds a share growing with q; with three or more processes rank 1 holds none.
    std::vector<std::int64_t> counts(static_cast<std::size_t>(size()));
    std::int64_t weight = 0;
    for (int q = 0; q < size(); ++q) weight += (size() >= 3 && q == 1) ? 0 : q + 1;
    std::int64_t given = 0;
    for (int q = 0; q < size(); ++q) {
        const std::int64_t w = (size() >= 3 && q == 1) ? 0 : q + 1;
        counts[static_cast<std::size_t>(q)] = q + 1 == size() ? n - given : n * w / weight;
        given += counts[static_cast<std::size_t>(q)];
    }
    const RowPartition rp = RowPartition::from_counts(counts);
    const std::int64_t first = rp.first(rank()), rows = rp.rows(rank());
    Solver s(o);
    const SetupResult setup = s.setup(block_of(p.a, first, rows), first);
    EXPECT_EQ(setup.options.solver, SolverKind::gmres);
    EXPECT_EQ(setup.partition->boxes.size(), static_cast<std::size_t>(size()));
    EXPECT_EQ(setup.partition->boxes[static_cast<std::size_t>(rank())][3], rows);
    const std::vector<double> b = slice(p.b, first, rows);
    std::vector<double> x(static_cast<std::size_t>(rows), 0.0);
    const SolveResult r = s.solve(b, x);
    ASSERT_TRUE(r.converged);
    const std::vector<double> all = gathered(x, rp);
    EXPECT_LT(true_residual(p.a, p.b, all), 1e-8);
    // From its own solution, a solve has nothing left to do.
    const SolveResult again = s.solve(b, x);
    EXPECT_LE(again.iterations, 1);
    // 4 b (exact in FP64) from zero: 4 x, the same iterations (every step scales exactly).
    std::vector<double> b4 = b, x4(b.size(), 0.0);
    for (double& v : b4) v *= 4.0;
    const SolveResult r4 = s.solve(b4, x4);
    EXPECT_EQ(r4.iterations, r.iterations);
    for (std::size_t i = 0; i < x4.size(); ++i) EXPECT_EQ(x4[i], 4.0 * all[first + i]);
}

// A saddle point's rows over the processes (the constraint rows, with a zero diagonal, on the
// last ones): the diagonal's signs summed over all of them, the first zero row the lowest of any
// process's, so `auto` picks GMRES and l1-Jacobi on every process, as serially, and solves.
TEST(SolverRows, ZeroDiagonalOnSomeProcessesChoosesForAll) {
    const std::int64_t m = 1000, k = m / 2, n = m + k;
    CsrMatrix a;
    a.rows = a.cols = n;
    a.row_ptr.assign(1, 0);
    for (std::int64_t i = 0; i < n; ++i) {
        std::vector<std::pair<std::int64_t, double>> row;
        if (i < m) {
            if (i > 0) row.emplace_back(i - 1, -1.0);
            row.emplace_back(i, 2.0);
            if (i + 1 < m) row.emplace_back(i + 1, -1.0);
            if (i % 2 == 0) row.emplace_back(m + i / 2, 1.0);
        } else {
            row.emplace_back(2 * (i - m), 1.0);
        }
        for (const auto& [j, v] : row) {
            a.col.push_back(j);
            a.val.push_back(v);
        }
        a.row_ptr.push_back(static_cast<std::int64_t>(a.col.size()));
    }
    const RowPartition rp = RowPartition::equal(n, size());
    const std::int64_t first = rp.first(rank()), rows = rp.rows(rank());
    const CsrMatrix mine = block_of(a, first, rows);
    const DiagonalSigns s = diagonal_signs(mine, first, Communicator{});
    EXPECT_EQ(s.positive, m);
    EXPECT_EQ(s.negative, 0);
    EXPECT_EQ(s.zero, k);
    EXPECT_EQ(s.first_zero, m);
    SolverOptions serial_o;
    const std::string serial =
        resolve_amg_auto(serial_o, SolverKind::cg, diagonal_signs(a, 0, Communicator::self()));
    Solver solver(amg_options());
    const SetupResult set = solver.setup(mine, first);
    EXPECT_EQ(set.options.solver, SolverKind::gmres);
    EXPECT_EQ(set.options.multigrid.smoother, SmootherKind::l1_jacobi);
    EXPECT_EQ(set.auto_reason, serial);
    std::vector<double> ones(static_cast<std::size_t>(n), 1.0), b(static_cast<std::size_t>(n));
    a.multiply(ones.data(), b.data());
    const std::vector<double> b_mine = slice(b, first, rows);
    std::vector<double> x(static_cast<std::size_t>(rows), 0.0);
    const SolveResult r = solver.solve(b_mine, x);
    ASSERT_TRUE(r.converged) << r.message;
    EXPECT_LT(true_residual(a, b, gathered(x, rp)), 1e-8);
}

TEST(SolverRows, ApplyIsOneCycleOfTheDistributedHierarchy) {
    SolverOptions o = amg_options();
    const CsrProblem p = built_in("laplace27", 24);
    const RowPartition rp(p.a.row_ptr, size());
    const std::int64_t first = rp.first(rank()), rows = rp.rows(rank());
    o.multigrid.cycle = CycleKind::v;
    Solver s(o);
    s.setup(block_of(p.a, first, rows), first);
    const std::vector<double> r = slice(p.b, first, rows);
    std::vector<double> z(r.size()), z2(r.size()), z8(r.size());
    s.apply(r, z);
    s.apply(r, z2);
    EXPECT_EQ(z, z2);  // a fixed operator
    std::vector<double> r8 = r;
    for (double& v : r8) v *= 8.0;
    s.apply(r8, z8);
    for (std::size_t i = 0; i < z.size(); ++i) EXPECT_EQ(z8[i], 8.0 * z[i]);
    // One V-cycle from zero removes most of the residual of A's smooth right-hand side.
    const double after = true_residual(p.a, p.b, gathered(z, rp));
    EXPECT_LT(after, 0.3);
}

// The C interface: each process's rows (NULL arrays on a process without rows) give the
// Solver's solve, and a mistake on one process is every process's status and message.
TEST(SolverRows, CInterfaceTakesEachProcesssRows) {
    SolverOptions o = amg_options();
    const CsrProblem p = built_in("rhd", 20);
    // With three or more processes, rank 1 holds no rows.
    std::vector<std::int64_t> counts(static_cast<std::size_t>(size()), 0);
    const int holders = size() >= 3 ? size() - 1 : size();
    for (int q = 0, h = 0; q < size(); ++q) {
        if (size() >= 3 && q == 1) continue;
        counts[static_cast<std::size_t>(q)] = p.a.rows * (h + 1) / holders - p.a.rows * h / holders;
        ++h;
    }
    const RowPartition rp = RowPartition::from_counts(counts);
    const std::int64_t first = rp.first(rank()), rows = rp.rows(rank());
    const CsrMatrix mine = block_of(p.a, first, rows);
    const std::vector<double> b = slice(p.b, first, rows);
    o.rtol = 1e-10;  // the C interface's default options
    Solver s(SolverOptions{});
    s.setup(mine, first);
    std::vector<double> want(b.size(), 0.0);
    const SolveResult r = s.solve(b, want);
    ASSERT_TRUE(r.converged);

    mpmg_solver* h = nullptr;
    ASSERT_EQ(mpmg_solver_create(nullptr, &h), MPMG_OK);
    const bool none = rows == 0;
    ASSERT_EQ(
        mpmg_solver_setup_rows(h, first, rows, p.a.rows, none ? nullptr : mine.row_ptr.data(),
                               none ? nullptr : mine.col.data(), none ? nullptr : mine.val.data()),
        MPMG_OK)
        << mpmg_last_error();
    // The setup's report has the partition: this process's block as given.
    const nlohmann::json setup = nlohmann::json::parse(mpmg_solver_report(h));
    ASSERT_TRUE(setup["partition"].is_object()) << setup.dump();
    EXPECT_EQ(setup["partition"]["ranks"], size());
    EXPECT_EQ(setup["partition"]["boxes"][static_cast<std::size_t>(rank())]["extent"][0], rows);
    std::vector<double> x(b.size(), 0.0);
    int iterations = -1;
    ASSERT_EQ(mpmg_solver_solve(h, none ? nullptr : b.data(), none ? nullptr : x.data(),
                                &iterations, nullptr),
              MPMG_OK)
        << mpmg_last_error();
    EXPECT_EQ(iterations, r.iterations);
    EXPECT_EQ(x, want);
    EXPECT_TRUE(std::string(mpmg_solver_report(h)).find("\"partition\"") != std::string::npos);
    // NULL x on the last process: every process fails alike.
    const int last = size() - 1;
    EXPECT_EQ(mpmg_solver_solve(h, b.data(), rank() == last ? nullptr : x.data(), nullptr, nullptr),
              MPMG_INVALID_INPUT);
    EXPECT_NE(std::string(mpmg_last_error()).find("x is NULL"), std::string::npos)
        << mpmg_last_error();
    mpmg_solver_destroy(h);
}

// update_values on the processes' rows: the aggregates kept (the same values give the setup's
// solve bit for bit), new values solve their own matrix, and the choices the values make are
// made again.
void update_values_keeps_the_aggregates(AggregationKind aggregation) {
    SolverOptions o = amg_options();
    o.multigrid.aggregation = aggregation;  // smoothed: P and R rebuilt on the kept aggregates
    // 32,768 rows: distributed levels on 2, 3 and 4 processes.
    const CsrProblem p = built_in("rhd", 32);
    const RowPartition rp(p.a.row_ptr, size());
    const std::int64_t first = rp.first(rank()), rows = rp.rows(rank());
    Solver s(o);
    const CsrMatrix mine = block_of(p.a, first, rows);
    const SetupResult setup = s.setup(mine, first);
    EXPECT_FALSE(setup.reused_aggregates);
    ASSERT_GT(setup.partition->distributed_levels, 0);
    const std::vector<double> b = slice(p.b, first, rows);
    std::vector<double> x0(b.size(), 0.0);
    const SolveResult r0 = s.solve(b, x0);
    ASSERT_TRUE(r0.converged);
    // The same values: the same hierarchy, so the same solve.
    const SetupResult same = s.update_values(mine.val);
    EXPECT_TRUE(same.reused_aggregates);
    EXPECT_EQ(same.levels.size(), setup.levels.size());
    std::vector<double> x1(b.size(), 0.0);
    const SolveResult r1 = s.solve(b, x1);
    EXPECT_EQ(r1.iterations, r0.iterations);
    EXPECT_EQ(x1, x0);
    // A heavier diagonal (a time step's mass term): its own matrix solved on the kept
    // aggregates, so with the setup's level sizes.
    CsrMatrix heavier = p.a;
    for (std::int64_t i = 0; i < heavier.rows; ++i) {
        for (std::int64_t k = heavier.row_ptr[i]; k < heavier.row_ptr[i + 1]; ++k) {
            if (heavier.col[static_cast<std::size_t>(k)] == i) {
                heavier.val[static_cast<std::size_t>(k)] *= 3.0;
            }
        }
    }
    const SetupResult updated = s.update_values(block_of(heavier, first, rows).val);
    ASSERT_EQ(updated.levels.size(), setup.levels.size());
    for (std::size_t l = 0; l < setup.levels.size(); ++l) {
        EXPECT_EQ(updated.levels[l].rows, setup.levels[l].rows);
    }
    std::vector<double> x2(b.size(), 0.0);
    ASSERT_TRUE(s.solve(b, x2).converged);
    EXPECT_LT(true_residual(heavier, p.b, gathered(x2, rp)), 1e-8);
    // -A: negated again; -b then gives A's x.
    std::vector<double> negated = mine.val;
    for (double& v : negated) v = -v;
    EXPECT_TRUE(s.update_values(negated).negated);
    std::vector<double> minus_b = b, x3(b.size(), 0.0);
    for (double& v : minus_b) v = -v;
    ASSERT_TRUE(s.solve(minus_b, x3).converged);
    EXPECT_LT(true_residual(p.a, p.b, gathered(x3, rp)), 1e-8);
}

TEST(SolverRows, UpdateValuesKeepsTheAggregates) {
    for (const AggregationKind aggregation :
         {AggregationKind::automatic, AggregationKind::smoothed}) {
        SCOPED_TRACE(to_string(aggregation));
        update_values_keeps_the_aggregates(aggregation);
    }
}

/// The 5-point Laplacian on an m x m grid, numbered so that the last process's rows (listed
/// last) have few neighbours among themselves: vertical pairs (x % 4 == 1, y % 3 < 2), whose
/// other neighbours all belong to the other processes, and whole lines (x % 4 == 3).
/// `others` receives the number of rows the other processes share.
CsrMatrix paired_across(int m, std::int64_t& others) {
    const auto last = [](int x, int y) { return (x % 4 == 1 && y % 3 < 2) || x % 4 == 3; };
    std::vector<std::int64_t> number(static_cast<std::size_t>(m) * m);
    std::int64_t k = 0;
    for (const bool in_last : {false, true}) {
        for (int y = 0; y < m; ++y) {
            for (int x = 0; x < m; ++x) {
                if (last(x, y) == in_last) number[static_cast<std::size_t>(y) * m + x] = k++;
            }
            if (!in_last && y + 1 == m) others = k;
        }
    }
    std::vector<std::vector<std::pair<std::int64_t, double>>> rows(number.size());
    for (int y = 0; y < m; ++y) {
        for (int x = 0; x < m; ++x) {
            const auto at = [&](int xx, int yy) {
                return number[static_cast<std::size_t>(yy) * m + xx];
            };
            auto& r = rows[static_cast<std::size_t>(at(x, y))];
            r.emplace_back(at(x, y), 4.0);
            if (x > 0) r.emplace_back(at(x - 1, y), -1.0);
            if (x + 1 < m) r.emplace_back(at(x + 1, y), -1.0);
            if (y > 0) r.emplace_back(at(x, y - 1), -1.0);
            if (y + 1 < m) r.emplace_back(at(x, y + 1), -1.0);
        }
    }
    CsrMatrix a;
    a.rows = a.cols = static_cast<std::int64_t>(rows.size());
    a.row_ptr.assign(1, 0);
    for (auto& r : rows) {
        std::sort(r.begin(), r.end());
        for (const auto& [j, v] : r) {
            a.col.push_back(j);
            a.val.push_back(v);
        }
        a.row_ptr.push_back(static_cast<std::int64_t>(a.col.size()));
    }
    return a;
}

// A row whose neighbours in its process's block are all in its own aggregate is isolated in
// that block, but not in A: it must stay on the coarse level (a singleton aggregate), not be
// left out as the serial hierarchy leaves out rows with nothing off the diagonal. Here the
// last process's vertical pairs become such rows on level 1. Left out, their error is never
// corrected from the coarse levels: CG did not converge in 200 iterations on 2, 3 or 4
// processes (against 20 serially).
TEST(SolverRows, RowsCoupledOnlyToOtherProcessesStayOnTheCoarseLevels) {
    std::int64_t others = 0;
    const CsrMatrix a = paired_across(240, others);  // >= 4096 rows per process on level 1
    SolverOptions o = amg_options();
    Solver serial(o, Communicator::self());
    serial.setup(a);
    const std::vector<double> b(static_cast<std::size_t>(a.rows), 1.0);
    std::vector<double> xs(b.size(), 0.0);
    const SolveResult want = serial.solve(b, xs);
    ASSERT_TRUE(want.converged);
    // The other processes share the first rows evenly; the last one holds its own.
    std::vector<std::int64_t> counts;
    for (int q = 0; q + 1 < size(); ++q) {
        counts.push_back(others * (q + 1) / (size() - 1) - others * q / (size() - 1));
    }
    counts.push_back(a.rows - others);
    const RowPartition rp = RowPartition::from_counts(counts);
    const std::int64_t first = rp.first(rank()), rows = rp.rows(rank());
    Solver s(o);
    const SetupResult setup = s.setup(block_of(a, first, rows), first);
    ASSERT_TRUE(setup.partition.has_value());
    ASSERT_GE(setup.partition->distributed_levels, 2);  // level 1 aggregated per process
    std::vector<double> x(static_cast<std::size_t>(rows), 0.0);
    const SolveResult got = s.solve(slice(b, first, rows), x);
    ASSERT_TRUE(got.converged);
    // Decoupled aggregates on this partition cost iterations (31-35 on 2-4 processes), but
    // not convergence.
    EXPECT_LE(got.iterations, 2 * want.iterations);
    EXPECT_LT(true_residual(a, b, gathered(x, rp)), 1e-8);
}

// The same on a nonsymmetric matrix without any locality: oil with its rows shuffled at random,
// in blocks of equal rows (30 GMRES iterations serially). Without the coupled rows this fails
// on 2, 3 and 4 processes. The CLI on the same shuffled matrix (`--reorder none`, rtol 1e-10):
// 97 / 150 / no convergence in 200 iterations on 2 / 3 / 4 processes before, 37 / 48 / 48 now
// (32 serially).
TEST(SolverRows, ShuffledNonsymmetricRowsConverge) {
    const CsrProblem p = built_in("oil", 32);
    std::vector<std::int64_t> perm(static_cast<std::size_t>(p.a.rows));
    std::iota(perm.begin(), perm.end(), 0);
    std::mt19937_64 gen(5);
    std::shuffle(perm.begin(), perm.end(), gen);
    const CsrMatrix a = permute(p.a, perm);
    std::vector<double> b(perm.size());
    for (std::size_t i = 0; i < perm.size(); ++i) b[i] = p.b[static_cast<std::size_t>(perm[i])];
    SolverOptions o = amg_options();
    Solver serial(o, Communicator::self());
    serial.setup(a);
    std::vector<double> xs(b.size(), 0.0);
    const SolveResult want = serial.solve(b, xs);
    ASSERT_TRUE(want.converged);
    const RowPartition rp = RowPartition::equal(a.rows, size());
    const std::int64_t first = rp.first(rank()), rows = rp.rows(rank());
    Solver s(o);
    const SetupResult setup = s.setup(block_of(a, first, rows), first);
    EXPECT_EQ(setup.options.solver, SolverKind::gmres);
    ASSERT_GE(setup.partition->distributed_levels, 1);
    std::vector<double> x(static_cast<std::size_t>(rows), 0.0);
    const SolveResult got = s.solve(slice(b, first, rows), x);
    ASSERT_TRUE(got.converged);
    EXPECT_LE(got.iterations, 2 * want.iterations) << "serially " << want.iterations;
    EXPECT_LT(true_residual(a, b, gathered(x, rp)), 1e-8);
}

TEST(SolverRows, EveryProcessThrowsTheSameError) {
    SolverOptions o = amg_options();
    const CsrProblem p = built_in("laplace27", 12);
    const RowPartition rp(p.a.row_ptr, size());
    const int last = size() - 1;
    const std::int64_t first = rp.first(rank()), rows = rp.rows(rank());
    const auto mine = [&] { return block_of(p.a, first, rows); };
    Solver s(o);
    // The last process starts a row late.
    std::string m = thrown<InvalidInput>(
        [&] { s.setup(block_of(p.a, first, rows), rank() == last ? first + 1 : first); });
    EXPECT_TRUE(contains(m, fmt::format("rank {} gave rows from {}", last, rp.first(last) + 1)))
        << m;
    EXPECT_FALSE(s.ready());
    // A non-finite value on the last process only.
    CsrMatrix bad = mine();
    if (rank() == last) bad.val[3] = std::nan("");
    m = thrown<InvalidInput>([&] { s.setup(std::move(bad), first); });
    EXPECT_TRUE(contains(m, fmt::format("rank {}: A({}, ", last, rp.first(last)))) << m;
    // Another column count on the last process.
    CsrMatrix wide = mine();
    if (rank() == last) wide.cols += 1;
    m = thrown<InvalidInput>([&] { s.setup(std::move(wide), first); });
    EXPECT_TRUE(contains(
        m, fmt::format("rank {} gave A {} columns and rank 0 {}", last, p.a.cols + 1, p.a.cols)))
        << m;
    // The last process leaves its last row out.
    m = thrown<InvalidInput>(
        [&] { s.setup(block_of(p.a, first, rank() == last ? rows - 1 : rows), first); });
    EXPECT_TRUE(contains(m, "rows of A in all")) << m;
    // Options that differ on the last process (they would choose differently, and wait).
    SolverOptions other = o;
    if (rank() == last) other.rtol = 1e-6;
    Solver differing(other);
    m = thrown<InvalidInput>([&] { differing.setup(mine(), first); });
    EXPECT_TRUE(contains(m, fmt::format("rank {}'s options differ from rank 0's", last))) << m;
    // After all that, a setup that works, and a solve whose b is short on the last process.
    s.setup(mine(), first);
    ASSERT_TRUE(s.ready());
    std::vector<double> b = slice(p.b, first, rows), x(b.size(), 0.0);
    std::vector<double> short_b = b;
    if (rank() == last) short_b.pop_back();
    m = thrown<InvalidInput>([&] { s.solve(short_b, x); });
    EXPECT_TRUE(contains(m, fmt::format("Solver::solve: rank {}: b has {} entries; the process "
                                        "has {} rows",
                                        last, rp.rows(last) - 1, rp.rows(last))))
        << m;
    std::vector<double> nan_x = x;
    if (rank() == 0) nan_x[0] = std::nan("");
    EXPECT_TRUE(contains(thrown<InvalidInput>([&] { s.solve(b, nan_x); }), "rank 0: x[0]"));
    std::vector<double> z(b.size());
    std::vector<double> short_z = z;
    if (rank() == last) short_z.pop_back();
    EXPECT_TRUE(contains(thrown<InvalidInput>([&] { s.apply(b, short_z); }), "z has"));
    std::vector<double> few(static_cast<std::size_t>(mine().nnz()));
    if (rank() == last) few.pop_back();
    const std::int64_t last_nnz = block_of(p.a, rp.first(last), rp.rows(last)).nnz();
    m = thrown<InvalidInput>([&] { s.update_values(few); });
    EXPECT_TRUE(contains(m, fmt::format("Solver::update_values: rank {}: {} values; this "
                                        "process's rows of the last setup have {} entries",
                                        last, last_nnz - 1, last_nnz)))
        << m;
    EXPECT_TRUE(s.ready());  // a rejected update leaves the setup
    // The solver still solves.
    const SolveResult r = s.solve(b, x);
    EXPECT_TRUE(r.converged);
    EXPECT_LT(true_residual(p.a, p.b, gathered(x, rp)), 1e-8);
}

/// A with its diagonal times `factor` (another system on A's pattern).
CsrMatrix heavier(CsrMatrix a, double factor) {
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            if (a.col[static_cast<std::size_t>(k)] == i)
                a.val[static_cast<std::size_t>(k)] *= factor;
        }
    }
    return a;
}

// The processes split into groups (even and odd ranks), each a Solver of its communicator on
// a system of its own, set up and solved at the same time as the other group's: no message
// of one reaches the other, each x solves its group's matrix, and a group of one process is
// the serial Solver.
TEST(SolverComm, GroupsOfProcessesSolveTheirOwnSystems) {
    const int color = rank() % 2;
    MPI_Comm group = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank(), &group);
    int group_rank = 0, group_size = 1;
    MPI_Comm_rank(group, &group_rank);
    MPI_Comm_size(group, &group_size);
    SolverOptions o = amg_options();
    const CsrProblem p = built_in("rhd", 24);
    const CsrMatrix a = heavier(p.a, color == 0 ? 1.0 : 2.0);  // the odd ranks' system
    const RowPartition rp(a.row_ptr, group_size);
    const std::int64_t first = rp.first(group_rank), rows = rp.rows(group_rank);
    Solver s(o, communicator(group));
    const SetupResult setup = s.setup(block_of(a, first, rows), first);
    EXPECT_EQ(setup.partition.has_value(), group_size > 1);
    if (setup.partition) {
        EXPECT_EQ(setup.partition->ranks, group_size);
    }
    EXPECT_EQ(s.rows(), rows);
    const std::vector<double> b = slice(p.b, first, rows);
    std::vector<double> x(b.size(), 0.0);
    const SolveResult r = s.solve(b, x);
    ASSERT_TRUE(r.converged);
    const std::vector<double> all = gathered(x, rp, group);
    EXPECT_LT(true_residual(a, p.b, all), 1e-8);
    EXPECT_GT(true_residual(heavier(p.a, color == 0 ? 2.0 : 1.0), p.b, all), 1e-3);
    // The iterations are one count over the group.
    int fewest = r.iterations, most = r.iterations;
    MPI_Allreduce(MPI_IN_PLACE, &fewest, 1, MPI_INT, MPI_MIN, group);
    MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_INT, MPI_MAX, group);
    EXPECT_EQ(fewest, most);
    if (group_size == 1) {  // the serial Solver's solve, bit for bit
        Solver serial(o, Communicator::self());
        serial.setup(a);
        std::vector<double> xs(b.size(), 0.0);
        EXPECT_EQ(serial.solve(b, xs).iterations, r.iterations);
        EXPECT_EQ(xs, x);
    }
    MPI_Comm_free(&group);
}

// A duplicate of MPI_COMM_WORLD, given by its Fortran handle, is MPI_COMM_WORLD: the default
// Solver's solve bit for bit, through C++ and C.
TEST(SolverComm, DuplicateOfTheWorldIsTheWorld) {
    SolverOptions o = amg_options();
    const CsrProblem p = built_in("laplace27", 20);
    const RowPartition rp(p.a.row_ptr, size());
    const std::int64_t first = rp.first(rank()), rows = rp.rows(rank());
    const CsrMatrix mine = block_of(p.a, first, rows);
    const std::vector<double> b = slice(p.b, first, rows);
    Solver world(o);
    world.setup(mine, first);
    std::vector<double> want(b.size(), 0.0);
    const SolveResult r = world.solve(b, want);
    ASSERT_TRUE(r.converged);
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    Solver s(o, communicator(dup));
    s.setup(mine, first);
    std::vector<double> x(b.size(), 0.0);
    EXPECT_EQ(s.solve(b, x).iterations, r.iterations);
    EXPECT_EQ(x, want);

    mpmg_solver* h = nullptr;
    const std::string json = to_json(o).dump();
    ASSERT_EQ(mpmg_solver_create_comm(json.c_str(), MPI_Comm_c2f(dup), &h), MPMG_OK)
        << mpmg_last_error();
    ASSERT_EQ(mpmg_solver_setup_rows(h, first, rows, p.a.rows, mine.row_ptr.data(), mine.col.data(),
                                     mine.val.data()),
              MPMG_OK)
        << mpmg_last_error();
    std::vector<double> xc(b.size(), 0.0);
    ASSERT_EQ(mpmg_solver_solve(h, b.data(), xc.data(), nullptr, nullptr), MPMG_OK)
        << mpmg_last_error();
    EXPECT_EQ(xc, want);
    mpmg_solver_destroy(h);
    MPI_Comm_free(&dup);
}

// MPI_COMM_SELF under mpirun: every process sets up and solves a matrix of its own, of its own
// size, as many times as it likes (no collective call over the others: with one, the
// processes' different counts of solves and setups would leave them waiting); the default Solver
// (MPI_COMM_WORLD) refuses a whole matrix and names the way.
TEST(SolverComm, SelfIsASerialSolverOnEveryProcess) {
    SolverOptions o = amg_options();
    const CsrProblem p = built_in("oil", 12 + 2 * rank());
    Solver s(o, Communicator::self());
    const SetupResult setup = s.setup(p.a);
    EXPECT_FALSE(setup.partition.has_value());
    EXPECT_EQ(s.rows(), p.a.rows);
    std::vector<double> x(p.b.size(), 0.0);
    for (int k = 0; k <= 2 * rank(); ++k) {  // rank q solves 2q + 1 times
        std::fill(x.begin(), x.end(), 0.0);
        ASSERT_TRUE(s.solve(p.b, x).converged);
    }
    EXPECT_LT(true_residual(p.a, p.b, x), 1e-8);
    if (rank() == 0) {
        const CsrMatrix heavy = heavier(p.a, 2.0);
        s.update_values(heavy.val);
        std::fill(x.begin(), x.end(), 0.0);
        ASSERT_TRUE(s.solve(p.b, x).converged);
        EXPECT_LT(true_residual(heavy, p.b, x), 1e-8);
    }
    // The C interface on MPI_COMM_SELF, its calls as many on each process as it likes too.
    mpmg_solver* h = nullptr;
    ASSERT_EQ(mpmg_solver_create_comm(nullptr, MPI_Comm_c2f(MPI_COMM_SELF), &h), MPMG_OK);
    ASSERT_EQ(
        mpmg_solver_setup_csr(h, p.a.rows, p.a.row_ptr.data(), p.a.col.data(), p.a.val.data()),
        MPMG_OK)
        << mpmg_last_error();
    std::vector<double> xc(p.b.size(), 0.0), zc(p.b.size());
    for (int k = 0; k <= rank(); ++k) {
        ASSERT_EQ(mpmg_solver_apply(h, p.b.data(), zc.data()), MPMG_OK) << mpmg_last_error();
    }
    for (int k = 0; k <= 2 * rank(); ++k) {
        std::fill(xc.begin(), xc.end(), 0.0);
        ASSERT_EQ(mpmg_solver_solve(h, p.b.data(), xc.data(), nullptr, nullptr), MPMG_OK)
            << mpmg_last_error();
    }
    EXPECT_LT(true_residual(p.a, p.b, xc), 1e-8);
    mpmg_solver_destroy(h);

    Solver world(o);
    const std::string m = thrown<Unsupported>([&] { world.setup(p.a); });
    EXPECT_TRUE(contains(m, fmt::format("communicator has {} processes", size()))) << m;
    EXPECT_TRUE(contains(m, "Communicator::self()")) << m;
}

TEST(SolverComm, NotACommunicatorIsInvalidInput) {
    for (const int handle : {-5, static_cast<int>(MPI_Comm_c2f(MPI_COMM_NULL))}) {
        SCOPED_TRACE(handle);
        const std::string m = thrown<InvalidInput>(
            [&] { Solver s(SolverOptions{}, Communicator::from_fortran(handle)); });
        EXPECT_TRUE(contains(m, "MPI_COMM_NULL or not a communicator")) << m;
        mpmg_solver* h = nullptr;
        EXPECT_EQ(mpmg_solver_create_comm(nullptr, handle, &h), MPMG_INVALID_INPUT);
        EXPECT_EQ(h, nullptr);
        EXPECT_NE(std::string(mpmg_last_error()).find("not a communicator"), std::string::npos);
    }
}

}  // namespace
}  // namespace mpmg
