// Sparse matrix-matrix product in FP64 for the AMG setup (FGCS'23 §3: C = R F P, standard
// Galerkin coarsening). Row-wise Gustavson: OpenMP over rows of A, one dense accumulator and
// marker array per thread, a symbolic pass that sizes each row and a numeric pass that fills
// it, columns sorted within each row. Deterministic (each row's sum is taken in A's order).
#pragma once

#include "mpmg/csr_matrix.hpp"

namespace mpmg {

/// C = A B. Throws InvalidInput when a.cols != b.rows.
CsrMatrix spgemm(const CsrMatrix& a, const CsrMatrix& b);

/// C = R A P (computed as R (A P)).
CsrMatrix galerkin_product(const CsrMatrix& r, const CsrMatrix& a, const CsrMatrix& p);

}  // namespace mpmg
