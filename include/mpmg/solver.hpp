// The library entry points: solve() what SolverOptions describes (a built-in problem or a file),
// or a Solver set up once for a matrix in memory; each reports everything the CLI
// and the JSON contract (DESIGN.md) need.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "mpmg/communicator.hpp"
#include "mpmg/csr_matrix.hpp"
#include "mpmg/options.hpp"
#include "mpmg/sgdia_matrix.hpp"
#include "mpmg/solve_status.hpp"

namespace mpmg {

/// One multigrid level as set up (DESIGN.md Safety §3).
struct LevelInfo {
    std::array<int, 3> grid{0, 0, 0};
    int block = 1;
    std::string stencil;
    std::int64_t rows = 0, nnz = 0;
    Precision storage = Precision::fp64, compute = Precision::fp64;
    bool scaled = false;
    double scale_g = 0.0, scale_g_max = 0.0;
    std::int64_t overflow_count = 0, underflow_count = 0, subnormal_count = 0;
    std::int64_t matrix_bytes = 0;
    std::string solve;  ///< "smoother" / "direct (LU, fp64)"
    std::string note;   ///< fallback or decision and its reason
    /// Exactly symmetric: the smoother, residuals and products read the centre and the offsets
    /// after it only, each lower offset from its mirror (the same values, about half the bytes).
    bool upper_half = false;
};

/// How a distributed run (mpirun -np N, issue #8) split the grid; absent for a serial run.
struct PartitionInfo {
    int ranks = 1;
    int threads_per_rank = 1;
    std::array<int, 3> dims{1, 1, 1};  ///< processes along x, y, z
    /// Per rank: first cell (x, y, z) and extents (nx, ny, nz) of its block of the finest grid.
    std::vector<std::array<int, 6>> boxes;
    /// Levels 0 .. distributed_levels-1 are distributed; the coarser ones run on rank 0.
    int distributed_levels = 0;
    /// Per level, the ranks that run it: all of them, then fewer where coarse levels are
    /// agglomerated onto 1/8 of the ranks (2 x 2 x 2 blocks into one), then 1 (rank 0).
    std::vector<int> level_ranks;
    std::string smoother;  ///< how smoothing crosses process boundaries
    /// Rank 0's communication during setup and solve (MPI_Wtime, waits included): halo
    /// exchanges, global reductions, agglomeration (gather/scatter) and the agglomerated cycles.
    double halo_s = 0.0, reduce_s = 0.0, agglomerate_s = 0.0, tail_s = 0.0;
    long long halo_exchanges = 0, halo_values = 0, reductions = 0, agglomerations = 0;
    std::string setup;  ///< what the setup does per process
    std::string input;  ///< how the processes got their rows (generated, file read in parts)
};

struct SolveResult {
    std::string problem;
    std::int64_t rows = 0, nnz = 0;
    SolverOptions options;  ///< as resolved (method, solver and cycle made concrete)
    SolveStatus status = SolveStatus::max_iterations;
    bool converged = false;
    int iterations = 0;
    double final_relative_residual = 0.0;
    std::vector<double> residual_history;  ///< ||r_k|| / ||b||, k = 0..iterations
    std::string message;                   ///< why it did not converge; empty otherwise
    /// What the runtime guard did: one line per rebuild (iteration, reason, new precision).
    std::vector<std::string> guard_events;
    double setup_s = 0.0, preconditioner_s = 0.0, other_s = 0.0, total_s = 0.0;
    /// Storage of the matrix the Krylov solver's products read: K's own, or a narrower exact
    /// copy (every value of A held exactly; structured serial path) ...
    Precision operator_storage = Precision::fp64;
    /// ... from this product on (1: all of them; a copy that level 0 does not share is made only
    /// once the solve has run long enough to pay for it).
    int operator_storage_from = 1;
    /// The copy holds A / operator_scale (FP16 holds a scalar multiple of A exactly; the
    /// products multiply by it); 1 otherwise.
    double operator_scale = 1.0;
    /// The first product that read only the centre and the offsets after it, A being exactly
    /// symmetric (the lower offsets' values taken from their mirrors: the same products from
    /// about half the matrix bytes; structured serial path); 0 when none did.
    int operator_mirrored_from = 0;
    std::vector<LevelInfo> levels;
    double grid_complexity = 0.0, operator_complexity = 0.0;
    std::optional<double> error_vs_exact;    ///< ||x - x_exact||_2 / ||x_exact||_2 if known
    std::vector<double> x;                   ///< the solution (never NaN)
    std::optional<PartitionInfo> partition;  ///< distributed runs only
    /// AMG path: the renumbering applied before setup ("rcm"), empty when none.
    std::string reordered;
    /// AMG path: the unknowns per node the hierarchy aggregated by (1: scalar aggregation;
    /// multigrid.block_size, or read from A's pattern); 0 on the structured path.
    int block_size = 0;
    std::string block_size_reason;  ///< how block_size was chosen (AMG path)
    /// AMG path: why `auto` picked another solver or smoother than A's symmetry alone would
    /// (GMRES for a symmetric A whose diagonal proves it indefinite, l1-Jacobi for a zero
    /// diagonal entry); empty when it did not.
    std::string auto_reason;
    /// A's diagonal was negative on every row, so -A x = -b was solved (the same x; see
    /// README "Negative definite matrices").
    bool negated = false;
    /// A and b were scaled by 2^a_exponent and 2^b_exponent (0: not scaled), their largest
    /// magnitudes lying outside [2^-64, 2^64]; x is A x = b's (README "Input scale"). The level
    /// reports describe the scaled system.
    int a_exponent = 0, b_exponent = 0;
    /// That scale turned some nonzero value of A (of b) into zero: the magnitudes span more
    /// than FP64 holds (about 2^2098), so the system solved is not quite the one given, and a
    /// small residual may hide a large error in the unknowns those values determined.
    bool a_flushed = false, b_flushed = false;
};

/// Validates the options, builds the problem and the preconditioner, and solves. Throws
/// InvalidInput / Unsupported for bad input and NumericalError when setup cannot proceed; a
/// solve that ran but did not converge returns with converged = false and a message.
SolveResult solve(const SolverOptions& options);

/// What Solver::setup built.
struct SetupResult {
    std::int64_t rows = 0, nnz = 0;
    SolverOptions
        options;  ///< as resolved (method, solver, smoother, interpolation and cycle made concrete)
    std::vector<LevelInfo> levels;
    double grid_complexity = 0.0, operator_complexity = 0.0;
    double setup_s = 0.0;
    /// As in SolveResult: -A x = -b is solved (A's diagonal negative on every row), A scaled
    /// by 2^a_exponent (its largest magnitude outside [2^-64, 2^64]); AMG path: the
    /// renumbering, and the unknowns per node aggregated by.
    bool negated = false;
    int a_exponent = 0;
    bool a_flushed = false;  ///< as SolveResult::a_flushed
    std::string reordered;
    int block_size = 0;
    std::string block_size_reason;
    std::string auto_reason;  ///< as in SolveResult
    /// update_values: the hierarchy was built on the aggregates of the last setup.
    bool reused_aggregates = false;
    /// setup(rows, first_row) under mpirun: the processes' rows and what the setup
    /// communicated; absent otherwise.
    std::optional<PartitionInfo> partition;
};

/// A solver for a matrix held in memory, set up once and applied to any number of right-hand
/// sides (time steps, Newton steps with a frozen Jacobian, several loads): the multigrid
/// hierarchy is built by setup() and reused by every solve(). It runs the same paths, defaults,
/// precision choices and runtime guard as mpmg::solve; a rebuild by the guard is kept for the
/// next solves. setup() again with a new matrix (new values, or a new pattern) replaces the
/// hierarchy. On a communicator of several processes (MPI_COMM_WORLD under mpirun, by default),
/// each process gives its rows of A (setup(rows, first_row), the AMG path distributed over the
/// communicator) and solves with its rows of b and x. Not thread-safe: one call at a time per
/// Solver.
///
///     mpmg::SolverOptions o;                 // precision auto, rtol 1e-10, ...
///     mpmg::Solver s(o);
///     s.setup(std::move(a));                 // CsrMatrix (AMG) or SgDiaMatrix<double>
///     (structured) for (...) { auto r = s.solve(b, x); }  // x: initial guess in, solution out
class Solver {
public:
    /// Checks the options (InvalidInput naming the option). options.problem must name no
    /// problem and no file: the matrix comes from setup(). Its grid (and components) put a
    /// CsrMatrix on the structured path, as `--matrix A.mtx --grid NX,NY,NZ[,R]` does.
    explicit Solver(const SolverOptions& options = {});
    /// The same on the processes of `comm` (InvalidInput for MPI_COMM_NULL).
    Solver(const SolverOptions& options, Communicator comm);
    ~Solver();
    Solver(Solver&&) noexcept;
    Solver& operator=(Solver&&) noexcept;

