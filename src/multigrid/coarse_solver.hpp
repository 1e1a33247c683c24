// Direct solve on the coarsest level of either path: dense LU with partial pivoting (LAPACK
// dgetrf/dgetrs) in FP64, whatever the level's compute precision (the coarsest level is small),
// of the matrix equilibrated by powers of two.
#pragma once

#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "mpmg/csr_matrix.hpp"
#include "mpmg/sgdia_matrix.hpp"

namespace mpmg {

class CoarseSolver {
public:
    CoarseSolver() = default;
    /// Factorises a structured or a CSR matrix. Throws NumericalError naming the zero pivot
    /// when A is singular, or the row of a non-finite entry.
    explicit CoarseSolver(const SgDiaMatrix<double>& a);
    explicit CoarseSolver(const CsrMatrix& a);
    std::int64_t rows() const { return n_; }
    /// x = A^{-1} b, in place on `x` which holds b on entry.
    void solve(double* x) const;

private:
    void factorise();  // lu_ holds A (column-major) on entry
    void equilibrate();
    void move_empty_columns_last();

    std::int64_t n_ = 0;
    std::vector<double> lu_;  // column-major
    /// The LU is of R A C, R = diag(row_scale_), C = diag(col_scale_), powers of two (equal
    /// for a symmetric A): A^{-1} b = C (R A C)^{-1} R b.
    std::vector<double> row_scale_, col_scale_;
    /// The column order of the LU when A has empty columns (moved last; empty: A's own order):
    /// column k of the LU is A's column col_order_[k].
    std::vector<std::int64_t> col_order_;
    mutable std::vector<double> reordered_;  // solve()'s scratch for col_order_ (n)
    /// A diagonal A (every row its own nonzero diagonal entry only): 1 / a_ii, and no LU.
    std::vector<double> inverse_diagonal_;
    std::vector<int> pivots_;
    /// Rank-deficient A (numerically zero trailing pivots): the rank and orthonormal bases of
    /// the left and right null spaces; solve() then applies the pseudo-inverse.
    std::int64_t rank_ = 0;
    std::vector<std::vector<double>> null_left_, null_right_;
};

/// The message for a coarsest-level LU that failed (`e`, from CoarseSolver) on hierarchy level
/// `index`: level 0 is A itself, which may be wrongly assembled; a coarser level is an operator
/// the hierarchy made, which the path's `alternatives` (other options) or smoothing instead of
/// the LU may avoid.
std::string coarse_lu_failure(const std::exception& e, int index, std::string_view alternatives);

}  // namespace mpmg
