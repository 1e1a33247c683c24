// Block (r = 2, 3, 4) SG-DIA kernels with Google Highway, dynamic dispatch (see sgdia_block.hpp).
// Compiled once per Highway target through foreach_target.h; the HWY_ONCE part at the end builds
// the dispatch, the BlockSoa constructor and the explicit instantiations.
//
// Design.
// - Layout (BlockSoa): values [line][offset][e = ra*r+rb][i]. A vector of N cells of one block
//   entry is one contiguous load of N storage values, converted in registers (FP16/BF16 ->
//   FP32 [-> FP64]); a whole line's values are one contiguous stream. x, b and y stay
//   interleaved (x[c*r + k]); LoadInterleavedR / StoreInterleavedR split and join the r
//   components of N cells in registers. r is a template parameter, so every r x r loop is
//   unrolled.
// - Products (spmv, residual, jacobi): per line, the offsets whose neighbour line is inside the
//   box are collected once; the line's cells are summed offset after offset into accumulators
//   in L1 (accumulate): per offset, r x r FMAs per vector of N cells, its r^2 value runs read
//   together, so the line's values (one contiguous block) are read nearly in order. Summing the
//   whole stencil per vector instead (accumulators in registers) read r^2 x (offsets) streams
//   at once (3d27, r = 3: 243), which neither the hardware prefetcher nor L1 follow: FP16 3d27
//   r = 3 residuals at 56^3 took 75-100 ns a cell against 46-56 ns offset after offset (a
//   throwaway driver, fastest of 9, one thread; the byte bound at 13 GB/s is 40 ns). The ends
//   of a line are edge vectors (x shifted in from a load inside the neighbour line; BlockSoa
//   stores 0 for the entries whose neighbour is outside the line), the last vector of a chunk
//   overlaps the previous one; lines shorter than a vector run scalar with the dx check.
// - Jacobi and Gauss-Seidel multiply by the centre block inverses D^{-1}, computed once at setup
//   in FP64 with partial pivoting and stored in the compute precision C (r^2 values of C per
//   cell: for r = 3, 3d7, FP16/FP32 that is 36 B next to 126 B of matrix values; the per-cell
//   r x r elimination it replaces was the serial bottleneck).
// - Gauss-Seidel on a line, as the r = 1 kernel: in chunks of at most kGsChunk cells, the fixed
//   part (every offset but the centre and the trailing in-line neighbour t, dx = -1 forward /
//   +1 backward) is accumulated offset after offset as in the products, then a vector pass
//   computes u_i = D_i^{-1} (b_i - sum) and W_i = D_i^{-1} A_t,i (r^3 FMAs, vectorised over
//   cells); the serial recurrence is then x_i = u_i - W_i x_{i+dx_t}, r^2 FMAs per cell. With
//   zero_guess the offsets that read not-yet-updated (zero) neighbours are left out, as in the
//   r = 1 kernel.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/sgdia_block.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/interleaved_r-inl.h"
#include "kernels/lambda_inline.hpp"
#include "kernels/load_conv-inl.h"
#include "kernels/sgdia_block.hpp"
#include "kernels/shift_lanes-inl.h"

#ifndef MPMG_KERNELS_SGDIA_BLOCK_ARGS_
#define MPMG_KERNELS_SGDIA_BLOCK_ARGS_
namespace mpmg::kernels::block_detail {

enum class Kind { spmv, residual, jacobi, gs };

/// One call of a block kernel (one plain struct per pair, so one exported function per pair).
template <class S, class C>
struct Args {
    const BlockSoa<S, C>* a = nullptr;
    const C* b = nullptr;  ///< residual, jacobi, gs
    const C* x = nullptr;  ///< spmv, residual, jacobi
    C* out = nullptr;      ///< y, r, x_new; for gs the x updated in place
    C omega = 0;           ///< jacobi
    Kind kind = Kind::spmv;
    std::int64_t line_begin = 0, line_end = 0;  ///< gs: the line is line_begin
    bool forward = true, zero_guess = false;    ///< gs
};

}  // namespace mpmg::kernels::block_detail
#endif

HWY_BEFORE_NAMESPACE();
namespace mpmg::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using block_detail::Args;
using block_detail::Kind;

constexpr int kMaxDiag = 27;
constexpr int kGsChunk = 64;  ///< cells per Gauss-Seidel chunk (u and W scratch on the stack)

