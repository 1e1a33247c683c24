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
/// so no subnormal float arithmetic; Inf and NaN keep their payload). Branch-free.
inline float half_to_float(half h) {
    constexpr std::uint32_t kShiftedExp = 0x7C00u << 13;  // half exponent field, float position
    const std::uint32_t bits = h.bits;
    const std::uint32_t o = (bits & 0x7FFFu) << 13;
    const std::uint32_t exp = o & kShiftedExp;
    const std::uint32_t normal = o + ((127u - 15u) << 23);        // rebias the exponent
    const std::uint32_t inf_nan = normal + ((128u - 16u) << 23);  // exponent all ones
    // Subnormal: 2^-14 (1 + f) - 2^-14 = 2^-14 f, exact.
    const float sub = std::bit_cast<float>(normal + (1u << 23)) - std::bit_cast<float>(113u << 23);
    // Bit masks rather than branches or ?: (GCC 12 keeps those as control flow), so that loops
    // over half values vectorise.
    const std::uint32_t is_inf_nan = 0u - static_cast<std::uint32_t>(exp == kShiftedExp);
    const std::uint32_t is_sub = 0u - static_cast<std::uint32_t>(exp == 0);
    const std::uint32_t mag = (normal & ~(is_inf_nan | is_sub)) | (inf_nan & is_inf_nan) |
                              (std::bit_cast<std::uint32_t>(sub) & is_sub);
    return std::bit_cast<float>(mag | ((bits & 0x8000u) << 16));
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
