// Per-target helper for the Highway kernels (include after <hwy/highway.h>, once per target, the
// usual Highway "-inl.h" toggle): the verdicts of TruncationCounts (core/float16.hpp) for FP64
// lanes, by comparisons of |x| with the RangeLimits of the target format.
//
// Kernels that narrow or scale many values test each vector for "safe" lanes only (|x| = 0 or
// in [subnormal limit, overflow limit): nothing to count) and count a chunk lane by lane only
// when it has an unsafe lane: in-range levels pay three comparisons per vector.
// Used by convert_simd.cpp and setup_simd.cpp.
#if defined(MPMG_KERNELS_RANGE_COUNT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef MPMG_KERNELS_RANGE_COUNT_INL_H_
#undef MPMG_KERNELS_RANGE_COUNT_INL_H_
#else
#define MPMG_KERNELS_RANGE_COUNT_INL_H_
#endif

#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

#include "core/float16.hpp"

HWY_BEFORE_NAMESPACE();
namespace mpmg::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// The limits of one format broadcast to FP64 lanes.
template <class D>
struct RangeVecs {
    hn::Vec<D> underflow, subnormal, overflow, max;
    RangeVecs(D d, const RangeLimits& lim)
        : underflow(hn::Set(d, lim.underflow)),
          subnormal(hn::Set(d, lim.subnormal)),
          overflow(hn::Set(d, lim.overflow)),
          max(hn::Set(d, std::numeric_limits<double>::max())) {}
};

/// Lanes with nothing to count: |x| (ax) is 0 or in [subnormal, overflow). NaN is not safe.
template <class D>
HWY_INLINE hn::Mask<D> safe_lanes(D d, hn::Vec<D> ax, const RangeVecs<D>& l) {
    return hn::Or(hn::Eq(ax, hn::Zero(d)),
                  hn::And(hn::Ge(ax, l.subnormal), hn::Lt(ax, l.overflow)));
}

/// All lanes true.
template <class D>
HWY_INLINE hn::Mask<D> all_lanes(D d) {
    return hn::Eq(hn::Zero(d), hn::Zero(d));
}

/// Adds the counts of the n values at p (n a multiple of Lanes(d)) to `c`.
template <class D>
HWY_INLINE void count_lanes(D d, const double* HWY_RESTRICT p, std::int64_t n,
                            const RangeVecs<D>& l, TruncationCounts& c) {
    const hn::RebindToSigned<D> di;
    const auto lane = [&](hn::Mask<D> m) { return hn::BitCast(di, hn::VecFromMask(d, m)); };
    auto over = hn::Zero(di), under = hn::Zero(di), sub = hn::Zero(di), finite = hn::Zero(di);
    const auto zero = hn::Zero(d);
    for (std::int64_t k = 0; k < n; k += static_cast<std::int64_t>(hn::Lanes(d))) {
        const auto ax = hn::Abs(hn::LoadU(d, p + k));
        const auto fin = hn::Le(ax, l.max);
        finite = hn::Sub(finite, lane(fin));  // a true lane is all ones: -1
        over = hn::Sub(over, lane(hn::And(fin, hn::Ge(ax, l.overflow))));
        under = hn::Sub(under, lane(hn::And(hn::Ne(ax, zero), hn::Le(ax, l.underflow))));
        sub = hn::Sub(sub, lane(hn::And(hn::Gt(ax, l.underflow), hn::Lt(ax, l.subnormal))));
    }
    const auto sum = [&](hn::Vec<decltype(di)> v) {
        return static_cast<long long>(hn::GetLane(hn::SumOfLanes(di, v)));
    };
    c.overflow += sum(over);
    c.underflow += sum(under);
    c.subnormal += sum(sub);
    c.nonfinite_input += n - sum(finite);
}

/// Values per chunk: the unit recounted when a lane needs counting (stays in L1).
constexpr std::int64_t kCountChunk = 256;

/// The full vectors of the n values, chunk by chunk: values(k) produces (and may store) the FP64
/// vector of values k .. k+N-1, which is also kept in a buffer of the chunk (L1); a chunk with an
/// unsafe lane is counted lane by lane from that buffer into `c`, and then unsafe(begin, end,
/// vals) is called with its values (vals[i - begin] is value i) for whatever the caller must
/// redo there. Returns how many values were done (a multiple of Lanes(d)); the caller does the
/// rest scalar. (Until the forty-seventh session the callers recomputed an unsafe chunk's values
/// scalar: with a value to count in every chunk, as in the scaled weather matrix, FP16 narrowing
/// of 19 x 1.77M scaled values took 62-77 instead of 28-32 ms.)
template <class D, class F, class G>
HWY_INLINE std::int64_t counted_chunks(D d, std::int64_t n, const RangeVecs<D>& l,
                                       TruncationCounts& c, F&& values, G&& unsafe) {
    const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
    HWY_ALIGN double buf[kCountChunk];
    std::int64_t k = 0;
    while (n - k >= lanes) {
        const std::int64_t begin = k;
        const std::int64_t end = k + std::min(kCountChunk, (n - k) / lanes * lanes);
        auto ok = all_lanes(d);
        for (; k < end; k += lanes) {
            const auto v = values(k);
            hn::Store(v, d, buf + (k - begin));
            ok = hn::And(ok, safe_lanes(d, hn::Abs(v), l));
        }
        if (hn::AllTrue(d, ok)) continue;
        count_lanes(d, buf, end - begin, l, c);
        unsafe(begin, end, static_cast<const double*>(buf));
    }
    return k;
}

/// counted_chunks with nothing to redo in an unsafe chunk (the values are only counted).
template <class D, class F>
HWY_INLINE std::int64_t counted_chunks(D d, std::int64_t n, const RangeVecs<D>& l,
                                       TruncationCounts& c, F&& values) {
    return counted_chunks(d, n, l, c, std::forward<F>(values),
                          [](std::int64_t, std::int64_t, const double*) {});
}

}  // namespace mpmg::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // MPMG_KERNELS_RANGE_COUNT_INL_H_
