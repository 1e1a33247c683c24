// Per-target SG-DIA kernels for r = 1 (see sgdia_simd.hpp). This file is compiled once per
// Highway target through foreach_target.h; the HWY_ONCE part at the end builds the dispatch.
//
// Structure of a line (j,k), cells i in [0, nx): the offsets whose neighbour line is inside the
// box are collected once ("active" offsets: value stream and shifted x stream). Cells
// [1, nx-1) read every active offset, so they run in full vectors, two vectors at a time with
// two accumulators each (four independent FMA chains); all values of one vector of cells are
// summed in registers over the whole stencil and stored once. The cells 0, nx-1 and the
// remainder of the vector loop run scalar with the dx check, so nothing outside the box is read.
// Stencils of 12 or more offsets are applied chunk by chunk in groups of equal dz (apply_kind).
// Software prefetch runs kPrefetchBytes ahead on every value stream (the next line's values
// follow in memory, so it also covers the line change); backward Gauss-Seidel sweeps walk the
// streams downwards and prefetch below (without it they ran 2.5-3x slower than forward ones).
// The single vectors after the pairs prefetch too: without, a line whose vector count is odd
// leaves a gap in the prefetched lines three lines ahead (3d27 FP16 sweeps on 90 x 86 x 86: ~5 %
// faster with it in two rounds of a throwaway driver, no difference in a third; whole solves
// within +-3 %).
// Gauss-Seidel solves the coupling to the in-line neighbour in registers (solve_inline), runs
// whole lines in vectors (the end cells too, in masked "edge" vectors), takes runs of lines per
// call (gs_lines_dir); 3d15, 3d19 and 3d27 lines sum their offsets to the planes below and
// above for the whole lines of a run of one plane first (gs_lines_dir, with the grouped
// product's apply_lines), then their in-plane ones (gs_line_dir). An edge vector sums its offsets
// in the order the vectors between the edges do, so the products give the same bits at any vector
// width (apply_lines: 256 bits for FP64 values, the full width for the others).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/sgdia_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include "kernels/load_conv-inl.h"
#include "kernels/shift_lanes-inl.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/lambda_inline.hpp"
#include "kernels/sgdia_simd.hpp"

HWY_BEFORE_NAMESPACE();
namespace mpmg::kernels::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr int kMaxDiag = 27;
constexpr int kPrefetchBytes = 512;  ///< software prefetch distance on the value streams

using mpmg::kernels::HWY_NAMESPACE::load_conv;  // kernels/load_conv-inl.h
using mpmg::kernels::HWY_NAMESPACE::load_conv1;
using mpmg::kernels::HWY_NAMESPACE::shift_lanes;  // kernels/shift_lanes-inl.h

/// The offsets of one line whose neighbour line is inside the box, pointing at the line start.
template <class S, class C>
struct Active {
    int m = 0;
    const S* a[kMaxDiag];
    const C* x[kMaxDiag];
    int dx[kMaxDiag];
    int dz[kMaxDiag];
};

/// `dz` argument of collect(): every offset, whatever its dz.
constexpr int kAnyDz = 1 << 20;

/// Collects the active offsets of `line`, leaving out offsets skip1 and skip2, and with
/// `sign` = -1 / +1 also every offset whose cell lies after / before the line's cells in the
/// lexicographic order (those read x values that are known to be zero); with `dz` only the
/// offsets of that dz.
template <class S, class C>
HWY_INLINE void collect(const SgDiaGeom& g, const S* a, const C* x, std::int64_t line,
                        Active<S, C>& act, int skip1 = -1, int skip2 = -1, int sign = 0,
                        int dz = kAnyDz) {
    const int j = static_cast<int>(line % g.ny);
    const int k = static_cast<int>(line / g.ny);
    const std::int64_t c0 = line * g.nx;
    act.m = 0;
    for (int d = 0; d < g.ndiag; ++d) {
        const Offset& o = g.offsets[d];
        if (d == skip1 || d == skip2 || (dz != kAnyDz && o.dz != dz)) continue;
        if (j + o.dy < 0 || j + o.dy >= g.ny || k + o.dz < 0 || k + o.dz >= g.nz) continue;
        const std::int64_t shift = o.dx + std::int64_t{g.nx} * (o.dy + std::int64_t{g.ny} * o.dz);
        if ((sign < 0 && shift > 0) || (sign > 0 && shift < 0)) continue;
        // mirror_lower: A(c, c + shift) = A(c + shift, c), held by the mirror offset (index
        // ndiag - 1 - d: the offsets are in lexicographic order) at cell c + shift. Only the
        // masked lane 0 of an edge vector (i = 0, dx = -1) can point before the line's first
        // value there: at most one value before the mirror's array, which lies after the
        // centre's, so the address stays inside the matrix (and is never summed).
        act.a[act.m] = g.mirror_lower && shift < 0
                           ? a + (g.ndiag - 1 - d) * g.diag_stride + (c0 + shift)
                           : a + d * g.diag_stride + c0;
        act.x[act.m] = x + c0 + shift;
        act.dx[act.m] = o.dx;
        act.dz[act.m] = o.dz;
        ++act.m;
    }
}

/// Sum over the active offsets for cell i, scalar, reading only neighbours inside the box.
template <class S, class C>
HWY_INLINE C cell_sum(const Active<S, C>& act, int i, int nx) {
    C s = 0;
    for (int d = 0; d < act.m; ++d) {
        const int n = i + act.dx[d];
        if (n >= 0 && n < nx) s += load_conv1<C>(act.a[d] + i) * act.x[d][i];
    }
    return s;
}

/// Sums over the active offsets [e0, e1) for the 2 N cells at i (all offsets inside: 1 <= i,
/// i+2N < nx). Pf = +1 / -1: prefetch ahead upwards (forward sweeps, SpMV) / downwards
/// (backward sweeps).
template <int Pf = 1, class D, class S, class C>
HWY_INLINE void vec_sum2(D d, const Active<S, C>& act, int e0, int e1, int i, hn::Vec<D>& s0,
                         hn::Vec<D>& s1) {
    const int n = static_cast<int>(hn::Lanes(d));
    auto a0 = hn::Zero(d), a1 = hn::Zero(d), b0 = hn::Zero(d), b1 = hn::Zero(d);
    int e = e0;
    for (; e + 2 <= e1; e += 2) {
        hwy::Prefetch(act.a[e] + i + Pf * static_cast<int>(kPrefetchBytes / sizeof(S)));
        hwy::Prefetch(act.a[e + 1] + i + Pf * static_cast<int>(kPrefetchBytes / sizeof(S)));
        a0 = hn::MulAdd(load_conv(d, act.a[e] + i), hn::LoadU(d, act.x[e] + i), a0);
        a1 = hn::MulAdd(load_conv(d, act.a[e] + i + n), hn::LoadU(d, act.x[e] + i + n), a1);
        b0 = hn::MulAdd(load_conv(d, act.a[e + 1] + i), hn::LoadU(d, act.x[e + 1] + i), b0);
        b1 = hn::MulAdd(load_conv(d, act.a[e + 1] + i + n), hn::LoadU(d, act.x[e + 1] + i + n), b1);
    }
    if (e < e1) {
        hwy::Prefetch(act.a[e] + i + Pf * static_cast<int>(kPrefetchBytes / sizeof(S)));
        a0 = hn::MulAdd(load_conv(d, act.a[e] + i), hn::LoadU(d, act.x[e] + i), a0);
        a1 = hn::MulAdd(load_conv(d, act.a[e] + i + n), hn::LoadU(d, act.x[e] + i + n), a1);
    }
    s0 = hn::Add(a0, b0);
    s1 = hn::Add(a1, b1);
}

