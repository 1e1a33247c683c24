// A structured problem read from a Matrix Market file by all processes together (issue #8:
// `mpirun -np N mpmg solve --matrix A.mtx --grid NX,NY,NZ[,R]`). Each process reads only its
// share of the file's lines (MatrixMarketPart) and sends every entry to the process that owns
// its row; no process holds the whole matrix or the whole file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "distributed/dist_csr.hpp"
#include "distributed/partition.hpp"
#include "io/problems.hpp"
#include "mpmg/csr_matrix.hpp"

namespace mpmg::dist {

/// When this process is one of several started by mpirun (distributed()) and po.matrix can be
/// read in parts (a plain coordinate file): reads it on grid po.grid with po.components
/// unknowns per cell, chooses the partition (`part`; weighed by the operator's direction
/// strengths, measured on a first split, as for a built-in problem) and returns this process's
/// rows with the distributed setup's margin (StructuredProblem::window), b on them (from
/// po.rhs, read whole, or A 1 as load_structured() makes it) and x_exact whole. The errors,
/// their order and the solver chosen (CG when A is symmetric) are those of load_structured();
/// every process throws the same error. Otherwise returns nothing (the file is then read whole
/// on every process).
std::optional<StructuredProblem> load_structured(const ProblemOptions& po,
                                                 std::optional<Partition>& part);

/// This process's rows of a matrix that the AMG path reads with all processes together, in the
/// file's numbering.
struct CsrRows {
    std::string name;
    RowPartition rows;            ///< which process holds which rows
    CsrMatrix mine;               ///< its rows: local rows, global columns sorted in each row
    std::vector<double> b;        ///< b on its rows
    std::vector<double> x_exact;  ///< whole; empty when unknown (a --rhs was given)
    std::int64_t nnz = 0;         ///< the whole matrix's
    SolverKind solver = SolverKind::cg;
    bool exactly_symmetric = false;  ///< A = A^T to the bit, known from the file's storage
};

/// When this process is one of several started by mpirun and po.matrix can be read in parts (a
/// plain coordinate file; the AMG path: no --grid): every process reads only its share of the
/// lines (MatrixMarketPart) and sends each entry to the process that holds its row (rows in
/// equal blocks). The rows are those of load_csr() (api/problem_input.hpp): duplicates summed
/// in the file's order, the solver chosen by the same symmetry test (the stored pattern, values
/// within 1e-12 max |a|), then explicit zeros off the diagonal dropped; b from po.rhs (read
/// whole) or A 1, with the same errors in the same order on every process (collective).
/// Otherwise returns nothing (the file is then read whole on every process).
std::optional<CsrRows> load_csr(const ProblemOptions& po);

#ifdef MPMG_HAVE_MPI
struct GhostedRows;

/// Whether the operator whose rows the processes of `comm` hold in `g` (partition p, ghost
/// rows filled) is symmetric as is_symmetric() decides it for the whole CSR matrix: the same
/// pattern, and |a_ij - a_ji| <= 1e-12 `scale` (0: exactly). The mirror of an own row's entry
/// lies in a row of g's box (its neighbour), its pattern in `present` (rows with the same
/// margin: 1 where an entry is stored), or, when null, taken as where the values are nonzero
/// (exact when no stored entry is zero). Collective.
bool ghosted_symmetric(const GhostedRows& g, const GhostedRows* present, const Partition& p,
                       double scale, MPI_Comm comm);

/// Whether the matrix whose rows the processes of `comm` hold in `mine` (partition rp, global
/// columns) is symmetric as is_symmetric() decides it for the whole matrix: the same stored
/// pattern as its transpose and |a_ij - a_ji| <= 1e-12 `scale` (max |a| over all processes).
/// Collective.
bool rows_symmetric(const CsrMatrix& mine, const RowPartition& rp, double scale, MPI_Comm comm);
#endif

}  // namespace mpmg::dist