/// The offsets of one line whose neighbour line is inside the box.
template <class S, class C>
struct Line {
    int m = 0;
    const S* a[kMaxDiag];  ///< entry e of cell i at a[d] + e * nx + i
    const C* x[kMaxDiag];  ///< component k of the neighbour of cell i at x[d] + i * r + k
    int dx[kMaxDiag];
};

/// Software prefetch of another line's data (the next line of the sweep), spread over the
/// vector steps of the current line. The values of a line are r^2 x (offsets) runs of nx
/// values each, more streams than the hardware prefetcher tracks, but one contiguous block.
struct Ahead {
    const char* p = nullptr;
    std::int64_t left = 0;     ///< cache lines still to prefetch
    std::int64_t per = 0;      ///< cache lines per step
    std::int64_t stride = 64;  ///< -64: from the block's end down (a backward sweep's order)
    void start(const void* next, std::int64_t bytes, int steps, bool down = false) {
        left = next == nullptr ? 0 : (bytes + 63) / 64;
        stride = down ? -64 : 64;
        p = static_cast<const char*>(next) + (down && left > 0 ? (left - 1) * 64 : 0);
        per = (left + std::max(steps, 1) - 1) / std::max(steps, 1);
    }
    HWY_INLINE void step() {
        for (std::int64_t k = 0; k < per && left > 0; ++k, --left, p += stride) hwy::Prefetch(p);
    }
};

/// Collects the active offsets of `line`, leaving out skip1 and skip2, and with sign = -1 / +1
/// also every offset whose cell lies after / before the line's cells in lexicographic order.
template <int R, class S, class C>
HWY_INLINE void collect(const BlockSoa<S, C>& a, const SgDiaGeom& g, const C* x, std::int64_t line,
                        Line<S, C>& l, int skip1 = -1, int skip2 = -1, int sign = 0) {
    const int j = static_cast<int>(line % g.ny);
    const int k = static_cast<int>(line / g.ny);
    const std::int64_t c0 = line * g.nx;
    const S* base = a.values() + line * a.line_values();
    l.m = 0;
    for (int d = 0; d < g.ndiag; ++d) {
        const Offset& o = g.offsets[d];
        if (d == skip1 || d == skip2) continue;
        if (j + o.dy < 0 || j + o.dy >= g.ny || k + o.dz < 0 || k + o.dz >= g.nz) continue;
        const std::int64_t shift = o.dx + std::int64_t{g.nx} * (o.dy + std::int64_t{g.ny} * o.dz);
        if ((sign < 0 && shift > 0) || (sign > 0 && shift < 0)) continue;
        l.a[l.m] = base + std::int64_t{d} * R * R * g.nx;
        l.x[l.m] = x + (c0 + shift) * R;
        l.dx[l.m] = o.dx;
        ++l.m;
    }
}

/// s = sum over the active offsets for cell i, scalar, reading only neighbours in the box.
template <int R, class S, class C>
HWY_INLINE void cell_sum(const Line<S, C>& l, int i, int nx, C (&s)[R]) {
    for (int ra = 0; ra < R; ++ra) s[ra] = 0;
    for (int d = 0; d < l.m; ++d) {
        const int n = i + l.dx[d];
        if (n < 0 || n >= nx) continue;
        const S* a = l.a[d] + i;
        const C* xv = l.x[d] + std::int64_t{i} * R;
        for (int ra = 0; ra < R; ++ra) {
            for (int rb = 0; rb < R; ++rb) {
                s[ra] += load_conv1<C>(a + (ra * R + rb) * nx) * xv[rb];
            }
        }
    }
}

/// Balanced chunks of at most `most` cells over a line of nx cells: chunk c is [begin(c),
/// begin(c + 1)). With nx >= N and most >= 2N every chunk has at least N cells.
struct Chunks {
    int count, nx;
    Chunks(int nx_, int most) : count((nx_ + most - 1) / most), nx(nx_) {}
    int begin(int c) const { return static_cast<int>(std::int64_t{c} * nx / count); }
    /// Vectors of N cells one pass over the line takes (the chunks' overlapping last vectors
    /// included).
    int vectors(int n) const {
        int v = 0;
        for (int c = 0; c < count; ++c) v += (begin(c + 1) - begin(c) + n - 1) / n;
        return v;
    }
};

/// Accumulators of a chunk: acc[ra * kAccCells + i - i0].
constexpr int kAccCells = 256;

