// Scaling by powers of two, exact in FP64 while the results stay normal numbers.
#pragma once

#include <algorithm>
#include <cmath>

namespace mpmg {

/// 2^-e for the e with m in [2^e, 2^(e+1)), e kept in [-1022, 1022] so that the factor is a
/// normal number: m times it lies in [1, 2) (for every normal m). 1 when m is 0, Inf or NaN.
/// Sums of squares of values times it neither overflow nor underflow to zero, whatever the
/// values' scale, and compare as the unscaled sums would in exact arithmetic.
inline double inverse_power_of_two(double m) {
    if (!(m > 0.0) || !std::isfinite(m)) return 1.0;
    return std::ldexp(1.0, -std::clamp(std::ilogb(m), -1022, 1022));
}

}  // namespace mpmg
