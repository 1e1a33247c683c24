// Per-target Krylov vector kernels (see vector_simd.hpp). This file is compiled once per
// Highway target through foreach_target.h, with -ffp-contract=off (CMakeLists.txt): a product
// followed by a sum must stay two roundings on every target, or FMA targets would differ from
// the others.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/vector_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>

#include <algorithm>
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

/// Elements per chunk of the block Gram-Schmidt passes: a chunk of each target (and of the
/// updated vectors) stays in L2 while the basis vectors stream past it. 1024 elements (runs of
/// 8 KiB per basis vector) left the prefetchers too little to follow: 11 GB/s against 15 for
/// 8192 and more, one vector at a time.
constexpr std::int64_t kChunk = 16384;

/// The scalar form of multi_dot over [from, to), from - lo a multiple of 8.
template <class K>
void multi_dot_tail(int m, const K* const* basis, const K* t0, const K* t1, std::int64_t lo,
                    std::int64_t from, std::int64_t to, double* slots) {
    for (int i = 0; i < m; ++i) {
        double* s0 = slots + kSlots * i;
        double* s1 = slots + kSlots * (m + i);
        for (std::int64_t k = from; k < to; ++k) {
            const double b = static_cast<double>(basis[i][k]);
            s0[(k - lo) % kSlots] += b * static_cast<double>(t0[k]);
            if (t1) s1[(k - lo) % kSlots] += b * static_cast<double>(t1[k]);
        }
    }
    if (t1) {
        double* s = slots + kSlots * 2 * m;
        for (std::int64_t k = from; k < to; ++k) {
            s[(k - lo) % kSlots] += static_cast<double>(t1[k]) * static_cast<double>(t1[k]);
        }
    }
}