/// Sum over the active offsets [e0, e1) for the N cells at i (all offsets inside: 1 <= i,
/// i+N < nx). Pf as vec_sum2 (0: no prefetch).
template <int Pf = 0, class D, class S, class C>
HWY_INLINE hn::Vec<D> vec_sum1(D d, const Active<S, C>& act, int e0, int e1, int i) {
    auto a0 = hn::Zero(d), b0 = hn::Zero(d);
    int e = e0;
    if constexpr (Pf != 0) {
        for (int f = e0; f < e1; ++f) {
            hwy::Prefetch(act.a[f] + i + Pf * static_cast<int>(kPrefetchBytes / sizeof(S)));
        }
    }
    for (; e + 2 <= e1; e += 2) {
        a0 = hn::MulAdd(load_conv(d, act.a[e] + i), hn::LoadU(d, act.x[e] + i), a0);
        b0 = hn::MulAdd(load_conv(d, act.a[e + 1] + i), hn::LoadU(d, act.x[e + 1] + i), b0);
    }
    if (e < e1) a0 = hn::MulAdd(load_conv(d, act.a[e] + i), hn::LoadU(d, act.x[e] + i), a0);
    return hn::Add(a0, b0);
}

/// Lanes whose dx = -1 / +1 neighbour is inside the line, in a vector at i = 0 / i + N = nx.
template <class D>
HWY_INLINE hn::Mask<D> keep_lo(D d) {
    return hn::Not(hn::FirstN(d, 1));
}
template <class D>
HWY_INLINE hn::Mask<D> keep_hi(D d) {
    return hn::FirstN(d, hn::Lanes(d) - 1);
}

/// Sum over the active offsets for the N cells at i of an "edge" vector of the line (i == 0 or
/// i + N == nx, nx >= N), the ends of a line that are not all inside: a lane whose neighbour is
/// outside the line takes 0 for the entry (whatever is stored there is never read into a sum)
/// and for x, which comes from a lane shift of a load inside the neighbour line, so no address
/// outside that line is read (not past the ends of x, and no line that another thread of a
/// Gauss-Seidel wavefront writes). Pf as vec_sum1 (each stream once; the vector loops'
/// prefetches leave gaps at the lines' ends).
template <int Pf, class D, class S, class C>
HWY_INLINE hn::Vec<D> edge_sum(D d, const Active<S, C>& act, int i, int nx) {
    const int n = static_cast<int>(hn::Lanes(d));
    const auto zero = hn::Zero(d);
    if constexpr (Pf != 0) {
        for (int e = 0; e < act.m; ++e) {
            hwy::Prefetch(act.a[e] + i + Pf * static_cast<int>(kPrefetchBytes / sizeof(S)));
        }
    }
    // Offsets in act's order, alternating between two accumulators as vec_sum1 and vec_sum2
    // do: a lane of an edge vector sums what it would sum in a vector between the edges, in the
    // same order, so the products do not depend on which cells the edges cover (the vector
    // width; only the cells 0 and nx - 1 differ, masked at any width).
    auto a0 = zero, b0 = zero;
    for (int e = 0; e < act.m; ++e) {
        hn::Vec<D> av, xv;
        if (act.dx[e] < 0 && i == 0) {
            xv = shift_lanes<true>(d, hn::LoadU(d, act.x[e] + 1), 1, zero);
            av = hn::IfThenElseZero(keep_lo(d), load_conv(d, act.a[e]));
        } else if (act.dx[e] > 0 && i + n == nx) {
            xv = shift_lanes<false>(d, hn::LoadU(d, act.x[e] + i - 1), 1, zero);
            av = hn::IfThenElseZero(keep_hi(d), load_conv(d, act.a[e] + i));
        } else {
            av = load_conv(d, act.a[e] + i);
            xv = hn::LoadU(d, act.x[e] + i);
        }
        if (e % 2 == 0) {
            a0 = hn::MulAdd(av, xv, a0);
        } else {
            b0 = hn::MulAdd(av, xv, b0);
        }
    }
    return hn::Add(a0, b0);
}

/// The active offsets of consecutive lines [lb, le) (ascending, or descending with Fwd false),
/// one line after the other: collected again only where a line moves onto or off a face of the
/// box (which offsets are inside depends on nothing else: every offset is in {-1,0,1}^3), else
/// moved along with the line. Collecting cost a loop over the stencil and two divisions per line.
template <class S, class C>
class LineOffsets {
public:
    LineOffsets(const SgDiaGeom& g, const S* a, const C* x, int skip1, int skip2, int sign, int dz)
        : g_(g), a_(a), x_(x), skip1_(skip1), skip2_(skip2), sign_(sign), dz_(dz) {}
    /// Points the offsets at `line`; true when they were collected anew (may differ).
    bool go_to(std::int64_t line) {
        if (face_ >= 0 && line == at_ + 1) {
            if (++j_ == g_.ny) {
                j_ = 0;
                ++k_;
            }
        } else if (face_ >= 0 && line == at_ - 1) {
            if (--j_ < 0) {
                j_ = g_.ny - 1;
                --k_;
            }
        } else {
            j_ = static_cast<int>(line % g_.ny);
            k_ = static_cast<int>(line / g_.ny);
        }
        const int face = (j_ == 0 ? 1 : 0) | (j_ == g_.ny - 1 ? 2 : 0) | (k_ == 0 ? 4 : 0) |
                         (k_ == g_.nz - 1 ? 8 : 0);
        const bool anew = face != face_;
        if (anew) {
            collect(g_, a_, x_, line, act, skip1_, skip2_, sign_, dz_);
            face_ = face;
        } else {
            const std::int64_t shift = (line - at_) * g_.nx;
            for (int e = 0; e < act.m; ++e) {
                act.a[e] += shift;
                act.x[e] += shift;
            }
        }
        at_ = line;
        return anew;
    }
    Active<S, C> act;

private:
    const SgDiaGeom& g_;
    const S* a_;
    const C* x_;
    int skip1_, skip2_, sign_, dz_;
    int face_ = -1;  ///< of the line at_ (j_, k_); -1 before the first
    std::int64_t at_ = 0;
    int j_ = 0, k_ = 0;
};

