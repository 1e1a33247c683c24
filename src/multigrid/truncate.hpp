// Truncation of a level's FP64 matrix to its storage precision (ICPP'24 Algorithm 1 lines 8/11),
// counting overflow, underflow and subnormal results (DESIGN.md Safety §3). Both loops run
// one diagonal per OpenMP iteration (diagonals are disjoint slices of the value array).
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

#include "core/float16.hpp"
#include "mpmg/sgdia_matrix.hpp"

namespace mpmg {

namespace detail {

/// Calls f(d, counts) for every diagonal d in parallel and sums the per-thread counts.
template <class F>
TruncationCounts for_diagonals_counted(int ndiag, F f) {
    TruncationCounts total;
#pragma omp parallel
    {
        TruncationCounts mine;
#pragma omp for schedule(dynamic, 1)
        for (int d = 0; d < ndiag; ++d) f(d, mine);
#pragma omp critical(mpmg_truncation_counts)
        total += mine;
    }
    return total;
}

}  // namespace detail

template <class S>
SgDiaMatrix<S> truncate(const SgDiaMatrix<double>& a, TruncationCounts& counts) {
    SgDiaMatrix<S> out(a.box(), a.stencil(), a.block());
    const int rr = a.block() * a.block();
    counts += detail::for_diagonals_counted(a.stencil().size(), [&](int d, TruncationCounts& c) {
        const double* src = a.diagonal(d);
        S* dst = out.diagonal(d);
        a.for_each_inside(d, [&](std::int64_t cell) {
            for (int k = 0; k < rr; ++k)
                dst[cell * rr + k] = truncate_counted<S>(src[cell * rr + k], c);
        });
    });
    return out;
}

namespace detail {

/// The magnitudes at which rounding to nearest even into S changes verdict, for a format with
/// `mant` fraction bits and normal exponents [emin, emax]: |x| <= underflow rounds to 0 (the
/// tie with the smallest subnormal goes to the even 0); |x| < subnormal rounds to a subnormal
/// (the tie with the smallest normal goes to the even normal); |x| >= overflow rounds to inf
/// (the tie between the largest finite value and 2^(emax+1) goes to the even 2^(emax+1)).
struct RangeLimits {
    double underflow, subnormal, overflow;
};
template <class S>
constexpr RangeLimits range_limits() {
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

}  // namespace detail

/// What truncate<S>(a) would count, without building the matrix: comparisons against the
/// rounding thresholds of S (detail::range_limits), one memory-bound pass with no conversion.
template <class S>
TruncationCounts count_truncation(const SgDiaMatrix<double>& a) {
    static_assert(std::is_same_v<S, half> || std::is_same_v<S, bfloat16>);
    constexpr detail::RangeLimits lim = detail::range_limits<S>();
    const int rr = a.block() * a.block();
    return detail::for_diagonals_counted(a.stencil().size(), [&](int d, TruncationCounts& c) {
        const double* src = a.diagonal(d);
        long long over = 0, under = 0, sub = 0, nonfinite = 0;
        a.for_each_inside(d, [&](std::int64_t cell) {
            for (int k = 0; k < rr; ++k) {
                const double x = std::fabs(src[cell * rr + k]);
                nonfinite += !(x <= std::numeric_limits<double>::max());
                over += x >= lim.overflow && x <= std::numeric_limits<double>::max();
                under += x != 0.0 && x <= lim.underflow;
                sub += x > lim.underflow && x < lim.subnormal;
            }
        });
        c.overflow += over;
        c.underflow += under;
        c.subnormal += sub;
        c.nonfinite_input += nonfinite;
    });
}

}  // namespace mpmg