/// acc = sum over the active offsets of l of (A_e x)_ra for the cells [i0, i1) of the line
/// (N <= i1 - i0 <= kAccCells), offset after offset: each offset's r^2 value runs are read as
/// nearly one sequential stream (a line's values are one contiguous block), where a whole
/// stencil per vector of cells read r^2 x (offsets) streams at once (3d27, r = 3: 243) and
/// reached 40-55 % of the byte bound. The accumulators stay in L1. Vectors at i0, i0 + N, ...;
/// the last one, i1 - N, overlaps the previous one when N does not divide the chunk, and keeps
/// only its fresh lanes; Down runs the offsets and the vectors in descending order, mirrored
/// (the overlapping vector at i0), so that a backward sweep reads its values downwards, the way
/// it walks the lines (ascending within descending lines, the hardware prefetcher ran on past
/// each line into the one just done: backward FP16 3d7 r = 3 sweeps at 80^3 took 31-33 ns a
/// cell against 25-26 forward). At the line's ends (i == 0 for dx = -1, i + N == nx for dx = +1) x
/// is a load inside the neighbour line with its lanes shifted by one (0 shifted in), so nothing
/// outside the line is read; BlockSoa stores 0 for those entries.
template <int R, bool Down = false, class D, class S, class C>
HWY_INLINE void accumulate(D d, const Line<S, C>& l, int i0, int i1, int nx, C* acc, Ahead& ahead) {
    constexpr bool down = Down;
    using V = hn::Vec<D>;
    const int n = static_cast<int>(hn::Lanes(d));
    const int whole = (i1 - i0) / n * n;  // cells of the non-overlapping vectors
    const int last = i1 - n;
    // The overlapping vector's lanes that no other vector covers.
    const auto fresh = down ? hn::FirstN(d, static_cast<std::size_t>(i1 - whole - i0))
                            : hn::Not(hn::FirstN(d, static_cast<std::size_t>(i0 + whole - last)));
    const V zero = hn::Zero(d);
    for (int k = 0; k < l.m; ++k) {
        const int e = down ? l.m - 1 - k : k;
        const S* a = l.a[e];
        const C* x = l.x[e];
        const int dx = l.dx[e];
        const bool init = k == 0;
        const auto step = [&](int i, bool overlap) HWY_ATTR MPMG_LAMBDA_INLINE {
            ahead.step();
            V xv[R];
            if (dx < 0 && i == 0) {
                load_r<R>(d, x + R, xv);
                for (int q = 0; q < R; ++q) xv[q] = shift_lanes<true>(d, xv[q], 1, zero);
            } else if (dx > 0 && i + n == nx) {
                load_r<R>(d, x + std::int64_t{i - 1} * R, xv);
                for (int q = 0; q < R; ++q) xv[q] = shift_lanes<false>(d, xv[q], 1, zero);
            } else {
                load_r<R>(d, x + std::int64_t{i} * R, xv);
            }
            C* out = acc + (i - i0);
            for (int ra = 0; ra < R; ++ra) {
                const V old = init ? zero : hn::LoadU(d, out + ra * kAccCells);
                V s = old;
                for (int rb = 0; rb < R; ++rb) {
                    s = hn::MulAdd(load_conv(d, a + (ra * R + rb) * nx + i), xv[rb], s);
                }
                if (overlap && !init) s = hn::IfThenElse(fresh, s, old);
                hn::StoreU(s, d, out + ra * kAccCells);
            }
        };
        if (down) {
            for (int i = last; i >= i1 - whole; i -= n) step(i, false);
            if (whole < i1 - i0) step(i0, true);
        } else {
            for (int i = i0; i < i0 + whole; i += n) step(i, false);
            if (whole < i1 - i0) step(last, true);
        }
    }
    if (l.m == 0) {
        for (int ra = 0; ra < R; ++ra) {
            for (int i = i0; i < i1; i += n) {
                hn::StoreU(zero, d, acc + ra * kAccCells + (std::min(i, last) - i0));
            }
        }
    }
}

