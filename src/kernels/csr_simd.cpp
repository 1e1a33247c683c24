// Per-target CSR kernels (see csr_simd.hpp). This file is compiled once per Highway target
// through foreach_target.h; the HWY_ONCE part at the end builds the dispatch.
//
// Row dot product: full vectors of entries, two at a time with two accumulators (two independent
// FMA chains), values converted in registers, x by column index (gather_x); one horizontal sum per
// row, and the last < N entries of the row scalar (a gather must not read past the row's
// indices), each value converted with load_conv1 as the vectors are (with F16C one vcvtph2ps,
// not to_compute's ~15 integer operations). The finishing formula of the operation is applied
// per row, scalar.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/csr_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>

#include "kernels/load_conv-inl.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/csr_simd.hpp"
#include "kernels/lambda_inline.hpp"

HWY_BEFORE_NAMESPACE();
namespace mpmg::kernels::csr {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using mpmg::kernels::HWY_NAMESPACE::load_conv;  // kernels/load_conv-inl.h
using mpmg::kernels::HWY_NAMESPACE::load_conv1;

/// The column encoding a kernel instance reads (CsrView: col32, col16 + base, col64).
enum class Cols { i32, u16, i64 };

/// Column indices of entries p .. p+N-1 (int32 or uint16 encodings) as the signed lanes
/// GatherIndex takes for D (int32 for float, int64 for double).
template <Cols K, class D, class S>
HWY_INLINE hn::Vec<hn::RebindToSigned<D>> load_index(D d, const CsrView<S>& a, std::int64_t p,
                                                     std::int32_t base) {
    static_assert(K != Cols::i64, "int64 columns take the lane-by-lane path of gather_x");
    const hn::RebindToSigned<D> di;
    const hn::Rebind<std::int32_t, D> d32;
    hn::Vec<decltype(d32)> i32;
    if constexpr (K == Cols::u16) {
        const hn::Rebind<std::uint16_t, D> d16;
        i32 = hn::Add(hn::PromoteTo(d32, hn::LoadU(d16, a.col16 + p)), hn::Set(d32, base));
    } else {
        i32 = hn::LoadU(d32, a.col32 + p);
    }
    (void)d;
    if constexpr (sizeof(hn::TFromD<D>) == 4) {
        return i32;
    } else {
        return hn::PromoteTo(di, i32);
    }
}

template <Cols K, class S>
HWY_INLINE std::int64_t column(const CsrView<S>& a, std::int64_t p, std::int32_t base) {
    if constexpr (K == Cols::u16) {
        return std::int64_t{base} + a.col16[p];
    } else if constexpr (K == Cols::i64) {
        return a.col64[p];
    } else {
        return a.col32[p];
    }
}

/// Whether x[col_p] are better loaded one by one and combined in registers than gathered:
/// vectors of one or two 128-bit blocks (SSE4, NEON, AVX2). On a Zen 3 core a gather cost
/// more than the scalar loads, unpacks and a blend: CSR SpMV on the mfem matrices of
/// ../shared/data (11-14M entries, one thread, ns per entry, this kernel with gathers -> with
/// loads; scratch driver, medians of 11, two rounds): FP64 values and vectors 1.3-2.1 ->
/// 1.0-1.4, FP16/FP64 1.2-2.0 -> 0.5-1.0, FP16/FP32 0.53-0.92 -> 0.40-0.66. AVX-512 keeps its
/// gathers for FP64 (RowTag).
template <class D>
constexpr bool kLoadLanes = (sizeof(hn::TFromD<D>) == 8 &&
                             (hn::MaxLanes(D()) == 2 || hn::MaxLanes(D()) == 4)) ||
                            (sizeof(hn::TFromD<D>) == 4 &&
                             (hn::MaxLanes(D()) == 4 || hn::MaxLanes(D()) == 8));

#if HWY_TARGET != HWY_SCALAR  // (one lane there: no block operations)
/// One 128-bit block of x[col_q], x[col_q+1] .. in every block of a D vector (kLoadLanes).
/// An inline function, not a lambda: GCC 12 compiled the lambda out of line in some builds (a
/// call per block: the 256-bit FP16 residual 1.3x slower; see lambda_inline.hpp).
template <Cols K, class D, class S, class C>
HWY_INLINE hn::Vec<D> x_block(D d, const CsrView<S>& a, std::int64_t q, std::int32_t base,
                              const C* HWY_RESTRICT x) {
    const auto at = [&](std::int64_t r)
                        MPMG_LAMBDA_INLINE { return hn::Set(d, x[column<K>(a, r, base)]); };
    const auto pair = hn::InterleaveLower(d, at(q), at(q + 1));  // (q, q+1, q, q+1 ..)
    if constexpr (sizeof(C) == 8) {
        return pair;
    } else {
        const hn::RepartitionToWide<D> dw;  // 64-bit lanes: (q, q+1) pairs as one
        const auto next = hn::InterleaveLower(d, at(q + 2), at(q + 3));
        return hn::BitCast(d,
                           hn::InterleaveLower(dw, hn::BitCast(dw, pair), hn::BitCast(dw, next)));
    }
}
#endif

/// The vectors of a row's dot product: full width for FP64 compute, at most 256 bits (8 lanes,
/// x loaded lane by lane as kLoadLanes says) for FP32 compute. On the AMD EPYC (Zen 5) VM of
/// docs/bench-amg.md, one thread, one sweep or residual over a whole matrix (FP16 values, FP32
/// vectors; medians of 11 a run, 3 alternating runs), 16-lane AVX-512 gathers took 1.2-2.0x the
/// time of these: laplace27 96^3 (27 entries a row) Gauss-Seidel 24.2 -> 12.9 ms, residual
/// 14.6 -> 9.1 ms; mfem L-shape o3 r7 (25 a row) 10.3 -> 5.8 ms and 9.5 -> 4.7 ms; mfem beam o3
/// r3 (117 a row) 6.0 -> 5.2 ms and 5.7 -> 4.7 ms; jump7 96^3 (7 a row) equal and 5.0 -> 4.4 ms.
/// FP64 was mixed (4 lanes: L-shape 10.3 -> 8.5 ms, beam 8.3 -> 9.3 ms, jump7 10.5 -> 12.3 ms
/// Gauss-Seidel), so it keeps the full width.
template <class C>
using RowTag = std::conditional_t<sizeof(C) == 4, hn::CappedTag<C, 8>, hn::ScalableTag<C>>;

/// x[col_p] for the entries p .. p+N-1.
template <Cols K, class D, class S, class C>
HWY_INLINE hn::Vec<D> gather_x(D d, const CsrView<S>& a, std::int64_t p, std::int32_t base,
                               const C* HWY_RESTRICT x) {
#if HWY_TARGET != HWY_SCALAR
    if constexpr (kLoadLanes<D>) {
        constexpr std::int64_t kBlock = 16 / sizeof(C);
        if constexpr (hn::MaxLanes(D()) == kBlock) {
            return x_block<K>(d, a, p, base, x);
        } else {
            return hn::ConcatUpperLower(d, x_block<K>(d, a, p + kBlock, base, x),
                                        x_block<K>(d, a, p, base, x));
        }
    }
#endif
    if constexpr (K == Cols::i64) {  // rare (more than 2^31 columns): through a lane buffer
        HWY_ALIGN C lanes[hn::MaxLanes(D())];
        for (std::size_t l = 0; l < hn::Lanes(d); ++l) lanes[l] = x[a.col64[p + l]];
        return hn::Load(d, lanes);
    } else {
        return hn::GatherIndex(d, x, load_index<K>(d, a, p, base));
    }
}

/// sum_{p in [p0, p1)} a_p x[col_p] in C.
template <Cols K, class D, class S, class C>
HWY_INLINE C row_dot(D d, const CsrView<S>& a, std::int64_t p0, std::int64_t p1, std::int32_t base,
                     const C* HWY_RESTRICT x) {
    const auto n = static_cast<std::int64_t>(hn::Lanes(d));
    auto s0 = hn::Zero(d), s1 = hn::Zero(d);
    std::int64_t p = p0;
    for (; p + 2 * n <= p1; p += 2 * n) {
        const auto x0 = gather_x<K>(d, a, p, base, x);
        const auto x1 = gather_x<K>(d, a, p + n, base, x);
        s0 = hn::MulAdd(load_conv(d, a.val + p), x0, s0);
        s1 = hn::MulAdd(load_conv(d, a.val + p + n), x1, s1);
    }
    if (p + n <= p1) {
        const auto x0 = gather_x<K>(d, a, p, base, x);
        s0 = hn::MulAdd(load_conv(d, a.val + p), x0, s0);
        p += n;
    }
    C s = hn::GetLane(hn::SumOfLanes(d, hn::Add(s0, s1)));
    for (; p < p1; ++p) s += load_conv1<C>(a.val + p) * x[column<K>(a, p, base)];
    return s;
}

template <Cols K, CsrOp Op, class S, class C>
void apply_rows(const CsrApplyArgs<S, C>& q) {
    const RowTag<C> d;
    const CsrView<S>& a = q.a;
    for (std::int64_t i = q.row_begin; i < q.row_end; ++i) {
        const std::int32_t base = K == Cols::u16 ? a.base[i] : 0;
        const C s = row_dot<K>(d, a, a.row_ptr[i], a.row_ptr[i + 1], base, q.x);
        if constexpr (Op == CsrOp::spmv) {
            q.out[i] = s;
        } else if constexpr (Op == CsrOp::residual) {
            q.out[i] = q.b[i] - s;
        } else {
            q.out[i] = q.x[i] + q.omega * load_conv1<C>(q.inv_d + i) * (q.b[i] - s);
        }
    }
}

template <Cols K, class S, class C>
void apply_op(const CsrApplyArgs<S, C>& q) {
    switch (q.op) {
        case CsrOp::spmv:
            return apply_rows<K, CsrOp::spmv>(q);
        case CsrOp::residual:
            return apply_rows<K, CsrOp::residual>(q);
        case CsrOp::jacobi:
            return apply_rows<K, CsrOp::jacobi>(q);
    }
}

template <class S, class C>
void apply_any(const CsrApplyArgs<S, C>& q) {
    if (q.a.col16 != nullptr) {
        apply_op<Cols::u16>(q);
    } else if (q.a.col64 != nullptr) {
        apply_op<Cols::i64>(q);
    } else {
        apply_op<Cols::i32>(q);
    }
}

/// First entry in [p0, p1) whose column is >= c (columns are sorted within a row).
template <Cols K, class S>
HWY_INLINE std::int64_t lower(const CsrView<S>& a, std::int64_t p0, std::int64_t p1,
                              std::int32_t base, std::int64_t c) {
    while (p0 < p1) {
        const std::int64_t m = p0 + (p1 - p0) / 2;
        if (column<K>(a, m, base) < c) {
            p0 = m + 1;
        } else {
            p1 = m;
        }
    }
    return p0;
}

template <Cols K, class S, class C>
void gs_rows(const CsrGsArgs<S, C>& q) {
    const RowTag<C> d;
    const CsrView<S>& a = q.a;
    const bool split = q.outside != q.x;
    const bool unit = q.inv_d == nullptr;
    const std::int64_t n = q.row_end - q.row_begin;
    for (std::int64_t k = 0; k < n; ++k) {
        const std::int64_t i = q.forward ? q.row_begin + k : q.row_end - 1 - k;
        const std::int32_t base = K == Cols::u16 ? a.base[i] : 0;
        const std::int64_t p0 = a.row_ptr[i], p1 = a.row_ptr[i + 1];
        C s;
        if (split) {  // columns before, inside and after the row range: contiguous in the row
            const std::int64_t m0 = lower<K>(a, p0, p1, base, q.row_begin);
            const std::int64_t m1 = lower<K>(a, m0, p1, base, q.row_end);
            s = row_dot<K>(d, a, p0, m0, base, q.outside) +
                row_dot<K>(d, a, m0, m1, base, static_cast<const C*>(q.x)) +
                row_dot<K>(d, a, m1, p1, base, q.outside);
        } else {
            s = row_dot<K>(d, a, p0, p1, base, static_cast<const C*>(q.x));
        }
        const C r = q.b[i] - s;
        q.x[i] += unit ? r : load_conv1<C>(q.inv_d + i) * r;
    }
}

template <class S, class C>
void gs_any(const CsrGsArgs<S, C>& q) {
    if (q.a.col16 != nullptr) {
        gs_rows<Cols::u16>(q);
    } else if (q.a.col64 != nullptr) {
        gs_rows<Cols::i64>(q);
    } else {
        gs_rows<Cols::i32>(q);
    }
}

// One plain exported function per supported (storage, compute) pair (no HWY_EXPORT_T in 1.0.3).
void apply_dd(const CsrApplyArgs<double, double>& q) { apply_any(q); }
void apply_fd(const CsrApplyArgs<float, double>& q) { apply_any(q); }
void apply_hd(const CsrApplyArgs<half, double>& q) { apply_any(q); }
void apply_bd(const CsrApplyArgs<bfloat16, double>& q) { apply_any(q); }
void apply_ff(const CsrApplyArgs<float, float>& q) { apply_any(q); }
void apply_hf(const CsrApplyArgs<half, float>& q) { apply_any(q); }
void apply_bf(const CsrApplyArgs<bfloat16, float>& q) { apply_any(q); }
void gs_dd(const CsrGsArgs<double, double>& q) { gs_any(q); }
void gs_fd(const CsrGsArgs<float, double>& q) { gs_any(q); }
void gs_hd(const CsrGsArgs<half, double>& q) { gs_any(q); }
void gs_bd(const CsrGsArgs<bfloat16, double>& q) { gs_any(q); }
void gs_ff(const CsrGsArgs<float, float>& q) { gs_any(q); }
void gs_hf(const CsrGsArgs<half, float>& q) { gs_any(q); }
void gs_bf(const CsrGsArgs<bfloat16, float>& q) { gs_any(q); }
std::int64_t current_target() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace mpmg::kernels::csr
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpmg::kernels::csr {

HWY_EXPORT(apply_dd);
HWY_EXPORT(apply_fd);
HWY_EXPORT(apply_hd);
HWY_EXPORT(apply_bd);
HWY_EXPORT(apply_ff);
HWY_EXPORT(apply_hf);
HWY_EXPORT(apply_bf);
HWY_EXPORT(gs_dd);
HWY_EXPORT(gs_fd);
HWY_EXPORT(gs_hd);
HWY_EXPORT(gs_bd);
HWY_EXPORT(gs_ff);
HWY_EXPORT(gs_hf);
HWY_EXPORT(gs_bf);
HWY_EXPORT(current_target);

void apply(const CsrApplyArgs<double, double>& q) { HWY_DYNAMIC_DISPATCH(apply_dd)(q); }
void apply(const CsrApplyArgs<float, double>& q) { HWY_DYNAMIC_DISPATCH(apply_fd)(q); }
void apply(const CsrApplyArgs<half, double>& q) { HWY_DYNAMIC_DISPATCH(apply_hd)(q); }
void apply(const CsrApplyArgs<bfloat16, double>& q) { HWY_DYNAMIC_DISPATCH(apply_bd)(q); }
void apply(const CsrApplyArgs<float, float>& q) { HWY_DYNAMIC_DISPATCH(apply_ff)(q); }
void apply(const CsrApplyArgs<half, float>& q) { HWY_DYNAMIC_DISPATCH(apply_hf)(q); }
void apply(const CsrApplyArgs<bfloat16, float>& q) { HWY_DYNAMIC_DISPATCH(apply_bf)(q); }

void gs_sweep(const CsrGsArgs<double, double>& q) { HWY_DYNAMIC_DISPATCH(gs_dd)(q); }
void gs_sweep(const CsrGsArgs<float, double>& q) { HWY_DYNAMIC_DISPATCH(gs_fd)(q); }
void gs_sweep(const CsrGsArgs<half, double>& q) { HWY_DYNAMIC_DISPATCH(gs_hd)(q); }
void gs_sweep(const CsrGsArgs<bfloat16, double>& q) { HWY_DYNAMIC_DISPATCH(gs_bd)(q); }
void gs_sweep(const CsrGsArgs<float, float>& q) { HWY_DYNAMIC_DISPATCH(gs_ff)(q); }
void gs_sweep(const CsrGsArgs<half, float>& q) { HWY_DYNAMIC_DISPATCH(gs_hf)(q); }
void gs_sweep(const CsrGsArgs<bfloat16, float>& q) { HWY_DYNAMIC_DISPATCH(gs_bf)(q); }

const char* target_name() { return hwy::TargetName(HWY_DYNAMIC_DISPATCH(current_target)()); }

}  // namespace mpmg::kernels::csr
#endif  // HWY_ONCE
