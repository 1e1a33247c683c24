// Per-target setup passes (see setup_simd.hpp). This file is compiled once per Highway target
// through foreach_target.h, with -ffp-contract=off (CMakeLists.txt: pivot_ratios' updates stay
// a product and a subtraction, as the scalar loop's); the HWY_ONCE part at the end builds the
// dispatch.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/setup_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>

#include "kernels/range_count-inl.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "kernels/setup_simd.hpp"

HWY_BEFORE_NAMESPACE();
namespace mpmg::kernels::setup {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using mpmg::kernels::HWY_NAMESPACE::all_lanes;  // kernels/range_count-inl.h
using mpmg::kernels::HWY_NAMESPACE::counted_chunks;
using mpmg::kernels::HWY_NAMESPACE::RangeVecs;

bool any_outside(const double* HWY_RESTRICT v, std::int64_t n, double lo, double hi) {
    const hn::ScalableTag<double> d;
    const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
    const auto vlo = hn::Set(d, lo), vhi = hn::Set(d, hi), zero = hn::Zero(d);
    std::int64_t k = 0;
    // Inside: 0, or lo <= |x| <= hi (NaN fails both).
    auto ok = all_lanes(d);
    for (; k + lanes <= n; k += lanes) {
        const auto ax = hn::Abs(hn::LoadU(d, v + k));
        ok = hn::And(ok, hn::Or(hn::Eq(ax, zero), hn::And(hn::Ge(ax, vlo), hn::Le(ax, vhi))));
    }
    bool outside = !hn::AllTrue(d, ok);
    for (; k < n; ++k) {
        const double ax = std::fabs(v[k]);
        outside |= !(ax <= hi) || (ax != 0.0 && ax < lo);
    }
    return outside;
}

TruncationCounts count_range(const double* HWY_RESTRICT v, std::int64_t n, const RangeLimits& lim) {
    const hn::ScalableTag<double> d;
    TruncationCounts c;
    std::int64_t k = counted_chunks(d, n, RangeVecs<hn::ScalableTag<double>>(d, lim), c,
                                    [&](std::int64_t i) { return hn::LoadU(d, v + i); });
    for (; k < n; ++k) count_by_limits(v[k], lim, c);
    return c;
}

double max_scaled_abs(const double* HWY_RESTRICT a, const double* HWY_RESTRICT si,
                      const double* HWY_RESTRICT sj, std::int64_t n) {
    const hn::ScalableTag<double> d;
    const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
    const auto zero = hn::Zero(d);
    auto m = zero;
    std::int64_t k = 0;
    for (; k + lanes <= n; k += lanes) {
        const auto x = hn::Mul(hn::Mul(hn::Abs(hn::LoadU(d, a + k)), hn::LoadU(d, si + k)),
                               hn::LoadU(d, sj + k));
        m = hn::Max(m, hn::IfThenElse(hn::Gt(x, zero), x, zero));  // skips NaN
    }
    double out = hn::GetLane(hn::MaxOfLanes(d, m));
    for (; k < n; ++k) {
        const double x = std::fabs(a[k]) * si[k] * sj[k];
        if (x > out) out = x;
    }
    return out;
}

TruncationCounts count_scaled(const double* HWY_RESTRICT a, const double* HWY_RESTRICT si,
                              const double* HWY_RESTRICT sj, std::int64_t n,
                              const RangeLimits& lim) {
    const hn::ScalableTag<double> d;
    TruncationCounts c;
    const auto scaled = [&](std::int64_t i) {
        return hn::Div(hn::LoadU(d, a + i), hn::Mul(hn::LoadU(d, si + i), hn::LoadU(d, sj + i)));
    };
    std::int64_t k = counted_chunks(d, n, RangeVecs<hn::ScalableTag<double>>(d, lim), c, scaled);
    for (; k < n; ++k) count_by_limits(a[k] / (si[k] * sj[k]), lim, c);
    return c;
}

TruncationCounts scale_counted(const double* HWY_RESTRICT a, const double* HWY_RESTRICT si,
                               const double* HWY_RESTRICT sj, double* HWY_RESTRICT out,
                               std::int64_t n, const RangeLimits& lim) {
    const hn::ScalableTag<double> d;
    TruncationCounts c;
    const auto scaled = [&](std::int64_t i) {
        const auto x =
            hn::Div(hn::LoadU(d, a + i), hn::Mul(hn::LoadU(d, si + i), hn::LoadU(d, sj + i)));
        hn::StoreU(x, d, out + i);
        return x;
    };
    std::int64_t k = counted_chunks(d, n, RangeVecs<hn::ScalableTag<double>>(d, lim), c, scaled);
    for (; k < n; ++k) {
        out[k] = a[k] / (si[k] * sj[k]);
        count_by_limits(out[k], lim, c);
    }
    return c;
}

double sum_abs(const double* HWY_RESTRICT v, std::int64_t n) {
    const hn::ScalableTag<double> d;
    const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
    auto s0 = hn::Zero(d), s1 = hn::Zero(d);
    std::int64_t k = 0;
    for (; k + 2 * lanes <= n; k += 2 * lanes) {
        s0 = hn::Add(s0, hn::Abs(hn::LoadU(d, v + k)));
        s1 = hn::Add(s1, hn::Abs(hn::LoadU(d, v + k + lanes)));
    }
    double s = hn::GetLane(hn::SumOfLanes(d, hn::Add(s0, s1)));
    for (; k < n; ++k) s += std::fabs(v[k]);
    return s;
}

FiniteRange finite_range(const double* HWY_RESTRICT v, std::int64_t n) {
    // Max and min are exact, so any order gives the scalar loop's values; Inf and NaN lanes
    // enter neither (0 for the largest, +Inf for the smallest) and set `nonfinite`. (Two sets
    // of accumulators, as in sum_abs, ran no faster: 105-116 against 108-113 ms for 885 MB.)
    const hn::ScalableTag<double> d;
    const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
    const auto zero = hn::Zero(d);
    const auto inf = hn::Inf(d);
    auto hi = zero, lo = inf;
    auto finite = all_lanes(d);
    std::int64_t k = 0;
    for (; k + lanes <= n; k += lanes) {
        const auto x = hn::LoadU(d, v + k);
        const auto a = hn::Abs(x);
        const auto fin = hn::IsFinite(x);
        finite = hn::And(finite, fin);
        hi = hn::Max(hi, hn::IfThenElseZero(fin, a));
        lo = hn::Min(lo, hn::IfThenElse(hn::And(fin, hn::Gt(a, zero)), a, inf));
    }
    FiniteRange r;
    r.largest = hn::GetLane(hn::MaxOfLanes(d, hi));
    r.smallest = hn::GetLane(hn::MinOfLanes(d, lo));
    r.nonfinite = !hn::AllTrue(d, finite);
    for (; k < n; ++k) {
        const double a = std::fabs(v[k]);
        if (!std::isfinite(a)) {
            r.nonfinite = true;
            continue;
        }
        if (a > r.largest) r.largest = a;
        if (a > 0.0 && a < r.smallest) r.smallest = a;
    }
    return r;
}

bool sqrt_over(const double* v, std::int64_t n, double g, double* s) {
    const hn::ScalableTag<double> d;
    const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
    const auto vg = hn::Set(d, g), zero = hn::Zero(d);
    auto ok = all_lanes(d);
    std::int64_t k = 0;
    for (; k + lanes <= n; k += lanes) {
        const auto x = hn::LoadU(d, v + k);
        ok = hn::And(ok, hn::And(hn::Gt(x, zero), hn::IsFinite(x)));  // NaN fails both
        hn::StoreU(hn::Sqrt(hn::Div(x, vg)), d, s + k);
    }
    bool good = hn::AllTrue(d, ok);
    for (; k < n; ++k) {
        const double x = v[k];
        good = good && x > 0.0 && std::isfinite(x);
        s[k] = std::sqrt(x / g);
    }
    return good;
}

void inverse_sqrt(const double* HWY_RESTRICT v, std::int64_t n, double* HWY_RESTRICT s) {
    const hn::ScalableTag<double> d;
    const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
    const auto one = hn::Set(d, 1.0);
    std::int64_t k = 0;
    for (; k + lanes <= n; k += lanes)
        hn::StoreU(hn::Div(one, hn::Sqrt(hn::LoadU(d, v + k))), d, s + k);
    for (; k < n; ++k) s[k] = 1.0 / std::sqrt(v[k]);
}

/// pivot_ratios of the one block whose entry k is m[k * stride], in scalar code (the tail).
double pivot_ratio_strided(double* m, std::int64_t stride, int r) {
    const auto at = [&](int i, int j) -> double& { return m[(i * r + j) * stride]; };
    double big = 0.0, smallest = std::numeric_limits<double>::infinity();
    for (int k = 0; k < r * r; ++k) big = std::max(big, std::fabs(m[k * stride]));
    for (int c = 0; c < r; ++c) {
        int piv = c;
        for (int i = c + 1; i < r; ++i) {
            if (std::fabs(at(i, c)) > std::fabs(at(piv, c))) piv = i;
        }
        for (int j = c; j < r; ++j) std::swap(at(c, j), at(piv, j));
        const double p = at(c, c);
        smallest = std::min(smallest, std::fabs(p));
        if (p == 0.0) return 0.0;
        for (int i = c + 1; i < r; ++i) {
            const double f = at(i, c) / p;
            for (int j = c; j < r; ++j) at(i, j) = at(i, j) - f * at(c, j);
        }
    }
    return big > 0.0 ? smallest / big : 0.0;
}

void pivot_ratios(double* HWY_RESTRICT m, std::int64_t n, int r, double* HWY_RESTRICT out) {
    const hn::ScalableTag<double> d;
    const auto lanes = static_cast<std::int64_t>(hn::Lanes(d));
    const int rr = r * r;
    std::int64_t b = 0;
    for (; b + lanes <= n; b += lanes) {
        double* const base = m + b;
        const auto at = [&](int i, int j) { return base + (i * r + j) * n; };
        auto big = hn::Zero(d);
        for (int k = 0; k < rr; ++k) big = hn::Max(big, hn::Abs(hn::LoadU(d, base + k * n)));
        auto smallest = hn::Set(d, std::numeric_limits<double>::infinity());
        auto zero_pivot = hn::Lt(big, hn::Zero(d));  // all false
        for (int c = 0; c < r; ++c) {
            // The pivot row, lane by lane: the first largest |m_ic| of the column.
            auto best = hn::Abs(hn::LoadU(d, at(c, c)));
            auto piv = hn::Set(d, static_cast<double>(c));
            for (int i = c + 1; i < r; ++i) {
                const auto x = hn::Abs(hn::LoadU(d, at(i, c)));
                const auto gt = hn::Gt(x, best);
                best = hn::IfThenElse(gt, x, best);
                piv = hn::IfThenElse(gt, hn::Set(d, static_cast<double>(i)), piv);
            }
            for (int i = c + 1; i < r; ++i) {
                const auto swap = hn::Eq(piv, hn::Set(d, static_cast<double>(i)));
                if (hn::AllFalse(d, swap)) continue;
                for (int j = c; j < r; ++j) {
                    const auto top = hn::LoadU(d, at(c, j)), other = hn::LoadU(d, at(i, j));
                    hn::StoreU(hn::IfThenElse(swap, other, top), d, at(c, j));
                    hn::StoreU(hn::IfThenElse(swap, top, other), d, at(i, j));
                }
            }
            const auto p = hn::LoadU(d, at(c, c));
            smallest = hn::Min(smallest, hn::Abs(p));
            zero_pivot = hn::Or(zero_pivot, hn::Eq(p, hn::Zero(d)));
            // A zero pivot's lane divides by zero from here on; its result is 0 below.
            for (int i = c + 1; i < r; ++i) {
                const auto f = hn::Div(hn::LoadU(d, at(i, c)), p);
                for (int j = c; j < r; ++j) {
                    hn::StoreU(hn::Sub(hn::LoadU(d, at(i, j)), hn::Mul(f, hn::LoadU(d, at(c, j)))),
                               d, at(i, j));
                }
            }
        }
        const auto ratio = hn::IfThenElseZero(hn::Gt(big, hn::Zero(d)), hn::Div(smallest, big));
        hn::StoreU(hn::IfThenZeroElse(zero_pivot, ratio), d, out + b);
    }
    for (; b < n; ++b) out[b] = pivot_ratio_strided(m + b, n, r);
}

std::int64_t current_target() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace mpmg::kernels::setup
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpmg::kernels {
namespace setup {

HWY_EXPORT(any_outside);
HWY_EXPORT(count_range);
HWY_EXPORT(max_scaled_abs);
HWY_EXPORT(count_scaled);
HWY_EXPORT(scale_counted);
HWY_EXPORT(sum_abs);
HWY_EXPORT(finite_range);
HWY_EXPORT(sqrt_over);
HWY_EXPORT(pivot_ratios);
HWY_EXPORT(inverse_sqrt);
HWY_EXPORT(current_target);

}  // namespace setup

bool any_outside(const double* v, std::int64_t n, double lo, double hi) {
    return HWY_DYNAMIC_DISPATCH(setup::any_outside)(v, n, lo, hi);
}
TruncationCounts count_range(const double* v, std::int64_t n, const RangeLimits& lim) {
    return HWY_DYNAMIC_DISPATCH(setup::count_range)(v, n, lim);
}
double max_scaled_abs(const double* a, const double* si, const double* sj, std::int64_t n) {
    return HWY_DYNAMIC_DISPATCH(setup::max_scaled_abs)(a, si, sj, n);
}
TruncationCounts count_scaled(const double* a, const double* si, const double* sj, std::int64_t n,
                              const RangeLimits& lim) {
    return HWY_DYNAMIC_DISPATCH(setup::count_scaled)(a, si, sj, n, lim);
}
TruncationCounts scale_counted(const double* a, const double* si, const double* sj, double* out,
                               std::int64_t n, const RangeLimits& lim) {
    return HWY_DYNAMIC_DISPATCH(setup::scale_counted)(a, si, sj, out, n, lim);
}
bool sqrt_over(const double* v, std::int64_t n, double g, double* s) {
    return HWY_DYNAMIC_DISPATCH(setup::sqrt_over)(v, n, g, s);
}
double sum_abs(const double* v, std::int64_t n) {
    return HWY_DYNAMIC_DISPATCH(setup::sum_abs)(v, n);
}
FiniteRange finite_range(const double* v, std::int64_t n) {
    return HWY_DYNAMIC_DISPATCH(setup::finite_range)(v, n);
}
double largest_finite_abs(const double* v, std::int64_t n) { return finite_range(v, n).largest; }
void inverse_sqrt(const double* v, std::int64_t n, double* s) {
    HWY_DYNAMIC_DISPATCH(setup::inverse_sqrt)(v, n, s);
}
void pivot_ratios(double* m, std::int64_t n, int r, double* out) {
    HWY_DYNAMIC_DISPATCH(setup::pivot_ratios)(m, n, r, out);
}
const char* setup_target_name() {
    return hwy::TargetName(HWY_DYNAMIC_DISPATCH(setup::current_target)());
}

}  // namespace mpmg::kernels
#endif  // HWY_ONCE
