// Per-target x-lines of the trilinear transfers (see transfer_simd.hpp). Compiled once per
// Highway target through foreach_target.h, with -ffp-contract=off (CMakeLists.txt).
//
// The r = 1 kernels work on N = Lanes(double) coarse values at a time: the 2 N fine values
// they meet are split into their even and odd cells by LoadInterleaved2 (FP32 lines with a
// float tag of N lanes, widened after the split), and the interpolation writes its 2 N fine
// values back through StoreInterleaved2. The block kernels (r >= 2) are described below. Cells
// a vector would take past the line's end run in the scalar loops, which are the reference
// code itself.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/transfer_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>

#include "kernels/transfer_simd.hpp"

HWY_BEFORE_NAMESPACE();
namespace mpmg::kernels::transfer {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// v(q) of restrict_line, one value.
template <class T>
HWY_INLINE double fine_value(const T* f, const T* s, std::int64_t q) {
    return s == nullptr ? static_cast<double>(f[q])
                        : static_cast<double>(static_cast<T>(f[q] * s[q]));
}

/// The even and odd cells of the 2 N fine values at q, as v() gives them, in FP64.
template <class DD, class T>
HWY_INLINE void load_split(DD dd, const T* f, const T* s, std::int64_t q, hn::Vec<DD>& even,
                           hn::Vec<DD>& odd) {
    const hn::Rebind<T, DD> dt;
    hn::Vec<decltype(dt)> e, o;
    hn::LoadInterleaved2(dt, f + q, e, o);
    if (s != nullptr) {
        hn::Vec<decltype(dt)> se, so;
        hn::LoadInterleaved2(dt, s + q, se, so);
        e = hn::Mul(e, se);
        o = hn::Mul(o, so);
    }
    if constexpr (sizeof(T) == sizeof(double)) {
        even = e;
        odd = o;
    } else {
        even = hn::PromoteTo(dd, e);
        odd = hn::PromoteTo(dd, o);
    }
}

template <class T>
void restrict_line_t(const T* f, const T* s, std::int64_t n, double* out) {
    const hn::ScalableTag<double> dd;
    const auto N = static_cast<std::int64_t>(hn::Lanes(dd));
    const auto half = hn::Set(dd, 0.5);
    const std::int64_t nc = n / 2;
    const std::int64_t full = (n - 1) / 2;  // coarse indices whose 2ic + 2 lies inside
    std::int64_t ic = 0;
    // A vector reads the fine cells 2ic .. 2ic + 2N + 1.
    for (; 2 * (ic + N) + 2 <= n; ic += N) {
        hn::Vec<decltype(dd)> e0, o0, e2, o2;
        load_split(dd, f, s, 2 * ic, e0, o0);
        load_split(dd, f, s, 2 * ic + 2, e2, o2);
        const auto v = hn::Add(hn::Add(o0, hn::Mul(half, e0)), hn::Mul(half, e2));
        hn::StoreU(v, dd, out + ic);
    }
    for (; ic < full; ++ic) {
        out[ic] = fine_value(f, s, 2 * ic + 1) + 0.5 * fine_value(f, s, 2 * ic) +
                  0.5 * fine_value(f, s, 2 * ic + 2);
    }
    for (; ic < nc; ++ic) out[ic] = fine_value(f, s, 2 * ic + 1) + 0.5 * fine_value(f, s, 2 * ic);
}

// Blocks (r >= 2). Vectors never touch memory past the line: a coarse cell whose vectors would
// runs in the scalar loop, the reference code. The restriction takes one coarse cell at a
// time, its r values in vectors of (at most) 4 lanes from a CappedTag, chunk a0 = 0, 4, ... of
// the block; a chunk's lanes past the block store garbage into the next coarse cell's values,
// which that cell's own chunk overwrites right after (cells in increasing order).

template <class T>
void restrict_blocks_t(const T* f, const T* s, std::int64_t n, int r, double* out) {
    const hn::CappedTag<double, 4> dd;
    const hn::Rebind<T, decltype(dd)> dt;
    const int L = static_cast<int>(hn::Lanes(dd));
    const auto half = hn::Set(dd, 0.5);
    const std::int64_t nc = n / 2;
    const std::int64_t full = (n - 1) / 2;
    const std::int64_t len = n * r;      // values in the fine line
    const int last = ((r - 1) / L) * L;  // the last chunk's first component
    const auto load = [&](std::int64_t q) {
        auto v = hn::LoadU(dt, f + q);
        if (s != nullptr) v = hn::Mul(v, hn::LoadU(dt, s + q));
        if constexpr (sizeof(T) == sizeof(double)) {
            return v;
        } else {
            return hn::PromoteTo(dd, v);
        }
    };
    std::int64_t ic = 0;
    // Cell ic reads up to (2ic + 2) r + last + L - 1 and writes up to ic r + last + L - 1.
    for (; ic < full && (2 * ic + 2) * r + last + L <= len && ic * r + last + L <= nc * r; ++ic) {
        for (int a0 = 0; a0 < r; a0 += L) {
            const std::int64_t q = 2 * ic * r + a0;
            const auto v = hn::Add(hn::Add(load(q + r), hn::Mul(half, load(q))),
                                   hn::Mul(half, load(q + 2 * r)));
            hn::StoreU(v, dd, out + ic * r + a0);
        }
    }
    for (; ic < nc; ++ic) {
        const std::int64_t q = 2 * ic * r;
        const bool right = ic < full;
        for (int a = 0; a < r; ++a) {
            double v = fine_value(f, s, q + r + a) + 0.5 * fine_value(f, s, q + a);
            if (right) v += 0.5 * fine_value(f, s, q + 2 * r + a);
            out[ic * r + a] = v;
        }
    }
}

void restrict_f(const float* f, const float* s, std::int64_t n, int r, double* out) {
    if (r == 1) return restrict_line_t(f, s, n, out);
    restrict_blocks_t(f, s, n, r, out);
}
void restrict_d(const double* f, const double* s, std::int64_t n, int r, double* out) {
    if (r == 1) return restrict_line_t(f, s, n, out);
    restrict_blocks_t(f, s, n, r, out);
}

/// y += w as interpolate_line_add adds it, one value.
template <class T>
HWY_INLINE void add_one(T& y, double w, const T* s) {
    if (s == nullptr) {
        y = static_cast<T>(static_cast<double>(y) + w);
    } else {
        y += *s * static_cast<T>(0.0 + w);
    }
}

/// y (the N FP64 or widened values of one parity) with w added as add_one adds it.
template <class DD, class DT>
HWY_INLINE hn::Vec<DT> add_vec(DD dd, DT dt, hn::Vec<DT> y, hn::Vec<DD> w, const hn::Vec<DT>* s) {
    if constexpr (sizeof(hn::TFromD<DT>) == sizeof(double)) {
        if (s == nullptr) return hn::Add(y, w);
        return hn::Add(y, hn::Mul(*s, hn::Add(hn::Zero(dd), w)));
    } else {
        if (s == nullptr) return hn::DemoteTo(dt, hn::Add(hn::PromoteTo(dd, y), w));
        return hn::Add(y, hn::Mul(*s, hn::DemoteTo(dt, hn::Add(hn::Zero(dd), w))));
    }
}

template <class T>
void interpolate_line_add_t(const double* c, std::int64_t nx, T* y, const T* s) {
    const std::int64_t cx = nx / 2;
    const auto add = [&](std::int64_t i, double w) {
        add_one(y[i], w, s == nullptr ? nullptr : s + i);
    };
    add(0, 0.0 + 0.5 * c[0]);
    add(1, c[0]);
    const hn::ScalableTag<double> dd;
    const hn::Rebind<T, decltype(dd)> dt;
    const auto N = static_cast<std::int64_t>(hn::Lanes(dd));
    const auto half = hn::Set(dd, 0.5);
    std::int64_t ic = 1;
    // A vector reads c[ic - 1 .. ic + N - 1] and writes y[2ic .. 2ic + 2N - 1].
    for (; ic + N <= cx; ic += N) {
        const auto lo = hn::LoadU(dd, c + ic - 1);
        const auto hi = hn::LoadU(dd, c + ic);
        const auto we = hn::Add(hn::Mul(half, lo), hn::Mul(half, hi));
        hn::Vec<decltype(dt)> ye, yo;
        hn::LoadInterleaved2(dt, y + 2 * ic, ye, yo);
        if (s == nullptr) {
            ye = add_vec(dd, dt, ye, we, nullptr);
            yo = add_vec(dd, dt, yo, hi, nullptr);
        } else {
            hn::Vec<decltype(dt)> se, so;
            hn::LoadInterleaved2(dt, s + 2 * ic, se, so);
            ye = add_vec(dd, dt, ye, we, &se);
            yo = add_vec(dd, dt, yo, hi, &so);
        }
        hn::StoreInterleaved2(ye, yo, dt, y + 2 * ic);
    }
    for (; ic < cx; ++ic) {
        add(2 * ic, 0.5 * c[ic - 1] + 0.5 * c[ic]);
        add(2 * ic + 1, c[ic]);
    }
    if (nx % 2 == 1) add(nx - 1, 0.0 + 0.5 * c[cx - 1]);
}

template <class T>
void interpolate_blocks_t(const double* c, std::int64_t nx, int r, T* y, const T* s) {
    const std::int64_t cx = nx / 2;
    const auto scalar_cell = [&](std::int64_t i) {
        for (int a = 0; a < r; ++a) {
            double w;
            if (i % 2 == 1) {
                w = c[(i - 1) / 2 * r + a];
            } else {
                const std::int64_t ic = i / 2;
                w = 0.0;
                if (ic >= 1) w += 0.5 * c[(ic - 1) * r + a];
                if (ic < cx) w += 0.5 * c[ic * r + a];
            }
            const std::int64_t q = i * r + a;
            add_one(y[q], w, s == nullptr ? nullptr : s + q);
        }
    };
    // The fine cells 2ic, 2ic + 1 (ic >= 1) as one run of 2r values, L at a time from t0: value
    // t of the run is component t of cell 2ic (t < r), with w = (0 + 0.5 A) + 0.5 B, or
    // component t - r of cell 2ic + 1, with w = c[ic r + t - r] = A, where A = c[(ic-1) r + t]
    // and B = c[ic r + t]: two plain loads of c and a blend. Only the run's own lanes are
    // stored (BlendedStore). A first version stored whole vectors, the lanes past the run
    // written back unchanged, so each run's loads overlapped the previous run's store: rhd3t
    // n = 64 spent 1.75 ms of a K64P32D16 cycle in it against 1.09 ms now (perf shares).
    const hn::CappedTag<double, 8> dd;
    const hn::Rebind<T, decltype(dd)> dt;
    const int L = static_cast<int>(hn::Lanes(dd));
    const auto half = hn::Set(dd, 0.5);
    const auto zero = hn::Zero(dd);
    const std::int64_t len = nx * r;
    const int last = ((2 * r - 1) / L) * L;  // the run's last chunk
    for (std::int64_t i = 0; i < std::min<std::int64_t>(nx, 2); ++i) scalar_cell(i);
    // Run ic reads c up to ic r + last + L - 1, y and s up to 2ic r + last + L - 1.
    std::int64_t ic = 1;
    for (; ic < cx && ic * r + last + L <= cx * r && 2 * ic * r + last + L <= len; ++ic) {
        for (int t0 = 0; t0 < 2 * r; t0 += L) {
            const auto a = hn::LoadU(dd, c + (ic - 1) * r + t0);
            const auto b = hn::LoadU(dd, c + ic * r + t0);
            const auto even = hn::FirstN(dd, static_cast<std::size_t>(std::max(0, r - t0)));
            const auto w =
                hn::IfThenElse(even, hn::Add(hn::Add(zero, hn::Mul(half, a)), hn::Mul(half, b)), a);
            const std::int64_t q = 2 * ic * r + t0;
            const auto old = hn::LoadU(dt, y + q);
            hn::Vec<decltype(dt)> sum;
            if (s == nullptr) {
                sum = add_vec(dd, dt, old, w, nullptr);
            } else {
                const auto sv = hn::LoadU(dt, s + q);
                sum = add_vec(dd, dt, old, w, &sv);
            }
            hn::BlendedStore(sum, hn::FirstN(dt, static_cast<std::size_t>(2 * r - t0)), dt, y + q);
        }
    }
    for (std::int64_t i = 2 * ic; i < nx; ++i) scalar_cell(i);
}

void interpolate_f(const double* c, std::int64_t nx, int r, float* y, const float* s) {
    if (r == 1) return interpolate_line_add_t(c, nx, y, s);
    interpolate_blocks_t(c, nx, r, y, s);
}
void interpolate_d(const double* c, std::int64_t nx, int r, double* y, const double* s) {
    if (r == 1) return interpolate_line_add_t(c, nx, y, s);
    interpolate_blocks_t(c, nx, r, y, s);
}

}  // namespace HWY_NAMESPACE
}  // namespace mpmg::kernels::transfer
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpmg::kernels {
namespace transfer {
HWY_EXPORT(restrict_f);
HWY_EXPORT(restrict_d);
HWY_EXPORT(interpolate_f);
HWY_EXPORT(interpolate_d);
}  // namespace transfer

void restrict_line(const float* fine, const float* s, std::int64_t n, int r, double* out) {
    HWY_DYNAMIC_DISPATCH(transfer::restrict_f)(fine, s, n, r, out);
}
void restrict_line(const double* fine, const double* s, std::int64_t n, int r, double* out) {
    HWY_DYNAMIC_DISPATCH(transfer::restrict_d)(fine, s, n, r, out);
}
void interpolate_line_add(const double* c, std::int64_t nx, int r, float* y, const float* s) {
    HWY_DYNAMIC_DISPATCH(transfer::interpolate_f)(c, nx, r, y, s);
}
void interpolate_line_add(const double* c, std::int64_t nx, int r, double* y, const double* s) {
    HWY_DYNAMIC_DISPATCH(transfer::interpolate_d)(c, nx, r, y, s);
}

}  // namespace mpmg::kernels
#endif  // HWY_ONCE