template <Kind K, int R, class S, class C>
void apply_lines(const Args<S, C>& p) {
    const BlockSoa<S, C>& a = *p.a;
    const SgDiaGeom g = a.geom();
    const int nx = g.nx;
    const hn::ScalableTag<C> d;
    using V = hn::Vec<decltype(d)>;
    const int n = static_cast<int>(hn::Lanes(d));
    Line<S, C> l;
    Ahead ahead_a, ahead_inv;
    const std::int64_t lines = g.lines();
    const Chunks chunks(nx, kAccCells);
    const int vectors = chunks.vectors(n);
    HWY_ALIGN C acc[R * kAccCells];
    for (std::int64_t line = p.line_begin; line < p.line_end; ++line) {
        collect<R>(a, g, p.x, line, l);
        const C* inv = a.inverses() + line * R * R * nx;
        const bool more = line + 1 < lines;
        ahead_a.start(more ? a.values() + (line + 1) * a.line_values() : nullptr,
                      a.line_values() * static_cast<std::int64_t>(sizeof(S)), (l.m + 1) * vectors);
        ahead_inv.start(more && K == Kind::jacobi ? inv + R * R * nx : nullptr,
                        std::int64_t{R} * R * nx * static_cast<std::int64_t>(sizeof(C)), vectors);
        const std::int64_t c0 = line * nx;
        if (nx < n) {  // shorter than a vector: scalar, with the dx check
            for (int i = 0; i < nx; ++i) {
                C s[R];
                cell_sum<R>(l, i, nx, s);
                const std::int64_t row = (c0 + i) * R;
                C* out = p.out + row;
                if constexpr (K == Kind::spmv) {
                    for (int ra = 0; ra < R; ++ra) out[ra] = s[ra];
                } else if constexpr (K == Kind::residual) {
                    for (int ra = 0; ra < R; ++ra) out[ra] = p.b[row + ra] - s[ra];
                } else {
                    C z[R];
                    for (int ra = 0; ra < R; ++ra) z[ra] = p.b[row + ra] - s[ra];
                    for (int ra = 0; ra < R; ++ra) {
                        C t = 0;
                        for (int rb = 0; rb < R; ++rb) t += inv[(ra * R + rb) * nx + i] * z[rb];
                        out[ra] = p.x[row + ra] + p.omega * t;
                    }
                }
            }
            continue;
        }
        for (int c = 0; c < chunks.count; ++c) {
            const int i0 = chunks.begin(c), i1 = chunks.begin(c + 1);
            accumulate<R>(d, l, i0, i1, nx, acc, ahead_a);
            // out from the sums; the last vector may overlap the previous one (same result).
            for (int i = i0; i < i1; i += n) {
                const int at = std::min(i, i1 - n);
                ahead_a.step();
                ahead_inv.step();
                V s[R];
                for (int ra = 0; ra < R; ++ra) s[ra] = hn::LoadU(d, acc + ra * kAccCells + at - i0);
                const std::int64_t row = (c0 + at) * R;
                if constexpr (K == Kind::spmv) {
                    store_r<R>(d, s, p.out + row);
                } else {
                    V z[R];
                    load_r<R>(d, p.b + row, z);
                    for (int ra = 0; ra < R; ++ra) z[ra] = hn::Sub(z[ra], s[ra]);
                    if constexpr (K == Kind::residual) {
                        store_r<R>(d, z, p.out + row);
                    } else {
                        V xv[R];
                        load_r<R>(d, p.x + row, xv);
                        const V om = hn::Set(d, p.omega);
                        for (int ra = 0; ra < R; ++ra) {
                            V t = hn::Zero(d);
                            for (int rb = 0; rb < R; ++rb) {
                                t = hn::MulAdd(hn::LoadU(d, inv + (ra * R + rb) * nx + at), z[rb],
                                               t);
                            }
                            xv[ra] = hn::MulAdd(om, t, xv[ra]);
                        }
                        store_r<R>(d, xv, p.out + row);
                    }
                }
            }
        }
    }
}

/// Index of offset (dx, 0, 0), or -1.
inline int inline_offset(const SgDiaGeom& g, int dx) {
    for (int d = 0; d < g.ndiag; ++d) {
        const Offset& o = g.offsets[d];
        if (o.dx == dx && o.dy == 0 && o.dz == 0) return d;
    }
    return -1;
}

