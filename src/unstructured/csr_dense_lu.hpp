// Direct solve on the coarsest AMG level: the CSR matrix expanded to dense and factorised by LU
// with partial pivoting (LAPACK dgetrf/dgetrs) in FP64 (the coarsest level is small).
#pragma once

#include <cstdint>
#include <vector>

#include "mpmg/csr_matrix.hpp"

namespace mpmg {

class CsrDenseLu {
public:
    CsrDenseLu() = default;
    /// Factorises A. Throws NumericalError naming the zero pivot when A is singular.
    explicit CsrDenseLu(const CsrMatrix& a);
    std::int64_t rows() const { return n_; }
    /// x = A^{-1} b, in place on `x` which holds b on entry.
    void solve(double* x) const;

private:
    std::int64_t n_ = 0;
    std::vector<double> lu_;  // column-major
    std::vector<int> pivots_;
};

}  // namespace mpmg
