// Per-target helper for the Highway kernels (include after <hwy/highway.h>, once per target, the
// usual Highway "-inl.h" toggle): load_r / store_r split r interleaved components (element k of
// item i at p[i r + k]) into r vectors over the items, and join them back, for r = 2, 3, 4 fixed
// at compile time. Used by the block kernels: sgdia_block.cpp (x, b, y of r components per
// cell) and sgdia_aos_simd.cpp (also the r x r blocks of the SgDiaMatrix layout).
#if defined(MPMG_KERNELS_INTERLEAVED_R_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef MPMG_KERNELS_INTERLEAVED_R_INL_H_
#undef MPMG_KERNELS_INTERLEAVED_R_INL_H_
#else
#define MPMG_KERNELS_INTERLEAVED_R_INL_H_
#endif

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace mpmg::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// v[k][i] = p[i R + k] for the Lanes(d) items from p.
template <int R, class D>
HWY_INLINE void load_r(D d, const hn::TFromD<D>* p, hn::Vec<D> (&v)[R]) {
    if constexpr (R == 2) {
        hn::LoadInterleaved2(d, p, v[0], v[1]);
    } else if constexpr (R == 3) {
        hn::LoadInterleaved3(d, p, v[0], v[1], v[2]);
    } else {
        static_assert(R == 4, "r = 2, 3 or 4");
        hn::LoadInterleaved4(d, p, v[0], v[1], v[2], v[3]);
    }
}

/// p[i R + k] = v[k][i] for the Lanes(d) items at p.
template <int R, class D>
HWY_INLINE void store_r(D d, const hn::Vec<D> (&v)[R], hn::TFromD<D>* p) {
    if constexpr (R == 2) {
        hn::StoreInterleaved2(v[0], v[1], d, p);
    } else if constexpr (R == 3) {
        hn::StoreInterleaved3(v[0], v[1], v[2], d, p);
    } else {
        static_assert(R == 4, "r = 2, 3 or 4");
        hn::StoreInterleaved4(v[0], v[1], v[2], v[3], d, p);
    }
}

}  // namespace mpmg::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // MPMG_KERNELS_INTERLEAVED_R_INL_H_
