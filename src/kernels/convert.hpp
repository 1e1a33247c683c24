// Storage-to-compute conversion inside kernels (STYLE.md: FP16/BF16 are storage, converted in
// registers). Branch-free bit manipulation that the compiler can vectorise; exact for every
// input (checked exhaustively in convert_test.cpp). _Float16 is deliberately not used: GCC 12's
// auto-vectoriser turns it into scalar library calls (about 10x slower).
#pragma once

#include <bit>
#include <cstdint>

#include "core/float16.hpp"

namespace mpmg::kernels {

/// binary16 bits -> float, exact (subnormals renormalised by one float subtraction of 2^-14,
/// so no subnormal float arithmetic; Inf and NaN keep their payload).
inline float half_to_float(half h) {
    constexpr std::uint32_t kShiftedExp = 0x7C00u << 13;  // half exponent field, float position
    const std::uint32_t bits = h.bits;
    std::uint32_t o = (bits & 0x7FFFu) << 13;
    const std::uint32_t exp = o & kShiftedExp;
    o += (127u - 15u) << 23;  // rebias the exponent
    if (exp == kShiftedExp) {
        o += (128u - 16u) << 23;  // Inf / NaN: exponent all ones
    } else if (exp == 0) {
        o += 1u << 23;  // subnormal: value 2^-14 (1 + f) - 2^-14 = 2^-14 f, exact
        o = std::bit_cast<std::uint32_t>(std::bit_cast<float>(o) -
                                         std::bit_cast<float>(113u << 23));
    }
    o |= (bits & 0x8000u) << 16;
    return std::bit_cast<float>(o);
}

/// bfloat16 bits -> float: the upper half of a binary32, exact.
inline float bf16_to_float(bfloat16 b) {
    return std::bit_cast<float>(static_cast<std::uint32_t>(b.bits) << 16);
}

/// A storage value in compute precision C (exact: C is never narrower than S).
template <class C>
inline C to_compute(double v) {
    return static_cast<C>(v);
}
template <class C>
inline C to_compute(float v) {
    return static_cast<C>(v);
}
template <class C>
inline C to_compute(half v) {
    return static_cast<C>(half_to_float(v));
}
template <class C>
inline C to_compute(bfloat16 v) {
    return static_cast<C>(bf16_to_float(v));
}

}  // namespace mpmg::kernels
