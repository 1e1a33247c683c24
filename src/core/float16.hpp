// FP16 and BF16 as storage types (STYLE.md: converted to the compute precision in registers;
// these scalar conversions are for setup, references and tests; kernels use SIMD).
// Both are layout-compatible with hwy::float16_t / hwy::bfloat16_t (one uint16_t).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

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
inline constexpr double kBf16Max = 3.3895313892515355e38;
inline constexpr double kBf16MinNormal = 1.1754943508222875e-38;

/// Rounds to nearest even (IEEE), overflow to +-inf, underflow through subnormals to +-0.
/// Converts from double directly (no double rounding through float).
half half_from_double(double x);
/// Exact.
double double_from_half(half h);
inline float float_from_half(half h) { return static_cast<float>(double_from_half(h)); }

/// Rounds to nearest even; NaN stays NaN.
bfloat16 bf16_from_double(double x);
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

/// Truncates x to T and records what happened in `c`.
template <class T>
T truncate_counted(double x, TruncationCounts& c) {
    const T y = from_double<T>(x);
    if (!std::isfinite(x)) {
        ++c.nonfinite_input;
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
