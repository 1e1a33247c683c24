// Setup of the CSR smoothers (FGCS'23 §4.2, §4.2.3), in FP64 on the level's (possibly
// equilibrated) operator, before its data is truncated to the level's storage precision:
//   jacobi     x += omega D^{-1} (b - A x)                        (weighted scalar Jacobi)
//   l1_jacobi  x += D_l1^{-1} (b - A x), d_l1_i = a_ii + sum_{j != i} |a_ij|   (Baker et al.)
//   symgs      hybrid symmetric Gauss-Seidel: GS inside each thread's row block, Jacobi across
//   chebyshev  Chebyshev polynomial in D_l1^{-1} A on [alpha, beta] = [0.3, 1.1] * lambda_max,
//              lambda_max estimated by kPowerIterations power iterations (FGCS'23 [32]).
#pragma once

#include <string>
#include <vector>

#include "mpmg/csr_matrix.hpp"
#include "mpmg/options.hpp"

namespace mpmg {

inline constexpr int kPowerIterations = 10;
inline constexpr int kChebyshevDegree = 2;  // FGCS'23 §4.2.3: 2 iterations per smoothing

struct SmootherData {
    SmootherKind kind = SmootherKind::jacobi;
    std::vector<double> inv_diag;    ///< 1/a_ii, or 1/d_l1_i for l1_jacobi and chebyshev
    double omega = 1.0;              ///< Jacobi weight (1 for the others)
    double alpha = 0.0, beta = 0.0;  ///< Chebyshev interval
    double lambda_max = 0.0;         ///< estimate of the largest eigenvalue of D_l1^{-1} A
};

/// Computes the smoother data of `a`. Throws Unsupported for ilu0/block_jacobi, NumericalError
/// naming `level` and the row for a zero (or non-finite) diagonal.
SmootherData smoother_setup(const CsrMatrix& a, SmootherKind kind, double jacobi_weight, int level);

}  // namespace mpmg