template <int R, bool Fwd, class S, class C>
void gs_line_dir(const Args<S, C>& p) {
    const BlockSoa<S, C>& a = *p.a;
    const SgDiaGeom g = a.geom();
    const int nx = g.nx;
    const hn::ScalableTag<C> d;
    using V = hn::Vec<decltype(d)>;
    const int n = static_cast<int>(hn::Lanes(d));
    const std::int64_t line = p.line_begin;
    const int step = Fwd ? -1 : 1;
    const int trail = inline_offset(g, step);
    const S* tr = trail >= 0
                      ? a.values() + line * a.line_values() + std::int64_t{trail} * R * R * nx
                      : nullptr;
    const C* inv = a.inverses() + line * R * R * nx;
    const C* b = p.b + line * nx * R;
    C* x = p.out + line * nx * R;
    Line<S, C> l;
    // With a zero guess only the already updated neighbours (before the cell in the sweep's
    // order: shift < 0 forward, > 0 backward) are nonzero.
    const int sign = p.zero_guess ? (Fwd ? -1 : 1) : 0;
    collect<R>(a, g, static_cast<const C*>(p.out), line, l, g.center, trail, sign);
    const Chunks chunks(nx, kGsChunk);
    const int vectors = chunks.vectors(n);
    // Prefetch the next line of the sweep (values and inverses).
    const std::int64_t next = line + (Fwd ? 1 : -1);
    const bool more = next >= 0 && next < g.lines();
    Ahead ahead_a, ahead_inv;
    ahead_a.start(more ? a.values() + next * a.line_values() : nullptr,
                  a.line_values() * static_cast<std::int64_t>(sizeof(S)), (l.m + 1) * vectors,
                  !Fwd);
    ahead_inv.start(more ? a.inverses() + next * R * R * nx : nullptr,
                    std::int64_t{R} * R * nx * static_cast<std::int64_t>(sizeof(C)), vectors, !Fwd);
    HWY_ALIGN C acc[R * kAccCells];
    HWY_ALIGN C u[R][kGsChunk];
    HWY_ALIGN C w[R * R][kGsChunk];
    for (int ch = 0; ch < chunks.count; ++ch) {
        const int c = Fwd ? ch : chunks.count - 1 - ch;
        const int i0 = chunks.begin(c), i1 = chunks.begin(c + 1);
        if (nx < n) {  // shorter than a vector: scalar, with the dx check
            for (int i = i0; i < i1; ++i) {
                C s[R], t[R];
                cell_sum<R>(l, i, nx, s);
                for (int ra = 0; ra < R; ++ra) t[ra] = b[std::int64_t{i} * R + ra] - s[ra];
                const bool has_t = tr != nullptr && i + step >= 0 && i + step < nx;
                for (int ra = 0; ra < R; ++ra) {
                    C uu = 0;
                    for (int q = 0; q < R; ++q) uu += inv[(ra * R + q) * nx + i] * t[q];
                    u[ra][i - i0] = uu;
                    for (int rb = 0; rb < R; ++rb) {
                        C ww = 0;
                        if (has_t) {
                            for (int q = 0; q < R; ++q) {
                                ww += inv[(ra * R + q) * nx + i] *
                                      load_conv1<C>(tr + (q * R + rb) * nx + i);
                            }
                        }
                        w[ra * R + rb][i - i0] = ww;
                    }
                }
            }
        } else {
            // The fixed part of every cell (all offsets but the centre and the trailing
            // neighbour), then u_i = D_i^{-1} (b_i - sum) and W_i = D_i^{-1} A_t,i in vectors;
            // the last vector may overlap the previous one (it reads only values fixed during
            // the line, so the overlap recomputes the same u, W). BlockSoa stores A_t = 0 where
            // the trailing neighbour is outside the line, so W is 0 there.
            accumulate<R, !Fwd>(d, l, i0, i1, nx, acc, ahead_a);
            for (int v = 0; v < (i1 - i0 + n - 1) / n; ++v) {
                // In the sweep's order (descending backward), the last one clamped.
                const int i = Fwd ? std::min(i0 + v * n, i1 - n) : std::max(i1 - n - v * n, i0);
                ahead_a.step();
                ahead_inv.step();
                V t[R];
                load_r<R>(d, b + std::int64_t{i} * R, t);
                for (int ra = 0; ra < R; ++ra) {
                    t[ra] = hn::Sub(t[ra], hn::LoadU(d, acc + ra * kAccCells + i - i0));
                }
                for (int ra = 0; ra < R; ++ra) {
                    V uu = hn::Zero(d);
                    for (int q = 0; q < R; ++q) {
                        uu = hn::MulAdd(hn::LoadU(d, inv + (ra * R + q) * nx + i), t[q], uu);
                    }
                    hn::StoreU(uu, d, &u[ra][i - i0]);
                }
                if (tr == nullptr) {
                    for (int e = 0; e < R * R; ++e) hn::StoreU(hn::Zero(d), d, &w[e][i - i0]);
                    continue;
                }
                for (int rb = 0; rb < R; ++rb) {
                    V col[R];  // column rb of A_t
                    for (int q = 0; q < R; ++q) col[q] = load_conv(d, tr + (q * R + rb) * nx + i);
                    for (int ra = 0; ra < R; ++ra) {
                        V ww = hn::Zero(d);
                        for (int q = 0; q < R; ++q) {
                            ww = hn::MulAdd(hn::LoadU(d, inv + (ra * R + q) * nx + i), col[q], ww);
                        }
                        hn::StoreU(ww, d, &w[ra * R + rb][i - i0]);
                    }
                }
            }
        }
        // The recurrence x_i = u_i - W_i x_{i+step}.
        C prev[R];
        const int first = Fwd ? i0 : i1 - 1;
        const int before = first + step;  // the trailing neighbour of the first cell
        for (int ra = 0; ra < R; ++ra) {
            prev[ra] = before >= 0 && before < nx ? x[std::int64_t{before} * R + ra] : C{0};
        }
        for (int t = 0; t < i1 - i0; ++t) {
            const int i = Fwd ? i0 + t : i1 - 1 - t;
            const int e = i - i0;
            C xn[R];
            for (int ra = 0; ra < R; ++ra) {
                C v = u[ra][e];
                for (int rb = 0; rb < R; ++rb) v -= w[ra * R + rb][e] * prev[rb];
                xn[ra] = v;
            }
            for (int ra = 0; ra < R; ++ra) x[std::int64_t{i} * R + ra] = prev[ra] = xn[ra];
        }
    }
}

