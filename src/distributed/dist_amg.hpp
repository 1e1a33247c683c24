// The AMG path (--method amg, CSR) under mpirun (issue #8, item 5). The matrix is distributed
// by contiguous row blocks (dist_csr.hpp); the Krylov solver runs on the whole operator (each
// process's rows, a halo exchange of the columns other processes own, inner products summed
// over the processes), and so does the preconditioner's fine end:
//
// - Aggregation is decoupled: PGM (unstructured/pgm.hpp) on each process's diagonal block, so
//   aggregates never cross processes and restriction and interpolation need no communication.
//   This is ML's "uncoupled" scheme; the serial hierarchy's aggregates differ only along the
//   process boundaries.
// - The coarse operators are the Galerkin products of the whole operator: a process's coarse
//   rows carry the coupling to its neighbours' aggregates (galerkin_rows), and each level is
//   again a row-distributed matrix.
// - Each distributed level is the serial AMG level (multigrid/amg_level.hpp: storage decision,
//   equilibration, truncation, smoothers) on the process's diagonal block plus the coupling
//   (AmgLevelSetup::boundary): residuals are exact, smoothers are hybrid (the neighbours' values
//   from before each sweep), as on the structured path.
// - Once a level is small (its rows <= max_coarse_rows, or a process's block under
//   kMinLocalRows), it is gathered onto rank 0, which coarsens it on with the serial AmgHierarchy
//   and runs its cycle (with its LU); the correction is scattered back.
// - The K-cycle (--cycle K): the coarse correction to every second level is up to two Krylov
//   steps on that level's rows in FP64, the inner products summed over the processes; the
//   gathered levels take them as the serial hierarchy does (AmgSettings::k_cycle_every).
//
// - Smoothed aggregation (--aggregation smoothed): the same decoupled aggregates, their
//   tentative prolongation smoothed across the processes (dist_smoothed.hpp): P and R are
//   distributed matrices, and restriction and interpolation exchange ghost values.
#pragma once

#include <cstdint>
#include <memory>

#include "api/guarded_solve.hpp"
#include "api/problem_input.hpp"
#include "distributed/dist_read.hpp"
#include "distributed/dist_system.hpp"
#include "distributed/mpi_env.hpp"
#include "krylov/krylov.hpp"
#include "mpmg/solver.hpp"
#include "unstructured/nodes.hpp"
#include "unstructured/pgm.hpp"

namespace mpmg::dist {

/// When this process is one of several started by mpirun (MPI initialised, world size > 1),
/// solves the whole problem `p` (the same on every process) with the AMG path distributed over
/// MPI_COMM_WORLD as described above, fills `out` like the serial AMG solve (x whole on every
/// process) plus out.partition (one "box" per process: its first row and row count), and
/// returns true; p.a and p.b are released once the process has taken its rows (p.x_exact
/// stays). Otherwise, and always in a build without MPI, returns false and leaves p alone.
bool solve_amg(CsrProblem& p, const SolverOptions& o, SolveResult& out);

/// The same for the rows that each process read of a file (load_csr() in dist_read.hpp; the file
/// was read in parts); `rows` is consumed.
bool solve_amg(CsrRows& rows, const SolverOptions& o, SolveResult& out);

/// The aggregates of a distributed AMG setup, kept for a later setup of the same pattern
/// (Solver::update_values): this process's for each distributed level, and rank 0's for the
/// levels gathered onto it.
struct KeptAggregates {
    std::vector<Aggregation> levels, tail;
};

/// The distributed AMG path on the rows of A that each process holds, as the caller distributed
/// them (mpmg::Solver::setup(rows, first_row), like hypre's IJ interface): the caller's
/// partition and numbering are kept (no renumbering, no rows moved), so b and x are this
/// process's rows as the caller holds them. Built once, applied to many right-hand sides; every
/// call is collective over the Solver's communicator. Only in a build with MPI: elsewhere the
/// constructor throws Unsupported.
#ifdef MPMG_HAVE_MPI
/// InvalidInput on every process unless every process was given the options of rank 0 (the
/// same JSON, the thread count aside): processes that resolve different solvers or cycles
/// would wait for each other (collective).
void check_same_options(SolverOptions o, MPI_Comm comm);
#endif

class RowBlockSystem final : public DistSystem {
public:
    /// Checks (every process throws the same InvalidInput, naming the rank, the row and what is
    /// wrong) that `mine` is this process's block of A, the processes those of `comm`: well-formed
    /// CSR (row_ptr, columns sorted, in 0 .. mine.cols - 1, finite values), mine.cols the same on
    /// every process, and the blocks contiguous in rank order (rank q's first_row the rows of ranks
    /// < q), covering mine.cols rows. Then decides what solve() decides for a matrix (CG when A is
    /// symmetric, SymGS, the cycle from the diagonals' spread, -A and the input scale: `o`
    /// resolved, `prepared`), the block size (multigrid.block_size, or detected on each process's
    /// block and agreed; every block boundary a node boundary) and sets up A's operator in K. The
    /// hierarchy is built by build().
    /// `kept` (not owned; null for none): the hierarchy's aggregates, used where it holds some
    /// (a setup of the same pattern) and filled by the first build.
    /// `auto_reason`: amg_defaults()'s.
    RowBlockSystem(CsrMatrix mine, std::int64_t first_row, const Communicator& comm,
                   SolverOptions& o, PreparedMatrix& prepared, BlockSizeChoice& block,
                   std::string& auto_reason, KeptAggregates* kept);
    ~RowBlockSystem() override;
    RowBlockSystem(const RowBlockSystem&) = delete;
    RowBlockSystem& operator=(const RowBlockSystem&) = delete;

    std::int64_t local_rows() const override;
    std::int64_t global_rows() const override;
    std::int64_t global_nnz() const override;
    const LinearOperator<double>* op64() const override;
    const LinearOperator<float>* op32() const override;
    /// Builds DistAmg.
    const BuildFn& build() const override;
    const GuardFallbacks& fallbacks() const override;
    PartitionInfo partition(std::size_t levels) const override;
    void reset_comm() const override;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace mpmg::dist
