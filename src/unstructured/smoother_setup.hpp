// Setup of the CSR smoothers (FGCS'23 §4.2, §4.2.3), in FP64 on the level's (possibly
// equilibrated) operator, before its data is truncated to the level's storage precision:
//   jacobi     x += omega D^{-1} (b - A x)                        (weighted scalar Jacobi)
//   l1_jacobi  x += D_l1^{-1} (b - A x), d_l1_i = a_ii + sum_{j != i} |a_ij|   (Baker et al.)
//   symgs      hybrid symmetric Gauss-Seidel: GS inside each thread's row block, Jacobi across
//   chebyshev  Chebyshev polynomial in D_l1^{-1} A on [alpha, beta] = [0.3, 1.1] * lambda_max,
//              lambda_max estimated by kPowerIterations power iterations (FGCS'23 [32]).
//   block_jacobi x += omega B^{-1} (b - A x), B the block diagonal of A (FGCS'23 §4.2.3: all
//              settings as scalar Jacobi but the block size, at most kMaxJacobiBlock = 32).
//              Blocks as Ginkgo's block Jacobi finds them: runs of consecutive rows with the same
//              column pattern (supervariables: the unknowns of one node of a vector PDE), then
//              consecutive supervariables merged while the block stays <= 32 rows. Each block is
//              inverted in FP64 by LAPACK (dgetrf/dgetri); a block that is singular or whose
//              pivots span more than 1e14 is replaced by its diagonal (point Jacobi on its rows).
//   ilu0       block ILU(0): x += U^{-1} L^{-1} (b - A x), L U the incomplete LU on A's pattern
//              (Saad, Iterative Methods, Algorithm 10.4, IKJ order) of each diagonal block of
//              rows [block_ptr[b], block_ptr[b+1]): one block per thread at setup beyond
//              kIluBlockRows rows, so the triangular solves run in parallel, the couplings
//              between blocks entering through the residual (as hybrid Gauss-Seidel's do).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "mpmg/csr_matrix.hpp"
#include "mpmg/options.hpp"

namespace mpmg {

inline constexpr int kPowerIterations = 10;
inline constexpr int kChebyshevDegree = 2;  // FGCS'23 §4.2.3: 2 iterations per smoothing
inline constexpr int kMaxJacobiBlock = 32;  // FGCS'23 §4.2.3: Ginkgo's maximum block size
/// ilu0 factors one block per thread from this many rows (hybrid Gauss-Seidel's threshold).
inline constexpr std::int64_t kIluBlockRows = 4096;

struct SmootherData {
    SmootherKind kind = SmootherKind::jacobi;
    std::vector<double> inv_diag;    ///< 1/a_ii, or 1/d_l1_i for l1_jacobi and chebyshev;
                                     ///< ilu0: 1/u_ii, the inverse pivots
    double omega = 1.0;              ///< Jacobi weight (1 for the others)
    double alpha = 0.0, beta = 0.0;  ///< Chebyshev interval
    double lambda_max = 0.0;         ///< estimate of the largest eigenvalue of D_l1^{-1} A
    /// block_jacobi: block b holds rows block_ptr[b] .. block_ptr[b+1]-1; its inverse
    /// (column-major, as LAPACK returns it and the sweep reads it; size^2 values) starts at
    /// inv_blocks[inv_ptr[b]]. inv_diag is left empty.
    /// ilu0: the row blocks factored on their own (inv_ptr and inv_blocks stay empty).
    std::vector<std::int64_t> block_ptr, inv_ptr;
    std::vector<double> inv_blocks;
    /// ilu0: L without its unit diagonal and U without its diagonal (the pivots), each holding
    /// only the entries inside its row's block.
    CsrMatrix ilu_l, ilu_u;
    /// ilu0: the largest |l_ij|. Large values (watt_2: 1.7e7) mark unstable factors, whose
    /// triangular solves amplify errors (Chow and Saad, "Experimental study of ILU
    /// preconditioners for indefinite matrices", 1997): ILU(0) smooths such a level poorly.
    double ilu_largest_l = 0.0;
    std::int64_t diagonal_blocks = 0;  ///< blocks replaced by their diagonal (near singular)
    int largest_block = 0;
    /// Largest 1-norm condition number ||B||_1 ||B^{-1}||_1 over the inverted blocks: B^{-1}
    /// rounded to a format with unit roundoff u applies with a relative error up to ~kappa u.
    double max_condition = 0.0;
};

/// Largest |eigenvalue| of D^{-1} A (D = diag(1 / inv_d)) by kPowerIterations power iterations
/// from a fixed, non-smooth start vector (an estimate from below).
double power_estimate(const CsrMatrix& a, const std::vector<double>& inv_d);

/// power_estimate's iterations on rows first .. first + n - 1 of an operator held in parts
/// (the distributed AMG path): multiply(x, y) is y = A x on these rows, and sum(sums) adds the
/// two inner products of each step, (x, x) and (y, y), over the other parts (nothing for the
/// whole operator). The start vector is numbered by the global row, so the parts together
/// start from power_estimate's.
template <class Multiply, class Sum>
double power_estimate_parts(std::int64_t n, std::int64_t first, const std::vector<double>& inv_d,
                            Multiply&& multiply, Sum&& sum) {
    const auto un = static_cast<std::size_t>(n);
    std::vector<double> x(un), y(un);
    for (std::size_t i = 0; i < un; ++i) {
        x[i] = 1.0 + static_cast<double>((first + static_cast<std::int64_t>(i)) % 7) / 7.0;
    }
    double lambda = 0.0;
    for (int it = 0; it < kPowerIterations; ++it) {
        double sums[2] = {0.0, 0.0};  // (x, x), (y, y)
        for (const double v : x) sums[0] += v * v;
        multiply(x.data(), y.data());
        for (std::size_t i = 0; i < un; ++i) {
            y[i] *= inv_d[i];
            sums[1] += y[i] * y[i];
        }
        sum(sums);
        if (sums[1] == 0.0) break;
        lambda = std::sqrt(sums[1] / sums[0]);
        const double s = 1.0 / std::sqrt(sums[1]);
        for (std::size_t i = 0; i < un; ++i) x[i] = y[i] * s;
    }
    return lambda;
}

/// Block boundaries of block Jacobi (see above): ptr[0] = 0, ptr.back() = a.rows, every block
/// at most `max_block` rows (clamped to 1 .. kMaxJacobiBlock).
std::vector<std::int64_t> jacobi_blocks(const CsrMatrix& a, int max_block = kMaxJacobiBlock);

/// Computes the smoother data of `a` with `threads` (the OpenMP maximum when 0) setting
/// ilu0's blocks. Throws NumericalError naming `level` and the row for a zero (or non-finite)
/// diagonal or ILU(0) pivot: row i is named row_ids[i] when given (a distributed level's rows in
/// the user's numbering), else i.
SmootherData smoother_setup(const CsrMatrix& a, SmootherKind kind, double jacobi_weight, int level,
                            int max_block = kMaxJacobiBlock, const std::int64_t* row_ids = nullptr,
                            int threads = 0);

}  // namespace mpmg
