// The distributed structured solve (issue #8): the entry point solve() calls first.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "api/guarded_solve.hpp"
#include "api/problem_input.hpp"
#include "distributed/dist_system.hpp"
#include "distributed/partition.hpp"
#include "io/problems.hpp"
#include "krylov/krylov.hpp"
#include "mpmg/communicator.hpp"
#include "mpmg/solver.hpp"

namespace mpmg::dist {

/// When this process is one of several started by mpirun (MPI initialised, world size > 1):
/// chooses the partition of built-in problem `opt` and generates this process's rows of it
/// (make_problem_rows: its block with the distributed setup's margin; the partition weighs the
/// directions by the whole operator's coupling strengths, measured on a first split), sets
/// `part` and returns them. Otherwise, and always in a build without MPI, returns nothing.
std::optional<StructuredProblem> generate(const ProblemOptions& opt,
                                          std::optional<Partition>& part);

/// When this process is one of several started by mpirun (MPI initialised, world size > 1),
/// solves `p` distributed over MPI_COMM_WORLD, fills `out` like the serial structured solve (x
/// whole on every process, rows and nnz of the whole operator) plus out.partition, and returns
/// true. `p` is the whole problem (the same on every process; `part` empty: chosen here) or
/// this process's rows from generate() with its `part`. A distributed solve may release p.a;
/// p.x_exact stays. out.total_s is the time since `started` when the solve ends, with x in
/// blocks over the processes (assembling it whole afterwards is not timed). Otherwise, and
/// always in a build without MPI, returns false and does nothing.
bool solve_structured(StructuredProblem& p, const std::optional<Partition>& part,
                      const SolverOptions& o, SolveResult& out,
                      std::chrono::steady_clock::time_point started);

/// The distributed structured path on the boxes of the grid that each process holds, as the
/// caller decomposed it (mpmg::Solver::setup(block, first_cell, grid), like hypre's Struct
/// interface): the boxes are kept (no rows moved), so b and x are this process's box as the
/// caller holds it. Built once, applied to many right-hand sides; every call is collective over
/// the Solver's communicator. Only in a build with MPI: elsewhere the constructor throws
/// Unsupported.
class GridBlockSystem final : public DistSystem {
public:
    /// `mine`: this process's cells of A, the box whose first cell is the global cell
    /// `first_cell` of `grid`; its entries towards cells of other processes are kept (the
    /// coupling), those towards cells outside the grid must be zero (Solver::setup zeroes
    /// them). Checks (every process throws
    /// the same InvalidInput, naming the rank) that the boxes form a grid of boxes covering
    /// `grid` (in any rank order: the hierarchy then runs on the processes renumbered by their
    /// boxes' places, x fastest, a communicator of its own), with the same grid and unknowns per
    /// cell on every process and the same options (threads aside). The stencil is the union of the
    /// processes'. Then decides what setup(SgDiaMatrix) decides (CG when A is exactly
    /// symmetric, SymGS, linear interpolation, the cycle, -A and the input scale: `o`
    /// resolved, `prepared`) and sets up A's operator in K. The hierarchy is built by build().
    GridBlockSystem(SgDiaMatrix<double> mine, std::array<int, 3> first_cell, Box grid,
                    const Communicator& comm, SolverOptions& o, PreparedMatrix& prepared);
    ~GridBlockSystem() override;
    GridBlockSystem(const GridBlockSystem&) = delete;
    GridBlockSystem& operator=(const GridBlockSystem&) = delete;

    std::int64_t local_rows() const override;
    std::int64_t global_rows() const override;
    std::int64_t global_nnz() const override;
    const LinearOperator<double>* op64() const override;
    const LinearOperator<float>* op32() const override;
    /// Builds DistHierarchy.
    const BuildFn& build() const override;
    const GuardFallbacks& fallbacks() const override;
    /// The storage this process's products read (each process decides for its block).
    void report(SolveResult& out) const override;
    PartitionInfo partition(std::size_t levels) const override;
    void reset_comm() const override;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace mpmg::dist
