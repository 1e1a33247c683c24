#include "core/float16.hpp"

#include <algorithm>
#include <cmath>

namespace mpmg {
namespace {

// Rounds |x| (finite, > 0) to the nearest-even value of a binary format with `mant` explicit
// mantissa bits and normal exponents [emin, emax]; returns +inf when it rounds past the max.
double round_to_format(double ax, int mant, int emin, int emax) {
    int k = 0;
    std::frexp(ax, &k);  // ax = m * 2^k, m in [0.5, 1)
    const int e = std::max(k - 1, emin);
    const double q = std::ldexp(1.0, e - mant);  // spacing of representable values near ax
    const double n = std::nearbyint(ax / q);     // default rounding mode: nearest even
    const double v = n * q;
    const double max = std::ldexp(2.0 - std::ldexp(1.0, -mant), emax);
    return v > max ? HUGE_VAL : v;
}

}  // namespace

half half_from_double(double x) {
    // Integer rounding on the bits of the double: exact (no double rounding through float) and
    // fast enough for setup loops over every matrix entry.
    const auto b = std::bit_cast<std::uint64_t>(x);
    const auto sign = static_cast<std::uint16_t>((b >> 48) & 0x8000);
    const int exp = static_cast<int>((b >> 52) & 0x7FF);
    const std::uint64_t mant = b & ((std::uint64_t{1} << 52) - 1);
    if (exp == 0x7FF) return half{static_cast<std::uint16_t>(sign | (mant ? 0x7E00 : 0x7C00))};
    const int e = exp - 1023;
    if (e > 15) return half{static_cast<std::uint16_t>(sign | 0x7C00)};
    if (exp == 0 || e < -25) return half{sign};  // below half the smallest subnormal: zero
    // Value = M * 2^(e-52) with the implicit bit; the half's spacing here is 2^(max(e,-14)-10).
    const std::uint64_t m_full = mant | (std::uint64_t{1} << 52);
    const int shift = 42 + std::max(-14 - e, 0);
    std::uint64_t q = m_full >> shift;
    const std::uint64_t rem = m_full & ((std::uint64_t{1} << shift) - 1);
    const std::uint64_t halfway = std::uint64_t{1} << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1))) ++q;
    // Normal: q in [1024, 2048] carries into the exponent field by the addition below;
    // subnormal: q <= 1024 is the bit pattern itself (1024 = the smallest normal).
    std::uint64_t bits = e >= -14 ? (static_cast<std::uint64_t>(e + 14) << 10) + q : q;
    if (bits >= 0x7C00) bits = 0x7C00;
    return half{static_cast<std::uint16_t>(sign | bits)};
}

double double_from_half(half h) {
    const bool neg = (h.bits & 0x8000) != 0;
    const int exp = (h.bits >> 10) & 0x1F;
    const int frac = h.bits & 0x3FF;
    double v = 0.0;
    if (exp == 0) {
        v = std::ldexp(static_cast<double>(frac), -24);
    } else if (exp == 31) {
        v = frac == 0 ? HUGE_VAL : std::nan("");
    } else {
        v = std::ldexp(1.0 + frac / 1024.0, exp - 15);
    }
    return neg ? -v : v;
}

bfloat16 bf16_from_double(double x) {
    const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    if (std::isnan(x)) return bfloat16{static_cast<std::uint16_t>(sign | 0x7FC0)};
    const double ax = std::fabs(x);
    if (ax == 0.0) return bfloat16{sign};
    if (std::isinf(ax)) return bfloat16{static_cast<std::uint16_t>(sign | 0x7F80)};
    const double v = round_to_format(ax, 7, -126, 127);
    if (std::isinf(v)) return bfloat16{static_cast<std::uint16_t>(sign | 0x7F80)};
    // v is exactly representable as float; its upper 16 bits are the bfloat16.
    const auto bits = std::bit_cast<std::uint32_t>(static_cast<float>(v));
    return bfloat16{static_cast<std::uint16_t>(sign | (bits >> 16))};
}

}  // namespace mpmg
