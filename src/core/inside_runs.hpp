// The entries of one SG-DIA offset whose neighbour lies inside the box, as runs of consecutive
// cells: what the SIMD setup passes (src/kernels/convert_simd.hpp, setup_simd.hpp) take, one
// call per run instead of one test per cell.
#pragma once

#include <cstdint>

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

}  // namespace mpmg
