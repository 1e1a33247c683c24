#include "unstructured/csr_dense_lu.hpp"

#include <fmt/format.h>

#include <cmath>

#include "mpmg/errors.hpp"

extern "C" {
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda,
             const int* ipiv, double* b, const int* ldb, int* info);
}

namespace mpmg {

CsrDenseLu::CsrDenseLu(const CsrMatrix& a) : n_(a.rows) {
    const auto n = static_cast<std::size_t>(n_);
    lu_.assign(n * n, 0.0);
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            if (!std::isfinite(a.val[p])) {
                throw NumericalError(
                    fmt::format("coarsest AMG level ({} rows): non-finite entry in row {}", n_, i));
            }
            lu_[static_cast<std::size_t>(a.col[p]) * n + static_cast<std::size_t>(i)] = a.val[p];
        }
    }
    const int m = static_cast<int>(n_);
    pivots_.assign(n, 0);
    int info = 0;
    dgetrf_(&m, &m, lu_.data(), &m, pivots_.data(), &info);
    if (info != 0) {
        throw NumericalError(
            fmt::format("coarsest AMG level ({} rows) is singular: zero pivot at row {} of its LU "
                        "factorisation; the operator may have a null space (e.g. pure Neumann)",
                        n_, info));
    }
}

void CsrDenseLu::solve(double* x) const {
    const int m = static_cast<int>(n_);
    const int one = 1;
    int info = 0;
    const char trans = 'N';
    dgetrs_(&trans, &m, &one, lu_.data(), &m, pivots_.data(), x, &m, &info);
}

}  // namespace mpmg
