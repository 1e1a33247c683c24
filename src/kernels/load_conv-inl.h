// Per-target helper for the Highway kernels (include after <hwy/highway.h>, once per target, the
// usual Highway "-inl.h" toggle): load_conv(d, p) loads Lanes(d) storage values S from p and
// converts them in registers to the lane type of d (float or double). FP16/BF16 are loaded as
// 16-bit lanes and promoted (ICPP'24 §5.1); never expanded into a temporary array.
// Used by sgdia_simd.cpp, sgdia_block.cpp and csr_simd.cpp.
#if defined(MPMG_KERNELS_LOAD_CONV_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef MPMG_KERNELS_LOAD_CONV_INL_H_
#undef MPMG_KERNELS_LOAD_CONV_INL_H_
#else
#define MPMG_KERNELS_LOAD_CONV_INL_H_
#endif

#include <hwy/highway.h>

#include <cstdint>
#include <type_traits>

#include "core/float16.hpp"
#include "kernels/convert.hpp"

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
/// x86 with F16C: vcvtph2ps converts every binary16 exactly, Inf and NaN included, and
/// vcvtps2ph rounds float -> half to nearest even (convert_simd.cpp). Elsewhere Highway 1.0.3
/// emulates both: the promotion rebiases exponent 31 like any other, so Inf and NaN came out
/// finite (65536 and up; float_from_half_bits is used there instead), and the demotion truncates.
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2 && !defined(HWY_DISABLE_F16C)
constexpr bool kF16c = true;
#else
constexpr bool kF16c = false;
#endif

/// binary16 bits (zero-extended into the lanes of di) -> float, exact for every input: exponent
/// and fraction shifted into binary32's place and multiplied by 2^112 (rebias 15 -> 127; a
/// subnormal half becomes a subnormal float, renormalised exactly by the product, which needs
/// denormals enabled, the IEEE default), then exponent 31 (Inf, NaN) set to 255, payload kept.
template <class DF>
HWY_INLINE hn::Vec<DF> float_from_half_bits(DF df, hn::Vec<hn::RebindToSigned<DF>> h) {
    const hn::RebindToSigned<DF> di;
    const auto em = hn::And(h, hn::Set(di, 0x7FFF));
    const auto sign = hn::ShiftLeft<16>(hn::Xor(h, em));
    const auto mag = hn::Mul(hn::BitCast(df, hn::ShiftLeft<13>(em)), hn::Set(df, 0x1p112f));
    const auto inf_nan =
        hn::IfThenElseZero(hn::Gt(em, hn::Set(di, 0x7BFF)), hn::Set(di, 0x7F800000));
    return hn::BitCast(df, hn::Or(hn::Or(hn::BitCast(di, mag), inf_nan), sign));
}

/// Lanes(df) binary16 values at p as float.
template <class DF>
HWY_INLINE hn::Vec<DF> load_half_as_float(DF df, const half* p) {
    if constexpr (kF16c) {
        const hn::Rebind<hwy::float16_t, DF> dh;
        return hn::PromoteTo(df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(p)));
    } else {
        const hn::Rebind<std::uint16_t, DF> du16;
        const hn::RebindToUnsigned<DF> du;
        const auto bits = hn::LoadU(du16, reinterpret_cast<const std::uint16_t*>(p));
        return float_from_half_bits(df,
                                    hn::BitCast(hn::RebindToSigned<DF>(), hn::PromoteTo(du, bits)));
    }
}

template <class D>
HWY_INLINE hn::Vec<D> load_conv(D d, const half* p) {
    if constexpr (std::is_same_v<hn::TFromD<D>, float>) {
        return load_half_as_float(d, p);
    } else {
        return hn::PromoteTo(d, load_half_as_float(hn::Rebind<float, D>(), p));
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

/// One storage value at p in compute precision C, for the scalar cells and row remainders of the
/// kernels. FP16 is converted as load_conv converts a vector (on x86 with F16C one vcvtph2ps
/// instead of the ~15 integer operations of to_compute; elsewhere the exact integer path above).
/// BF16 (one shift), FP32 and FP64 use to_compute: there is nothing for a one-lane vector to
/// save (A/B differences for BF16 stayed within the noise of the unchanged FP32 control).
template <class C, class S>
HWY_INLINE C load_conv1(const S* p) {
    if constexpr (std::is_same_v<S, half>) {
        return hn::GetLane(load_conv(hn::CappedTag<C, 1>(), p));
    } else {
        return to_compute<C>(*p);
    }
}

}  // namespace mpmg::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // MPMG_KERNELS_LOAD_CONV_INL_H_
