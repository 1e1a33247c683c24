// Block rows of an r x r block SG-DIA matrix in its own layout (see sgdia_aos_simd.hpp), with
// Google Highway; compiled once per target through foreach_target.h, with -ffp-contract=off
// (CMakeLists.txt): the products and sums must round one by one, as the scalar cells do.
//
// Design. A run of cells is taken in groups of N cells (N = lanes of C). The group's r^2 N
// values, [cell][a][b], are split into r^2 vectors over cells, V_e[i] = av[i r^2 + e], by two
// rounds of LoadInterleaved_r through an L1 scratch: the first over r runs of r N values gives,
// for each b, the values of (cell, a) pairs in lanes; stored one after the other and split again,
// they give one vector per (a, b). x and out are split the same way (one round: x_rb[i] =
// x[i r + rb]). The row sums are then r^2 multiplies and adds on whole vectors; a transposed
// block only swaps which V_e is A[ra][rb]. The scalar loop this replaces converted and
// multiplied one value at a time: FP16 3d7 r = 3 products took 148 ms where these take 18 ms
// (bench kernels, sgdia rows). FP64 products did not get faster (43 ms either way): on this
// layout they are bound by memory access, a line reading r^2 x (offsets) short runs (README,
// "Block (r x r) kernels").
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/sgdia_aos_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include <cstdint>
#include <type_traits>

#include "kernels/interleaved_r-inl.h"
#include "kernels/load_conv-inl.h"
#include "kernels/sgdia_aos_simd.hpp"

HWY_BEFORE_NAMESPACE();
namespace mpmg::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using simd::BlockRowsArgs;

/// The scalar cells of a run: the same order of operations as the vectors.
template <int R, bool Transposed, class S, class C>
HWY_INLINE void cell_rows(const S* av, const C* xv, C* out) {
    for (int ra = 0; ra < R; ++ra) {
        C s = 0;
        for (int rb = 0; rb < R; ++rb) {
            const int e = Transposed ? rb * R + ra : ra * R + rb;
            const C p = load_conv1<C>(av + e) * xv[rb];
            s = rb == 0 ? p : s + p;
        }
        out[ra] = out[ra] + s;
    }
}

template <int R, bool Transposed, class S, class C>
void rows_r(const BlockRowsArgs<S, C>& p) {
    const hn::ScalableTag<C> d;
    using V = hn::Vec<decltype(d)>;
    constexpr int kMaxLanes = static_cast<int>(HWY_MAX_BYTES / sizeof(C));
    const int n = static_cast<int>(hn::Lanes(d));
    constexpr int kBlock = R * R;
    HWY_ALIGN C conv[kBlock * kMaxLanes];   // the group's values in C (when S != C)
    HWY_ALIGN C split[kBlock * kMaxLanes];  // after the first round: [b][(cell, a)]
    const std::int64_t group_bytes = std::int64_t{kBlock} * n * static_cast<int>(sizeof(S));
    int i = 0;
    for (; i + n <= p.n; i += n) {
        const S* a = p.av + std::int64_t{i} * kBlock;
        // The same offset's values `ahead` cells on (the next line of the sweep): an address,
        // not a pointer into the array, since on the last line it lies past the end.
        const std::uintptr_t next = reinterpret_cast<std::uintptr_t>(a) +
                                    static_cast<std::uintptr_t>(p.ahead * kBlock * sizeof(S));
        for (std::int64_t b = 0; b < group_bytes; b += 64) {
            hwy::Prefetch(reinterpret_cast<const void*>(next + static_cast<std::uintptr_t>(b)));
        }
        const C* vals = nullptr;
        if constexpr (std::is_same_v<S, C>) {
            vals = a;
        } else {
            for (int k = 0; k < kBlock; ++k) hn::Store(load_conv(d, a + k * n), d, conv + k * n);
            vals = conv;
        }
        // Round 1: r runs of r N values, each split into r vectors over (cell, a) pairs.
        for (int q = 0; q < R; ++q) {
            V w[R];
            load_r<R>(d, vals + q * R * n, w);
            for (int b = 0; b < R; ++b) hn::Store(w[b], d, split + (b * R + q) * n);
        }
        // Round 2: for each b, the (cell, a) pairs split by a: v[a * R + b][cell].
        V v[kBlock];
        for (int b = 0; b < R; ++b) {
            V u[R];
            load_r<R>(d, split + b * R * n, u);
            for (int a2 = 0; a2 < R; ++a2) v[a2 * R + b] = u[a2];
        }
        V xs[R], acc[R];
        load_r<R>(d, p.x + std::int64_t{i} * R, xs);
        load_r<R>(d, p.out + std::int64_t{i} * R, acc);
        for (int ra = 0; ra < R; ++ra) {
            V s = hn::Mul(v[Transposed ? ra : ra * R], xs[0]);
            for (int rb = 1; rb < R; ++rb) {
                s = hn::Add(s, hn::Mul(v[Transposed ? rb * R + ra : ra * R + rb], xs[rb]));
            }
            acc[ra] = hn::Add(acc[ra], s);
        }
        store_r<R>(d, acc, p.out + std::int64_t{i} * R);
    }
    for (; i < p.n; ++i) {
        cell_rows<R, Transposed>(p.av + std::int64_t{i} * kBlock, p.x + std::int64_t{i} * R,
                                 p.out + std::int64_t{i} * R);
    }
}

