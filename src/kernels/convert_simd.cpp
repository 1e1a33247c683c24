// Per-target narrowing kernels (see convert_simd.hpp). This file is compiled once per Highway
// target through foreach_target.h; the HWY_ONCE part at the end builds the dispatch.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/convert_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>

#include "kernels/load_conv-inl.h"
#include "kernels/range_count-inl.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/convert_simd.hpp"

HWY_BEFORE_NAMESPACE();
namespace mpmg::kernels::convert {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using mpmg::kernels::HWY_NAMESPACE::counted_chunks;  // kernels/range_count-inl.h
using mpmg::kernels::HWY_NAMESPACE::RangeVecs;

using mpmg::kernels::HWY_NAMESPACE::kF16c;  // kernels/load_conv-inl.h

/// The double rounded to odd at 24 significant bits (binary32's precision), on its integer
/// bits: the low 29 fraction bits are cleared and, when any was set, bit 29 is set (a sticky
/// bit). The result converts to float exactly in float's normal range, and rounding it once
/// more to nearest even at <= 22 bits gives the correctly rounded result of x (round to odd
/// with two spare bits avoids double rounding). NaN stays NaN; Inf stays Inf.
template <class D>
HWY_INLINE hn::Vec<D> round_to_odd_24(D d, hn::Vec<D> x) {
    const hn::RebindToUnsigned<D> du;
    const auto low = hn::Set(du, (std::uint64_t{1} << 29) - 1);
    const auto u = hn::BitCast(du, x);
    // (u & low) + low has bit 29 set exactly when u & low != 0.
    const auto sticky = hn::And(hn::Add(hn::And(u, low), low), hn::Set(du, std::uint64_t{1} << 29));
    return hn::BitCast(d, hn::Or(hn::AndNot(low, u), sticky));
}

/// Bits of the format with `mant` fraction bits, minimum normal exponent `emin` and an
/// `expbits`-bit exponent, rounded to nearest even from the integer bits of finite x, in 64-bit
/// lanes (the vector form of detail::narrow_bits; NaN lanes are left to the caller).
template <int mant, int emin, int expbits, class D>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<D>> narrow_bits(D d, hn::Vec<D> x) {
    const hn::RebindToUnsigned<D> du;
    const hn::RebindToSigned<D> di;
    const auto u = hn::BitCast(du, x);
    const auto mag = hn::And(u, hn::Set(du, ~(std::uint64_t{1} << 63)));
    const auto e = hn::Sub(hn::BitCast(di, hn::ShiftRight<52>(mag)), hn::Set(di, 1023));
    // The significand with its implicit bit (a zero or subnormal double rounds to 0 below).
    const auto m = hn::Or(hn::And(u, hn::Set(du, (std::uint64_t{1} << 52) - 1)),
                          hn::Set(du, std::uint64_t{1} << 52));
    // The format's spacing at x is 2^(max(e, emin) - mant): drop that many of the 52 fraction
    // bits; at 63 or more every bit goes and x rounds to zero.
    const auto below = hn::Max(hn::Sub(hn::Set(di, emin), e), hn::Zero(di));
    const auto shift =
        hn::BitCast(du, hn::Min(hn::Add(below, hn::Set(di, 52 - mant)), hn::Set(di, 63)));
    const auto one = hn::Set(du, 1);
    const auto odd = hn::And(m >> shift, one);
    const auto half_minus_one = hn::Sub(one << hn::Sub(shift, one), one);
    const auto q = hn::Add(hn::Add(m, half_minus_one), odd) >> shift;
    // Normal: (e - emin) << mant plus q in [2^mant, 2^(mant+1)] carries into the exponent
    // field; subnormal: q is the bit pattern. Overflow (also by rounding) saturates at Inf.
    const auto biased = hn::ShiftLeft<mant>(hn::Max(hn::Sub(e, hn::Set(di, emin)), hn::Zero(di)));
    constexpr auto inf = static_cast<std::int64_t>(((std::uint64_t{1} << expbits) - 1) << mant);
    const auto bits = hn::Min(hn::Add(biased, hn::BitCast(di, q)), hn::Set(di, inf));
    const auto sign = hn::ShiftLeft<mant + expbits>(hn::ShiftRight<63>(u));
    (void)d;
    return hn::Or(hn::BitCast(du, bits), sign);
}

/// Narrows one vector of doubles at src to S at dst.
template <class S, class D>
HWY_INLINE void store_narrow(D d, hn::Vec<D> x, S* HWY_RESTRICT dst) {
    if constexpr (std::is_same_v<S, double>) {
        hn::StoreU(x, d, dst);
    } else if constexpr (std::is_same_v<S, float>) {
        const hn::Rebind<float, D> df;
        hn::StoreU(hn::DemoteTo(df, x), df, dst);
    } else if constexpr (std::is_same_v<S, half> && kF16c) {
        const hn::Rebind<float, D> df;
        const hn::Rebind<hwy::float16_t, D> dh;
        const auto f = hn::DemoteTo(df, round_to_odd_24(d, x));
        hn::StoreU(hn::DemoteTo(dh, f), dh, reinterpret_cast<hwy::float16_t*>(dst));
    } else {
        using F = BinaryFormat<S>;
        const hn::Rebind<std::uint16_t, D> du16;
        const auto bits = narrow_bits<F::mant, F::emin, F::expbits>(d, x);
        hn::StoreU(hn::TruncateTo(du16, bits), du16, reinterpret_cast<std::uint16_t*>(dst));
    }
}

/// dst = S(x) with x = src (kScaled false) or src / (si sj) (setup-then-scale, the same IEEE
/// operations as scale_matrix), and the counts.
template <bool kScaled, class S>
TruncationCounts narrow_any(const double* HWY_RESTRICT src, const double* HWY_RESTRICT si,
                            const double* HWY_RESTRICT sj, S* HWY_RESTRICT dst, std::int64_t n,
                            double* largest = nullptr) {
    const hn::ScalableTag<double> d;
    const double overflow = range_limits<S>().overflow;
    auto big = hn::Zero(d);  // largest |x| per lane; a comparison, so NaN never enters
    const auto value = [&](std::int64_t i) {
        if constexpr (kScaled) {
            return src[i] / (si[i] * sj[i]);
        } else {
            return src[i];
        }
    };
    TruncationCounts c;
    const auto narrowed = [&](std::int64_t i) {
        auto x = hn::LoadU(d, src + i);
        if constexpr (kScaled) x = hn::Div(x, hn::Mul(hn::LoadU(d, si + i), hn::LoadU(d, sj + i)));
        store_narrow(d, x, dst + i);
        if constexpr (kScaled) {
            const auto ax = hn::Abs(x);
            big = hn::IfThenElse(hn::Gt(ax, big), ax, big);
        }
        return x;
    };
    // NaN: the canonical quiet NaN of the scalar conversion, not the hardware's payload;
    // overflow and Inf: Inf (Highway's scalar double -> float demotion saturates). Only the
    // vectors with such a lane are redone.
    const auto vlimit = hn::Set(d, overflow);
    const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
    const auto redo = [&](std::int64_t begin, std::int64_t end, const double* values) {
        for (std::int64_t v = begin; v < end; v += lanes) {
            if (hn::AllTrue(d, hn::Lt(hn::Abs(hn::Load(d, values + (v - begin))), vlimit)))
                continue;
            for (std::int64_t i = v; i < v + lanes; ++i) {
                if (!(std::fabs(values[i - begin]) < overflow)) {
                    dst[i] = from_double<S>(values[i - begin]);
                }
            }
        }
    };
    std::int64_t k = counted_chunks(d, n, RangeVecs<hn::ScalableTag<double>>(d, range_limits<S>()),
                                    c, narrowed, redo);
    double top = hn::GetLane(hn::MaxOfLanes(d, big));
    for (; k < n; ++k) {
        const double x = value(k);
        if (std::fabs(x) > top) top = std::fabs(x);
        dst[k] = truncate_counted<S>(x, c);
    }
    if (largest && n > 0 && top > *largest) *largest = top;
    return c;
}

TruncationCounts narrow_d(const double* src, double* dst, std::int64_t n) {
    return narrow_any<false>(src, nullptr, nullptr, dst, n);
}
TruncationCounts narrow_f(const double* src, float* dst, std::int64_t n) {
    return narrow_any<false>(src, nullptr, nullptr, dst, n);
}
TruncationCounts narrow_h(const double* src, half* dst, std::int64_t n) {
    return narrow_any<false>(src, nullptr, nullptr, dst, n);
}
TruncationCounts narrow_b(const double* src, bfloat16* dst, std::int64_t n) {
    return narrow_any<false>(src, nullptr, nullptr, dst, n);
}
TruncationCounts narrow_scaled_h(const double* src, const double* si, const double* sj, half* dst,
                                 std::int64_t n, double* largest) {
    return narrow_any<true>(src, si, sj, dst, n, largest);
}
TruncationCounts narrow_scaled_b(const double* src, const double* si, const double* sj,
                                 bfloat16* dst, std::int64_t n, double* largest) {
    return narrow_any<true>(src, si, sj, dst, n, largest);
}
/// The facts (HalfFacts) of one FP16 value's bits.
HWY_INLINE void add_half_facts(std::uint16_t bits, HalfFacts& f) {
    const auto m = static_cast<std::uint16_t>(bits & 0x7fffu);
    const bool subnormal = m != 0 && m < kHalfMinNormalBits;
    f.subnormal += subnormal;
    f.outside = f.outside || subnormal || m > kHalfOfMaxBits;
}

/// dst = S(src) if S holds every value exactly (returns true); stops at the first chunk with a
/// value it does not hold and returns false (dst then partly written). A value is exact when the
/// narrowed one, widened as the kernels widen it (load_conv), equals it and it is finite (Inf
/// and NaN never are; a value outside S's range or between its steps is not, whatever the
/// narrowing made of it). kMultiple: the values are q = src / c, and each must also give src
/// back as q c (the FP64 product). For half, `facts` (when not null) gets the HalfFacts of the
/// values written, from their bits in the same pass: per chunk the largest |bits| (above
/// max / 2?) and the smallest |bits| - 1 (a subnormal's is below 0x3ff; zero wraps to 0xffff),
/// and a chunk with a subnormal is counted again value by value.
template <bool kMultiple, class S>
bool narrow_exact_any(const double* HWY_RESTRICT src, double c, S* HWY_RESTRICT dst, std::int64_t n,
                      HalfFacts* facts) {
    constexpr bool kFacts = std::is_same_v<S, half>;
    const hn::ScalableTag<double> d;
    const hn::Rebind<std::uint16_t, decltype(d)> du16;
    const std::int64_t nl = static_cast<std::int64_t>(hn::Lanes(d));
    constexpr std::int64_t kChunkVecs = 64;  // vectors between checks of the equality mask
    const auto vc = hn::Set(d, c);
    const auto magnitude = hn::Set(du16, 0x7fff);
    const auto one = hn::Set(du16, 1);
    auto top = hn::Zero(du16);
    HalfFacts f;
    std::int64_t i = 0;
    while (i + nl <= n) {
        auto same = hn::Eq(hn::Zero(d), hn::Zero(d));
        auto low = hn::Set(du16, 0xffff);
        const std::int64_t begin = i;
        const std::int64_t end = std::min(n - nl, i + (kChunkVecs - 1) * nl);
        for (; i <= end; i += nl) {
            const auto v = hn::LoadU(d, src + i);
            const auto x = kMultiple ? hn::Div(v, vc) : v;
            store_narrow(d, x, dst + i);
            same = hn::And(same,
                           hn::And(hn::IsFinite(x),
                                   hn::Eq(mpmg::kernels::HWY_NAMESPACE::load_conv(d, dst + i), x)));
            if constexpr (kMultiple) same = hn::And(same, hn::Eq(hn::Mul(x, vc), v));
            if constexpr (kFacts) {
                const auto m = hn::And(
                    hn::LoadU(du16, reinterpret_cast<const std::uint16_t*>(dst + i)), magnitude);
                top = hn::Max(top, m);
                low = hn::Min(low, hn::Sub(m, one));
            }
        }
        if (!hn::AllTrue(d, same)) return false;
        if constexpr (kFacts) {
            if (!hn::AllFalse(du16, hn::Lt(low, hn::Set(du16, kHalfMinNormalBits - 1)))) {
                for (std::int64_t k = begin; k < i; ++k) add_half_facts(dst[k].bits, f);
            }
        }
    }
    for (; i < n; ++i) {
        const double x = kMultiple ? src[i] / c : src[i];
        dst[i] = from_double<S>(x);
        if (!std::isfinite(x) || !(to_double(dst[i]) == x)) return false;
        if (kMultiple && !(x * c == src[i])) return false;
        if constexpr (kFacts) add_half_facts(dst[i].bits, f);
    }
    if constexpr (kFacts) {
        // (A subnormal set `outside` where it was counted.)
        f.outside = f.outside || !hn::AllFalse(du16, hn::Gt(top, hn::Set(du16, kHalfOfMaxBits)));
        if (facts != nullptr) *facts += f;
    }
    return true;
}

bool narrow_exact_f(const double* src, float* dst, std::int64_t n) {
    return narrow_exact_any<false>(src, 1.0, dst, n, nullptr);
}
bool narrow_exact_h(const double* src, half* dst, std::int64_t n, HalfFacts* facts) {
    return narrow_exact_any<false>(src, 1.0, dst, n, facts);
}
bool narrow_exact_multiple_h(const double* src, double c, half* dst, std::int64_t n,
                             HalfFacts* facts) {
    return narrow_exact_any<true>(src, c, dst, n, facts);
}
std::int64_t current_target() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace mpmg::kernels::convert
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpmg::kernels {
namespace convert {

HWY_EXPORT(narrow_d);
HWY_EXPORT(narrow_f);
HWY_EXPORT(narrow_h);
HWY_EXPORT(narrow_b);
HWY_EXPORT(narrow_scaled_h);
HWY_EXPORT(narrow_scaled_b);
HWY_EXPORT(narrow_exact_f);
HWY_EXPORT(narrow_exact_h);
HWY_EXPORT(narrow_exact_multiple_h);
HWY_EXPORT(current_target);

}  // namespace convert

TruncationCounts narrow(const double* src, double* dst, std::int64_t n) {
    return HWY_DYNAMIC_DISPATCH(convert::narrow_d)(src, dst, n);
}
TruncationCounts narrow(const double* src, float* dst, std::int64_t n) {
    return HWY_DYNAMIC_DISPATCH(convert::narrow_f)(src, dst, n);
}
TruncationCounts narrow(const double* src, half* dst, std::int64_t n) {
    return HWY_DYNAMIC_DISPATCH(convert::narrow_h)(src, dst, n);
}
TruncationCounts narrow(const double* src, bfloat16* dst, std::int64_t n) {
    return HWY_DYNAMIC_DISPATCH(convert::narrow_b)(src, dst, n);
}
bool narrow_exact(const double* src, float* dst, std::int64_t n) {
    return HWY_DYNAMIC_DISPATCH(convert::narrow_exact_f)(src, dst, n);
}
bool narrow_exact(const double* src, half* dst, std::int64_t n, HalfFacts* facts) {
    return HWY_DYNAMIC_DISPATCH(convert::narrow_exact_h)(src, dst, n, facts);
}
bool narrow_exact_multiple(const double* src, double c, half* dst, std::int64_t n,
                           HalfFacts* facts) {
    return HWY_DYNAMIC_DISPATCH(convert::narrow_exact_multiple_h)(src, c, dst, n, facts);
}
TruncationCounts narrow_scaled(const double* src, const double* si, const double* sj, half* dst,
                               std::int64_t n, double* largest) {
    return HWY_DYNAMIC_DISPATCH(convert::narrow_scaled_h)(src, si, sj, dst, n, largest);
}
TruncationCounts narrow_scaled(const double* src, const double* si, const double* sj, bfloat16* dst,
                               std::int64_t n, double* largest) {
    return HWY_DYNAMIC_DISPATCH(convert::narrow_scaled_b)(src, si, sj, dst, n, largest);
}
const char* convert_target_name() {
    return hwy::TargetName(HWY_DYNAMIC_DISPATCH(convert::current_target)());
}

}  // namespace mpmg::kernels
#endif  // HWY_ONCE
