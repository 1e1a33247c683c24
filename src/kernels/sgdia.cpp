// SG-DIA kernels. Scalar matrices (r = 1), where the bytes are, go to the Highway kernels in
// sgdia_simd.cpp (dynamic dispatch; FP16/BF16 converted in registers). Block matrices (r > 1) use
// the plain loops below, whose block rows (r = 2, 3, 4) run in sgdia_aos_simd.cpp.
//
// Structure of the plain loops: a line (j,k) is processed in chunks of cells [i0, i1) whose results
// fit a small stack buffer `acc` in compute precision. For each stencil offset the chunk is one
// contiguous stream over the offset's values and the shifted x, accumulated into `acc`
// (offset-major), so each inner loop is unit stride and vectorisable. Neighbours outside the box
// are never read: an offset whose neighbour line (j+dy, k+dz) is outside is skipped, and i runs
// over [max(0,-dx), nx - max(0,dx)) only.
#include "kernels/sgdia.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/convert.hpp"
#include "kernels/sgdia_aos_simd.hpp"
#include "kernels/sgdia_simd.hpp"

namespace mpmg::kernels {
namespace {

/// Accumulator entries per chunk (compute-precision values on the stack).
constexpr int kChunk = 512;
constexpr int kMaxBlock = 8;

/// Where offset `o` acts in chunk [i0, i1) of line (j, k): cells [lo, hi) and the cell shift to
/// the neighbour. False when nothing is to be read (neighbour line outside, or empty range).
struct Span {
    int lo = 0, hi = 0;
    std::int64_t shift = 0;
};

bool offset_span(const SgDiaGeom& g, const Offset& o, int j, int k, int i0, int i1, Span& s) {
    if (j + o.dy < 0 || j + o.dy >= g.ny || k + o.dz < 0 || k + o.dz >= g.nz) return false;
    s.lo = std::max(i0, std::max(0, -o.dx));
    s.hi = std::min(i1, g.nx - std::max(0, o.dx));
    s.shift = o.dx + std::int64_t{g.nx} * (o.dy + std::int64_t{g.ny} * o.dz);
    return s.lo < s.hi;
}

/// The block rows of n cells: out[i r + ra] += sum_rb av[(i r + ra) r + rb] xv[i r + rb]
/// (with `Transposed` av[(i r + rb) r + ra]: a lower offset's blocks taken from its mirror,
/// SgDiaGeom::mirror_lower). r = 2, 3, 4 run in the SIMD kernel (sgdia_aos_simd.hpp), which
/// prefetches the values `nx` cells on (the same offset on the next line: a line's offsets are
/// read one after the other in short runs, which the hardware prefetcher follows poorly); larger
/// blocks run the scalar loop below, in the same order of operations.
template <bool Transposed, class S, class C>
void accumulate_r(int r, int n, const S* av, const C* xv, C* out, int nx) {
    if (r >= 2 && r <= 4) {
        simd::BlockRowsArgs<S, C> args;
        args.r = r;
        args.transposed = Transposed;
        args.n = n;
        args.av = av;
        args.x = xv;
        args.out = out;
        args.ahead = nx;
        simd::block_rows(args);
        return;
    }
    for (int i = 0; i < n; ++i) {
        for (int ra = 0; ra < r; ++ra) {
            C sum = 0;
            for (int rb = 0; rb < r; ++rb) {
                const int e = Transposed ? (i * r + rb) * r + ra : (i * r + ra) * r + rb;
                const C p = to_compute<C>(av[e]) * xv[i * r + rb];
                sum = rb == 0 ? p : sum + p;
            }
            out[i * r + ra] = out[i * r + ra] + sum;
        }
    }
}

/// acc[(i - i0) r + ra] += sum_rb A_d(c0 + i)[ra][rb] x[(c0 + i + shift) r + rb], i in [lo, hi);
/// nx: cells per line (the prefetch distance of the block loops). With `mirrored`, `ad` is the
/// values of the mirror offset -d and A_d(c) is read as A_{-d}(c + shift) transposed.
template <class S, class C>
void accumulate(int r, const S* ad, const C* x, C* acc, std::int64_t c0, int i0, const Span& s,
                int nx, bool mirrored) {
    const int n = s.hi - s.lo;
    const std::int64_t c = c0 + s.lo;  // first cell of the stream
    C* out = acc + std::int64_t{s.lo - i0} * r;
    const std::int64_t value_cell = mirrored ? c + s.shift : c;  // >= 0: the neighbour is inside
    const C* xv = x + (c + s.shift) * r;
    if (r == 1) {
        const S* av = ad + value_cell;
        for (int i = 0; i < n; ++i) out[i] += to_compute<C>(av[i]) * xv[i];
        return;
    }
    const S* av = ad + value_cell * r * r;
    if (mirrored) return accumulate_r<true>(r, n, av, xv, out, nx);
    accumulate_r<false>(r, n, av, xv, out, nx);
}

/// acc += (offset d's part of A x) for the cells [i0, i1) of line `line` (acc holds those
/// cells), unless the offset's neighbour line is outside the box or `upper_only` leaves out an
/// offset whose cell comes before the cell.
template <class S, class C>
void add_offset(const SgDiaGeom& g, const S* a, const C* x, C* acc, std::int64_t line, int i0,
                int i1, int d, bool upper_only) {
    const int j = static_cast<int>(line % g.ny);
    const int k = static_cast<int>(line / g.ny);
    Span s;
    if (!offset_span(g, g.offsets[d], j, k, i0, i1, s)) return;
    if (upper_only && s.shift <= 0) return;
    const bool mirrored = g.mirror_lower && s.shift < 0;
    accumulate(g.block, a + (mirrored ? g.ndiag - 1 - d : d) * g.diag_stride, x, acc, line * g.nx,
               i0, s, g.nx, mirrored);
}

/// acc = (A x) for the cells [i0, i1) of line `line`, optionally leaving out offsets, and with
/// `upper_only` only the offsets whose cell comes after the cell (shift > 0).
template <class S, class C>
void apply_chunk(const SgDiaGeom& g, const S* a, const C* x, C* acc, std::int64_t line, int i0,
                 int i1, int skip1 = -1, int skip2 = -1, bool upper_only = false) {
    std::fill(acc, acc + std::int64_t{i1 - i0} * g.block, C{0});
    for (int d = 0; d < g.ndiag; ++d) {
        if (d != skip1 && d != skip2) add_offset(g, a, x, acc, line, i0, i1, d, upper_only);
    }
}

/// Cells per chunk for block size r.
int chunk_cells(const SgDiaGeom& g) { return kChunk / g.block; }

/// z <- D^{-1} z for one r x r block `d` (row-major, storage S), by Gaussian elimination with
/// partial pivoting in C. A singular block gives Inf/NaN (the kernel does not throw).
template <class S, class C>
void solve_block(const S* d, int r, C* z) {
    if (r == 1) {
        z[0] /= to_compute<C>(d[0]);
        return;
    }
    C m[kMaxBlock][kMaxBlock];
    for (int p = 0; p < r; ++p) {
        for (int q = 0; q < r; ++q) m[p][q] = to_compute<C>(d[p * r + q]);
    }
    for (int p = 0; p < r; ++p) {
        int piv = p;
        for (int q = p + 1; q < r; ++q) {
            if (std::abs(m[q][p]) > std::abs(m[piv][p])) piv = q;
        }
        if (piv != p) {
            for (int q = 0; q < r; ++q) std::swap(m[p][q], m[piv][q]);
            std::swap(z[p], z[piv]);
        }
        for (int q = p + 1; q < r; ++q) {
            const C f = m[q][p] / m[p][p];
            for (int s = p + 1; s < r; ++s) m[q][s] -= f * m[p][s];
            z[q] -= f * z[p];
        }
    }
    for (int p = r - 1; p >= 0; --p) {
        C sum = z[p];
        for (int q = p + 1; q < r; ++q) sum -= m[p][q] * z[q];
        z[p] = sum / m[p][p];
    }
}

/// Index of offset (dx, 0, 0) in the stencil, or -1.
int inline_offset(const SgDiaGeom& g, int dx) {
    for (int d = 0; d < g.ndiag; ++d) {
        const Offset& o = g.offsets[d];
        if (o.dx == dx && o.dy == 0 && o.dz == 0) return d;
    }
    return -1;
}

/// Accumulator entries of a group of whole lines (block products whose line fits kChunk).
constexpr int kLinesChunk = 4096;
/// At most this many lines per group.
constexpr int kMaxLines = 16;

/// acc = (A x) for whole lines [line0, line0 + lines) (only the offsets after the cell with
/// `upper_only`), offset by offset: each offset's values of the group are one contiguous run
/// of lines x nx blocks, where a line at a time gave runs of nx blocks (3.7 KiB for solid3d
/// n = 52), too short for the hardware prefetcher among 27 offsets. Every entry still adds its
/// offsets in the order of d, so the result is the line-at-a-time one, bit for bit.
template <class S, class C>
void apply_lines(const SgDiaGeom& g, const S* a, const C* x, C* acc, std::int64_t line0, int lines,
                 bool upper_only) {
    const std::int64_t per_line = std::int64_t{g.nx} * g.block;
    std::fill(acc, acc + lines * per_line, C{0});
    for (int d = 0; d < g.ndiag; ++d) {
        for (int l = 0; l < lines; ++l) {
            add_offset(g, a, x, acc + l * per_line, line0 + l, 0, g.nx, d, upper_only);
        }
    }
}

/// The block (r > 1) products, chunk by chunk: acc = (A x) for the cells [i0, i1) of a line, or
/// for a group of whole lines when a line fits kChunk (only the offsets after the cell with
/// `upper_only`), then finish(c_first, cells, acc) writes the chunk's result from it (c_first:
/// the chunk's first cell).
template <class S, class C, class F>
void apply_chunks(const SgDiaGeom& g, const S* a, const C* x, std::int64_t line_begin,
                  std::int64_t line_end, bool upper_only, F finish) {
    if (g.nx * g.block <= kChunk) {
        C acc[kLinesChunk];
        const std::int64_t group =
            std::clamp<std::int64_t>(kLinesChunk / (std::int64_t{g.nx} * g.block), 1, kMaxLines);
        for (std::int64_t line = line_begin; line < line_end; line += group) {
            const int lines = static_cast<int>(std::min(group, line_end - line));
            apply_lines(g, a, x, acc, line, lines, upper_only);
            finish(line * g.nx, lines * g.nx, static_cast<const C*>(acc));
        }
        return;
    }
    C acc[kChunk];
    const int n = chunk_cells(g);
    for (std::int64_t line = line_begin; line < line_end; ++line) {
        for (int i0 = 0; i0 < g.nx; i0 += n) {
            const int i1 = std::min(g.nx, i0 + n);
            apply_chunk(g, a, x, acc, line, i0, i1, -1, -1, upper_only);
            finish(line * g.nx + i0, i1 - i0, static_cast<const C*>(acc));
        }
    }
}

}  // namespace

template <class S, class C>
void spmv(const SgDiaGeom& g, const S* a, const C* x, C* y, std::int64_t line_begin,
          std::int64_t line_end) {
    if (g.block == 1) {
        simd::apply(simd::ApplyArgs<S, C>{&g, a, nullptr, x, y, C{0}, simd::ApplyKind::spmv,
                                          line_begin, line_end});
        return;
    }
    const int r = g.block;
    apply_chunks(g, a, x, line_begin, line_end, false,
                 [&](std::int64_t c, int cells, const C* acc) {
                     std::copy(acc, acc + cells * r, y + c * r);
                 });
}

template <class S, class C>
void residual(const SgDiaGeom& g, const S* a, const C* b, const C* x, C* r, std::int64_t line_begin,
              std::int64_t line_end, std::int64_t r_first_line) {
    if (g.block == 1) {
        simd::apply(simd::ApplyArgs<S, C>{&g, a, b, x, r, C{0}, simd::ApplyKind::residual,
                                          line_begin, line_end, r_first_line});
        return;
    }
    const int rb = g.block;
    const std::int64_t first = r_first_line * g.nx * rb;
    apply_chunks(g, a, x, line_begin, line_end, false,
                 [&](std::int64_t c, int cells, const C* acc) {
                     for (int e = 0; e < cells * rb; ++e)
                         r[c * rb + e - first] = b[c * rb + e] - acc[e];
                 });
}

template <class S, class C>
void upper_residual(const SgDiaGeom& g, const S* a, const C* x, C* r, std::int64_t line_begin,
                    std::int64_t line_end, std::int64_t r_first_line) {
    if (g.block == 1) {
        simd::apply(simd::ApplyArgs<S, C>{&g, a, nullptr, x, r, C{0},
                                          simd::ApplyKind::upper_residual, line_begin, line_end,
                                          r_first_line});
        return;
    }
    const int rb = g.block;
    const std::int64_t first = r_first_line * g.nx * rb;
    apply_chunks(g, a, x, line_begin, line_end, true, [&](std::int64_t c, int cells, const C* acc) {
        for (int e = 0; e < cells * rb; ++e) r[c * rb + e - first] = -acc[e];
    });
}

namespace {

/// One line of the r x r path of gs_lines (r > 1).
template <class S, class C>
void gs_line_blocks(const SgDiaGeom& g, const S* a, const C* b, C* x, std::int64_t line,
                    bool forward) {
    // Offsets that do not read the cell being updated or the in-line neighbour updated just
    // before it use values fixed during this line, so they are streamed first; the trailing
    // in-line neighbour (dx = -1 forward, +1 backward) is then applied cell by cell.
    C acc[kChunk];
    const int n = chunk_cells(g);
    const int r = g.block;
    const int step = forward ? -1 : 1;  // dx of the trailing neighbour
    const int trail = inline_offset(g, step);
    const S* centre = a + g.center * g.diag_stride;
    const std::int64_t c0 = line * g.nx;
    const int chunks = (g.nx + n - 1) / n;
    for (int ch = 0; ch < chunks; ++ch) {
        const int i0 = (forward ? ch : chunks - 1 - ch) * n;
        const int i1 = std::min(g.nx, i0 + n);
        apply_chunk(g, a, x, acc, line, i0, i1, g.center, trail);
        for (int t = 0; t < i1 - i0; ++t) {
            const int i = forward ? i0 + t : i1 - 1 - t;
            const std::int64_t c = c0 + i;
            C z[kMaxBlock];
            for (int ra = 0; ra < r; ++ra) z[ra] = b[c * r + ra] - acc[(i - i0) * r + ra];
            if (trail >= 0 && i + step >= 0 && i + step < g.nx) {
                const S* at = a + trail * g.diag_stride + c * r * r;
                const C* xn = x + (c + step) * r;
                for (int ra = 0; ra < r; ++ra) {
                    for (int rb = 0; rb < r; ++rb) z[ra] -= to_compute<C>(at[ra * r + rb]) * xn[rb];
                }
            }
            solve_block(centre + c * r * r, r, z);
            for (int ra = 0; ra < r; ++ra) x[c * r + ra] = z[ra];
        }
    }
}

}  // namespace

template <class S, class C>
void gs_lines(const SgDiaGeom& g, const S* a, const C* b, C* x, std::int64_t line_begin,
              std::int64_t line_end, bool forward, bool zero_guess) {
    if (g.block == 1) {
        simd::gs_lines(simd::GsArgs<S, C>{&g, a, b, x, line_begin, line_end, forward, zero_guess});
        return;
    }
    for (std::int64_t s = 0; s < line_end - line_begin; ++s) {
        gs_line_blocks(g, a, b, x, forward ? line_begin + s : line_end - 1 - s, forward);
    }
}

template <class S, class C>
void jacobi(const SgDiaGeom& g, const S* a, const C* b, const C* x, C* x_new, C omega,
            std::int64_t line_begin, std::int64_t line_end) {
    if (g.block == 1) {
        simd::apply(simd::ApplyArgs<S, C>{&g, a, b, x, x_new, omega, simd::ApplyKind::jacobi,
                                          line_begin, line_end});
        return;
    }
    const int r = g.block;
    const S* centre = a + g.center * g.diag_stride;
    apply_chunks(g, a, x, line_begin, line_end, false,
                 [&](std::int64_t c_first, int cells, const C* acc) {
                     for (int t = 0; t < cells; ++t) {
                         const std::int64_t c = c_first + t;
                         C z[kMaxBlock];
                         for (int ra = 0; ra < r; ++ra) z[ra] = b[c * r + ra] - acc[t * r + ra];
                         solve_block(centre + c * r * r, r, z);
                         for (int ra = 0; ra < r; ++ra)
                             x_new[c * r + ra] = x[c * r + ra] + omega * z[ra];
                     }
                 });
}

// Explicit instantiations: exactly the supported (storage, compute) pairs.

template void spmv<double, double>(const SgDiaGeom&, const double*, const double*, double*,
                                   std::int64_t, std::int64_t);
template void spmv<float, double>(const SgDiaGeom&, const float*, const double*, double*,
                                  std::int64_t, std::int64_t);
template void spmv<half, double>(const SgDiaGeom&, const half*, const double*, double*,
                                 std::int64_t, std::int64_t);
template void spmv<bfloat16, double>(const SgDiaGeom&, const bfloat16*, const double*, double*,
                                     std::int64_t, std::int64_t);
template void spmv<float, float>(const SgDiaGeom&, const float*, const float*, float*, std::int64_t,
                                 std::int64_t);
template void spmv<half, float>(const SgDiaGeom&, const half*, const float*, float*, std::int64_t,
                                std::int64_t);
template void spmv<bfloat16, float>(const SgDiaGeom&, const bfloat16*, const float*, float*,
                                    std::int64_t, std::int64_t);

template void residual<double, double>(const SgDiaGeom&, const double*, const double*,
                                       const double*, double*, std::int64_t, std::int64_t,
                                       std::int64_t);
template void residual<float, double>(const SgDiaGeom&, const float*, const double*, const double*,
                                      double*, std::int64_t, std::int64_t, std::int64_t);
template void residual<half, double>(const SgDiaGeom&, const half*, const double*, const double*,
                                     double*, std::int64_t, std::int64_t, std::int64_t);
template void residual<bfloat16, double>(const SgDiaGeom&, const bfloat16*, const double*,
                                         const double*, double*, std::int64_t, std::int64_t,
                                         std::int64_t);
template void residual<float, float>(const SgDiaGeom&, const float*, const float*, const float*,
                                     float*, std::int64_t, std::int64_t, std::int64_t);
template void residual<half, float>(const SgDiaGeom&, const half*, const float*, const float*,
                                    float*, std::int64_t, std::int64_t, std::int64_t);
template void residual<bfloat16, float>(const SgDiaGeom&, const bfloat16*, const float*,
                                        const float*, float*, std::int64_t, std::int64_t,
                                        std::int64_t);

template void upper_residual<double, double>(const SgDiaGeom&, const double*, const double*,
                                             double*, std::int64_t, std::int64_t, std::int64_t);
template void upper_residual<float, double>(const SgDiaGeom&, const float*, const double*, double*,
                                            std::int64_t, std::int64_t, std::int64_t);
template void upper_residual<half, double>(const SgDiaGeom&, const half*, const double*, double*,
                                           std::int64_t, std::int64_t, std::int64_t);
template void upper_residual<bfloat16, double>(const SgDiaGeom&, const bfloat16*, const double*,
                                               double*, std::int64_t, std::int64_t, std::int64_t);
template void upper_residual<float, float>(const SgDiaGeom&, const float*, const float*, float*,
                                           std::int64_t, std::int64_t, std::int64_t);
template void upper_residual<half, float>(const SgDiaGeom&, const half*, const float*, float*,
                                          std::int64_t, std::int64_t, std::int64_t);
template void upper_residual<bfloat16, float>(const SgDiaGeom&, const bfloat16*, const float*,
                                              float*, std::int64_t, std::int64_t, std::int64_t);

template void gs_lines<double, double>(const SgDiaGeom&, const double*, const double*, double*,
                                       std::int64_t, std::int64_t, bool, bool);
template void gs_lines<float, double>(const SgDiaGeom&, const float*, const double*, double*,
                                      std::int64_t, std::int64_t, bool, bool);
template void gs_lines<half, double>(const SgDiaGeom&, const half*, const double*, double*,
                                     std::int64_t, std::int64_t, bool, bool);
template void gs_lines<bfloat16, double>(const SgDiaGeom&, const bfloat16*, const double*, double*,
                                         std::int64_t, std::int64_t, bool, bool);
template void gs_lines<float, float>(const SgDiaGeom&, const float*, const float*, float*,
                                     std::int64_t, std::int64_t, bool, bool);
template void gs_lines<half, float>(const SgDiaGeom&, const half*, const float*, float*,
                                    std::int64_t, std::int64_t, bool, bool);
template void gs_lines<bfloat16, float>(const SgDiaGeom&, const bfloat16*, const float*, float*,
                                        std::int64_t, std::int64_t, bool, bool);

template void jacobi<double, double>(const SgDiaGeom&, const double*, const double*, const double*,
                                     double*, double, std::int64_t, std::int64_t);
template void jacobi<float, double>(const SgDiaGeom&, const float*, const double*, const double*,
                                    double*, double, std::int64_t, std::int64_t);
template void jacobi<half, double>(const SgDiaGeom&, const half*, const double*, const double*,
                                   double*, double, std::int64_t, std::int64_t);
template void jacobi<bfloat16, double>(const SgDiaGeom&, const bfloat16*, const double*,
                                       const double*, double*, double, std::int64_t, std::int64_t);
template void jacobi<float, float>(const SgDiaGeom&, const float*, const float*, const float*,
                                   float*, float, std::int64_t, std::int64_t);
template void jacobi<half, float>(const SgDiaGeom&, const half*, const float*, const float*, float*,
                                  float, std::int64_t, std::int64_t);
template void jacobi<bfloat16, float>(const SgDiaGeom&, const bfloat16*, const float*, const float*,
                                      float*, float, std::int64_t, std::int64_t);

}  // namespace mpmg::kernels
