// Whole-matrix SG-DIA operations, parallel over lines with OpenMP (the kernels in
// kernels/sgdia.hpp do the per-line work). Vectors have a.rows() entries of compute type C.
// Each takes an SgDiaView: a whole matrix, or a window of one read in place (sgdia_view.hpp).
// Supported (S, C) pairs are those of kernels/sgdia.hpp; any other pair fails to link.
#pragma once

#include <array>
#include <functional>
#include <vector>

#include "core/float16.hpp"
#include "kernels/sgdia_block.hpp"
#include "mpmg/sgdia_matrix.hpp"
#include "structured/gs_order.hpp"
#include "structured/sgdia_view.hpp"

namespace mpmg {

/// y = A x.
/// b = A x on the cells of `m`, the rows of a window of `grid` whose first cell is the grid's
/// cell `lo`, with x given on the whole grid (block values per cell): exact on the cells whose
/// neighbours all lie in m's box (one cell inside it, or on the grid's boundary). Each row is
/// summed by the same scalar loop (offsets in stencil order, then columns; the order of the
/// CSR product), so a window's b is bit for bit the whole grid's. (The SIMD product's sums
/// depend on a cell's place in its line.)
void window_product(const SgDiaMatrix<double>& m, const std::array<int, 3>& lo, const Box& grid,
                    const std::vector<double>& x, std::vector<double>& b);

/// Zeroes the entries whose neighbour lies outside the box (SG-DIA's convention, for a matrix
/// whose rows were copied or assembled with them).
void zero_outside_box(SgDiaMatrix<double>& a);

template <class S, class C>
void spmv(const SgDiaView<S>& a, const C* x, C* y);

/// True when A is its own transpose bit for bit: a symmetric stencil, and A(c, c + s) ==
/// A(c + s, c) for every pair of cells inside the box (r x r blocks: each block the transpose
/// of its mirror's, centre blocks symmetric). Values whose neighbour lies outside the box are
/// not compared. One pass over A's values, offset after offset, parallel over planes; stops
/// soon after the first difference. S: double, float or half.
template <class S>
bool exactly_symmetric(const SgDiaView<S>& a);

/// y = A x reading only the centre and the offsets after it (kernels::SgDiaGeom::mirror_lower).
/// For a matrix that exactly_symmetric accepted (or an exact or truncated copy of one: both keep
/// equal values equal) it is bit for bit spmv(a, x, y), from about half of the value bytes.
template <class S, class C>
void spmv_mirrored(const SgDiaView<S>& a, const C* x, C* y);

/// y = scale (A x) (spmv, or spmv_mirrored with `mirror_lower`; scale 1: no multiply) and
/// returns (x, y), accumulated in double: each thread's lines in groups of about 4096 rows,
/// each group's products summed (kernels::dot) while its x and y are in cache, instead of a
/// second pass over both vectors. The sum's order depends on the grouping, so its last bits
/// may differ from dot(x, y).
template <class S, class C>
double spmv_dot(const SgDiaView<S>& a, const C* x, C* y, bool mirror_lower, double scale);

/// The planes k = begin .. end-1 of a box (end -1: to the last): what the operations below
/// that take one restrict themselves to (the pieces of a distributed level's permuted-order
/// Gauss-Seidel sweep, multigrid/level.cpp).
struct PlaneRange {
    int begin = 0;
    int end = -1;
};

/// r = b - A x (on the rows of `planes`).
template <class S, class C>
void residual(const SgDiaView<S>& a, const C* b, const C* x, C* r, PlaneRange planes = {});

/// r = -U x (kernels::upper_residual): equals b - A x when x is the result of one forward
/// Gauss-Seidel sweep on b from x = 0, at half the matrix traffic.
template <class S, class C>
void upper_residual(const SgDiaView<S>& a, const C* x, C* r, PlaneRange planes = {});

/// The residual of plane z alone, into r_plane (nx ny block values: that plane only), on the
/// calling thread: b - A x, or with `upper` -U x (b unread). Bit for bit the plane's values of
/// residual / upper_residual, for a consumer that takes the residual plane by plane while it
/// is in cache (Transfer::restrict_planes) instead of from a whole vector.
template <class S, class C>
void plane_residual(const SgDiaView<S>& a, const C* b, const C* x, C* r_plane, int z, bool upper);

/// x_new = x + omega D^{-1} (b - A x), D the point-block diagonal (x_new and x distinct).
template <class S, class C>
void jacobi(const SgDiaView<S>& a, const C* b, const C* x, C* x_new, C omega);

/// One lexicographic (point-block) Gauss-Seidel sweep in place: cells in increasing index if
/// `forward`, else decreasing. Parallel by a wavefront over lines, and bitwise identical to the
/// sequential sweep for any thread count (see sgdia_ops.cpp). With `planes`, only their cells
/// are swept (reading the others' current values). With GsOrder::blocks (whole box only) the
/// cells go in the block order of structured/gs_order.hpp instead, when the box is parallel and
/// deep enough for two planes per thread. Returns the slabs of that order (1: lexicographic).
/// With `zero_guess` (x = 0 on entry, x's memory need not hold the zeros) a forward sweep in
/// the block order writes zeros to the deferred planes first; a backward one runs the
/// wavefront.
template <class S, class C>
int gs_sweep(const SgDiaView<S>& a, const C* b, C* x, bool forward, bool zero_guess = false,
             PlaneRange planes = {}, GsOrder order = GsOrder::wavefront);

/// gs_sweep of the whole box (x not zero) after prepare(z0, z1) has written x on its planes
/// z0 .. z1 - 1, such as a coarse-grid correction (Transfer::interpolate_add_planes): each plane
/// once, just before the sweep first reads it, instead of a pass over all of x before the
/// sweep (which then reads x back from memory). On one thread one plane ahead of the sweep; in
/// the block order the planes around the deferred ones first, then one plane ahead in each
/// slab; in the wavefront all planes first. prepare may run on several threads at once, on
/// other planes, and must touch x on its planes only. Bit for bit prepare(0, nz) then
/// gs_sweep(a, b, x, forward, false, {}, order). Returns the slabs, as gs_sweep.
template <class S, class C>
int gs_sweep_prepared(const SgDiaView<S>& a, const C* b, C* x, bool forward, GsOrder order,
                      const std::function<void(int, int)>& prepare);

// The operations above on a whole matrix (template arguments are not deduced through the
// view's implicit conversion).
template <class S, class C>
void spmv(const SgDiaMatrix<S>& a, const C* x, C* y) {
    spmv(SgDiaView<S>(a), x, y);
}
template <class S>
bool exactly_symmetric(const SgDiaMatrix<S>& a) {
    return exactly_symmetric(SgDiaView<S>(a));
}
template <class S, class C>
void spmv_mirrored(const SgDiaMatrix<S>& a, const C* x, C* y) {
    spmv_mirrored(SgDiaView<S>(a), x, y);
}
template <class S, class C>
double spmv_dot(const SgDiaMatrix<S>& a, const C* x, C* y, bool mirror_lower, double scale) {
    return spmv_dot(SgDiaView<S>(a), x, y, mirror_lower, scale);
}
template <class S, class C>
void residual(const SgDiaMatrix<S>& a, const C* b, const C* x, C* r, PlaneRange planes = {}) {
    residual(SgDiaView<S>(a), b, x, r, planes);
}
template <class S, class C>
void upper_residual(const SgDiaMatrix<S>& a, const C* x, C* r, PlaneRange planes = {}) {
    upper_residual(SgDiaView<S>(a), x, r, planes);
}
template <class S, class C>
void jacobi(const SgDiaMatrix<S>& a, const C* b, const C* x, C* x_new, C omega) {
    jacobi(SgDiaView<S>(a), b, x, x_new, omega);
}
template <class S, class C>
int gs_sweep(const SgDiaMatrix<S>& a, const C* b, C* x, bool forward, bool zero_guess = false,
             PlaneRange planes = {}, GsOrder order = GsOrder::wavefront) {
    return gs_sweep(SgDiaView<S>(a), b, x, forward, zero_guess, planes, order);
}

// The same four operations on the re-laid-out copy of an r x r block matrix (r = 2..4) that the
// block SIMD kernels use (kernels/sgdia_block.hpp); same parallelisation, and the wavefront
// Gauss-Seidel is again bitwise identical to the sequential sweep.
template <class S, class C>
void spmv(const kernels::BlockSoa<S, C>& a, const C* x, C* y);
template <class S, class C>
void residual(const kernels::BlockSoa<S, C>& a, const C* b, const C* x, C* r);
template <class S, class C>
void jacobi(const kernels::BlockSoa<S, C>& a, const C* b, const C* x, C* x_new, C omega);
template <class S, class C>
int gs_sweep(const kernels::BlockSoa<S, C>& a, const C* b, C* x, bool forward,
             bool zero_guess = false, PlaneRange planes = {}, GsOrder order = GsOrder::wavefront);

}  // namespace mpmg
