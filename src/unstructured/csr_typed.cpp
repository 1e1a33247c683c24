#include "unstructured/csr_typed.hpp"

#include <fmt/format.h>

#include <limits>

#include "core/prefault.hpp"
#include "kernels/convert_simd.hpp"
#include "mpmg/errors.hpp"

namespace mpmg {
namespace {

constexpr std::int64_t kMaxOffset = std::numeric_limits<std::uint16_t>::max();

/// Whether every row's columns lie within [first, first + 65535] (then the compact encoding
/// fits); throws InvalidInput for columns that are not strictly increasing within a row.
bool rows_fit_uint16(const CsrMatrix& a) {
    bool fit = true;
    for (std::int64_t i = 0; i < a.rows; ++i) {
        const std::int64_t p0 = a.row_ptr[i], p1 = a.row_ptr[i + 1];
        for (std::int64_t p = p0 + 1; p < p1; ++p) {
            if (a.col[p] <= a.col[p - 1]) {
                throw InvalidInput(
                    fmt::format("CSR row {}: columns {} and {} are not strictly increasing", i,
                                a.col[p - 1], a.col[p]));
            }
        }
        if (p1 > p0 && a.col[p1 - 1] - a.col[p0] > kMaxOffset) fit = false;
    }
    return fit;
}

template <class S, class C>
void run(const TypedCsr<S>& a, kernels::csr::CsrApplyArgs<S, C> q) {
    q.a = a.view();
    for_row_blocks(a, [&](std::int64_t begin, std::int64_t end) {
        kernels::csr::CsrApplyArgs<S, C> mine = q;
        mine.row_begin = begin;
        mine.row_end = end;
        kernels::csr::apply(mine);
    });
}

/// t's columns from a's, in the encoding asked (int64 when a has 2^31 columns or more).
template <class S>
void encode_columns(const CsrMatrix& a, IndexEncoding encoding, TypedCsr<S>& t) {
    if (a.cols > std::numeric_limits<std::int32_t>::max()) encoding = IndexEncoding::int64;
    const bool compact = rows_fit_uint16(a) && encoding == IndexEncoding::compact;
    if (compact) {
        assign_prefaulted(t.col16, a.col.size());
        t.base.resize(static_cast<std::size_t>(a.rows));
        for (std::int64_t i = 0; i < a.rows; ++i) {
            const std::int64_t p0 = a.row_ptr[i], p1 = a.row_ptr[i + 1];
            const std::int64_t b = p1 > p0 ? a.col[p0] : 0;
            t.base[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(b);
            for (std::int64_t p = p0; p < p1; ++p) {
                t.col16[static_cast<std::size_t>(p)] = static_cast<std::uint16_t>(a.col[p] - b);
            }
        }
    } else if (encoding == IndexEncoding::int64) {
        t.col64 = a.col;
    } else {
        assign_prefaulted(t.col, a.col.size());
        for (std::size_t p = 0; p < a.col.size(); ++p) {
            t.col[p] = static_cast<std::int32_t>(a.col[p]);
        }
    }
}

}  // namespace

template <class S>
TypedCsr<S> to_typed(const CsrMatrix& a, TruncationCounts& counts, IndexEncoding encoding) {
    TypedCsr<S> t;
    t.rows = a.rows;
    t.cols = a.cols;
    t.row_ptr = a.row_ptr;
    // Fresh arrays faulted in at once (core/prefault.hpp), not page by page as they are written.
    assign_prefaulted(t.val, a.val.size());
    // The SIMD narrowing: truncate_counted<S>'s values and counts (kernels/convert_simd.hpp);
    // converting value by value took 5 % of laplace27 n = 96's AMG run.
    counts += kernels::narrow(a.val.data(), t.val.data(), a.nnz());
    encode_columns(a, encoding, t);
    return t;
}

TypedCsr<double> to_typed(CsrMatrix&& a, IndexEncoding encoding) {
    TypedCsr<double> t;
    encode_columns(a, encoding, t);  // first: it throws for unsorted columns, a still whole
    t.rows = a.rows;
    t.cols = a.cols;
    t.row_ptr = std::move(a.row_ptr);
    t.val = std::move(a.val);
    a = CsrMatrix{};
    return t;
}

CsrMatrix to_csr(const TypedCsr<double>& t) {
    CsrMatrix a;
    a.rows = t.rows;
    a.cols = t.cols;
    a.row_ptr = t.row_ptr;
    a.val = t.val;
    if (!t.col64.empty()) {
        a.col = t.col64;
        return a;
    }
    assign_prefaulted(a.col, t.val.size(), std::int64_t{0});
    if (t.compact()) {
        for (std::int64_t i = 0; i < t.rows; ++i) {
            const std::int64_t b = t.base[static_cast<std::size_t>(i)];
            for (std::int64_t p = t.row_ptr[i]; p < t.row_ptr[i + 1]; ++p) {
                a.col[static_cast<std::size_t>(p)] = b + t.col16[static_cast<std::size_t>(p)];
            }
        }
    } else {
        for (std::size_t p = 0; p < t.col.size(); ++p) a.col[p] = t.col[p];
    }
    return a;
}

template <class S, class C>
void spmv(const TypedCsr<S>& a, const C* x, C* y) {
    kernels::csr::CsrApplyArgs<S, C> q;
    q.x = x;
    q.out = y;
    q.op = kernels::csr::CsrOp::spmv;
    run(a, q);
}

template <class S, class C>
void residual(const TypedCsr<S>& a, const C* b, const C* x, C* r) {
    kernels::csr::CsrApplyArgs<S, C> q;
    q.b = b;
    q.x = x;
    q.out = r;
    q.op = kernels::csr::CsrOp::residual;
    run(a, q);
}

template <class S, class C>
void jacobi(const TypedCsr<S>& a, const S* inv_d, C omega, const C* b, const C* x, C* x_new) {
    kernels::csr::CsrApplyArgs<S, C> q;
    q.inv_d = inv_d;
    q.omega = omega;
    q.b = b;
    q.x = x;
    q.out = x_new;
    q.op = kernels::csr::CsrOp::jacobi;
    run(a, q);
}

// Explicit instantiations: exactly the supported (storage, compute) pairs.
template TypedCsr<double> to_typed<double>(const CsrMatrix&, TruncationCounts&, IndexEncoding);
template TypedCsr<float> to_typed<float>(const CsrMatrix&, TruncationCounts&, IndexEncoding);
template TypedCsr<half> to_typed<half>(const CsrMatrix&, TruncationCounts&, IndexEncoding);
template TypedCsr<bfloat16> to_typed<bfloat16>(const CsrMatrix&, TruncationCounts&, IndexEncoding);

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

template void jacobi(const TypedCsr<double>&, const double*, double, const double*, const double*,
                     double*);
template void jacobi(const TypedCsr<float>&, const float*, double, const double*, const double*,
                     double*);
template void jacobi(const TypedCsr<half>&, const half*, double, const double*, const double*,
                     double*);
template void jacobi(const TypedCsr<bfloat16>&, const bfloat16*, double, const double*,
                     const double*, double*);
template void jacobi(const TypedCsr<float>&, const float*, float, const float*, const float*,
                     float*);
template void jacobi(const TypedCsr<half>&, const half*, float, const float*, const float*, float*);
template void jacobi(const TypedCsr<bfloat16>&, const bfloat16*, float, const float*, const float*,
                     float*);

}  // namespace mpmg