template <int R, class S, class C>
void gs_line_impl(const Args<S, C>& p) {
    if (p.forward) {
        gs_line_dir<R, true>(p);
    } else {
        gs_line_dir<R, false>(p);
    }
}

template <int R, class S, class C>
void run_r(const Args<S, C>& p) {
    switch (p.kind) {
        case Kind::spmv:
            return apply_lines<Kind::spmv, R>(p);
        case Kind::residual:
            return apply_lines<Kind::residual, R>(p);
        case Kind::jacobi:
            return apply_lines<Kind::jacobi, R>(p);
        case Kind::gs:
            return gs_line_impl<R>(p);
    }
}

template <class S, class C>
void run(const Args<S, C>& p) {
    switch (p.a->geom().block) {
        case 2:
            return run_r<2>(p);
        case 3:
            return run_r<3>(p);
        default:
            return run_r<4>(p);
    }
}

// One plain exported function per supported (storage, compute) pair (no HWY_EXPORT_T in 1.0.3).
void block_dd(const Args<double, double>& p) { run(p); }
void block_fd(const Args<float, double>& p) { run(p); }
void block_hd(const Args<half, double>& p) { run(p); }
void block_bd(const Args<bfloat16, double>& p) { run(p); }
void block_ff(const Args<float, float>& p) { run(p); }
void block_hf(const Args<half, float>& p) { run(p); }
void block_bf(const Args<bfloat16, float>& p) { run(p); }

}  // namespace mpmg::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpmg::kernels {

HWY_EXPORT(block_dd);
HWY_EXPORT(block_fd);
HWY_EXPORT(block_hd);
HWY_EXPORT(block_bd);
HWY_EXPORT(block_ff);
HWY_EXPORT(block_hf);
HWY_EXPORT(block_bf);

namespace {

using block_detail::Args;
using block_detail::Kind;

void dispatch(const Args<double, double>& p) { HWY_DYNAMIC_DISPATCH(block_dd)(p); }
void dispatch(const Args<float, double>& p) { HWY_DYNAMIC_DISPATCH(block_fd)(p); }
void dispatch(const Args<half, double>& p) { HWY_DYNAMIC_DISPATCH(block_hd)(p); }
void dispatch(const Args<bfloat16, double>& p) { HWY_DYNAMIC_DISPATCH(block_bd)(p); }
void dispatch(const Args<float, float>& p) { HWY_DYNAMIC_DISPATCH(block_ff)(p); }
void dispatch(const Args<half, float>& p) { HWY_DYNAMIC_DISPATCH(block_hf)(p); }
void dispatch(const Args<bfloat16, float>& p) { HWY_DYNAMIC_DISPATCH(block_bf)(p); }

/// inv = m^{-1} for an r x r block (row-major), Gauss-Jordan with partial pivoting in FP64.
/// False if a pivot is zero or anything is non-finite (inv is then non-finite too).
bool invert(int r, double (&m)[4][4], double (&inv)[4][4]) {
    for (int p = 0; p < r; ++p) {
        for (int q = 0; q < r; ++q) inv[p][q] = p == q ? 1.0 : 0.0;
    }
    for (int p = 0; p < r; ++p) {
        int piv = p;
        for (int q = p + 1; q < r; ++q) {
            if (std::fabs(m[q][p]) > std::fabs(m[piv][p])) piv = q;
        }
        if (piv != p) {
            for (int q = 0; q < r; ++q) {
                std::swap(m[p][q], m[piv][q]);
                std::swap(inv[p][q], inv[piv][q]);
            }
        }
        const double f = 1.0 / m[p][p];
        for (int q = 0; q < r; ++q) {
            m[p][q] *= f;
            inv[p][q] *= f;
        }
        for (int s = 0; s < r; ++s) {
            if (s == p) continue;
            const double e = m[s][p];
            for (int q = 0; q < r; ++q) {
                m[s][q] -= e * m[p][q];
                inv[s][q] -= e * inv[p][q];
            }
        }
    }
    bool ok = true;
    for (int p = 0; p < r; ++p) {
        for (int q = 0; q < r; ++q) ok = ok && std::isfinite(inv[p][q]);
    }
    return ok;
}

}  // namespace