    /// The structured path on A's grid. The solver keeps A (move it in to avoid a copy); values
    /// whose neighbour lies outside the grid are ignored (zeroed).
    /// Throws InvalidInput for an empty A or a non-finite value (naming the offset and cell),
    /// NumericalError when the hierarchy cannot be built.
    SetupResult setup(SgDiaMatrix<double> a);
    /// The AMG path, or with options.problem.grid the structured path on that grid. Throws
    /// InvalidInput for a matrix that is not square, not well-formed CSR (row_ptr, columns
    /// sorted and in range) or holds a non-finite value (naming the row), NumericalError when
    /// the hierarchy cannot be built; Unsupported on a communicator of several processes (each
    /// gives its rows there: the next call).
    SetupResult setup(CsrMatrix a);
    /// On a communicator of several processes (the Solver's; MPI initialised by the caller):
    /// this process's rows first_row .. first_row + rows.rows - 1 of A, with A's global column
    /// numbers (rows.cols = A's rows), as hypre's IJ interface and PETSc's MPIAIJ take a
    /// matrix. The blocks follow each other in the communicator's rank order (rank 0 from row 0;
    /// a process may have none). Collective: every process calls it, and then solve(), apply() and
    /// setup() together. The AMG path distributed (the CLI's under mpirun): the caller's partition
    /// and numbering are kept (no renumbering: give the rows an order with locality, as a mesh
    /// partitioner's), aggregates inside each process's block, small coarse levels gathered
    /// onto rank 0. A partition without locality costs iterations (oil n = 32 with shuffled
    /// rows: 37-48 GMRES iterations on 2-4 processes against 32 serially), but PGM still
    /// converges: a row whose neighbours are all other processes' stays on the coarse levels.
    /// Smoothed aggregation of a nonsymmetric A on such a partition may not (README, "The AMG
    /// path under mpirun"). Afterwards rows() is this process's rows, and solve() and apply() take
    /// and give this process's rows of b, x, r and z. Every process throws the same error: an
    /// InvalidInput naming the rank and row for a block that is not well-formed (as setup(a)
    /// checks), blocks that do not follow each other or do not cover A, a differing column
    /// count, or options that differ from rank 0's (threads aside); Unsupported for the
    /// structured path or RCM reordering (the numbering is the caller's). Smoothed aggregation
    /// smooths the aggregates' prolongation across the processes. Afterwards
    /// update_values() takes this process's new values in the order of its rows' entries and
    /// keeps the aggregates (collective; the process keeps a copy of its pattern for it, 8
    /// bytes an entry). On one process (no mpirun, or a communicator of one) this is setup(rows)
    /// for first_row 0 and a square matrix, InvalidInput otherwise.
    SetupResult setup(CsrMatrix rows, std::int64_t first_row);
    /// The structured path on a communicator of several processes, as hypre's Struct interface
    /// takes a matrix: this process's box of the `grid` (its cells first_cell ..
    /// first_cell + block.box() - 1), with the entries of its cells' rows, those towards the
    /// neighbours' cells included (entries towards cells outside the grid are ignored). The
    /// boxes form a grid of boxes covering the grid (as MPI_Cart_create lays them out), in any
    /// rank order; every process gives the same grid and unknowns per cell (the stencil may
    /// differ: the union is taken). Collective,
    /// as setup(rows, first_row). The boxes are kept (nothing moved), so solve() and apply()
    /// take and give this process's cells of b, x, r and z (block.rows() values, x fastest,
    /// unknowns of a cell together), and rows() is their count. The hierarchy is the CLI's
    /// under mpirun (hybrid smoothers across processes, coarse levels agglomerated), with
    /// setup(SgDiaMatrix)'s choices made on the whole operator. Every process throws the same
    /// error: InvalidInput naming the rank for a box outside the grid, a non-finite value,
    /// boxes that do not form such a grid or a different grid, unknowns per cell or options;
    /// Unsupported for method amg (the AMG path takes rows). update_values() does not apply
    /// (the structured path). On one process this is setup(block) for first cell (0,0,0) and
    /// the whole grid, InvalidInput otherwise.
    SetupResult setup(SgDiaMatrix<double> block, std::array<int, 3> first_cell, Box grid);
    /// Solves A x = b from the initial guess in x (all zeros: none), writing the solution into
    /// x (never NaN). Both have rows() entries. The result's x is empty (the solution is in x);
    /// setup_s counts only rebuilds by the guard in this solve; error_vs_exact is unset.
    /// Throws InvalidInput before setup, for wrong sizes or non-finite entries of b or x.
    SolveResult solve(std::span<const double> b, std::span<double> x);
    /// New values for the matrix of the last setup(CsrMatrix) on the AMG path, in the order of
    /// its entries (the same pattern, values.size() == its nnz): the hierarchy is built again
    /// on the aggregates of that setup, skipping the aggregation (about half of an AMG setup),
    /// the renumbering and the block-size detection; the solver, smoother, cycle, negation and
    /// scale are chosen again from the values. For Newton steps, time steps with changing
    /// coefficients: the aggregates of the first matrix serve as long as its couplings keep
    /// their strengths roughly (otherwise call setup()). Throws InvalidInput before setup, on
    /// the structured path or after setup(SgDiaMatrix), for a wrong count, a non-finite value,
    /// or a nonzero where the last setup had a stored zero (zeros are left out of the
    /// hierarchy's pattern), and what setup throws when the hierarchy cannot be built (then
    /// ready() is false). For this, every setup(CsrMatrix) on the AMG path keeps the aggregates
    /// (8 bytes a row per level) and where each kept value comes from (8 bytes an entry).
    SetupResult update_values(std::span<const double> values);
    /// z = M^{-1} r: one cycle of the hierarchy from zero, M^{-1} approximating A^{-1}, for a
    /// Krylov method of the caller's (PETSc's PCSHELL, SciPy's LinearOperator, one's own). The
    /// same hierarchy, renumbering, negation and input scaling as solve(); no Krylov iteration
    /// and no guard. The V-, W- and F-cycles are fixed linear operators (symmetric for a
    /// symmetric A with symmetric smoothing, as CG needs); the K-cycle (what `auto` picks for a
    /// large AMG matrix, SetupResult::options) varies between applications and wants a flexible
    /// method (flexible CG, FGMRES), so give multigrid.cycle V for plain CG or GMRES. Throws
    /// InvalidInput before setup or for a wrong size or non-finite entry of r, NumericalError
    /// when the cycle gives a non-finite value (z is then unspecified).
    void apply(std::span<const double> r, std::span<double> z);
    /// Whether setup() has succeeded.
    bool ready() const;
    /// The rows of b and x that solve() takes: A's, or after setup(rows, first_row) on several
    /// processes this process's (0 before setup).
    std::int64_t rows() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// The JSON of DESIGN.md's contract (without x).
nlohmann::json to_json(const SolveResult& r);
/// The same keys for what a setup knows: rows, nnz, config, precision_notation, negated,
/// reused_aggregates, input_scale_exponents (a), time_s (setup), hierarchy and partition (null
/// on one process).
nlohmann::json to_json(const SetupResult& r);

/// Asks the C library's allocator to keep the memory the process frees for the process's own
/// later allocations (glibc: no mmap for large blocks, no trimming of the heap), so that a
/// second solve reuses the pages of the first instead of faulting fresh ones in. Worth calling
/// once at start-up in an application that solves many systems (time steps, Newton steps): on
/// the virtual machines of README "Memory of the hierarchy" a solve's first touch of its
/// memory cost more than the solve itself. Process-wide and irreversible; memory freed is no
/// longer returned to the operating system. The `mpmg` command calls it. Returns false where
/// the allocator does not take these settings (not glibc, or a sanitizer's allocator).
bool keep_freed_memory();

}  // namespace mpmg
