// A compressed-sparse-row matrix in FP64: what Matrix Market files read into, and the
// reference format tests compare structured operators against.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace mpmg {

struct CsrMatrix {
    std::int64_t rows = 0;
    std::int64_t cols = 0;
    std::vector<std::int64_t> row_ptr{0};  ///< size rows + 1
    std::vector<std::int64_t> col;         ///< sorted within each row, no duplicates
    std::vector<double> val;

    std::int64_t nnz() const { return static_cast<std::int64_t>(col.size()); }
    /// y = A x (FP64, serial; a reference, not a fast path).
    void multiply(const double* x, double* y) const;
    /// A^T.
    CsrMatrix transpose() const;
};

/// a_ii for every row (0 where the diagonal is not stored).
std::vector<double> diagonal_of(const CsrMatrix& a);

/// |A| + |A^T| of a square A: every position of A's or A^T's pattern (explicit zeros included),
/// value |a_ij| + |a_ji|, columns sorted. The symmetrised graph of PGM's strength weights and
/// of the RCM ordering. An exactly symmetric A (pattern and values) gives 2 |A| without a
/// transpose, and an A whose pattern alone is symmetric its sums without one either.
/// `exactly_symmetric`: whether A is, when the caller has measured it already (is_symmetric(a,
/// false, 0.0)); empty: measured here. Either answer gives the same matrix
/// (|a_ij| + |a_ji| is 2 |a_ij| to the bit where they are equal); false only costs the
/// transpose.
CsrMatrix abs_plus_transpose(const CsrMatrix& a,
                             std::optional<bool> exactly_symmetric = std::nullopt);

/// True when A is square with a symmetric pattern and |a_ij - a_ji| <= 1e-12 max |a|
/// everywhere: a stored entry (a zero too) without a stored mirror makes A nonsymmetric, as
/// the solver choice of a file wants (README "Choosing the solver"). `unmirrored_as_zero`
/// compares such an entry with zero instead, for a matrix whose exact zeros were dropped
/// (unstructured/drop_zeros.hpp): that can drop a_ij = 0 and keep a_ji = 1e-17 of an assembled
/// finite-element matrix, which is symmetric all the same. `relative_tol` replaces 1e-12 (0:
/// a_ij == a_ji exactly).
bool is_symmetric(const CsrMatrix& a, bool unmirrored_as_zero = false, double relative_tol = 1e-12);

/// C = A * B (FP64, straightforward; for tests and setup of small operators).
CsrMatrix multiply(const CsrMatrix& a, const CsrMatrix& b);

}  // namespace mpmg
