// Naive AOS kernels (see aos.hpp). Per line the offsets whose neighbour line is inside the box
// are collected once; the cells 0 and nx-1 check dx, the others do not.
#include "kernels/aos.hpp"

#include "kernels/convert.hpp"

namespace mpmg::kernels {
namespace {

constexpr int kMaxDiag = 27;

/// Offsets of `line` whose neighbour line is inside: stencil index, x shift and dx.
struct LineOffsets {
    int m = 0;
    int d[kMaxDiag];
    std::int64_t shift[kMaxDiag];
    int dx[kMaxDiag];
};

void line_offsets(const SgDiaGeom& g, std::int64_t line, LineOffsets& lo) {
    const int j = static_cast<int>(line % g.ny);
    const int k = static_cast<int>(line / g.ny);
    lo.m = 0;
    for (int d = 0; d < g.ndiag; ++d) {
        const Offset& o = g.offsets[d];
        if (j + o.dy < 0 || j + o.dy >= g.ny || k + o.dz < 0 || k + o.dz >= g.nz) continue;
        lo.d[lo.m] = d;
        lo.shift[lo.m] = o.dx + std::int64_t{g.nx} * (o.dy + std::int64_t{g.ny} * o.dz);
        lo.dx[lo.m] = o.dx;
        ++lo.m;
    }
}

/// sum over the line's offsets (except `skip`) of a(c, d) x(c + shift), for cell i of the line.
template <class S, class C>
C row_sum(const SgDiaGeom& g, const LineOffsets& lo, const S* a, const C* x, std::int64_t c, int i,
          int skip) {
    const S* row = a + c * g.ndiag;
    C s = 0;
    const bool edge = i == 0 || i == g.nx - 1;
    for (int e = 0; e < lo.m; ++e) {
        if (lo.d[e] == skip) continue;
        if (edge && (i + lo.dx[e] < 0 || i + lo.dx[e] >= g.nx)) continue;
        s += to_compute<C>(row[lo.d[e]]) * x[c + lo.shift[e]];
    }
    return s;
}

}  // namespace

template <class S, class C>
void spmv_aos(const SgDiaGeom& g, const S* a, const C* x, C* y, std::int64_t line_begin,
              std::int64_t line_end) {
    LineOffsets lo;
    for (std::int64_t line = line_begin; line < line_end; ++line) {
        line_offsets(g, line, lo);
        const std::int64_t c0 = line * g.nx;
        for (int i = 0; i < g.nx; ++i) y[c0 + i] = row_sum(g, lo, a, x, c0 + i, i, -1);
    }
}

template <class S, class C>
void gs_forward_aos(const SgDiaGeom& g, const S* a, const C* b, C* x, std::int64_t line) {
    LineOffsets lo;
    line_offsets(g, line, lo);
    const std::int64_t c0 = line * g.nx;
    for (int i = 0; i < g.nx; ++i) {
        const std::int64_t c = c0 + i;
        const C s = row_sum(g, lo, a, static_cast<const C*>(x), c, i, g.center);
        x[c] = (b[c] - s) / to_compute<C>(a[c * g.ndiag + g.center]);
    }
}

template void spmv_aos<double, double>(const SgDiaGeom&, const double*, const double*, double*,
                                       std::int64_t, std::int64_t);
template void spmv_aos<float, float>(const SgDiaGeom&, const float*, const float*, float*,
                                     std::int64_t, std::int64_t);
template void spmv_aos<half, float>(const SgDiaGeom&, const half*, const float*, float*,
                                    std::int64_t, std::int64_t);
template void spmv_aos<bfloat16, float>(const SgDiaGeom&, const bfloat16*, const float*, float*,
                                        std::int64_t, std::int64_t);
template void gs_forward_aos<double, double>(const SgDiaGeom&, const double*, const double*,
                                             double*, std::int64_t);
template void gs_forward_aos<float, float>(const SgDiaGeom&, const float*, const float*, float*,
                                           std::int64_t);
template void gs_forward_aos<half, float>(const SgDiaGeom&, const half*, const float*, float*,
                                          std::int64_t);
template void gs_forward_aos<bfloat16, float>(const SgDiaGeom&, const bfloat16*, const float*,
                                              float*, std::int64_t);

}  // namespace mpmg::kernels