/// out[c] from the sum s for cell c (kind fixed at compile time).
template <ApplyKind K, class D, class S, class C>
HWY_INLINE hn::Vec<D> finish(D d, const ApplyArgs<S, C>& p, const S* centre, std::int64_t c,
                             hn::Vec<D> s) {
    if constexpr (K == ApplyKind::spmv) {
        return s;
    } else if constexpr (K == ApplyKind::residual) {
        return hn::Sub(hn::LoadU(d, p.b + c), s);
    } else if constexpr (K == ApplyKind::upper_residual) {
        return hn::Neg(s);
    } else {
        const auto r = hn::Div(hn::Sub(hn::LoadU(d, p.b + c), s), load_conv(d, centre + c));
        return hn::MulAdd(hn::Set(d, p.omega), r, hn::LoadU(d, p.x + c));
    }
}

template <ApplyKind K, class S, class C>
HWY_INLINE C finish_scalar(const ApplyArgs<S, C>& p, const S* centre, std::int64_t c, C s) {
    if constexpr (K == ApplyKind::spmv) {
        return s;
    } else if constexpr (K == ApplyKind::residual) {
        return p.b[c] - s;
    } else if constexpr (K == ApplyKind::upper_residual) {
        return -s;
    } else {
        return p.x[c] + p.omega * ((p.b[c] - s) / load_conv1<C>(centre + c));
    }
}

/// Lines [lb, le) with the offsets of `dz` (or all): s = the sum over those offsets, plus out[c]
/// when `acc` (the partial sum of earlier offset groups, read in place); out = finish(s) when
/// `last`, else s. p.out holds the lines from `out_first` on (0: all of x's; gs_lines_dir's
/// buffer: its run's). (Run-time flags: as template parameters they tripled the instantiations
/// of this file, per target and type pair, for no measured gain.)
template <ApplyKind K, class S, class C>
void apply_lines(const ApplyArgs<S, C>& p, std::int64_t lb, std::int64_t le, int dz, bool acc,
                 bool last, std::int64_t out_first = 0) {
    const SgDiaGeom& g = *p.g;
    // FP64 values at most 256 bits a vector, the others at the full width. laplace27 n = 108,
    // one product, one thread (forty-sixth session): FP64 values and vectors 25.5 -> 20.5 ms at
    // 256 bits, but FP16 values with FP64 vectors 6.0 -> 7.0 ms. The two give the same bits
    // whatever their widths (edge_sum sums as vec_sum does), as an exact FP16 copy of the
    // Krylov operator must (Truncate.ExactCopyInFp16OfAConstantStencil).
    const hn::CappedTag<C, (sizeof(S) == 8 ? 32 : HWY_MAX_BYTES) / sizeof(C)> d;
    using V = hn::Vec<decltype(d)>;
    const int n = static_cast<int>(hn::Lanes(d));
    const S* centre = p.a + g.center * g.diag_stride;
    // upper_residual: the offsets after the cell only.
    LineOffsets<S, C> lines(g, p.a, p.x, K == ApplyKind::upper_residual ? g.center : -1, -1,
                            K == ApplyKind::upper_residual ? +1 : 0, dz);
    const Active<S, C>& act = lines.act;
    for (std::int64_t line = lb; line < le; ++line) {
        lines.go_to(line);
        const std::int64_t c0 = line * g.nx;
        C* out = p.out + (line - out_first) * g.nx;
        const auto done = [&](int i, V s) {
            if (acc) s = hn::Add(s, hn::LoadU(d, out + i));
            return last ? finish<K>(d, p, centre, c0 + i, s) : s;
        };
        if (g.nx < n) {
            for (int i = 0; i < g.nx; ++i) {
                C s = cell_sum(act, i, g.nx);
                if (acc) s += out[i];
                out[i] = last ? finish_scalar<K>(p, centre, c0 + i, s) : s;
            }
            continue;
        }
        // The line's ends are edge vectors (edge_sum), at 0 and at nx - N; the vectors between
        // start at N and stop before nx - 1, so the far edge may overlap cells of the last one
        // (and of the first when nx < 2N). The edges are computed first, while out still holds
        // the partial sums of their cells (acc), and stored last: the overlapped cells get the
        // far edge's value (same inputs; out never aliases x or b).
        const V first = done(0, edge_sum<0>(d, act, 0, g.nx));
        const int far = g.nx - n;
        if (far >= n) hn::StoreU(first, d, out);
        const V far_v = far > 0 ? done(far, edge_sum<0>(d, act, far, g.nx)) : first;
        int i = n;
        for (; i + 2 * n <= g.nx - 1; i += 2 * n) {
            V s0, s1;
            vec_sum2(d, act, 0, act.m, i, s0, s1);
            hn::StoreU(done(i, s0), d, out + i);
            hn::StoreU(done(i + n, s1), d, out + i + n);
        }
        for (; i + n <= g.nx - 1; i += n)
            hn::StoreU(done(i, vec_sum1<1>(d, act, 0, act.m, i)), d, out + i);
        if (far < n) hn::StoreU(first, d, out);
        if (far > 0) hn::StoreU(far_v, d, out + far);
    }
}

/// Stencils with at least this many offsets are applied in groups of equal dz.
constexpr int kGroupOffsets = 12;
/// Cells per chunk of a grouped product: its partial sums stay in L2 between the groups.
constexpr std::int64_t kGroupCells = 16384;

