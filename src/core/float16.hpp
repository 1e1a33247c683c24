// FP16 and BF16 as storage types (STYLE.md: converted to the compute precision in registers;
// these scalar conversions are for setup, references and tests; kernels use SIMD).
// Both are layout-compatible with hwy::float16_t / hwy::bfloat16_t (one uint16_t).
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace mpmg {

/// IEEE 754 binary16 bits.
struct half {
    std::uint16_t bits = 0;
};
/// bfloat16 bits (upper half of a binary32).
struct bfloat16 {
    std::uint16_t bits = 0;
};

inline constexpr double kHalfMax = 65504.0;
inline constexpr double kHalfMinNormal = 6.103515625e-05;            // 2^-14
inline constexpr double kHalfMinSubnormal = 5.9604644775390625e-08;  // 2^-24
/// On the bits of |h| (bits & 0x7fff): the smallest normal, 2^-14, and max / 2 = 32752 (the
/// largest value a level keeps unscaled); Inf and NaN lie above.
inline constexpr std::uint16_t kHalfMinNormalBits = 0x0400;
inline constexpr std::uint16_t kHalfOfMaxBits = 0x77ff;
inline constexpr double kBf16Max = 3.3895313892515355e38;
inline constexpr double kBf16MinNormal = 1.1754943508222875e-38;

namespace detail {

/// Rounds x to nearest even in a binary format with `mant` fraction bits, exponent range
/// [emin, emax] and an `expbits`-bit exponent field, on the integer bits of the double: exact
/// (no double rounding through float) and branch-light, for setup loops over every entry.
/// Overflow gives +-inf, values below half the smallest subnormal give +-0, NaN stays NaN.
template <int mant, int emin, int emax, int expbits>
inline std::uint16_t narrow_bits(double x) {
    constexpr std::uint64_t inf = ((std::uint64_t{1} << expbits) - 1) << mant;
    const auto b = std::bit_cast<std::uint64_t>(x);
    const auto sign = static_cast<std::uint16_t>((b >> 63) << (mant + expbits));
    const int exp = static_cast<int>((b >> 52) & 0x7FF);
    const std::uint64_t frac = b & ((std::uint64_t{1} << 52) - 1);
    if (exp == 0x7FF) {
        const std::uint64_t nan = inf | (std::uint64_t{1} << (mant - 1));
        return static_cast<std::uint16_t>(sign | (frac ? nan : inf));
    }
    const int e = exp - 1023;
    if (e > emax) return static_cast<std::uint16_t>(sign | inf);
    if (exp == 0 || e < emin - mant - 1) return sign;  // below half the smallest subnormal
    // Value = M * 2^(e-52) with the implicit bit; the spacing here is 2^(max(e,emin)-mant).
    const std::uint64_t m_full = frac | (std::uint64_t{1} << 52);
    const int shift = 52 - mant + std::max(emin - e, 0);
    std::uint64_t q = m_full >> shift;
    const std::uint64_t rem = m_full & ((std::uint64_t{1} << shift) - 1);
    const std::uint64_t halfway = std::uint64_t{1} << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1))) ++q;
    // Normal: q in [2^mant, 2^(mant+1)] carries into the exponent field by the addition below;
    // subnormal: q <= 2^mant is the bit pattern itself (2^mant = the smallest normal).
    std::uint64_t bits = e >= emin ? (static_cast<std::uint64_t>(e - emin) << mant) + q : q;
    if (bits >= inf) bits = inf;
    return static_cast<std::uint16_t>(sign | bits);
}

}  // namespace detail

