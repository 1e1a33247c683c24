// The entries of one SG-DIA offset whose neighbour lies inside the box, as runs of consecutive
// cells: what the SIMD setup passes (src/kernels/convert_simd.hpp, setup_simd.hpp) take, one
// call per run instead of one test per cell.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "mpmg/sgdia_matrix.hpp"

namespace mpmg {

/// Calls f(first, count) for the runs of consecutive cells whose neighbour at offset d lies
/// inside the box, in increasing order (the cells of SgDiaMatrix::for_each_inside): one run per
/// plane when the offset does not move along x (the plane's inside rows are then contiguous),
/// else one per line.
template <class T, class F>
void for_each_inside_run(const SgDiaMatrix<T>& a, int d, F&& f) {
    const Box& b = a.box();
    const Offset& o = a.stencil()[d];
    const int i0 = o.dx < 0 ? 1 : 0, i1 = o.dx > 0 ? b.nx - 1 : b.nx;
    const int j0 = o.dy < 0 ? 1 : 0, j1 = o.dy > 0 ? b.ny - 1 : b.ny;
    const int k0 = o.dz < 0 ? 1 : 0, k1 = o.dz > 0 ? b.nz - 1 : b.nz;
    if (i1 <= i0 || j1 <= j0) return;
    for (int k = k0; k < k1; ++k) {
        const std::int64_t plane = std::int64_t{k} * b.ny;
        if (o.dx == 0) {
            f((plane + j0) * b.nx, std::int64_t{j1 - j0} * b.nx);
            continue;
        }
        for (int j = j0; j < j1; ++j) f((plane + j) * b.nx + i0, std::int64_t{i1 - i0});
    }
}

/// Calls f(at, si, sj, n) for the entries of offset d whose neighbour lies inside the box, n
/// values at a time from value index `at` of the diagonal, with si[k] and sj[k] the entries of
/// `s` (one per unknown: cells x block) for the row and the column of value at + k. Scalar
/// matrices pass runs of `s` itself; in r x r blocks entry (i, j) of cell c couples unknown
/// c r + i with (c + lin) r + j, and the two are expanded entry by entry into buffers of a few
/// hundred cells, so the per-value SIMD setup passes serve both.
template <class F>
void for_each_inside_scaled_run(const SgDiaMatrix<double>& a, const std::vector<double>& s, int d,
                                F&& f) {
    const Box& b = a.box();
    const Offset& o = a.stencil()[d];
    const std::int64_t lin = o.dx + std::int64_t{b.nx} * (o.dy + std::int64_t{b.ny} * o.dz);
    const std::int64_t r = a.block();
    if (r == 1) {
        for_each_inside_run(a, d, [&](std::int64_t first, std::int64_t n) {
            f(first, s.data() + first, s.data() + first + lin, n);
        });
        return;
    }
    constexpr std::int64_t kChunk = 256;  // cells per expansion (2 x 256 x 16 doubles at r = 4)
    const std::int64_t rr = r * r;
    std::vector<double> si(static_cast<std::size_t>(kChunk * rr));
    std::vector<double> sj(si.size());
    for_each_inside_run(a, d, [&](std::int64_t first, std::int64_t n) {
        for (std::int64_t c0 = 0; c0 < n; c0 += kChunk) {
            const std::int64_t m = std::min(kChunk, n - c0);
            for (std::int64_t c = 0; c < m; ++c) {
                const double* row = s.data() + (first + c0 + c) * r;
                const double* col = row + lin * r;
                double* pi = si.data() + c * rr;
                double* pj = sj.data() + c * rr;
                for (std::int64_t i = 0; i < r; ++i) {
                    for (std::int64_t j = 0; j < r; ++j) {
                        pi[i * r + j] = row[i];
                        pj[i * r + j] = col[j];
                    }
                }
            }
            f((first + c0) * rr, si.data(), sj.data(), m * rr);
        }
    });
}

}  // namespace mpmg
