// Smoothed aggregation (Vaněk, Mandel, Brezina, Computing 56, 1996), mpmg's stronger option next
// to the paper's piecewise-constant PGM transfers (FGCS'23 §4.2): the tentative prolongation
// P_t of an aggregation (one 1 per row, unknown -> its aggregate) is smoothed by one damped
// Jacobi step,
//   P = (I - omega D^{-1} A) P_t,   omega = 4 / (3 rho(D^{-1} A)),
// so the coarse basis functions overlap and reproduce smooth errors far better than constants on
// aggregates; R = P^T and the coarse operator is the Galerkin product P^T A P (no 1/2 scaling:
// P is no longer a 0/1 matrix whose columns sum rows). rho is a power-iteration estimate.
// Rows with a zero or non-finite diagonal are not smoothed (their row of P stays P_t's), and
// isolated rows (zero rows of P_t, no off-diagonal entries) stay zero.
#pragma once

#include "mpmg/csr_matrix.hpp"

namespace mpmg {

struct SmoothedProlongation {
    CsrMatrix p;
    double omega = 0.0;  ///< the damping used
    double rho = 0.0;    ///< the estimate of rho(D^{-1} A)
};

/// A with its weak entries (|a_ij| < theta sqrt(|a_ii a_jj|), i != j) dropped and added to the
/// diagonal (lumped, so A_F 1 = A 1): the matrix SA smooths P with, which keeps P sparse. With
/// nodes of `block` unknowns (unstructured/nodes.hpp) a weak a_ij is added to entry (i, the
/// column of j's component in i's own node) instead, so that A_F t = A t for every t constant
/// per component; lumping a coupling between different components into the diagonal broke
/// that and left smoothed P rank-deficient (solid3d n = 32: a singular coarsest level).
CsrMatrix filtered(const CsrMatrix& a, double theta, int block = 1);

/// P = (I - omega D_F^{-1} A_F) P_t (see above) with A_F = filtered(a, theta) (theta 0: A).
/// `tentative`: a.rows x coarse rows.
SmoothedProlongation smoothed_prolongation(const CsrMatrix& a, const CsrMatrix& tentative,
                                           double theta = 0.0, int block = 1);

}  // namespace mpmg