/// Rounds to nearest even (IEEE), overflow to +-inf, underflow through subnormals to +-0.
/// Converts from double directly (no double rounding through float).
/// Parameters of the binary storage formats: fraction bits, normal exponent range, exponent
/// field width. The one place they are written; rounding, range checks and counts use them
/// (binary32's are used only for its range limits: float rounds by the hardware conversion).
template <class T>
struct BinaryFormat;
template <>
struct BinaryFormat<half> {
    static constexpr int mant = 10, emin = -14, emax = 15, expbits = 5;
};
template <>
struct BinaryFormat<bfloat16> {
    static constexpr int mant = 7, emin = -126, emax = 127, expbits = 8;
};
template <>
struct BinaryFormat<float> {
    static constexpr int mant = 23, emin = -126, emax = 127, expbits = 8;
};
/// Bits of the exponent field when all ones (Inf/NaN) for format T.
template <class T>
constexpr unsigned exponent_mask() {
    return ((1u << BinaryFormat<T>::expbits) - 1u) << BinaryFormat<T>::mant;
}

template <class T>
inline std::uint16_t narrow_to(double x) {
    using F = BinaryFormat<T>;
    return detail::narrow_bits<F::mant, F::emin, F::emax, F::expbits>(x);
}

inline half half_from_double(double x) { return half{narrow_to<half>(x)}; }
/// Exact (bit manipulation: no libm call, cheap enough for loops over every entry).
inline double double_from_half(half h) {
    const std::uint64_t sign = static_cast<std::uint64_t>(h.bits & 0x8000) << 48;
    const int exp = (h.bits >> 10) & 0x1F;
    const std::uint64_t frac = h.bits & 0x3FF;
    if (exp == 0) {  // zero or subnormal: frac * 2^-24, exact
        const double v = static_cast<double>(frac) * 5.9604644775390625e-08;
        return sign ? -v : v;
    }
    if (exp == 31) {
        return std::bit_cast<double>(sign | (std::uint64_t{0x7FF} << 52) | (frac << 42));
    }
    return std::bit_cast<double>(sign | (static_cast<std::uint64_t>(exp - 15 + 1023) << 52) |
                                 (frac << 42));
}
inline float float_from_half(half h) { return static_cast<float>(double_from_half(h)); }

/// Rounds to nearest even; NaN stays NaN.
inline bfloat16 bf16_from_double(double x) { return bfloat16{narrow_to<bfloat16>(x)}; }
inline float float_from_bf16(bfloat16 b) {
    return std::bit_cast<float>(static_cast<std::uint32_t>(b.bits) << 16);
}
inline double double_from_bf16(bfloat16 b) { return float_from_bf16(b); }

/// Uniform conversion used by templated code: to_double(T), from_double<T>(double).
inline double to_double(double x) { return x; }
inline double to_double(float x) { return x; }
inline double to_double(half x) { return double_from_half(x); }
inline double to_double(bfloat16 x) { return double_from_bf16(x); }

template <class T>
T from_double(double x);
template <>
inline double from_double<double>(double x) {
    return x;
}
template <>
inline float from_double<float>(double x) {
    return static_cast<float>(x);
}
template <>
inline half from_double<half>(double x) {
    return half_from_double(x);
}
template <>
inline bfloat16 from_double<bfloat16>(double x) {
    return bf16_from_double(x);
}

/// Largest finite and smallest normal magnitude of a storage type.
template <class T>
struct StorageLimits;
template <>
struct StorageLimits<double> {
    static constexpr double max = std::numeric_limits<double>::max();
    static constexpr double min_normal = std::numeric_limits<double>::min();
};
template <>
struct StorageLimits<float> {
    static constexpr double max = std::numeric_limits<float>::max();
    static constexpr double min_normal = std::numeric_limits<float>::min();
};
template <>
struct StorageLimits<half> {
    static constexpr double max = kHalfMax;
    static constexpr double min_normal = kHalfMinNormal;
};
template <>
struct StorageLimits<bfloat16> {
    static constexpr double max = kBf16Max;
    static constexpr double min_normal = kBf16MinNormal;
};