/// Line `line` of `a` into the BlockSoa layout at dst and its centre blocks' inverses at inv_line;
/// returns how many were singular. R is the block size (fixed at compile time: the copy's
/// strided reads unroll).
template <int R, class S, class C>
std::int64_t soa_line(const SgDiaMatrix<S>& a, const SgDiaGeom& g,
                      const std::vector<Offset>& offsets, std::int64_t line, S* dst, C* inv_line) {
    constexpr int rr = R * R;
    const int nx = g.nx;
    const std::int64_t c0 = line * nx;
    const S* src = a.values().data();
    for (int d = 0; d < g.ndiag; ++d) {
        const S* from = src + d * g.diag_stride + c0 * rr;
        S* to = dst + std::int64_t{d} * rr * nx;
        for (int i = 0; i < nx; ++i) {
            for (int e = 0; e < rr; ++e)
                to[std::int64_t{e} * nx + i] = from[std::int64_t{i} * rr + e];
        }
        // An entry whose neighbour lies outside the line (cell 0 of a dx = -1 offset, cell
        // nx - 1 of dx = +1) is stored as 0: the kernels' edge vectors read it.
        const int dx = offsets[static_cast<std::size_t>(d)].dx;
        for (int e = 0; e < rr && dx != 0; ++e)
            to[std::int64_t{e} * nx + (dx < 0 ? 0 : nx - 1)] = S{};
    }
    const S* centre = src + g.center * g.diag_stride + c0 * rr;
    std::int64_t singular = 0;
    for (int i = 0; i < nx; ++i) {
        double m[4][4], inv[4][4];
        for (int p = 0; p < R; ++p) {
            for (int q = 0; q < R; ++q)
                m[p][q] = to_double(centre[std::int64_t{i} * rr + p * R + q]);
        }
        if (!invert(R, m, inv)) ++singular;
        for (int p = 0; p < R; ++p) {
            for (int q = 0; q < R; ++q) inv_line[(p * R + q) * nx + i] = static_cast<C>(inv[p][q]);
        }
    }
    return singular;
}

template <class S, class C>
BlockSoa<S, C>::BlockSoa(const SgDiaMatrix<S>& a)
    : geom_(geometry(a)), offsets_(a.stencil().offsets()) {
    geom_.offsets = nullptr;  // geom() points it at offsets_
    const int r = geom_.block, rr = r * r, nx = geom_.nx;
    const std::int64_t lines = geom_.lines(), per_line = line_values();
    values_.resize(static_cast<std::size_t>(lines * per_line));  // zeroed pages, no pass
    inverses_.resize(static_cast<std::size_t>(lines * rr * nx));
    const auto copy = r == 2   ? &soa_line<2, S, C>
                      : r == 3 ? &soa_line<3, S, C>
                               : &soa_line<4, S, C>;
    std::int64_t singular = 0;
#pragma omp parallel for schedule(static) reduction(+ : singular) if (lines > 64)
    for (std::int64_t line = 0; line < lines; ++line) {
        singular += copy(a, geom_, offsets_, line, values_.data() + line * per_line,
                         inverses_.data() + line * rr * nx);
    }
    singular_ = singular;
}

template <class S, class C>
void block_spmv(const BlockSoa<S, C>& a, const C* x, C* y, std::int64_t line_begin,
                std::int64_t line_end) {
    dispatch(Args<S, C>{&a, nullptr, x, y, C{0}, Kind::spmv, line_begin, line_end, true, false});
}

template <class S, class C>
void block_residual(const BlockSoa<S, C>& a, const C* b, const C* x, C* r, std::int64_t line_begin,
                    std::int64_t line_end) {
    dispatch(Args<S, C>{&a, b, x, r, C{0}, Kind::residual, line_begin, line_end, true, false});
}

