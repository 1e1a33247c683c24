// The entries of one SG-DIA offset whose neighbour lies inside the box, as runs of consecutive
// cells: what the SIMD setup passes (src/kernels/convert_simd.hpp, setup_simd.hpp) take, one
// call per run instead of one test per cell.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "mpmg/sgdia_matrix.hpp"

namespace mpmg {

/// Calls f(first, count) for the runs of consecutive cells of [c0, c1) whose neighbour at
/// offset d lies inside the box, in increasing order (the cells of SgDiaMatrix::for_each_inside):
/// one run per plane when the offset does not move along x (the plane's inside rows are then
/// contiguous), else one per line, clipped to [c0, c1); only the planes and lines that meet it
/// are visited.
template <class F>
void for_each_inside_run(const Box& b, const Stencil& stencil, int d, std::int64_t c0,
                         std::int64_t c1, F&& f) {
    const Offset& o = stencil[d];
    const int i0 = o.dx < 0 ? 1 : 0, i1 = o.dx > 0 ? b.nx - 1 : b.nx;
    const int j0 = o.dy < 0 ? 1 : 0, j1 = o.dy > 0 ? b.ny - 1 : b.ny;
    const int k0 = o.dz < 0 ? 1 : 0, k1 = o.dz > 0 ? b.nz - 1 : b.nz;
    if (i1 <= i0 || j1 <= j0 || c1 <= c0) return;
    const std::int64_t nx = b.nx, plane = nx * b.ny;
    const std::int64_t kb = std::max<std::int64_t>(k0, c0 / plane);
    const std::int64_t ke = std::min<std::int64_t>(k1, (c1 - 1) / plane + 1);
    for (std::int64_t k = kb; k < ke; ++k) {
        const std::int64_t base = k * plane;
        if (o.dx == 0) {
            const std::int64_t lo = std::max(base + j0 * nx, c0), hi = std::min(base + j1 * nx, c1);
            if (lo < hi) f(lo, hi - lo);
            continue;
        }
        const std::int64_t jb = std::max<std::int64_t>(j0, (std::max(c0, base) - base) / nx);
        const std::int64_t je =
            std::min<std::int64_t>(j1, (std::min(c1, base + plane) - base + nx - 1) / nx);
        for (std::int64_t j = jb; j < je; ++j) {
            const std::int64_t line = base + j * nx;
            const std::int64_t lo = std::max(line + i0, c0), hi = std::min(line + i1, c1);
            if (lo < hi) f(lo, hi - lo);
        }
    }
}

/// for_each_inside_run over the whole box.
template <class F>
void for_each_inside_run(const Box& b, const Stencil& stencil, int d, F&& f) {
    for_each_inside_run(b, stencil, d, 0, b.cells(), std::forward<F>(f));
}

/// for_each_inside_run on a's box and stencil.
template <class T, class F>
void for_each_inside_run(const SgDiaMatrix<T>& a, int d, F&& f) {
    for_each_inside_run(a.box(), a.stencil(), d, std::forward<F>(f));
}

namespace detail {

/// p[c r^2 + i r + j] = row[c r + i] * col[c r + j] for the m cells of a run: the products
/// s_i s_j of r x r blocks, entry by entry. R > 0 fixes r at compile time (the common 2, 3, 4,
/// unrolled), R = 0 reads it from r.
template <int R>
void block_products(const double* row, const double* col, std::int64_t m, std::int64_t r,
                    double* p) {
    if constexpr (R > 0) {
        for (std::int64_t c = 0; c < m; ++c, row += R, col += R, p += R * R) {
            double ri[R], cj[R];  // in registers: the stores to p cannot change them
            for (int i = 0; i < R; ++i) ri[i] = row[i];
            for (int j = 0; j < R; ++j) cj[j] = col[j];
            for (int i = 0; i < R; ++i) {
                for (int j = 0; j < R; ++j) p[i * R + j] = ri[i] * cj[j];
            }
        }
        return;
    }
    const std::int64_t rr = r * r;
    for (std::int64_t c = 0; c < m; ++c, row += r, col += r, p += rr) {
        for (std::int64_t i = 0; i < r; ++i) {
            for (std::int64_t j = 0; j < r; ++j) p[i * r + j] = row[i] * col[j];
        }
    }
}

}  // namespace detail

/// Calls f(at, si, sj, n) for the entries of offset d whose neighbour lies inside the box, n
/// values at a time from value index `at` of the diagonal, such that si[k] * sj[k] is the
/// product s_row[i] s_col[j] (one entry per unknown: cells x block) for the row i and the
/// column j of value at + k, bit for bit; the per-value setup passes
/// (src/kernels/setup_simd.hpp, convert_simd.hpp) use the scales only through that product.
/// Scalar matrices pass runs of the vectors themselves. In r x r blocks entry (i, j) of cell c
/// couples unknown c r + i with (c + lin) r + j: si holds the products, computed into a buffer
/// of a few hundred cells, and sj ones (p * 1 = p exactly).
template <class F>
void for_each_inside_scaled_run(const SgDiaMatrix<double>& a, const std::vector<double>& s_row,
                                const std::vector<double>& s_col, int d, F&& f) {
    const Box& b = a.box();
    const Offset& o = a.stencil()[d];
    const std::int64_t lin = o.dx + std::int64_t{b.nx} * (o.dy + std::int64_t{b.ny} * o.dz);
    const std::int64_t r = a.block();
    if (r == 1) {
        for_each_inside_run(a, d, [&](std::int64_t first, std::int64_t n) {
            f(first, s_row.data() + first, s_col.data() + first + lin, n);
        });
        return;
    }
    constexpr std::int64_t kChunk = 256;  // cells per expansion (256 x 16 doubles at r = 4)
    const std::int64_t rr = r * r;
    std::vector<double> prod(static_cast<std::size_t>(kChunk * rr));
    const std::vector<double> ones(prod.size(), 1.0);
    const auto expand = r == 2   ? &detail::block_products<2>
                        : r == 3 ? &detail::block_products<3>
                        : r == 4 ? &detail::block_products<4>
                                 : &detail::block_products<0>;
    for_each_inside_run(a, d, [&](std::int64_t first, std::int64_t n) {
        for (std::int64_t c0 = 0; c0 < n; c0 += kChunk) {
            const std::int64_t m = std::min(kChunk, n - c0);
            const std::int64_t at = (first + c0) * r;
            expand(s_row.data() + at, s_col.data() + at + lin * r, m, r, prod.data());
            f((first + c0) * rr, prod.data(), ones.data(), m * rr);
        }
    });
}

/// The same with one vector s for rows and columns (s_i s_j: the symmetric scaling
/// Q^{-1/2} A Q^{-1/2}).
template <class F>
void for_each_inside_scaled_run(const SgDiaMatrix<double>& a, const std::vector<double>& s, int d,
                                F&& f) {
    for_each_inside_scaled_run(a, s, s, d, std::forward<F>(f));
}

}  // namespace mpmg
