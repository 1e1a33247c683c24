// Scalar FP64 twins of the SG-DIA kernels (kernels/sgdia.hpp), for the tests: straightforward
// loops over cells and offsets, every storage value converted with to_double, all arithmetic in
// double. Vectors are double (any compute-precision vector converts to double exactly).
#pragma once

#include "core/float16.hpp"
#include "mpmg/sgdia_matrix.hpp"

namespace mpmg::reference {

/// y = A x.
template <class S>
void spmv(const SgDiaMatrix<S>& a, const double* x, double* y);

/// r = b - A x.
template <class S>
void residual(const SgDiaMatrix<S>& a, const double* b, const double* x, double* r);

/// r = -U x, U the offsets whose cell comes after the cell (lexicographic index shift > 0).
template <class S>
void upper_residual(const SgDiaMatrix<S>& a, const double* x, double* r);

/// One full lexicographic Gauss-Seidel sweep in place: cells in increasing index if `forward`,
/// else decreasing; r x r diagonal blocks solved by Gaussian elimination with partial pivoting.
template <class S>
void gs_sweep(const SgDiaMatrix<S>& a, const double* b, double* x, bool forward);

/// x_new = x + omega D^{-1} (b - A x) with D the point-block diagonal.
template <class S>
void jacobi(const SgDiaMatrix<S>& a, const double* b, const double* x, double* x_new, double omega);

}  // namespace mpmg::reference
