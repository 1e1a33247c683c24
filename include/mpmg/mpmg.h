/* The C interface of mpmg::Solver (mpmg/solver.hpp), for C programs and for Fortran through
 * ISO_C_BINDING: set up once from a matrix in memory, then solve for any number of right-hand
 * sides. Options and the report are JSON, the same as `mpmg solve --config` and `--json`
 * (DESIGN.md). No call throws or aborts: each returns a status and, on failure, leaves a
 * message for mpmg_last_error(). */
#ifndef MPMG_MPMG_H
#define MPMG_MPMG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status of every call; the values of `mpmg solve`'s exit codes where they share a meaning. */
enum mpmg_status {
    MPMG_OK = 0,
    MPMG_INVALID_INPUT = 2,   /* bad options, matrix or vector: mpmg_last_error() says which */
    MPMG_NOT_CONVERGED = 3,   /* the solve ran and x holds its last iterate (never NaN) */
    MPMG_NUMERICAL_ERROR = 4, /* setup could not proceed (a zero pivot, overflow of K) */
    MPMG_UNSUPPORTED = 5,     /* a valid request mpmg does not do (e.g. not distributed) */
    MPMG_OUT_OF_MEMORY = 6,
    MPMG_INTERNAL_ERROR = 7
};

typedef struct mpmg_solver mpmg_solver; /* opaque */

/* The message of this thread's last failed call ("" when none failed): until its next call. */
const char* mpmg_last_error(void);

/* Lets the process keep the memory it frees for its own later allocations (mpmg::
 * keep_freed_memory in mpmg/solver.hpp): worth calling once at start-up in a program that
 * solves many systems. Process-wide and irreversible. 1 when the allocator took it, else 0. */
int mpmg_keep_freed_memory(void);

/* A solver with the options of `options_json` (NULL or "" for the defaults): a JSON object as
 * in `mpmg solve --config`, e.g. {"precision": "K64P32D16", "rtol": 1e-8}. Its "problem" may
 * give only "grid" (and "components"): the grid a CSR matrix lives on, for the structured
 * path. On failure *solver is NULL. Call mpmg_solver_destroy when done. */
int mpmg_solver_create(const char* options_json, mpmg_solver** solver);

/* The same for the processes of an MPI communicator, given by its Fortran handle so that this
 * header needs no mpi.h: MPI_Comm_c2f(comm) from C, the integer communicator from Fortran
 * (comm%MPI_VAL with mpi_f08). mpmg_solver_create's is MPI_COMM_WORLD; one of one process
 * (MPI_COMM_SELF) makes a serial solver under mpirun, which each process sets up with its own
 * matrix. MPMG_INVALID_INPUT for MPI_COMM_NULL. */
int mpmg_solver_create_comm(const char* options_json, int comm, mpmg_solver** solver);
void mpmg_solver_destroy(mpmg_solver* solver);

/* A: `rows` x `rows` CSR with 0-based indices, the columns of each row increasing; the arrays
 * are copied. The AMG path, or with a grid in the options the structured path. */
int mpmg_solver_setup_csr(mpmg_solver* solver, int64_t rows, const int64_t* row_ptr,
                          const int64_t* col, const double* val);

/* The same with 32-bit indices (the arrays are widened while copied). */
int mpmg_solver_setup_csr32(mpmg_solver* solver, int32_t rows, const int32_t* row_ptr,
                            const int32_t* col, const double* val);

/* On a communicator of several processes (the solver's; MPI initialised by the caller): this
 * process's rows first_row .. first_row + rows - 1 of the n x n matrix A, as hypre's IJ
 * interface and PETSc's MPIAIJ take a matrix: CSR with 0-based row pointers of its own rows and
 * A's global, 0-based column numbers; the arrays are copied. Rank 0's rows (in the communicator)
 * come first, then rank 1's, and so on; a process may have none (rows 0; the arrays may then be
 * NULL). Collective: every process calls it, and then mpmg_solver_solve and mpmg_solver_apply
 * together, each with its rows of b, x, r and z. The AMG path distributed over the processes,
 * in the caller's numbering (give rows with locality, as a mesh partitioner does). Every
 * process returns the same status and message. On one process (no mpirun, or a communicator
 * of one): mpmg_solver_setup_csr for first_row 0 and rows = n, MPMG_INVALID_INPUT
 * otherwise. */
