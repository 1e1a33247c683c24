// Scalar FP64 twins of the CSR kernels (kernels/csr_simd.hpp), for the tests: straightforward
// loops over rows and entries, every storage value converted with to_double, all arithmetic in
// double. Vectors are double (any compute-precision vector converts to double exactly).
#pragma once

#include <cstdint>

#include "kernels/csr_simd.hpp"

namespace mpmg::reference {

/// out_i for rows [row_begin, row_end) as kernels::csr::apply with operation `op`.
template <class S>
void csr_apply(const kernels::csr::CsrView<S>& a, kernels::csr::CsrOp op, const S* inv_d,
               const double* b, const double* x, double* out, double omega, std::int64_t row_begin,
               std::int64_t row_end);

/// One Gauss-Seidel sweep over rows [row_begin, row_end) in place on x, as
/// kernels::csr::gs_sweep (columns outside the range read from `outside`).
template <class S>
void csr_gs(const kernels::csr::CsrView<S>& a, const S* inv_d, const double* b, double* x,
            const double* outside, std::int64_t row_begin, std::int64_t row_end, bool forward);

}  // namespace mpmg::reference