template <class S, class C>
void rows(const BlockRowsArgs<S, C>& p) {
    const auto pick = [&p](auto r_tag) {
        constexpr int R = decltype(r_tag)::value;
        if (p.transposed) {
            rows_r<R, true>(p);
        } else {
            rows_r<R, false>(p);
        }
    };
    switch (p.r) {
        case 2:
            return pick(std::integral_constant<int, 2>());
        case 3:
            return pick(std::integral_constant<int, 3>());
        default:
            return pick(std::integral_constant<int, 4>());
    }
}

// One plain exported function per supported (storage, compute) pair (no HWY_EXPORT_T in 1.0.3).
void rows_dd(const BlockRowsArgs<double, double>& p) { rows(p); }
void rows_fd(const BlockRowsArgs<float, double>& p) { rows(p); }
void rows_hd(const BlockRowsArgs<half, double>& p) { rows(p); }
void rows_bd(const BlockRowsArgs<bfloat16, double>& p) { rows(p); }
void rows_ff(const BlockRowsArgs<float, float>& p) { rows(p); }
void rows_hf(const BlockRowsArgs<half, float>& p) { rows(p); }
void rows_bf(const BlockRowsArgs<bfloat16, float>& p) { rows(p); }

}  // namespace mpmg::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpmg::kernels::simd {

HWY_EXPORT(rows_dd);
HWY_EXPORT(rows_fd);
HWY_EXPORT(rows_hd);
HWY_EXPORT(rows_bd);
HWY_EXPORT(rows_ff);
HWY_EXPORT(rows_hf);
HWY_EXPORT(rows_bf);

void block_rows(const BlockRowsArgs<double, double>& p) { HWY_DYNAMIC_DISPATCH(rows_dd)(p); }
void block_rows(const BlockRowsArgs<float, double>& p) { HWY_DYNAMIC_DISPATCH(rows_fd)(p); }
void block_rows(const BlockRowsArgs<half, double>& p) { HWY_DYNAMIC_DISPATCH(rows_hd)(p); }
void block_rows(const BlockRowsArgs<bfloat16, double>& p) { HWY_DYNAMIC_DISPATCH(rows_bd)(p); }
void block_rows(const BlockRowsArgs<float, float>& p) { HWY_DYNAMIC_DISPATCH(rows_ff)(p); }
void block_rows(const BlockRowsArgs<half, float>& p) { HWY_DYNAMIC_DISPATCH(rows_hf)(p); }
void block_rows(const BlockRowsArgs<bfloat16, float>& p) { HWY_DYNAMIC_DISPATCH(rows_bf)(p); }

}  // namespace mpmg::kernels::simd
#endif  // HWY_ONCE