template <class S, class C>
void block_jacobi(const BlockSoa<S, C>& a, const C* b, const C* x, C* x_new, C omega,
                  std::int64_t line_begin, std::int64_t line_end) {
    dispatch(Args<S, C>{&a, b, x, x_new, omega, Kind::jacobi, line_begin, line_end, true, false});
}

template <class S, class C>
void block_gs_line(const BlockSoa<S, C>& a, const C* b, C* x, std::int64_t line, bool forward,
                   bool zero_guess) {
    dispatch(Args<S, C>{&a, b, nullptr, x, C{0}, Kind::gs, line, line + 1, forward, zero_guess});
}

// Explicit instantiations: exactly the supported (storage, compute) pairs.

template class BlockSoa<double, double>;
template class BlockSoa<float, double>;
template class BlockSoa<half, double>;
template class BlockSoa<bfloat16, double>;
template class BlockSoa<float, float>;
template class BlockSoa<half, float>;
template class BlockSoa<bfloat16, float>;

template void block_spmv(const BlockSoa<double, double>&, const double*, double*, std::int64_t,
                         std::int64_t);
template void block_spmv(const BlockSoa<float, double>&, const double*, double*, std::int64_t,
                         std::int64_t);
template void block_spmv(const BlockSoa<half, double>&, const double*, double*, std::int64_t,
                         std::int64_t);
template void block_spmv(const BlockSoa<bfloat16, double>&, const double*, double*, std::int64_t,
                         std::int64_t);
template void block_spmv(const BlockSoa<float, float>&, const float*, float*, std::int64_t,
                         std::int64_t);
template void block_spmv(const BlockSoa<half, float>&, const float*, float*, std::int64_t,
                         std::int64_t);
template void block_spmv(const BlockSoa<bfloat16, float>&, const float*, float*, std::int64_t,
                         std::int64_t);

template void block_residual(const BlockSoa<double, double>&, const double*, const double*, double*,
                             std::int64_t, std::int64_t);
template void block_residual(const BlockSoa<float, double>&, const double*, const double*, double*,
                             std::int64_t, std::int64_t);
template void block_residual(const BlockSoa<half, double>&, const double*, const double*, double*,
                             std::int64_t, std::int64_t);
template void block_residual(const BlockSoa<bfloat16, double>&, const double*, const double*,
                             double*, std::int64_t, std::int64_t);
template void block_residual(const BlockSoa<float, float>&, const float*, const float*, float*,
                             std::int64_t, std::int64_t);
template void block_residual(const BlockSoa<half, float>&, const float*, const float*, float*,
                             std::int64_t, std::int64_t);
template void block_residual(const BlockSoa<bfloat16, float>&, const float*, const float*, float*,
                             std::int64_t, std::int64_t);

template void block_jacobi(const BlockSoa<double, double>&, const double*, const double*, double*,
                           double, std::int64_t, std::int64_t);
template void block_jacobi(const BlockSoa<float, double>&, const double*, const double*, double*,
                           double, std::int64_t, std::int64_t);
template void block_jacobi(const BlockSoa<half, double>&, const double*, const double*, double*,
                           double, std::int64_t, std::int64_t);
template void block_jacobi(const BlockSoa<bfloat16, double>&, const double*, const double*, double*,
                           double, std::int64_t, std::int64_t);
template void block_jacobi(const BlockSoa<float, float>&, const float*, const float*, float*, float,
                           std::int64_t, std::int64_t);
template void block_jacobi(const BlockSoa<half, float>&, const float*, const float*, float*, float,
                           std::int64_t, std::int64_t);
template void block_jacobi(const BlockSoa<bfloat16, float>&, const float*, const float*, float*,
                           float, std::int64_t, std::int64_t);

template void block_gs_line(const BlockSoa<double, double>&, const double*, double*, std::int64_t,
                            bool, bool);
template void block_gs_line(const BlockSoa<float, double>&, const double*, double*, std::int64_t,
                            bool, bool);
template void block_gs_line(const BlockSoa<half, double>&, const double*, double*, std::int64_t,
                            bool, bool);
template void block_gs_line(const BlockSoa<bfloat16, double>&, const double*, double*, std::int64_t,
                            bool, bool);
template void block_gs_line(const BlockSoa<float, float>&, const float*, float*, std::int64_t, bool,
                            bool);
template void block_gs_line(const BlockSoa<half, float>&, const float*, float*, std::int64_t, bool,
                            bool);
template void block_gs_line(const BlockSoa<bfloat16, float>&, const float*, float*, std::int64_t,
                            bool, bool);

}  // namespace mpmg::kernels
#endif  // HWY_ONCE