/// The scalar form of gs_update over [from, to), from - lo a multiple of 8.
template <class K>
void gs_update_tail(int m, const K* const* basis, const double* c, K qscale, K* q, const double* h,
                    K wscale, K* w, std::int64_t lo, std::int64_t from, std::int64_t to,
                    double* slots) {
    for (std::int64_t k = from; k < to; ++k) {
        K qk = q[k];
        for (int i = 0; i < m; ++i) qk = qk - static_cast<K>(c[i]) * basis[i][k];
        qk = qk * qscale;
        q[k] = qk;
        if (!w) continue;
        K wk = w[k];
        for (int i = 0; i < m; ++i) wk = wk - static_cast<K>(h[i]) * basis[i][k];
        wk = (wk - static_cast<K>(h[m]) * qk) * wscale;
        w[k] = wk;
        slots[(k - lo) % kSlots] += static_cast<double>(wk) * static_cast<double>(wk);
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

/// Adds f(k), the double products of elements [k, k + N), of the groups of eight starting at
/// from, from + 8, ... (below to) into slots[0..8): groups() resumed from the slots' values.
template <class F>
HWY_INLINE void accumulate(std::int64_t from, std::int64_t to, double* slots, F&& f) {
    const D d;
    const auto N = static_cast<std::int64_t>(hn::Lanes(d));
    auto a0 = hn::LoadU(d, slots), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    if (N < 8) a1 = hn::LoadU(d, slots + N);
    if (N < 4) {
        a2 = hn::LoadU(d, slots + 2 * N);
        a3 = hn::LoadU(d, slots + 3 * N);
    }
    if (N < 2) {
        a4 = hn::LoadU(d, slots + 4);
        a5 = hn::LoadU(d, slots + 5);
        a6 = hn::LoadU(d, slots + 6);
        a7 = hn::LoadU(d, slots + 7);
    }
    for (std::int64_t k = from; k < to; k += kSlots) {
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
}

/// Adds f(k), the double products of elements [k, k + N), of every whole group of eight into
/// slots[0..8) (slot = k mod 8); returns where the groups end.
template <class F>
HWY_INLINE std::int64_t groups(std::int64_t n, double* slots, F&& f) {
    const std::int64_t end = n - n % kSlots;
    accumulate(0, end, slots, f);
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

/// Basis vectors read together in the block Gram-Schmidt passes. One core of the Zen 5 VM reads
/// one stream at about 19 GB/s and two at 30: a chunk at a time, one basis vector after
/// another, these passes ran at 11-15 GB/s. multi_dot over 30 vectors of 2.7M doubles, read
/// 2 / 4 / 8 / 16 together: 19 / 23 / 28 / 22 GB/s (16 runs out of registers).
constexpr int kTogether = 8;

template <class K>
void multi_dot_t(int m, const K* const* basis, const K* t0, const K* t1, std::int64_t lo,
                 std::int64_t len, double* out, double* slots) {
    const D d;
    const hn::Rebind<K, D> dk;
    const auto N = static_cast<std::int64_t>(hn::Lanes(d));
    const int nsets = t1 ? 2 * m + 1 : m;
    for (std::int64_t s = 0; s < kSlots * nsets; ++s) slots[s] = 0.0;
#if HWY_HAVE_SCALABLE  // no arrays of sizeless vectors: the scalar form, same result
    const std::int64_t end = lo;
#else
    const std::int64_t end = tiles() ? lo + (len - len % kSlots) : lo;
    for (std::int64_t c0 = lo; c0 < end; c0 += vec_detail::kChunk) {
        const std::int64_t c1 = std::min(end, c0 + vec_detail::kChunk);
        for (int i0 = 0; i0 < m; i0 += kTogether) {
            const int together = std::min(kTogether, m - i0);
            // The slots of the group's products, in registers for the chunk: accumulator
            // g subs + e holds slots [e N, (e + 1) N) of basis vector i0 + g.
            const int subs = static_cast<int>(kSlots / N);
            hn::Vec<D> a0[kTogether * kSlots], a1[kTogether * kSlots];
            for (int g = 0; g < together; ++g) {
                for (int e = 0; e < subs; ++e) {
                    a0[g * subs + e] = hn::LoadU(d, slots + kSlots * (i0 + g) + e * N);
                    if (t1) a1[g * subs + e] = hn::LoadU(d, slots + kSlots * (m + i0 + g) + e * N);
                }
            }
            for (std::int64_t k = c0; k < c1; k += kSlots) {
                for (int e = 0; e < subs; ++e) {
                    const std::int64_t ke = k + e * N;
                    const auto x0 = widen<K>(d, hn::LoadU(dk, t0 + ke));
                    if (t1) {
                        const auto x1 = widen<K>(d, hn::LoadU(dk, t1 + ke));
                        for (int g = 0; g < together; ++g) {
                            const auto b = widen<K>(d, hn::LoadU(dk, basis[i0 + g] + ke));
                            a0[g * subs + e] = hn::Add(a0[g * subs + e], hn::Mul(b, x0));
                            a1[g * subs + e] = hn::Add(a1[g * subs + e], hn::Mul(b, x1));
                        }
                    } else {
                        for (int g = 0; g < together; ++g) {
                            const auto b = widen<K>(d, hn::LoadU(dk, basis[i0 + g] + ke));
                            a0[g * subs + e] = hn::Add(a0[g * subs + e], hn::Mul(b, x0));
                        }
                    }
                }
            }
            for (int g = 0; g < together; ++g) {
                for (int e = 0; e < subs; ++e) {
                    hn::StoreU(a0[g * subs + e], d, slots + kSlots * (i0 + g) + e * N);
                    if (t1) hn::StoreU(a1[g * subs + e], d, slots + kSlots * (m + i0 + g) + e * N);
                }
            }
        }
        if (t1) {
            accumulate(c0, c1, slots + kSlots * 2 * m, [&](std::int64_t k) HWY_ATTR {
                const auto t = widen<K>(d, hn::LoadU(dk, t1 + k));
                return hn::Mul(t, t);
            });
        }
    }
#endif
    vec_detail::multi_dot_tail(m, basis, t0, t1, lo, end, lo + len, slots);
    for (int s = 0; s < nsets; ++s) out[s] = vec_detail::sum_slots(slots + kSlots * s);
}

template <class K>
double gs_update_t(int m, const K* const* basis, const double* c, double qscale, K* q,
                   const double* h, double wscale, K* w, std::int64_t lo, std::int64_t len,
                   double* slots) {
    const D d;
    const hn::Rebind<K, D> dk;
    const auto N = static_cast<std::int64_t>(hn::Lanes(dk));
    const K qs = static_cast<K>(qscale), ws = static_cast<K>(wscale);
    for (std::int64_t s = 0; s < kSlots; ++s) slots[s] = 0.0;
    const std::int64_t end = tiles() ? lo + (len - len % kSlots) : lo;
    for (std::int64_t c0 = lo; c0 < end; c0 += vec_detail::kChunk) {
        const std::int64_t c1 = std::min(end, c0 + vec_detail::kChunk);
        for (int i0 = 0; i0 < m; i0 += kTogether) {
            const int together = std::min(kTogether, m - i0);
            K cg[kTogether], hg[kTogether];
            for (int g = 0; g < together; ++g) {
                cg[g] = static_cast<K>(c[i0 + g]);
                hg[g] = w ? static_cast<K>(h[i0 + g]) : K(0);
            }
            for (std::int64_t k = c0; k < c1; k += N) {
                auto qk = hn::LoadU(dk, q + k);
                if (w) {
                    auto wk = hn::LoadU(dk, w + k);
                    for (int g = 0; g < together; ++g) {  // in the order of i
                        const auto b = hn::LoadU(dk, basis[i0 + g] + k);
                        qk = hn::Sub(qk, hn::Mul(hn::Set(dk, cg[g]), b));
                        wk = hn::Sub(wk, hn::Mul(hn::Set(dk, hg[g]), b));
                    }
                    hn::StoreU(wk, dk, w + k);
                } else {
                    for (int g = 0; g < together; ++g) {
                        qk = hn::Sub(qk,
                                     hn::Mul(hn::Set(dk, cg[g]), hn::LoadU(dk, basis[i0 + g] + k)));
                    }
                }
                hn::StoreU(qk, dk, q + k);
            }
        }
        const auto vqs = hn::Set(dk, qs);
        if (!w) {
            for (std::int64_t k = c0; k < c1; k += N) {
                hn::StoreU(hn::Mul(hn::LoadU(dk, q + k), vqs), dk, q + k);
            }
            continue;
        }
        const auto vhm = hn::Set(dk, static_cast<K>(h[m]));
        const auto vws = hn::Set(dk, ws);
        accumulate(c0, c1, slots, [&](std::int64_t k) HWY_ATTR {
            const auto qk = hn::Mul(hn::LoadU(dk, q + k), vqs);
            hn::StoreU(qk, dk, q + k);
            const auto wk = hn::Mul(hn::Sub(hn::LoadU(dk, w + k), hn::Mul(vhm, qk)), vws);
            hn::StoreU(wk, dk, w + k);
            const auto wd = widen<K>(d, wk);
            return hn::Mul(wd, wd);
        });
    }
    vec_detail::gs_update_tail(m, basis, c, qs, q, h, ws, w, lo, end, lo + len, slots);
    return w ? vec_detail::sum_slots(slots) : 0.0;
}

double dot_d(const double* x, const double* y, std::int64_t n) { return dot_t(x, y, n); }
double dot_f(const float* x, const float* y, std::int64_t n) { return dot_t(x, y, n); }
double axpy_dot_d(double alpha, const double* x, double* y, const double* z, std::int64_t n) {
    return axpy_dot_t(alpha, x, y, z, n);
}
double axpy_dot_f(double alpha, const float* x, float* y, const float* z, std::int64_t n) {
    return axpy_dot_t(alpha, x, y, z, n);
}
void multi_dot_d(int m, const double* const* basis, const double* t0, const double* t1,
                 std::int64_t lo, std::int64_t len, double* out, double* slots) {
    multi_dot_t(m, basis, t0, t1, lo, len, out, slots);
}
void multi_dot_f(int m, const float* const* basis, const float* t0, const float* t1,
                 std::int64_t lo, std::int64_t len, double* out, double* slots) {
    multi_dot_t(m, basis, t0, t1, lo, len, out, slots);
}
double gs_update_d(int m, const double* const* basis, const double* c, double qscale, double* q,
                   const double* h, double wscale, double* w, std::int64_t lo, std::int64_t len,
                   double* slots) {
    return gs_update_t(m, basis, c, qscale, q, h, wscale, w, lo, len, slots);
}
double gs_update_f(int m, const float* const* basis, const double* c, double qscale, float* q,
                   const double* h, double wscale, float* w, std::int64_t lo, std::int64_t len,
                   double* slots) {
    return gs_update_t(m, basis, c, qscale, q, h, wscale, w, lo, len, slots);
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
HWY_EXPORT(multi_dot_d);
HWY_EXPORT(multi_dot_f);
HWY_EXPORT(gs_update_d);
HWY_EXPORT(gs_update_f);

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

void multi_dot(int m, const double* const* basis, const double* t0, const double* t1,
               std::int64_t lo, std::int64_t len, double* out, double* slots) {
    HWY_DYNAMIC_DISPATCH(vec::multi_dot_d)(m, basis, t0, t1, lo, len, out, slots);
}
void multi_dot(int m, const float* const* basis, const float* t0, const float* t1, std::int64_t lo,
               std::int64_t len, double* out, double* slots) {
    HWY_DYNAMIC_DISPATCH(vec::multi_dot_f)(m, basis, t0, t1, lo, len, out, slots);
}
double gs_update(int m, const double* const* basis, const double* c, double qscale, double* q,
                 const double* h, double wscale, double* w, std::int64_t lo, std::int64_t len,
                 double* slots) {
    return HWY_DYNAMIC_DISPATCH(vec::gs_update_d)(m, basis, c, qscale, q, h, wscale, w, lo, len,
                                                  slots);
}
double gs_update(int m, const float* const* basis, const double* c, double qscale, float* q,
                 const double* h, double wscale, float* w, std::int64_t lo, std::int64_t len,
                 double* slots) {
    return HWY_DYNAMIC_DISPATCH(vec::gs_update_f)(m, basis, c, qscale, q, h, wscale, w, lo, len,
                                                  slots);
}

}  // namespace mpmg::kernels
#endif  // HWY_ONCE
