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
    const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    if (std::isnan(x)) return half{static_cast<std::uint16_t>(sign | 0x7E00)};
    const double ax = std::fabs(x);
    if (ax == 0.0) return half{sign};
    if (std::isinf(ax)) return half{static_cast<std::uint16_t>(sign | 0x7C00)};
    const double v = round_to_format(ax, 10, -14, 15);
    if (std::isinf(v)) return half{static_cast<std::uint16_t>(sign | 0x7C00)};
    if (v < kHalfMinNormal) {  // subnormal (or zero): bits are v / 2^-24
        return half{
            static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(std::ldexp(v, 24)))};
    }
    int k = 0;
    const double m = std::frexp(v, &k);  // v = m * 2^k, m in [0.5, 1)
    const int e = k - 1;
    const auto frac = static_cast<std::uint16_t>(std::ldexp(m * 2.0 - 1.0, 10));
    return half{static_cast<std::uint16_t>(sign | ((e + 15) << 10) | frac)};
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
