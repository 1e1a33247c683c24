#include "kernels/reference/csr_reference.hpp"

namespace mpmg::reference {
namespace {

template <class S>
std::int64_t column(const kernels::csr::CsrView<S>& a, std::int64_t i, std::int64_t p) {
    if (a.col16 != nullptr) return std::int64_t{a.base[i]} + a.col16[p];
    return a.col64 != nullptr ? a.col64[p] : std::int64_t{a.col32[p]};
}

}  // namespace

template <class S>
void csr_apply(const kernels::csr::CsrView<S>& a, kernels::csr::CsrOp op, const S* inv_d,
               const double* b, const double* x, double* out, double omega, std::int64_t row_begin,
               std::int64_t row_end) {
    using kernels::csr::CsrOp;
    for (std::int64_t i = row_begin; i < row_end; ++i) {
        double s = 0.0;
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            s += to_double(a.val[p]) * x[column(a, i, p)];
        }
        switch (op) {
            case CsrOp::spmv:
                out[i] = s;
                break;
            case CsrOp::residual:
                out[i] = b[i] - s;
                break;
            case CsrOp::jacobi:
                out[i] = x[i] + omega * to_double(inv_d[i]) * (b[i] - s);
                break;
        }
    }
}

template <class S>
void csr_gs(const kernels::csr::CsrView<S>& a, const S* inv_d, const double* b, double* x,
            const double* outside, std::int64_t row_begin, std::int64_t row_end, bool forward) {
    for (std::int64_t k = 0; k < row_end - row_begin; ++k) {
        const std::int64_t i = forward ? row_begin + k : row_end - 1 - k;
        double s = 0.0;
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            const std::int64_t j = column(a, i, p);
            s += to_double(a.val[p]) * (j >= row_begin && j < row_end ? x[j] : outside[j]);
        }
        x[i] += to_double(inv_d[i]) * (b[i] - s);
    }
}

template void csr_apply(const kernels::csr::CsrView<double>&, kernels::csr::CsrOp, const double*,
                        const double*, const double*, double*, double, std::int64_t, std::int64_t);
template void csr_apply(const kernels::csr::CsrView<float>&, kernels::csr::CsrOp, const float*,
                        const double*, const double*, double*, double, std::int64_t, std::int64_t);
template void csr_apply(const kernels::csr::CsrView<half>&, kernels::csr::CsrOp, const half*,
                        const double*, const double*, double*, double, std::int64_t, std::int64_t);
template void csr_apply(const kernels::csr::CsrView<bfloat16>&, kernels::csr::CsrOp,
                        const bfloat16*, const double*, const double*, double*, double,
                        std::int64_t, std::int64_t);
template void csr_gs(const kernels::csr::CsrView<double>&, const double*, const double*, double*,
                     const double*, std::int64_t, std::int64_t, bool);
template void csr_gs(const kernels::csr::CsrView<float>&, const float*, const double*, double*,
                     const double*, std::int64_t, std::int64_t, bool);
template void csr_gs(const kernels::csr::CsrView<half>&, const half*, const double*, double*,
                     const double*, std::int64_t, std::int64_t, bool);
template void csr_gs(const kernels::csr::CsrView<bfloat16>&, const bfloat16*, const double*,
                     double*, const double*, std::int64_t, std::int64_t, bool);

}  // namespace mpmg::reference