/// The magnitudes at which rounding to nearest even into S changes verdict, for a format with
/// `mant` fraction bits and normal exponents [emin, emax]: |x| <= underflow rounds to 0 (the
/// tie with the smallest subnormal goes to the even 0); |x| < subnormal rounds to a subnormal
/// (the tie with the smallest normal goes to the even normal); |x| >= overflow rounds to inf
/// (the tie between the largest finite value and 2^(emax+1) goes to the even 2^(emax+1)).
struct RangeLimits {
    double underflow, subnormal, overflow;
};
/// For double (a copy): nothing overflows or underflows; double subnormals count as subnormal.
template <class S>
constexpr RangeLimits range_limits() {
    if constexpr (std::is_same_v<S, double>) {
        return {0.0, std::numeric_limits<double>::min(), std::numeric_limits<double>::infinity()};
    } else {
        constexpr int mant = BinaryFormat<S>::mant;
        constexpr int emin = BinaryFormat<S>::emin;
        constexpr int emax = BinaryFormat<S>::emax;
        const auto pow2 = [](int e) {
            double v = 1.0;
            for (; e > 0; --e) v *= 2.0;
            for (; e < 0; ++e) v /= 2.0;
            return v;
        };
        return {pow2(emin - mant - 1), pow2(emin) - pow2(emin - mant - 1),
                pow2(emax + 1) - pow2(emax - mant - 1)};
    }
}

/// What truncating values to a storage type did (DESIGN.md Safety §3).
struct TruncationCounts {
    long long overflow = 0;   ///< became +-inf (must be 0 for a usable level)
    long long underflow = 0;  ///< nonzero that became zero
    long long subnormal = 0;  ///< nonzero that became subnormal (lost precision)
    long long nonfinite_input = 0;
    TruncationCounts& operator+=(const TruncationCounts& o) {
        overflow += o.overflow;
        underflow += o.underflow;
        subnormal += o.subnormal;
        nonfinite_input += o.nonfinite_input;
        return *this;
    }
};

/// Facts of FP16 values that an exact narrowing (kernels::narrow_exact) wrote, found in the
/// same pass: how many are subnormal (what truncate<half> counts on values FP16 holds exactly:
/// nothing overflows or underflows then), and whether any nonzero one lies outside
/// [min normal, max / 2], the range a level stores unscaled (multigrid/level_precision.hpp).
struct HalfFacts {
    long long subnormal = 0;
    bool outside = false;
    HalfFacts& operator+=(const HalfFacts& o) {
        subnormal += o.subnormal;
        outside = outside || o.outside;
        return *this;
    }
};

/// Adds to `c` what rounding x into a format with limits `lim` does (the verdicts of
/// truncate_counted, by comparisons only: no conversion).
inline void count_by_limits(double x, const RangeLimits& lim, TruncationCounts& c) {
    const double a = std::fabs(x);
    const bool finite = a <= std::numeric_limits<double>::max();
    c.nonfinite_input += !finite;
    c.overflow += finite && a >= lim.overflow;
    c.underflow += a != 0.0 && a <= lim.underflow;
    c.subnormal += a > lim.underflow && a < lim.subnormal;
}

/// Truncates x to T and records what happened in `c`.
template <class T>
T truncate_counted(double x, TruncationCounts& c) {
    const T y = from_double<T>(x);
    if (!std::isfinite(x)) {
        ++c.nonfinite_input;
        return y;
    }
    if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
        // Classified from the result's bits (exponent field all ones: overflow; zero: zero or
        // subnormal), the same verdicts as the round trip below without converting back.
        constexpr int mant = BinaryFormat<T>::mant;
        constexpr unsigned inf = exponent_mask<T>();
        const unsigned mag = y.bits & 0x7FFFu;
        if ((mag & inf) == inf) {
            ++c.overflow;
        } else if (mag == 0) {
            if (x != 0.0) ++c.underflow;
        } else if ((mag >> mant) == 0) {
            ++c.subnormal;
        }
        return y;
    }
    const double back = to_double(y);
    if (!std::isfinite(back)) {
        ++c.overflow;
    } else if (x != 0.0 && back == 0.0) {
        ++c.underflow;
    } else if (back != 0.0 && std::fabs(back) < StorageLimits<T>::min_normal) {
        ++c.subnormal;
    }
    return y;
}

}  // namespace mpmg