/// The product of kind K. Large stencils (3d15, 3d19, 3d27) go chunk of lines by chunk, and in
/// each chunk one group of offsets with equal dz after the other, the partial sums kept in out:
/// about 9 value streams and 3 x lines at a time instead of 27 and 9. With all 27 at once a
/// 128^3 FP64 3d27 SpMV ran at half the STREAM bandwidth (the hardware prefetchers and open
/// DRAM pages do not follow that many streams); grouped it runs at about STREAM.
template <ApplyKind K, class S, class C>
void apply_kind(const ApplyArgs<S, C>& p) {
    const SgDiaGeom& g = *p.g;
    int dzs[kMaxDiag];
    int groups = 0;
    if (g.ndiag >= kGroupOffsets) {
        for (int e = 0; e < g.ndiag; ++e) {
            const Offset& o = g.offsets[e];
            if constexpr (K == ApplyKind::upper_residual) {
                const std::int64_t shift =
                    o.dx + std::int64_t{g.nx} * (o.dy + std::int64_t{g.ny} * o.dz);
                if (e == g.center || shift <= 0) continue;
            }
            if (std::find(dzs, dzs + groups, o.dz) == dzs + groups) dzs[groups++] = o.dz;
        }
        std::sort(dzs, dzs + groups);
    }
    const std::int64_t of = p.out_first_line;
    if (groups < 2) return apply_lines<K>(p, p.line_begin, p.line_end, kAnyDz, false, true, of);
    const std::int64_t chunk = std::max<std::int64_t>(1, kGroupCells / std::max(1, g.nx));
    for (std::int64_t lb = p.line_begin; lb < p.line_end; lb += chunk) {
        const std::int64_t le = std::min(p.line_end, lb + chunk);
        for (int q = 0; q < groups; ++q)
            apply_lines<K>(p, lb, le, dzs[q], q > 0, q + 1 == groups, of);
    }
}

