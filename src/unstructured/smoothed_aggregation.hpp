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

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

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

/// filtered() of the rows first .. first + a.rows - 1 of a matrix whose columns `a` numbers as
/// the whole matrix does (a process's rows under mpirun): diag(j) is a_jj for every column j
/// the rows reach. filtered(a, theta, block) is filtered_rows(a, 0, a's diagonal, ...).
template <class Diag>
CsrMatrix filtered_rows(const CsrMatrix& a, std::int64_t first, Diag&& diag, double theta,
                        int block) {
    CsrMatrix f;
    f.rows = a.rows;
    f.cols = a.cols;
    f.row_ptr.reserve(static_cast<std::size_t>(a.rows) + 1);
    std::vector<double> lumped(static_cast<std::size_t>(block));
    std::vector<std::pair<std::int64_t, double>> row;
    for (std::int64_t li = 0; li < a.rows; ++li) {
        const std::int64_t i = first + li;
        std::fill(lumped.begin(), lumped.end(), 0.0);
        row.clear();
        const double di = diag(i);
        for (std::int64_t p = a.row_ptr[li]; p < a.row_ptr[li + 1]; ++p) {
            const std::int64_t j = a.col[p];
            if (j != i && a.val[p] * a.val[p] < theta * theta * std::fabs(di * diag(j))) {
                lumped[static_cast<std::size_t>(j % block)] += a.val[p];
                continue;
            }
            row.emplace_back(j, a.val[p]);
        }
        // Weak a_ij goes to column (i's node, j's component): A_F keeps A's products with the
        // vectors constant per component (translations), as A_F 1 = A 1 for one unknown.
        const std::int64_t node_first = i / block * block;
        for (int k = 0; k < block; ++k) {
            const double v = lumped[static_cast<std::size_t>(k)];
            if (v == 0.0) continue;
            const std::int64_t c = node_first + k;
            auto at =
                std::lower_bound(row.begin(), row.end(), c,
                                 [](const auto& e, std::int64_t col) { return e.first < col; });
            if (at != row.end() && at->first == c) {
                at->second += v;
            } else if (block > 1) {
                row.insert(at, {c, v});
            }
        }
        for (const auto& [j, v] : row) {
            f.col.push_back(j);
            f.val.push_back(v);
        }
        f.row_ptr.push_back(f.nnz());
    }
    return f;
}

/// 1 / a_ii of the rows first .. first + a.rows - 1 (columns numbered as the whole matrix's),
/// or 0 where a_ii is zero, not stored or not finite: such a row is not smoothed.
std::vector<double> smoothing_inverse_diagonal(const CsrMatrix& a, std::int64_t first);

/// omega = 4 / (3 rho), or 0 (no smoothing) when rho is not a positive finite number.
inline double smoothing_omega(double rho) {
    return rho > 0.0 && std::isfinite(rho) ? 4.0 / (3.0 * rho) : 0.0;
}

/// The rows first .. first + a.rows - 1 of S = I - omega D^{-1} A on A's pattern, plus the
/// diagonal where A stores none (columns numbered as the whole matrix's).
CsrMatrix jacobi_smoothing_rows(const CsrMatrix& a, std::int64_t first,
                                const std::vector<double>& inv_d, double omega);

/// P = (I - omega D_F^{-1} A_F) P_t (see above) with A_F = filtered(a, theta) (theta 0: A).
/// `tentative`: a.rows x coarse rows.
SmoothedProlongation smoothed_prolongation(const CsrMatrix& a, const CsrMatrix& tentative,
                                           double theta = 0.0, int block = 1);

}  // namespace mpmg
