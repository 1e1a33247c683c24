// Per-target helper for the Highway kernels (include after <hwy/highway.h>, once per target, the
// usual Highway "-inl.h" toggle): load_conv(d, p) loads Lanes(d) storage values S from p and
// converts them in registers to the lane type of d (float or double). FP16/BF16 are loaded as
// 16-bit lanes and promoted (ICPP'24 §5.1); never expanded into a temporary array.
// (sgdia_simd.cpp has its own copy of these four overloads.)
#if defined(MPMG_KERNELS_LOAD_CONV_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef MPMG_KERNELS_LOAD_CONV_INL_H_
#undef MPMG_KERNELS_LOAD_CONV_INL_H_
#else
#define MPMG_KERNELS_LOAD_CONV_INL_H_
#endif

#include <hwy/highway.h>

#include <type_traits>

#include "core/float16.hpp"

HWY_BEFORE_NAMESPACE();
namespace mpmg::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

static_assert(sizeof(half) == sizeof(hwy::float16_t) &&
              sizeof(bfloat16) == sizeof(hwy::bfloat16_t));

template <class D>
HWY_INLINE hn::Vec<D> load_conv(D d, const double* p) {
    return hn::LoadU(d, p);
}
template <class D>
HWY_INLINE hn::Vec<D> load_conv(D d, const float* p) {
    if constexpr (std::is_same_v<hn::TFromD<D>, float>) {
        return hn::LoadU(d, p);
    } else {
        return hn::PromoteTo(d, hn::LoadU(hn::Rebind<float, D>(), p));
    }
}
template <class D>
HWY_INLINE hn::Vec<D> load_conv(D d, const half* p) {
    const hn::Rebind<hwy::float16_t, D> dh;
    const auto v = hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(p));
    if constexpr (std::is_same_v<hn::TFromD<D>, float>) {
        return hn::PromoteTo(d, v);
    } else {
        return hn::PromoteTo(d, hn::PromoteTo(hn::Rebind<float, D>(), v));
    }
}
template <class D>
HWY_INLINE hn::Vec<D> load_conv(D d, const bfloat16* p) {
    const hn::Rebind<hwy::bfloat16_t, D> db;
    const auto v = hn::LoadU(db, reinterpret_cast<const hwy::bfloat16_t*>(p));
    if constexpr (std::is_same_v<hn::TFromD<D>, float>) {
        return hn::PromoteTo(d, v);
    } else {
        return hn::PromoteTo(d, hn::PromoteTo(hn::Rebind<float, D>(), v));
    }
}

}  // namespace mpmg::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // MPMG_KERNELS_LOAD_CONV_INL_H_
