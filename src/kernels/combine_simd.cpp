// Per-target weighted line sums (see combine_simd.hpp). Compiled once per Highway target through
// foreach_target.h, with -ffp-contract=off (CMakeLists.txt).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/combine_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>

#include <cstdint>

#include "kernels/combine_simd.hpp"

HWY_BEFORE_NAMESPACE();
namespace mpmg::kernels::combine {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// The even lanes of the 2 N values at p (elements p[0], p[2], ...), in order.
template <class D>
HWY_INLINE hn::Vec<D> load_even(D d, const double* p) {
#if HWY_TARGET == HWY_SCALAR
    return hn::LoadU(d, p);  // one lane: p[0]
#else
    const size_t N = hn::Lanes(d);
    return hn::ConcatEven(d, hn::LoadU(d, p + N), hn::LoadU(d, p));
#endif
}

template <int kStep>
void sum_lines(const double* const* src, const double* w, int m, double* out, std::int64_t n) {
    const hn::ScalableTag<double> d;
    const auto N = static_cast<std::int64_t>(hn::Lanes(d));
    std::int64_t i = 0;
    for (; i + N <= n; i += N) {
        auto acc = hn::Zero(d);
        for (int k = 0; k < m; ++k) {
            const double* p = src[k] + i * kStep;
            const auto v = kStep == 1 ? hn::LoadU(d, p) : load_even(d, p);
            acc = hn::Add(acc, hn::Mul(hn::Set(d, w[k]), v));
        }
        hn::StoreU(acc, d, out + i);
    }
    for (; i < n; ++i) {
        double acc = 0.0;
        for (int k = 0; k < m; ++k) acc = acc + w[k] * src[k][i * kStep];
        out[i] = acc;
    }
}

void weighted_sum(const double* const* src, const double* w, int m, int step, double* out,
                  std::int64_t n) {
    if (step == 1) {
        sum_lines<1>(src, w, m, out, n);
    } else {
        sum_lines<2>(src, w, m, out, n);
    }
}

/// Every other block (step 2): each block's rr values in vectors of at most 4 lanes, the last
/// one overlapping the one before when 4 does not divide rr (it recomputes, bit for bit, what
/// that one stored: every output is summed whole in registers).
void sum_every_other_block(const double* const* src, const double* w, int m, int rr, double* out,
                           std::int64_t n) {
    const hn::CappedTag<double, 4> d;
    const auto N = static_cast<int>(hn::Lanes(d));
    for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t from = 2 * i * rr;
        double* to = out + i * rr;
        for (int q0 = 0; q0 < rr; q0 += N) {
            const int q = q0 + N <= rr ? q0 : rr - N;
            auto acc = hn::Zero(d);
            for (int k = 0; k < m; ++k) {
                acc = hn::Add(acc, hn::Mul(hn::Set(d, w[k]), hn::LoadU(d, src[k] + from + q)));
            }
            hn::StoreU(acc, d, to + q);
        }
    }
}

void weighted_block_sum(const double* const* src, const double* w, int m, int step, int rr,
                        double* out, std::int64_t n) {
    if (step == 1) {
        sum_lines<1>(src, w, m, out, n * rr);  // consecutive blocks: one run of values
    } else {
        sum_every_other_block(src, w, m, rr, out, n);
    }
}

}  // namespace HWY_NAMESPACE
}  // namespace mpmg::kernels::combine
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpmg::kernels {
namespace combine {
HWY_EXPORT(weighted_sum);
HWY_EXPORT(weighted_block_sum);
}  // namespace combine

void weighted_sum(const double* const* src, const double* w, int m, int step, double* out,
                  std::int64_t n) {
    HWY_DYNAMIC_DISPATCH(combine::weighted_sum)(src, w, m, step, out, n);
}

void weighted_block_sum(const double* const* src, const double* w, int m, int step, int rr,
                        double* out, std::int64_t n) {
    HWY_DYNAMIC_DISPATCH(combine::weighted_block_sum)(src, w, m, step, rr, out, n);
}

}  // namespace mpmg::kernels
#endif  // HWY_ONCE