template <class S, class C>
void apply_any(const ApplyArgs<S, C>& p) {
    switch (p.kind) {
        case ApplyKind::spmv:
            return apply_kind<ApplyKind::spmv>(p);
        case ApplyKind::residual:
            return apply_kind<ApplyKind::residual>(p);
        case ApplyKind::jacobi:
            return apply_kind<ApplyKind::jacobi>(p);
        case ApplyKind::upper_residual:
            return apply_kind<ApplyKind::upper_residual>(p);
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

/// The last lane of v in sweep order (Fwd: the highest), in every lane.
template <bool Fwd, class D>
HWY_INLINE hn::Vec<D> broadcast_last(D d, hn::Vec<D> v) {
    const hn::RebindToSigned<D> di;
    using TI = hn::TFromD<decltype(di)>;
    const TI lane = Fwd ? static_cast<TI>(hn::Lanes(d) - 1) : TI{0};
    return hn::TableLookupLanes(v, hn::IndicesFromVec(d, hn::Set(di, lane)));
}

#if !(HWY_TARGET == HWY_SCALAR || HWY_HAVE_SCALABLE)
/// One Kogge-Stone step inside the 128-bit blocks of the vector: lane l composes with lane l - S
/// (forward) or l + S (backward) of its block; lanes without a source there keep their map.
/// Byte shifts within a block take one cycle, a lane permute and a blend (shift_lanes) more.
template <bool Fwd, int S, class D>
HWY_INLINE void scan_step_in_blocks(D d, hn::Vec<D>& u, hn::Vec<D>& m) {
    const auto shifted = [d](hn::Vec<D> v) {
        if constexpr (Fwd) {
            return hn::ShiftLeftLanes<S>(d, v);  // zeros into the first S lanes of each block
        } else {
            return hn::ShiftRightLanes<S>(d, v);  // zeros into the last S lanes of each block
        }
    };
    constexpr int kBlock = static_cast<int>(16 / sizeof(hn::TFromD<D>));
    const hn::RebindToSigned<D> di;
    using TI = hn::TFromD<decltype(di)>;
    const auto pos = hn::And(hn::Iota(di, 0), hn::Set(di, static_cast<TI>(kBlock - 1)));
    const auto none = Fwd ? hn::Lt(pos, hn::Set(di, static_cast<TI>(S)))
                          : hn::Gt(pos, hn::Set(di, static_cast<TI>(kBlock - 1 - S)));
    u = hn::MulAdd(m, shifted(u), u);
    m = hn::Mul(m, hn::IfThenElse(hn::RebindMask(d, none), hn::Set(d, 1), shifted(m)));
}

/// One Kogge-Stone step across blocks of `block` lanes: every lane of block q composes with the
/// last lane in sweep order of block q - t (forward) or q + t (backward), if there is one.
template <bool Fwd, class D>
HWY_INLINE void scan_step_across_blocks(D d, int block, int t, hn::Vec<D>& u, hn::Vec<D>& m) {
    const hn::RebindToSigned<D> di;
    using TI = hn::TFromD<decltype(di)>;
    const auto iota = hn::Iota(di, 0);
    const auto tb = hn::Set(di, static_cast<TI>(t * block));
    // forward: the last lane of the own block minus t blocks; backward: the first plus t blocks
    const auto src = Fwd ? hn::Sub(hn::Or(iota, hn::Set(di, static_cast<TI>(block - 1))), tb)
                         : hn::Add(hn::AndNot(hn::Set(di, static_cast<TI>(block - 1)), iota), tb);
    const auto none = Fwd ? hn::Lt(src, hn::Zero(di))
                          : hn::Gt(src, hn::Set(di, static_cast<TI>(hn::Lanes(d) - 1)));
    const auto idx = hn::IndicesFromVec(d, hn::IfThenElse(none, hn::Zero(di), src));
    const auto nonef = hn::RebindMask(d, none);
    u = hn::MulAdd(m, hn::IfThenZeroElse(nonef, hn::TableLookupLanes(u, idx)), u);
    m = hn::Mul(m, hn::IfThenElse(nonef, hn::Set(d, 1), hn::TableLookupLanes(m, idx)));
}

#endif

/// Solves the in-line recurrence x_l = u_l + m_l x_{l-1} (m = -a_it / a_ii; l - 1 is the
/// neighbour before l in sweep order) for the lanes of one vector, with x before the first
/// lane given by `carry` (a broadcast); leaves the last lane of x in `carry`. A Kogge-Stone scan
/// of the affine maps x -> u + m x in log2(N) steps, so the critical path from one vector to the
/// next is one FMA and one permute instead of one FMA per cell (the scalar recurrence). On
/// targets with 128-bit blocks the steps inside a block use byte shifts and only the steps
/// across blocks permute lanes (AVX2 FP32: 2 + 1 steps instead of 3 with permutes).
template <bool Fwd, class D>
HWY_INLINE hn::Vec<D> solve_inline(D d, hn::Vec<D> u, hn::Vec<D> m, hn::Vec<D>& carry) {
    const int n = static_cast<int>(hn::Lanes(d));
#if HWY_TARGET == HWY_SCALAR || HWY_HAVE_SCALABLE
    const auto zero = hn::Zero(d), one = hn::Set(d, 1);
    for (int s = 1; s < n; s *= 2) {
        u = hn::MulAdd(m, shift_lanes<Fwd>(d, u, s, zero), u);
        m = hn::Mul(m, shift_lanes<Fwd>(d, m, s, one));
    }
#else
    constexpr int kBlock = static_cast<int>(16 / sizeof(hn::TFromD<D>));
    static_assert(hn::MaxLanes(D()) >= kBlock, "full 128-bit blocks expected");
    if constexpr (kBlock >= 2) scan_step_in_blocks<Fwd, 1>(d, u, m);
    if constexpr (kBlock >= 4) scan_step_in_blocks<Fwd, 2>(d, u, m);
    for (int t = 1; t * kBlock < n; t *= 2) scan_step_across_blocks<Fwd>(d, kBlock, t, u, m);
#endif
    const auto x = hn::MulAdd(m, carry, u);
    carry = broadcast_last<Fwd>(d, x);
    return x;
}

/// Gauss-Seidel lines with at least this many fixed offsets (all but the centre and the trailing
/// in-line neighbour) sum them in groups of equal dz (gs_line_dir): in practice 3d27 lines off
/// the boundary (25) too long for a planar run (gs_lines_dir; over 8192 cells). On 128^3, one
/// thread (AVX2 on a shared EPYC VM, medians of noisy runs), grouping made 3d27 FP32/FP64 sweeps
/// 13-28% and FP16 backward ones 12% faster, FP16 forward ones no faster; 3d15 (13 fixed offsets),
/// 3d19 (17) and zero-guess 3d27 (12) sweeps were no faster or up to 15% slower grouped: few
/// streams to save, one more pass over the buffer.
constexpr int kGsGroupOffsets = 20;
/// Cells per segment of a grouped Gauss-Seidel line; the fixed parts of one segment's cells wait
/// in a stack buffer (8 KiB in FP64) between the sum and the scan. On 2048 x 32 x 32, 1024 and
/// whole lines ran alike, 256 and 512 10-20% slower (FP32/FP64).
constexpr int kSegment = 1024;

/// sbuf[0, len) = the fixed parts of the cells [i0, i0 + len) (all offsets inside; len a
/// multiple of the lanes), summed group after group: group q is the offsets [gb[q], gb[q+1]) of
/// act; the first group stores, the later ones add (the first too with add_first). Pf as
/// vec_sum2 (-1: cells walked downwards). sbuf need not be aligned (gs_lines_dir's lines lie nx
/// cells apart).
template <int Pf, class D, class S, class C>
HWY_INLINE void group_sums(D d, const Active<S, C>& act, const int* gb, int groups, int i0, int len,
                           C* sbuf, bool add_first = false) {
    const int n = static_cast<int>(hn::Lanes(d));
    hn::Vec<D> s0, s1;
    for (int q = 0; q < groups; ++q) {
        const int e0 = gb[q], e1 = gb[q + 1];
        const auto put = [&](int o, hn::Vec<D> s) {
            if (q > 0 || add_first) s = hn::Add(hn::LoadU(d, sbuf + o), s);
            hn::StoreU(s, d, sbuf + o);
        };
        if constexpr (Pf > 0) {
            int o = 0;
            for (; o + 2 * n <= len; o += 2 * n) {
                vec_sum2<Pf>(d, act, e0, e1, i0 + o, s0, s1);
                put(o, s0);
                put(o + n, s1);
            }
            if (o < len) put(o, vec_sum1<Pf>(d, act, e0, e1, i0 + o));
        } else {
            int o = len;
            for (; o - 2 * n >= 0; o -= 2 * n) {
                vec_sum2<Pf>(d, act, e0, e1, i0 + o - 2 * n, s0, s1);
                put(o - 2 * n, s0);
                put(o - n, s1);
            }
            if (o > 0) put(o - n, vec_sum1<Pf>(d, act, e0, e1, i0 + o - n));
        }
    }
}

/// The vector type of the Gauss-Seidel lines: at most 256-bit vectors. With AVX-512's 16 FP32 /
/// 8 FP64 lanes (a longer scan, across four blocks), whole solves on the AMD EPYC (Zen 5) VM
/// spent more in the preconditioner, one thread, 2 alternating runs: laplace27 n = 160
/// K64P32D16 0.50 -> 0.43 s, Full64 1.65 -> 1.51 s; rhd n = 160 0.30 -> 0.29 s and 0.73-0.74 ->
/// 0.67 s (forty-fifth session).
template <class C>
using GsTag = hn::CappedTag<C, 32 / sizeof(C)>;

/// Gauss-Seidel on one line, cells in sweep order (forward: ascending), with zero_guess on
/// x = 0 reading only the updated neighbours; `act` holds the line's fixed offsets (every
/// offset but the centre and the trailing in-line neighbour t, dx = -1 forward, +1 backward:
/// they read values fixed during the line) and `gb` their groups of equal dz. A vector of cells
/// first sums the fixed part (u = (b - sum) / a_ii, m = -a_it / a_ii) and then solves the
/// in-line coupling in registers (solve_inline). Values are prefetched ahead in the sweep's
/// direction (backward sweeps walk the streams downwards).
///
/// The whole line runs in vectors once it holds one (nx >= N): full vectors from the line's
/// start in sweep order and, when N does not divide nx, one vector at the line's far end that
/// overlaps cells already done. The two vectors at the line's ends are "edge" vectors: their
/// lanes whose neighbour (dx = -1 at i = 0, dx = +1 at i = nx - 1) lies outside the line take 0
/// for the entry (whatever is stored there is never read into a sum) and for x, which comes
/// from a lane shift of a load inside the neighbour line, so nothing outside the lines the
/// sweep reads anyway is touched (no line another thread writes, no address outside x). The
/// scan starts from carry = 0 and the line's first cell has m = 0. Lines shorter than a vector
/// run scalar. (Until the thirteenth session the end cells 0 and nx - 1 ran scalar, with a
/// division on the scan's critical path, and the offsets were collected per line: 60-70 ns a
/// line in cache, 25 % of a 3d4 sweep on 256-cell lines and most of one on 16-cell lines.)
///
/// Lines with kGsGroupOffsets or more fixed offsets sum the fixed parts of the vectors between
/// the edge vectors segment by segment (kSegment cells, in sweep order), in groups of equal dz
/// (about 9 value streams at a time instead of 25, as apply_kind), into a stack buffer; then the
/// scan runs over the segment, the carry passing on to the next segment. This reads the same
/// values: the fixed offsets of a segment's cells are on other lines, or the in-line neighbour
/// ahead in the sweep (old value wanted), which lies in the segment or the next one, both not
/// yet written. Only the summation order of the fixed part changes (group by group); the edge
/// vectors keep the ungrouped sum.
///
/// With `part` (gs_lines_dir's planes), the sums over the line's offsets to the planes below and
/// above were made beforehand for all its cells (part[i]), and `act` holds only the in-plane
/// offsets (one group): every vector adds their sum to part, which serves the vectors between
/// the edges as their segment buffer.
template <bool Fwd, class S, class C>
void gs_line_dir(const GsArgs<S, C>& p, const Active<S, C>& act, const int* gb, int groups,
                 int trail, std::int64_t line, C* part = nullptr) {
    const SgDiaGeom& g = *p.g;
    const GsTag<C> d;
    using V = hn::Vec<decltype(d)>;
    const int n = static_cast<int>(hn::Lanes(d));
    constexpr int step = Fwd ? -1 : 1;
    constexpr int pf = Fwd ? 1 : -1;
    const int nx = g.nx;
    const std::int64_t c0 = line * nx;
    const S* centre = p.a + g.center * g.diag_stride + c0;
    // mirror_lower: a forward sweep's trailing neighbour (dx = -1) from its mirror (dx = +1)
    // one cell back, as collect() reads the lower offsets; lane 0 at the line's start, the one
    // value before the line (before the mirror's array on the first line, still inside the
    // matrix), is masked (m = 0 there) and the scalar path never reads it.
    const S* tr = trail < 0               ? nullptr
                  : g.mirror_lower && Fwd ? p.a + (g.ndiag - 1 - trail) * g.diag_stride + c0 - 1
                                          : p.a + trail * g.diag_stride + c0;
    const C* b = p.b + c0;
    C* x = p.x + c0;
    if (nx < n) {
        for (int s = 0; s < nx; ++s) {
            const int c = Fwd ? s : nx - 1 - s;
            C v = b[c] - cell_sum(act, c, nx);
            if (tr != nullptr && c + step >= 0 && c + step < nx)
                v -= load_conv1<C>(tr + c) * x[c + step];
            x[c] = v / load_conv1<C>(centre + c);
        }
        return;
    }
    const auto one = hn::Set(d, C{1});
    const auto zero = hn::Zero(d);
    // u and m of the n cells at i from their sum s.
    // The lambdas of the vector loops capture by value: a SIMD store may alias anything, so
    // whatever they read through a reference is reloaded after every store of x. setup, solve
    // and edge are forced inline (MPMG_LAMBDA_INLINE): GCC 12 called setup and solve out of line
    // from the edge vectors, the carry passing through memory. Inlined, 3d7 FP16 sweeps on 160 x 40
    // x 40 (in cache) ran 0.64-0.69 instead of 0.71-0.83 ns a cell forward from zero and 0.88-0.94
    // instead of 0.96-1.03 backward; rhd n = 160 K64P32D16 preconditioner 0.26 instead of
    // 0.28 s (3 alternating pairs each, pinned; thirty-ninth session).
    const auto setup = [=](int i, V s, V& u, V& m) MPMG_LAMBDA_INLINE {
        const auto inv = hn::Div(one, load_conv(d, centre + i));
        u = hn::Mul(hn::Sub(hn::LoadU(d, b + i), s), inv);
        m = tr != nullptr ? hn::Neg(hn::Mul(load_conv(d, tr + i), inv)) : zero;
    };
    // Without a trailing in-line neighbour (lower-half stencils swept backward) x = u.
    const bool coupled = tr != nullptr;
    const auto solve = [=](V u, V m, V& carry) MPMG_LAMBDA_INLINE {
        return coupled ? solve_inline<Fwd>(d, u, m, carry) : u;
    };
    V carry_out = zero;
    // The fixed part of the edge vector at i (plus part's sums, with part).
    const auto edge_fixed = [&](int i) MPMG_LAMBDA_INLINE {
        const V s = edge_sum<pf>(d, act, i, nx);
        return part == nullptr ? s : hn::Add(hn::LoadU(d, part + i), s);
    };
    // An edge vector at i; at the line's start in sweep order its first lane has no trailing
    // neighbour (m = 0 there, whatever is stored).
    const auto edge = [&](int i) MPMG_LAMBDA_INLINE {
        V u, m;
        setup(i, edge_fixed(i), u, m);
        if (Fwd ? i == 0 : i + n == nx) m = hn::IfThenElseZero(Fwd ? keep_lo(d) : keep_hi(d), m);
        hn::StoreU(solve(u, m, carry_out), d, x + i);
    };
    // Solves the cells [sb, sb + len) in sweep order, two vectors at a time, their fixed parts
    // from sum2(i, s0, s1) (cells i .. i+2N-1) and sum1(i) (cells i .. i+N-1). The carry stays
    // in a local of the loop, in a register: as the captured variable it went through the stack
    // between vectors, a store and a reload on the critical path of the scan. Inlined too (it
    // was a call per line or segment): 3d7 FP16 sweeps on 160 x 40 x 40 0.54-0.59 -> 0.45-0.49
    // ns a cell forward from zero, 0.77-0.82 -> 0.62-0.64 backward, on 160^3 0.64 -> 0.55 and
    // 1.46-1.52 -> 1.06-1.32 (2 pairs); rhd n = 144 K64P32D16 preconditioner median 0.172 ->
    // 0.168 s (6 pairs), laplace27 n = 108 alike within the noise.
    const auto scan = [&](int sb, int len, auto&& sum2, auto&& sum1) MPMG_LAMBDA_INLINE {
        // Copies: what the loop reads through the closure is reloaded after every store of x.
        C* const xs = x;
        const auto setup_l = setup;
        const auto solve_l = solve;
        V carry = carry_out;
        V s0, s1, u0, m0, u1, m1;
        if constexpr (Fwd) {
            int o = 0;
            for (; o + 2 * n <= len; o += 2 * n) {
                sum2(sb + o, s0, s1);
                setup_l(sb + o, s0, u0, m0);
                setup_l(sb + o + n, s1, u1, m1);
                hn::StoreU(solve_l(u0, m0, carry), d, xs + sb + o);
                hn::StoreU(solve_l(u1, m1, carry), d, xs + sb + o + n);
            }
            if (o < len) {
                setup_l(sb + o, sum1(sb + o), u0, m0);
                hn::StoreU(solve_l(u0, m0, carry), d, xs + sb + o);
            }
        } else {
            int o = len;  // cells [sb + o, sb + len) are done
            for (; o - 2 * n >= 0; o -= 2 * n) {
                sum2(sb + o - 2 * n, s0, s1);
                setup_l(sb + o - 2 * n, s0, u0, m0);
                setup_l(sb + o - n, s1, u1, m1);
                hn::StoreU(solve_l(u1, m1, carry), d, xs + sb + o - n);
                hn::StoreU(solve_l(u0, m0, carry), d, xs + sb + o - 2 * n);
            }
            if (o > 0) {
                setup_l(sb + o - n, sum1(sb + o - n), u0, m0);
                hn::StoreU(solve_l(u0, m0, carry), d, xs + sb + o - n);
            }
        }
        carry_out = carry;
    };
    // Full vectors in sweep order: forward at 0, N, ..., backward at nx - N, nx - 2N, ...; the
    // first is an edge vector, the last one too when N divides nx, else the overlapping vector
    // at the far end (t) is. The vectors between them: cells [ib, ie).
    const int nfull = nx / n, rest = nx % n;
    const bool last_full_is_edge = rest == 0 && nfull >= 2;
    const int ib = Fwd ? n : (rest == 0 ? n : rest);
    const int ie = Fwd ? (rest == 0 ? nx - n : nfull * n) : nx - n;
    edge(Fwd ? 0 : nx - n);
    const int seg = kSegment / (2 * n) * (2 * n);
    if (ie > ib && groups > 0 && seg > 0) {
        HWY_ALIGN C own[kSegment];
        C* sbuf = own;
        int sb = 0;  // the segment whose fixed parts sbuf holds
        const auto from_buf2 = [&](int i, V& s0, V& s1) {
            s0 = hn::LoadU(d, sbuf + (i - sb));
            s1 = hn::LoadU(d, sbuf + (i - sb) + n);
        };
        const auto from_buf1 = [&](int i) { return hn::LoadU(d, sbuf + (i - sb)); };
        for (int done = 0; done < ie - ib; done += seg) {
            const int len = std::min(seg, ie - ib - done);
            sb = Fwd ? ib + done : ie - done - len;
            if (part != nullptr) sbuf = part + sb;
            group_sums<pf>(d, act, gb, groups, sb, len, sbuf, part != nullptr);
            scan(sb, len, from_buf2, from_buf1);
        }
    } else if (ie > ib) {
        scan(
            ib, ie - ib, [&](int i, V& s0, V& s1) { vec_sum2<pf>(d, act, 0, act.m, i, s0, s1); },
            [&](int i) { return vec_sum1<pf>(d, act, 0, act.m, i); });
    }
    if (last_full_is_edge) edge(Fwd ? nx - n : 0);
    if (rest > 0) {
        // The vector at the far end overlaps k cells already done (forward its first k lanes,
        // backward its last k). Its done lanes enter the scan as u = carry, m = 0, so the first
        // remaining cell gets the carry of the last one done, and they are stored back
        // unchanged. Its fixed parts read the right values for the remaining cells (the in-line
        // neighbour ahead is not yet updated; the done cells are read only by the lanes that
        // are discarded).
        const int t = Fwd ? nx - n : 0;
        const auto first = hn::FirstN(d, static_cast<std::size_t>(Fwd ? n - rest : rest));
        const auto done = Fwd ? first : hn::Not(first);
        V u, m;
        setup(t, edge_fixed(t), u, m);
        u = hn::IfThenElse(done, carry_out, u);
        m = hn::IfThenZeroElse(done, m);
        const V xt = solve(u, m, carry_out);
        hn::StoreU(hn::IfThenElse(done, hn::LoadU(d, x + t), xt), d, x + t);
    }
}

/// Cells of the buffer that holds the sums of a run of lines over their offsets to the planes
/// below and above (gs_lines_dir): 64 KiB in FP32, 128 KiB in FP64, in L2. A run of whole
/// lines of one plane fills at most this many cells: one plane of laplace27 n = 108 (11664).
constexpr int kPartCells = 16384;

/// Stencils of at least this many offsets sweep planar (gs_lines_dir): 3d15, 3d19, 3d27. The
/// weather problem's 3d19 at n = 121, one sweep of level 0 (forty-seventh session, as below,
/// 4 alternating pairs): backward FP16 6.7-11.2 -> 5.4-5.8 ms, FP64 21.6-31.0 -> 21.2-21.5 ms
/// (the plain lines' sums walked 17 streams downwards); forward FP16 4.7-6.9 -> 5.1-5.4 ms, FP64
/// 17.5-19.4 -> 19.4-20.0 ms. A V(1,1) cycle sweeps backward with x nonzero, forward only from
/// zero (not planar). rhd's 3d7, planar: FP16 backward 5.6-6.0 -> 7.5-8.0 ms, slower.
constexpr int kPlanarOffsets = 15;

/// Gauss-Seidel on the lines [line_begin, line_end), ascending forward, descending backward.
///
/// Stencils of kPlanarOffsets or more offsets take the runs of consecutive lines of one plane in a
/// call (a wavefront run, a slab's planes, the whole box), as many whole lines as kPartCells holds,
/// in two phases ("planar"). First, for every cell of the run, the sums over its offsets to the
/// planes below and above: they read x on the neighbouring planes only, which the run does not
/// write (forward, the plane below is final and the plane above not yet swept; backward the other
/// way round), so they are made before any line of the run is solved, as the grouped product makes
/// them (apply_lines, dz = -1 then dz = +1: 9 value streams of 3d27 at a time along the whole
/// run, edge vectors included). Then each line adds its in-plane offsets and solves
/// (gs_line_dir with part). A cell's fixed part sums the same products as the ungrouped sum in
/// another grouping (dz = -1, +1, then 0).
///
/// History, laplace27 n = 108, one sweep of level 0, one thread pinned, medians of 9 in a
/// throwaway driver (Zen 5 VM). The sums segment by segment, per line over all 25 streams,
/// took FP16 values / FP32 vectors 7.4-7.7 ms backward, 6.6-7.6 forward (SpMV 3.4-3.9 ms), FP64
/// 25.8-26.5 / 25.6-27.0. The forty-sixth session's first planar phase (runs of 4096 cells,
/// without the lines' edge vectors, which then still summed all 25 offsets in the second
/// phase) brought that to 5.5-5.9 / 5.0-5.2 ms and 18.3-19.3 / 18.0-18.6 ms; with its edge
/// vectors' 18 plane streams read line by line, longer runs were slower (their cache lines,
/// brought in by the first phase, had left L2 by the second). Whole lines in the first phase
/// and runs of up to 16384 cells (forty-seventh session): FP16 4.2-4.6 / 4.0-4.4 ms, FP64 alike
/// within the VM's noise. Tried and left out: the in-plane offsets that read old values
/// (forward dy = +1 and dx = +1) in the first phase too, a third pass over the buffer (FP16
/// backward 4.5 -> 4.9 ms).
template <bool Fwd, class S, class C>
void gs_lines_dir(const GsArgs<S, C>& p) {
    const SgDiaGeom& g = *p.g;
    if (p.line_begin >= p.line_end || g.nx == 0) return;
    const int trail = inline_offset(g, Fwd ? -1 : 1);
    // With a zero guess only the already updated neighbours (before the cell in the sweep's
    // order: shift < 0 forward, > 0 backward) are nonzero.
    const int sign = p.zero_guess ? (Fwd ? -1 : 1) : 0;
    const GsTag<C> d;
    const std::int64_t cap = g.nx >= static_cast<int>(hn::Lanes(d)) ? kPartCells / g.nx : 0;
    const bool planar = sign == 0 && cap >= 2 && g.ndiag >= kPlanarOffsets;
    // Planar lines: the in-plane offsets only (one group); the others are in part.
    LineOffsets<S, C> lines(g, p.a, p.x, g.center, trail, sign, planar ? 0 : kAnyDz);
    const Active<S, C>& act = lines.act;
    int gb[kMaxDiag + 1] = {0};
    int groups = 0;
    HWY_ALIGN C part[kPartCells];
    ApplyArgs<S, C> sums;  // the first phase: part = the run's sums over dz = -1 and +1
    sums.g = p.g;
    sums.a = p.a;
    sums.x = p.x;
    sums.out = part;
    const std::int64_t total = p.line_end - p.line_begin;
    for (std::int64_t s = 0; s < total;) {
        const std::int64_t first = Fwd ? p.line_begin + s : p.line_end - 1 - s;
        std::int64_t len = 1;  // lines of this run, in sweep order from `first`
        std::int64_t lo = first;
        if (planar) {
            const std::int64_t k = first / g.ny;
            while (s + len < total && len < cap && (Fwd ? first + len : first - len) / g.ny == k) {
                ++len;
            }
            lo = Fwd ? first : first - len + 1;
            apply_lines<ApplyKind::spmv>(sums, lo, lo + len, -1, false, false, lo);
            apply_lines<ApplyKind::spmv>(sums, lo, lo + len, 1, true, false, lo);
        }
        for (std::int64_t t = 0; t < len; ++t) {
            const std::int64_t line = Fwd ? first + t : first - t;
            if (lines.go_to(line)) {
                // Groups are the runs of equal dz in act (one run per dz: collect() keeps the
                // stencil's order, sorted by dz; an unsorted order would only give more,
                // smaller groups); none below kGsGroupOffsets. Planar lines: all of act, one
                // group (possibly empty).
                groups = 0;
                if (planar) {
                    gb[1] = act.m;
                    groups = 1;
                } else if (act.m >= kGsGroupOffsets) {
                    for (int e = 1; e <= act.m; ++e) {
                        if (e == act.m || act.dz[e] != act.dz[e - 1]) gb[++groups] = e;
                    }
                }
            }
            gs_line_dir<Fwd>(p, act, gb, groups, trail, line,
                             planar ? part + (line - lo) * g.nx : nullptr);
        }
        s += len;
    }
}

template <class S, class C>
void gs_line_impl(const GsArgs<S, C>& p) {
    if (p.forward) {
        gs_lines_dir<true>(p);
    } else {
        gs_lines_dir<false>(p);
    }
}

// One plain exported function per supported (storage, compute) pair (no HWY_EXPORT_T in 1.0.3).
void apply_dd(const ApplyArgs<double, double>& p) { apply_any(p); }
void apply_fd(const ApplyArgs<float, double>& p) { apply_any(p); }
void apply_hd(const ApplyArgs<half, double>& p) { apply_any(p); }
void apply_bd(const ApplyArgs<bfloat16, double>& p) { apply_any(p); }
void apply_ff(const ApplyArgs<float, float>& p) { apply_any(p); }
void apply_hf(const ApplyArgs<half, float>& p) { apply_any(p); }
void apply_bf(const ApplyArgs<bfloat16, float>& p) { apply_any(p); }
void gs_dd(const GsArgs<double, double>& p) { gs_line_impl(p); }
void gs_fd(const GsArgs<float, double>& p) { gs_line_impl(p); }
void gs_hd(const GsArgs<half, double>& p) { gs_line_impl(p); }
void gs_bd(const GsArgs<bfloat16, double>& p) { gs_line_impl(p); }
void gs_ff(const GsArgs<float, float>& p) { gs_line_impl(p); }
void gs_hf(const GsArgs<half, float>& p) { gs_line_impl(p); }
void gs_bf(const GsArgs<bfloat16, float>& p) { gs_line_impl(p); }
std::int64_t current_target() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace mpmg::kernels::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace mpmg::kernels::simd {

HWY_EXPORT(apply_dd);
HWY_EXPORT(apply_fd);
HWY_EXPORT(apply_hd);
HWY_EXPORT(apply_bd);
HWY_EXPORT(apply_ff);
HWY_EXPORT(apply_hf);
HWY_EXPORT(apply_bf);
HWY_EXPORT(gs_dd);
HWY_EXPORT(gs_fd);
HWY_EXPORT(gs_hd);
HWY_EXPORT(gs_bd);
HWY_EXPORT(gs_ff);
HWY_EXPORT(gs_hf);
HWY_EXPORT(gs_bf);
HWY_EXPORT(current_target);

void apply(const ApplyArgs<double, double>& p) { HWY_DYNAMIC_DISPATCH(apply_dd)(p); }
void apply(const ApplyArgs<float, double>& p) { HWY_DYNAMIC_DISPATCH(apply_fd)(p); }
void apply(const ApplyArgs<half, double>& p) { HWY_DYNAMIC_DISPATCH(apply_hd)(p); }
void apply(const ApplyArgs<bfloat16, double>& p) { HWY_DYNAMIC_DISPATCH(apply_bd)(p); }
void apply(const ApplyArgs<float, float>& p) { HWY_DYNAMIC_DISPATCH(apply_ff)(p); }
void apply(const ApplyArgs<half, float>& p) { HWY_DYNAMIC_DISPATCH(apply_hf)(p); }
void apply(const ApplyArgs<bfloat16, float>& p) { HWY_DYNAMIC_DISPATCH(apply_bf)(p); }

void gs_lines(const GsArgs<double, double>& p) { HWY_DYNAMIC_DISPATCH(gs_dd)(p); }
void gs_lines(const GsArgs<float, double>& p) { HWY_DYNAMIC_DISPATCH(gs_fd)(p); }
void gs_lines(const GsArgs<half, double>& p) { HWY_DYNAMIC_DISPATCH(gs_hd)(p); }
void gs_lines(const GsArgs<bfloat16, double>& p) { HWY_DYNAMIC_DISPATCH(gs_bd)(p); }
void gs_lines(const GsArgs<float, float>& p) { HWY_DYNAMIC_DISPATCH(gs_ff)(p); }
void gs_lines(const GsArgs<half, float>& p) { HWY_DYNAMIC_DISPATCH(gs_hf)(p); }
void gs_lines(const GsArgs<bfloat16, float>& p) { HWY_DYNAMIC_DISPATCH(gs_bf)(p); }

const char* target_name() { return hwy::TargetName(HWY_DYNAMIC_DISPATCH(current_target)()); }

}  // namespace mpmg::kernels::simd
#endif  // HWY_ONCE
