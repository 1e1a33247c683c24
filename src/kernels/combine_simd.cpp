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

}  // namespace HWY_NAMESPACE
}  // namespace mpmg::kernels::combine
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpmg::kernels {
namespace combine {
HWY_EXPORT(weighted_sum);
}  // namespace combine

void weighted_sum(const double* const* src, const double* w, int m, int step, double* out,
                  std::int64_t n) {
    HWY_DYNAMIC_DISPATCH(combine::weighted_sum)(src, w, m, step, out, n);
}

}  // namespace mpmg::kernels
#endif  // HWY_ONCE
