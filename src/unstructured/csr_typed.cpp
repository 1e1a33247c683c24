#include "unstructured/csr_typed.hpp"

#include <fmt/format.h>

#include <limits>

#include "kernels/convert.hpp"
#include "mpmg/errors.hpp"

namespace mpmg {
namespace {

// Rows below this run serially: thread start-up costs more than the work.
constexpr std::int64_t kParallelRows = 4096;

template <class S, class C>
inline C row_dot(const TypedCsr<S>& a, std::int64_t i, const C* x) {
    const std::int32_t* col = a.col.data();
    const S* val = a.val.data();
    C sum{0};
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
        sum += kernels::to_compute<C>(val[p]) * x[col[p]];
    }
    return sum;
}

}  // namespace

template <class S>
TypedCsr<S> to_typed(const CsrMatrix& a, TruncationCounts& counts) {
    if (a.cols > std::numeric_limits<std::int32_t>::max()) {
        throw InvalidInput(fmt::format(
            "matrix with {} columns: the CSR kernels use 32-bit column indices", a.cols));
    }
    TypedCsr<S> t;
    t.rows = a.rows;
    t.cols = a.cols;
    t.row_ptr = a.row_ptr;
    t.col.resize(a.col.size());
    t.val.resize(a.val.size());
    for (std::size_t p = 0; p < a.col.size(); ++p) {
        t.col[p] = static_cast<std::int32_t>(a.col[p]);
        t.val[p] = truncate_counted<S>(a.val[p], counts);
    }
    return t;
}

template <class S, class C>
void spmv(const TypedCsr<S>& a, const C* x, C* y) {
    const std::int64_t n = a.rows;
#pragma omp parallel for schedule(static) if (n > kParallelRows)
    for (std::int64_t i = 0; i < n; ++i) y[i] = row_dot(a, i, x);
}

template <class S, class C>
void residual(const TypedCsr<S>& a, const C* b, const C* x, C* r) {
    const std::int64_t n = a.rows;
#pragma omp parallel for schedule(static) if (n > kParallelRows)
    for (std::int64_t i = 0; i < n; ++i) r[i] = b[i] - row_dot(a, i, x);
}

// Explicit instantiations: exactly the supported (storage, compute) pairs.
template TypedCsr<double> to_typed<double>(const CsrMatrix&, TruncationCounts&);
template TypedCsr<float> to_typed<float>(const CsrMatrix&, TruncationCounts&);
template TypedCsr<half> to_typed<half>(const CsrMatrix&, TruncationCounts&);
template TypedCsr<bfloat16> to_typed<bfloat16>(const CsrMatrix&, TruncationCounts&);

template void spmv(const TypedCsr<double>&, const double*, double*);
template void spmv(const TypedCsr<float>&, const double*, double*);
template void spmv(const TypedCsr<half>&, const double*, double*);
template void spmv(const TypedCsr<bfloat16>&, const double*, double*);
template void spmv(const TypedCsr<float>&, const float*, float*);
template void spmv(const TypedCsr<half>&, const float*, float*);
template void spmv(const TypedCsr<bfloat16>&, const float*, float*);

template void residual(const TypedCsr<double>&, const double*, const double*, double*);
template void residual(const TypedCsr<float>&, const double*, const double*, double*);
template void residual(const TypedCsr<half>&, const double*, const double*, double*);
template void residual(const TypedCsr<bfloat16>&, const double*, const double*, double*);
template void residual(const TypedCsr<float>&, const float*, const float*, float*);
template void residual(const TypedCsr<half>&, const float*, const float*, float*);
template void residual(const TypedCsr<bfloat16>&, const float*, const float*, float*);

}  // namespace mpmg
