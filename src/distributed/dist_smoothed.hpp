// Smoothed aggregation on the distributed AMG path (--aggregation smoothed under mpirun; the
// serial form is unstructured/smoothed_aggregation.hpp). The aggregates stay decoupled (PGM on
// each process's block, dist_amg.hpp), but smoothing the tentative prolongation,
//   P = (I - omega D_F^{-1} A_F) P_t,
// reaches across the processes: a row next to a neighbour's block takes weights on the
// neighbour's aggregates. So P, R and the Galerkin product R A P are distributed matrices:
//
// - A_F (the filtered matrix) needs the diagonal of each ghost column (one exchange); rho of
//   D_F^{-1} A_F is the serial power iteration with its inner products summed over the
//   processes and its start vector numbered globally, so it is the serial estimate up to the
//   order of the sums.
// - P's rows are this process's fine rows; their columns are global coarse rows, the
//   neighbours' aggregates among them (each ghost column's aggregate from its owner: one
//   exchange). P is a rectangular DistCsr: interpolation exchanges the coarse correction's
//   ghost values.
// - R = P^T (A symmetric) or P_t^T (not; as the serial hierarchy, a Petrov-Galerkin
//   restriction) is transposed across the processes: each process sends its entries to the
//   owners of their coarse rows. Restriction exchanges the fine residual's ghost values.
// - R A P: A P from this process's rows of A and the rows of P its ghost columns need (from
//   their owners); then each process's contribution R_mine (A P)_mine goes to the owners of
//   its coarse rows, who sum them.
#pragma once

#ifdef MPMG_HAVE_MPI

#include <mpi.h>

#include <memory>

#include "distributed/dist_csr.hpp"
#include "mpmg/csr_matrix.hpp"
#include "unstructured/pgm.hpp"

namespace mpmg::dist {

/// One distributed level's smoothed transfers and coarse rows.
struct DistSmoothedLevel {
    std::unique_ptr<DistCsr> p;  ///< fine rows x coarse columns
    std::unique_ptr<DistCsr> r;  ///< coarse rows x fine columns
    CsrMatrix coarse;            ///< this process's rows of R A P (global columns)
    double omega = 0.0, rho = 0.0;
    double entries_per_row = 0.0;  ///< P's nonzeros per fine row, over all processes
};

/// The smoothed transfers of level `a` aggregated by `g` (decoupled: this process's rows into
/// its own coarse rows, `coarse` their partition), filtered with `theta` on nodes of `block`
/// unknowns; R = P^T when `symmetric`, else P_t^T. Collective.
DistSmoothedLevel smoothed_level(const DistCsr& a, const Aggregation& g, const RowPartition& coarse,
                                 double theta, int block, bool symmetric);

}  // namespace mpmg::dist

#endif  // MPMG_HAVE_MPI