int mpmg_solver_setup_rows(mpmg_solver* solver, int64_t first_row, int64_t rows, int64_t n,
                           const int64_t* row_ptr, const int64_t* col, const double* val);

/* A on an nx x ny x nz grid of cells (cell (i, j, k) = i + nx (j + ny k)), r unknowns per cell:
 * `offsets` holds 3 x n_offsets integers (dx, dy, dz each in -1..1; (0, 0, 0) among them), and
 * `values` n_offsets x cells x r x r numbers: for offset d, cell c, the r x r block (row-major)
 * coupling cell c to cell c + offset d at values[((d * cells + c) * r + a) * r + b]. Entries
 * whose neighbour lies outside the grid are ignored. The structured path. */
int mpmg_solver_setup_stencil(mpmg_solver* solver, int nx, int ny, int nz, int r, int n_offsets,
                              const int* offsets, const double* values);

/* On a communicator of several processes (Solver::setup(block, first_cell, grid), as hypre's
 * Struct interface): this process's box of the grid[0] x grid[1] x grid[2] grid, nx x ny x nz
 * cells from the global cell first_cell (0-based), with offsets and values as
 * mpmg_solver_setup_stencil takes them for the box's cells, the entries towards the
 * neighbours' cells included (those towards cells outside the grid are ignored). The boxes
 * form a grid of boxes covering the grid, in any rank order. Collective;
 * mpmg_solver_solve and mpmg_solver_apply then take the box's cells of the vectors. On one
 * process: mpmg_solver_setup_stencil for first cell 0,0,0 and the whole grid. */
int mpmg_solver_setup_stencil_box(mpmg_solver* solver, const int* first_cell, const int* grid,
                                  int nx, int ny, int nz, int r, int n_offsets, const int* offsets,
                                  const double* values);

/* Solves A x = b from the initial guess in x (zeros for none; both of A's rows, or after
 * mpmg_solver_setup_rows this process's), the solution into x. iterations and
 * relative_residual (either may be NULL) get the solve's. MPMG_OK when it converged,
 * MPMG_NOT_CONVERGED when it did not (mpmg_last_error() says why). */
int mpmg_solver_solve(mpmg_solver* solver, const double* b, double* x, int* iterations,
                      double* relative_residual);

/* New values for the CSR matrix of the last setup, AMG path: `nnz` values in the order of its
 * entries (the same pattern; nnz = row_ptr[rows] of that setup; after mpmg_solver_setup_rows,
 * this process's entries, every process calling it). The hierarchy is rebuilt on
 * the aggregates of that setup, without a new aggregation (Solver::update_values). */
int mpmg_solver_update_values(mpmg_solver* solver, int64_t nnz, const double* values);

/* z = M^-1 r: one cycle of the solver's hierarchy (both of A's rows), for a Krylov method of
 * the caller's (PETSc's PCSHELL, one's own). V, W and F cycles are fixed linear operators; the
 * K-cycle, which "auto" picks for a large AMG matrix, varies between applications and needs a
 * flexible method: set "multigrid": {"cycle": "V"} for plain CG or GMRES. MPMG_OK, or an error
 * (MPMG_NUMERICAL_ERROR when the cycle gave a non-finite value). */
int mpmg_solver_apply(mpmg_solver* solver, const double* r, double* z);

/* The last setup's or solve's report as JSON (DESIGN.md's result contract, without x): valid
 * until the next call on this solver; "" before the first. */
const char* mpmg_solver_report(const mpmg_solver* solver);

#ifdef __cplusplus
}
#endif

#endif /* MPMG_MPMG_H */
