// Per-target Krylov vector kernels (see vector_simd.hpp). This file is compiled once per
// Highway target through foreach_target.h, with -ffp-contract=off (CMakeLists.txt): a product
// followed by a sum must stay two roundings on every target, or FMA targets would differ from
// the others.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/vector_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/vector_simd.hpp"

#ifndef MPMG_KERNELS_VECTOR_SIMD_ONCE
#define MPMG_KERNELS_VECTOR_SIMD_ONCE
namespace mpmg::kernels::vec_detail {

constexpr std::int64_t kSlots = 8;

/// ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)).
inline double sum_slots(const double* s) {
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/// The scalar form of dot from element `from` on: slot k mod 8 gets x[k] y[k].
template <class K>
void dot_tail(std::int64_t from, std::int64_t n, const K* x, const K* y, double* slots) {
    for (std::int64_t k = from; k < n; ++k) {
        slots[k % kSlots] += static_cast<double>(x[k]) * static_cast<double>(y[k]);
    }
}

/// The scalar form of axpy_dot from element `from` on.
template <class K>
void axpy_dot_tail(std::int64_t from, std::int64_t n, K alpha, const K* x, K* y, const K* z,
                   double* slots) {
    for (std::int64_t k = from; k < n; ++k) {
        const K t = alpha * x[k];
        y[k] = y[k] + t;
        slots[k % kSlots] += static_cast<double>(y[k]) * static_cast<double>(z[k]);
    }
}

}  // namespace mpmg::kernels::vec_detail
#endif

HWY_BEFORE_NAMESPACE();
namespace mpmg::kernels::vec {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using vec_detail::kSlots;

/// At most eight double lanes, so that one group of eight elements is 8 / N whole vectors.
using D = hn::CappedTag<double, 8>;

template <class K>
HWY_INLINE hn::Vec<D> widen(D d, hn::Vec<hn::Rebind<K, D>> v) {
    if constexpr (std::is_same_v<K, double>) {
        (void)d;
        return v;
    } else {
        return hn::PromoteTo(d, v);
    }
}

/// Adds f(k), the double products of elements [k, k + N), of every whole group of eight into
/// slots[0..8) (slot = k mod 8); returns where the groups end.
template <class F>
HWY_INLINE std::int64_t groups(std::int64_t n, double* slots, F&& f) {
    const D d;
    const auto N = static_cast<std::int64_t>(hn::Lanes(d));
    const std::int64_t end = n - n % kSlots;
    auto a0 = hn::Zero(d), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    for (std::int64_t k = 0; k < end; k += kSlots) {
        a0 = hn::Add(a0, f(k));
        if (N < 8) a1 = hn::Add(a1, f(k + N));
        if (N < 4) {
            a2 = hn::Add(a2, f(k + 2 * N));
            a3 = hn::Add(a3, f(k + 3 * N));
        }
        if (N < 2) {
            a4 = hn::Add(a4, f(k + 4));
            a5 = hn::Add(a5, f(k + 5));
            a6 = hn::Add(a6, f(k + 6));
            a7 = hn::Add(a7, f(k + 7));
        }
    }
    hn::StoreU(a0, d, slots);
    if (N < 8) hn::StoreU(a1, d, slots + N);
    if (N < 4) {
        hn::StoreU(a2, d, slots + 2 * N);
        hn::StoreU(a3, d, slots + 3 * N);
    }
    if (N < 2) {
        hn::StoreU(a4, d, slots + 4);
        hn::StoreU(a5, d, slots + 5);
        hn::StoreU(a6, d, slots + 6);
        hn::StoreU(a7, d, slots + 7);
    }
    return end;
}

/// Whether this target's vectors tile a group of eight (always on fixed-width targets; a
/// scalable vector of another length takes the scalar path, with the same result).
HWY_INLINE bool tiles() { return kSlots % static_cast<std::int64_t>(hn::Lanes(D())) == 0; }

template <class K>
double dot_t(const K* x, const K* y, std::int64_t n) {
    const D d;
    const hn::Rebind<K, D> dk;
    double slots[kSlots] = {};
    std::int64_t done = 0;
    if (tiles()) {
        done = groups(n, slots, [&](std::int64_t k) HWY_ATTR {
            return hn::Mul(widen<K>(d, hn::LoadU(dk, x + k)), widen<K>(d, hn::LoadU(dk, y + k)));
        });
    }
    vec_detail::dot_tail(done, n, x, y, slots);
    return vec_detail::sum_slots(slots);
}

template <class K>
double axpy_dot_t(double alpha, const K* x, K* y, const K* z, std::int64_t n) {
    const D d;
    const hn::Rebind<K, D> dk;
    const K a = static_cast<K>(alpha);
    const auto va = hn::Set(dk, a);
    double slots[kSlots] = {};
    std::int64_t done = 0;
    if (tiles()) {
        const bool self = z == y;
        done = groups(n, slots, [&](std::int64_t k) HWY_ATTR {
            const auto yk = hn::Add(hn::LoadU(dk, y + k), hn::Mul(va, hn::LoadU(dk, x + k)));
            hn::StoreU(yk, dk, y + k);
            const auto wy = widen<K>(d, yk);
            return hn::Mul(wy, self ? wy : widen<K>(d, hn::LoadU(dk, z + k)));
        });
    }
    vec_detail::axpy_dot_tail(done, n, a, x, y, z, slots);
    return vec_detail::sum_slots(slots);
}

double dot_d(const double* x, const double* y, std::int64_t n) { return dot_t(x, y, n); }
double dot_f(const float* x, const float* y, std::int64_t n) { return dot_t(x, y, n); }
double axpy_dot_d(double alpha, const double* x, double* y, const double* z, std::int64_t n) {
    return axpy_dot_t(alpha, x, y, z, n);
}
double axpy_dot_f(double alpha, const float* x, float* y, const float* z, std::int64_t n) {
    return axpy_dot_t(alpha, x, y, z, n);
}

}  // namespace HWY_NAMESPACE
}  // namespace mpmg::kernels::vec
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpmg::kernels {
namespace vec {

HWY_EXPORT(dot_d);
HWY_EXPORT(dot_f);
HWY_EXPORT(axpy_dot_d);
HWY_EXPORT(axpy_dot_f);

}  // namespace vec

double dot(const double* x, const double* y, std::int64_t n) {
    return HWY_DYNAMIC_DISPATCH(vec::dot_d)(x, y, n);
}
double dot(const float* x, const float* y, std::int64_t n) {
    return HWY_DYNAMIC_DISPATCH(vec::dot_f)(x, y, n);
}
double axpy_dot(double alpha, const double* x, double* y, const double* z, std::int64_t n) {
    return HWY_DYNAMIC_DISPATCH(vec::axpy_dot_d)(alpha, x, y, z, n);
}
double axpy_dot(double alpha, const float* x, float* y, const float* z, std::int64_t n) {
    return HWY_DYNAMIC_DISPATCH(vec::axpy_dot_f)(alpha, x, y, z, n);
}

}  // namespace mpmg::kernels
#endif  // HWY_ONCE
