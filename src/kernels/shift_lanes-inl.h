// Per-target helper for the Highway kernels (include after <hwy/highway.h>, once per target, the
// usual Highway "-inl.h" toggle): shift_lanes moves the lanes of a vector along by s, filling the
// lanes left without a source. The edge vectors of sgdia_simd.cpp and sgdia_block.cpp use it to
// bring a neighbour's x into a vector loaded inside the line, and the r = 1 Gauss-Seidel scan for
// its prefix products.
#if defined(MPMG_KERNELS_SHIFT_LANES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef MPMG_KERNELS_SHIFT_LANES_INL_H_
#undef MPMG_KERNELS_SHIFT_LANES_INL_H_
#else
#define MPMG_KERNELS_SHIFT_LANES_INL_H_
#endif

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace mpmg::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// v with its lanes moved by s towards the end of the sweep (Up: lane l takes lane l - s;
/// otherwise lane l takes lane l + s); the s lanes left without a source get `fill`.
template <bool Up, class D>
HWY_INLINE hn::Vec<D> shift_lanes(D d, hn::Vec<D> v, int s, hn::Vec<D> fill) {
    const hn::RebindToSigned<D> di;
    using TI = hn::TFromD<decltype(di)>;
    const auto iota = hn::Iota(di, 0);
    const auto vs = hn::Set(di, static_cast<TI>(s));
    const auto none =
        Up ? hn::Lt(iota, vs) : hn::Gt(iota, hn::Set(di, static_cast<TI>(hn::Lanes(d) - 1 - s)));
    const auto idx = hn::IfThenElse(none, hn::Zero(di), Up ? hn::Sub(iota, vs) : hn::Add(iota, vs));
    return hn::IfThenElse(hn::RebindMask(d, none), fill,
                          hn::TableLookupLanes(v, hn::IndicesFromVec(d, idx)));
}

}  // namespace mpmg::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // MPMG_KERNELS_SHIFT_LANES_INL_H_
