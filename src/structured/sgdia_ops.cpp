// Whole-matrix SG-DIA operations: OpenMP over lines (one contiguous block of lines per thread)
// for the products, and for Gauss-Seidel a pipelined wavefront over planes: thread t sweeps
// planes t, t+T, ... line by line, each line waiting until the previous plane has finished the
// lines up to one past it. That order reads exactly the values the sequential lexicographic
// sweep reads, so the result is bitwise identical to it for any thread count, while each thread
// streams whole planes (contiguous memory) instead of the scattered lines of a (j + 2k) front.
// Full argument: structured/gs_order.hpp.
#include "structured/sgdia_ops.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/sgdia.hpp"
#include "kernels/vector_simd.hpp"
#include "structured/gs_order.hpp"

namespace mpmg {

void window_product(const SgDiaMatrix<double>& m, const std::array<int, 3>& lo, const Box& grid,
                    const std::vector<double>& x, std::vector<double>& b) {
    const Box& sb = m.box();
    const int r = m.block();
    const std::int64_t rr = std::int64_t{r} * r;
    b.assign(static_cast<std::size_t>(sb.cells() * r), 0.0);
    // Line by line: every row's sum still runs over the offsets, then the columns, in order.
#pragma omp parallel for collapse(2) schedule(static) if (sb.cells() > (1 << 14))
    for (int k = 0; k < sb.nz; ++k) {
        for (int j = 0; j < sb.ny; ++j) {
            const std::int64_t line = (std::int64_t{k} * sb.ny + j) * sb.nx;
            double* acc = b.data() + line * r;
            for (int d = 0; d < m.stencil().size(); ++d) {
                const Offset& o = m.stencil()[d];
                const int gj = lo[1] + j + o.dy, gk = lo[2] + k + o.dz;
                if (gj < 0 || gj >= grid.ny || gk < 0 || gk >= grid.nz) continue;
                // Cells i of the line whose neighbour lies inside the grid.
                const int i0 = std::max(0, -(lo[0] + o.dx));
                const int i1 = std::min(sb.nx, grid.nx - lo[0] - o.dx);
                const double* v = m.diagonal(d) + line * rr;
                // x of the neighbour of cell i: x[first + i * r + e] (first may be negative).
                const std::int64_t first =
                    ((std::int64_t{gk} * grid.ny + gj) * grid.nx + lo[0] + o.dx) * r;
                for (int a = 0; a < r; ++a) {
                    for (int e = 0; e < r; ++e) {
                        for (int i = i0; i < i1; ++i) {
                            acc[i * r + a] += v[i * rr + a * r + e] *
                                              x[static_cast<std::size_t>(first + i * r + e)];
                        }
                    }
                }
            }
        }
    }
}

void zero_outside_box(SgDiaMatrix<double>& m) {
    const Box& b = m.box();
    const std::int64_t rr = std::int64_t{m.block()} * m.block();
    for (int d = 0; d < m.stencil().size(); ++d) {
        const Offset& o = m.stencil()[d];
        if (o == Offset{}) continue;
        double* v = m.diagonal(d);
        for (int k = 0; k < b.nz; ++k) {
            for (int j = 0; j < b.ny; ++j) {
                double* line = v + (std::int64_t{k} * b.ny + j) * b.nx * rr;
                const bool out =
                    j + o.dy < 0 || j + o.dy >= b.ny || k + o.dz < 0 || k + o.dz >= b.nz;
                if (out) {
                    std::fill_n(line, std::int64_t{b.nx} * rr, 0.0);
                } else if (o.dx != 0) {
                    std::fill_n(line + (o.dx < 0 ? 0 : b.nx - 1) * rr, rr, 0.0);
                }
            }
        }
    }
}

namespace {

/// Grids with fewer cells run serially: a parallel region and its barriers cost more than the
/// work there (about one sweep of a 16^3 scalar grid).
constexpr std::int64_t kSerialCells = 4096;

bool run_serial(const Box& box) { return box.cells() < kSerialCells || omp_get_max_threads() < 2; }

bool run_serial(const kernels::SgDiaGeom& g) { return run_serial(Box{g.nx, g.ny, g.nz}); }

/// The kernels' geometry of a view (kernels::geometry of a whole matrix).
template <class S>
kernels::SgDiaGeom geometry_of(const SgDiaView<S>& a) {
    return kernels::SgDiaGeom{a.box.nx,
                              a.box.ny,
                              a.box.nz,
                              a.block,
                              a.stencil->size(),
                              a.stencil->center(),
                              a.stencil->offsets().data(),
                              a.diag_stride,
                              a.mirror_lower && a.block == 1};
}

/// Runs f(line_begin, line_end) over the lines of the planes [planes.begin, planes.end) (all
/// by default), one contiguous block of lines per thread unless `serial`.
template <class F>
void for_lines(const kernels::SgDiaGeom& g, bool serial, F f, PlaneRange planes = {}) {
    const std::int64_t first = std::int64_t{planes.begin} * g.ny;
    const std::int64_t last = planes.end < 0 ? g.lines() : std::int64_t{planes.end} * g.ny;
    const std::int64_t lines = last - first;
    if (lines <= 0) return;
    if (serial) {
        f(first, last);
        return;
    }
#pragma omp parallel
    {
        const std::int64_t t = omp_get_thread_num();
        const std::int64_t nt = omp_get_num_threads();
        f(first + lines * t / nt, first + lines * (t + 1) / nt);
    }
}

/// gs_lines_ordered over the planes [planes.begin, planes.end) of g: run_fn gets line numbers
/// of the whole box.
template <class F>
void gs_planes_ordered(const kernels::SgDiaGeom& g, PlaneRange planes, bool forward, bool parallel,
                       F&& run_fn) {
    const int k1 = planes.end < 0 ? g.nz : planes.end;
    if (k1 <= planes.begin) return;
    const std::int64_t first = std::int64_t{planes.begin} * g.ny;
    gs_lines_ordered(g.ny, k1 - planes.begin, forward, parallel,
                     [&](std::int64_t lb, std::int64_t le) { run_fn(first + lb, first + le); });
}

/// The slabs of the block order (GsOrder::blocks) for a sweep of g: more than 1 only for the
/// whole box of a parallel grid with two planes per thread, and not for a backward sweep from
/// zero (whose deferred planes would need the zero-guess kernel's mirror image).
int block_order_slabs(const kernels::SgDiaGeom& g, PlaneRange planes, bool forward, bool zero_guess,
                      GsOrder order) {
    const bool whole = planes.begin == 0 && (planes.end < 0 || planes.end == g.nz);
    if (order != GsOrder::blocks || !whole || (zero_guess && !forward) || run_serial(g)) return 1;
    return gs_block_slabs(g.nz, omp_get_max_threads());
}

/// x = 0 on the deferred planes of the block order (slabs 1, 2, ...'s lowest): a forward sweep
/// from zero reads them (as the not yet swept values below its slab's first plane) before it
/// sweeps them, and x's memory need not hold zeros there.
template <class C>
void zero_deferred_planes(const kernels::SgDiaGeom& g, int slabs, C* x) {
    const std::int64_t plane = std::int64_t{g.nx} * g.ny * g.block;
    for (int t = 1; t < slabs; ++t) {
        std::fill_n(x + plane * gs_block_first(g.nz, slabs, t), plane, C{0});
    }
}

/// One Gauss-Seidel sweep of g's lines through lines(line_begin, line_end, zero_guess): in the
/// block order when block_order_slabs allows (the deferred planes zeroed first from zero and
/// swept with the full kernel), else in the wavefront over `planes`. Returns the slabs.
template <class C, class Lines>
int ordered_sweep(const kernels::SgDiaGeom& g, C* x, PlaneRange planes, bool forward,
                  bool zero_guess, GsOrder order, Lines&& lines) {
    const int slabs = block_order_slabs(g, planes, forward, zero_guess, order);
    if (slabs > 1) {
        if (zero_guess) zero_deferred_planes(g, slabs, x);
        gs_lines_blocks(g.ny, g.nz, slabs, forward,
                        [&](std::int64_t lb, std::int64_t le, bool deferred) {
                            lines(lb, le, zero_guess && !deferred);
                        });
        return slabs;
    }
    gs_planes_ordered(g, planes, forward, !run_serial(g),
                      [&](std::int64_t lb, std::int64_t le) { lines(lb, le, zero_guess); });
    return 1;
}

/// y = A x over all lines; with `mirror_lower` the offsets before the centre read their
/// mirrors' values (kernels::SgDiaGeom::mirror_lower).
template <class S, class C>
void spmv_lines(const SgDiaView<S>& a, const C* x, C* y, bool mirror_lower) {
    kernels::SgDiaGeom g = geometry_of(a);
    g.mirror_lower = mirror_lower;
    const S* v = a.values;
    for_lines(g, run_serial(a.box),
              [&](std::int64_t lb, std::int64_t le) { kernels::spmv(g, v, x, y, lb, le); });
}

}  // namespace

template <class S, class C>
void spmv(const SgDiaView<S>& a, const C* x, C* y) {
    spmv_lines(a, x, y, false);
}

template <class S, class C>
void spmv_mirrored(const SgDiaView<S>& a, const C* x, C* y) {
    spmv_lines(a, x, y, true);
}

template <class S, class C>
double spmv_dot(const SgDiaView<S>& a, const C* x, C* y, bool mirror_lower, double scale) {
    constexpr std::int64_t kGroupRows = 4096;  // per dot: x and y (32 KiB each) still in L2
    kernels::SgDiaGeom g = geometry_of(a);
    g.mirror_lower = mirror_lower;
    const S* v = a.values;
    const std::int64_t line_rows = std::int64_t{g.nx} * g.block;
    const std::int64_t group = std::max<std::int64_t>(1, kGroupRows / line_rows);
    const C c = static_cast<C>(scale);
    const auto lines_dot = [&](std::int64_t lb, std::int64_t le) {
        double s = 0.0;
        for (std::int64_t l0 = lb; l0 < le; l0 += group) {
            const std::int64_t l1 = std::min(le, l0 + group);
            kernels::spmv(g, v, x, y, l0, l1);
            C* yl = y + l0 * line_rows;
            const std::int64_t n = (l1 - l0) * line_rows;
            if (scale != 1.0) {
                for (std::int64_t i = 0; i < n; ++i) yl[i] *= c;
            }
            s += kernels::dot(x + l0 * line_rows, yl, n);
        }
        return s;
    };
    if (run_serial(a.box)) return lines_dot(0, g.lines());
    double sum = 0.0;
#pragma omp parallel reduction(+ : sum)
    {
        const std::int64_t t = omp_get_thread_num();
        const std::int64_t nt = omp_get_num_threads();
        sum += lines_dot(g.lines() * t / nt, g.lines() * (t + 1) / nt);
    }
    return sum;
}

namespace {

std::uint64_t value_bits(double v) { return std::bit_cast<std::uint64_t>(v); }
std::uint64_t value_bits(float v) { return std::bit_cast<std::uint32_t>(v); }
std::uint64_t value_bits(half v) { return v.bits; }
std::uint64_t value_bits(bfloat16 v) { return v.bits; }

}  // namespace

template <class S>
bool exactly_symmetric(const SgDiaView<S>& a) {
    const Stencil& st = *a.stencil;
    const int nd = st.size();
    // The offsets are in lexicographic order, so a symmetric stencil has -o at nd - 1 - d.
    for (int d = 0; d < nd; ++d) {
        const Offset& o = st[d];
        if (st.find(Offset{-o.dx, -o.dy, -o.dz}) != nd - 1 - d) return false;
    }
    const kernels::SgDiaGeom g = geometry_of(a);
    const int r = a.block;
    const std::int64_t rr = std::int64_t{r} * r;
    const S* v = a.values;
    // Offset after offset over a plane's lines (two value streams at a time), one plane after
    // the other: all offsets line by line took 96 ms on laplace27e8 n = 128 against 37 ms.
    std::atomic<bool> same{true};
    const std::int64_t planes = g.nz;
    const auto check_planes = [&](std::int64_t k0, std::int64_t k1) {
        for (std::int64_t k = k0; k < k1 && same.load(std::memory_order_relaxed); ++k) {
            std::uint64_t diff = 0;
            // The centre (its blocks against their own transposes; nothing to compare at r = 1)
            // and every offset after it against its mirror.
            for (int d = r == 1 ? g.center + 1 : g.center; d < nd; ++d) {
                const Offset& o = st[d];
                if (k + o.dz < 0 || k + o.dz >= g.nz) continue;
                const std::int64_t shift =
                    o.dx + std::int64_t{g.nx} * (o.dy + std::int64_t{g.ny} * o.dz);
                const S* p = v + d * g.diag_stride;
                const S* q = v + (nd - 1 - d) * g.diag_stride;
                const int i0 = std::max(0, -o.dx), i1 = g.nx - std::max(0, o.dx);
                for (int j = std::max(0, -o.dy); j < g.ny - std::max(0, o.dy); ++j) {
                    const std::int64_t c0 = (k * g.ny + j) * g.nx;
                    if (r == 1) {
                        for (std::int64_t c = c0 + i0; c < c0 + i1; ++c) {
                            diff |= value_bits(p[c]) ^ value_bits(q[c + shift]);
                        }
                        continue;
                    }
                    for (std::int64_t c = c0 + i0; c < c0 + i1; ++c) {
                        for (int ra = 0; ra < r; ++ra) {
                            for (int rb = 0; rb < r; ++rb) {
                                diff |= value_bits(p[c * rr + ra * r + rb]) ^
                                        value_bits(q[(c + shift) * rr + rb * r + ra]);
                            }
                        }
                    }
                }
            }
            if (diff != 0) same.store(false, std::memory_order_relaxed);
        }
    };
    if (run_serial(a.box)) {
        check_planes(0, planes);
    } else {
#pragma omp parallel
        {
            const std::int64_t t = omp_get_thread_num();
            const std::int64_t nt = omp_get_num_threads();
            check_planes(planes * t / nt, planes * (t + 1) / nt);
        }
    }
    return same.load();
}

template <class S, class C>
void residual(const SgDiaView<S>& a, const C* b, const C* x, C* r, PlaneRange planes) {
    const kernels::SgDiaGeom g = geometry_of(a);
    const S* v = a.values;
    for_lines(
        g, run_serial(a.box),
        [&](std::int64_t lb, std::int64_t le) { kernels::residual(g, v, b, x, r, lb, le); },
        planes);
}

template <class S, class C>
void upper_residual(const SgDiaView<S>& a, const C* x, C* r, PlaneRange planes) {
    const kernels::SgDiaGeom g = geometry_of(a);
    const S* v = a.values;
    for_lines(
        g, run_serial(a.box),
        [&](std::int64_t lb, std::int64_t le) { kernels::upper_residual(g, v, x, r, lb, le); },
        planes);
}

template <class S, class C>
void plane_residual(const SgDiaView<S>& a, const C* b, const C* x, C* r_plane, int z, bool upper) {
    const kernels::SgDiaGeom g = geometry_of(a);
    const std::int64_t first = std::int64_t{z} * g.ny;
    if (upper) {
        kernels::upper_residual(g, a.values, x, r_plane, first, first + g.ny, first);
    } else {
        kernels::residual(g, a.values, b, x, r_plane, first, first + g.ny, first);
    }
}

template <class S, class C>
void jacobi(const SgDiaView<S>& a, const C* b, const C* x, C* x_new, C omega) {
    const kernels::SgDiaGeom g = geometry_of(a);
    const S* v = a.values;
    for_lines(g, run_serial(a.box), [&](std::int64_t lb, std::int64_t le) {
        kernels::jacobi(g, v, b, x, x_new, omega, lb, le);
    });
}

// Gauss-Seidel: the pipelined plane wavefront of structured/gs_order.hpp (ordering, and why
// it reproduces the sequential sweep bitwise, documented there); each run of lines is one
// kernels::gs_lines call, sequential in i.
template <class S, class C>
int gs_sweep(const SgDiaView<S>& a, const C* b, C* x, bool forward, bool zero_guess,
             PlaneRange planes, GsOrder order) {
    const kernels::SgDiaGeom g = geometry_of(a);
    const S* v = a.values;
    return ordered_sweep(g, x, planes, forward, zero_guess, order,
                         [&](std::int64_t lb, std::int64_t le, bool zero) {
                             kernels::gs_lines(g, v, b, x, lb, le, forward, zero);
                         });
}

template <class S, class C>
int gs_sweep_prepared(const SgDiaView<S>& a, const C* b, C* x, bool forward, GsOrder order,
                      const std::function<void(int, int)>& prepare) {
    const kernels::SgDiaGeom g = geometry_of(a);
    const S* v = a.values;
    const int nz = g.nz;
    const int slabs = block_order_slabs(g, {}, forward, false, order);
    if (slabs == 1 && !run_serial(g)) {  // the wavefront: threads on neighbouring planes
        prepare(0, nz);
        return gs_sweep(a, b, x, forward, false, {}, order);
    }
    // done[z]: plane z prepared. A thread marks only the planes of its own slab; the planes
    // around the deferred ones, which two slabs read, are prepared before the threads start.
    std::vector<char> done(static_cast<std::size_t>(nz), 0);
    const auto ensure = [&](int z) {
        if (z < 0 || z >= nz || done[static_cast<std::size_t>(z)] != 0) return;
        prepare(z, z + 1);
        done[static_cast<std::size_t>(z)] = 1;
    };
    for (int t = 1; t < slabs; ++t) {
        const int q = gs_block_first(nz, slabs, t);
        for (int z = q - 1; z <= q + 1; ++z) ensure(z);
    }
    const int step = forward ? 1 : -1;
    return ordered_sweep(g, x, {}, forward, false, order,
                         [&](std::int64_t lb, std::int64_t le, bool zero) {
                             // Whole planes here (one run, or a slab's planes): plane by plane
                             // in the sweep's order, each with the next one prepared.
                             const int z0 = static_cast<int>(lb / g.ny);
                             const int z1 = static_cast<int>((le - 1) / g.ny);
                             for (int z = forward ? z0 : z1; z >= z0 && z <= z1; z += step) {
                                 ensure(z);
                                 ensure(z + step);
                                 const std::int64_t first = std::int64_t{z} * g.ny;
                                 kernels::gs_lines(g, v, b, x, std::max(lb, first),
                                                   std::min(le, first + g.ny), forward, zero);
                             }
                         });
}

template <class S, class C>
void spmv(const kernels::BlockSoa<S, C>& a, const C* x, C* y) {
    const kernels::SgDiaGeom g = a.geom();
    for_lines(g, run_serial(g),
              [&](std::int64_t lb, std::int64_t le) { kernels::block_spmv(a, x, y, lb, le); });
}

template <class S, class C>
void residual(const kernels::BlockSoa<S, C>& a, const C* b, const C* x, C* r) {
    const kernels::SgDiaGeom g = a.geom();
    for_lines(g, run_serial(g), [&](std::int64_t lb, std::int64_t le) {
        kernels::block_residual(a, b, x, r, lb, le);
    });
}

template <class S, class C>
void jacobi(const kernels::BlockSoa<S, C>& a, const C* b, const C* x, C* x_new, C omega) {
    const kernels::SgDiaGeom g = a.geom();
    for_lines(g, run_serial(g), [&](std::int64_t lb, std::int64_t le) {
        kernels::block_jacobi(a, b, x, x_new, omega, lb, le);
    });
}

template <class S, class C>
int gs_sweep(const kernels::BlockSoa<S, C>& a, const C* b, C* x, bool forward, bool zero_guess,
             PlaneRange planes, GsOrder order) {
    const kernels::SgDiaGeom g = a.geom();
    const auto lines = [&](std::int64_t lb, std::int64_t le, bool zero) {
        for (std::int64_t s = 0; s < le - lb; ++s) {
            kernels::block_gs_line(a, b, x, forward ? lb + s : le - 1 - s, forward, zero);
        }
    };
    return ordered_sweep(g, x, planes, forward, zero_guess, order, lines);
}

// Explicit instantiations: exactly the supported (storage, compute) pairs.

template void spmv<double, double>(const SgDiaView<double>&, const double*, double*);
template void spmv<float, double>(const SgDiaView<float>&, const double*, double*);
template void spmv<half, double>(const SgDiaView<half>&, const double*, double*);
template void spmv<bfloat16, double>(const SgDiaView<bfloat16>&, const double*, double*);
template void spmv<float, float>(const SgDiaView<float>&, const float*, float*);
template void spmv<half, float>(const SgDiaView<half>&, const float*, float*);
template void spmv<bfloat16, float>(const SgDiaView<bfloat16>&, const float*, float*);

template bool exactly_symmetric<double>(const SgDiaView<double>&);
template bool exactly_symmetric<float>(const SgDiaView<float>&);
template bool exactly_symmetric<half>(const SgDiaView<half>&);
template bool exactly_symmetric<bfloat16>(const SgDiaView<bfloat16>&);

template void spmv_mirrored<double, double>(const SgDiaView<double>&, const double*, double*);
template double spmv_dot<double, double>(const SgDiaView<double>&, const double*, double*, bool,
                                         double);
template double spmv_dot<float, double>(const SgDiaView<float>&, const double*, double*, bool,
                                        double);
template double spmv_dot<half, double>(const SgDiaView<half>&, const double*, double*, bool,
                                       double);
template double spmv_dot<bfloat16, double>(const SgDiaView<bfloat16>&, const double*, double*, bool,
                                           double);
template double spmv_dot<bfloat16, float>(const SgDiaView<bfloat16>&, const float*, float*, bool,
                                          double);
template double spmv_dot<float, float>(const SgDiaView<float>&, const float*, float*, bool, double);
template double spmv_dot<half, float>(const SgDiaView<half>&, const float*, float*, bool, double);
template void spmv_mirrored<float, double>(const SgDiaView<float>&, const double*, double*);
template void spmv_mirrored<half, double>(const SgDiaView<half>&, const double*, double*);
template void spmv_mirrored<float, float>(const SgDiaView<float>&, const float*, float*);
template void spmv_mirrored<half, float>(const SgDiaView<half>&, const float*, float*);

#define MPMG_PLANE_OPS(S, C)                                                                    \
    template void residual<S, C>(const SgDiaView<S>&, const C*, const C*, C*, PlaneRange);      \
    template void upper_residual<S, C>(const SgDiaView<S>&, const C*, C*, PlaneRange);          \
    template void plane_residual<S, C>(const SgDiaView<S>&, const C*, const C*, C*, int, bool); \
    template int gs_sweep<S, C>(const SgDiaView<S>&, const C*, C*, bool, bool, PlaneRange,      \
                                GsOrder);                                                       \
    template int gs_sweep_prepared<S, C>(const SgDiaView<S>&, const C*, C*, bool, GsOrder,      \
                                         const std::function<void(int, int)>&);
MPMG_PLANE_OPS(double, double)
MPMG_PLANE_OPS(float, double)
MPMG_PLANE_OPS(half, double)
MPMG_PLANE_OPS(bfloat16, double)
MPMG_PLANE_OPS(float, float)
MPMG_PLANE_OPS(half, float)
MPMG_PLANE_OPS(bfloat16, float)
#undef MPMG_PLANE_OPS

template void jacobi<double, double>(const SgDiaView<double>&, const double*, const double*,
                                     double*, double);
template void jacobi<float, double>(const SgDiaView<float>&, const double*, const double*, double*,
                                    double);
template void jacobi<half, double>(const SgDiaView<half>&, const double*, const double*, double*,
                                   double);
template void jacobi<bfloat16, double>(const SgDiaView<bfloat16>&, const double*, const double*,
                                       double*, double);
template void jacobi<float, float>(const SgDiaView<float>&, const float*, const float*, float*,
                                   float);
template void jacobi<half, float>(const SgDiaView<half>&, const float*, const float*, float*,
                                  float);
template void jacobi<bfloat16, float>(const SgDiaView<bfloat16>&, const float*, const float*,
                                      float*, float);

// Block (BlockSoa) operations.

template void spmv<double, double>(const kernels::BlockSoa<double, double>&, const double*,
                                   double*);
template void spmv<float, double>(const kernels::BlockSoa<float, double>&, const double*, double*);
template void spmv<half, double>(const kernels::BlockSoa<half, double>&, const double*, double*);
template void spmv<bfloat16, double>(const kernels::BlockSoa<bfloat16, double>&, const double*,
                                     double*);
template void spmv<float, float>(const kernels::BlockSoa<float, float>&, const float*, float*);
template void spmv<half, float>(const kernels::BlockSoa<half, float>&, const float*, float*);
template void spmv<bfloat16, float>(const kernels::BlockSoa<bfloat16, float>&, const float*,
                                    float*);

template void residual<double, double>(const kernels::BlockSoa<double, double>&, const double*,
                                       const double*, double*);
template void residual<float, double>(const kernels::BlockSoa<float, double>&, const double*,
                                      const double*, double*);
template void residual<half, double>(const kernels::BlockSoa<half, double>&, const double*,
                                     const double*, double*);
template void residual<bfloat16, double>(const kernels::BlockSoa<bfloat16, double>&, const double*,
                                         const double*, double*);
template void residual<float, float>(const kernels::BlockSoa<float, float>&, const float*,
                                     const float*, float*);
template void residual<half, float>(const kernels::BlockSoa<half, float>&, const float*,
                                    const float*, float*);
template void residual<bfloat16, float>(const kernels::BlockSoa<bfloat16, float>&, const float*,
                                        const float*, float*);

template void jacobi<double, double>(const kernels::BlockSoa<double, double>&, const double*,
                                     const double*, double*, double);
template void jacobi<float, double>(const kernels::BlockSoa<float, double>&, const double*,
                                    const double*, double*, double);
template void jacobi<half, double>(const kernels::BlockSoa<half, double>&, const double*,
                                   const double*, double*, double);
template void jacobi<bfloat16, double>(const kernels::BlockSoa<bfloat16, double>&, const double*,
                                       const double*, double*, double);
template void jacobi<float, float>(const kernels::BlockSoa<float, float>&, const float*,
                                   const float*, float*, float);
template void jacobi<half, float>(const kernels::BlockSoa<half, float>&, const float*, const float*,
                                  float*, float);
template void jacobi<bfloat16, float>(const kernels::BlockSoa<bfloat16, float>&, const float*,
                                      const float*, float*, float);

template int gs_sweep<double, double>(const kernels::BlockSoa<double, double>&, const double*,
                                      double*, bool, bool, PlaneRange, GsOrder);
template int gs_sweep<float, double>(const kernels::BlockSoa<float, double>&, const double*,
                                     double*, bool, bool, PlaneRange, GsOrder);
template int gs_sweep<half, double>(const kernels::BlockSoa<half, double>&, const double*, double*,
                                    bool, bool, PlaneRange, GsOrder);
template int gs_sweep<bfloat16, double>(const kernels::BlockSoa<bfloat16, double>&, const double*,
                                        double*, bool, bool, PlaneRange, GsOrder);
template int gs_sweep<float, float>(const kernels::BlockSoa<float, float>&, const float*, float*,
                                    bool, bool, PlaneRange, GsOrder);
template int gs_sweep<half, float>(const kernels::BlockSoa<half, float>&, const float*, float*,
                                   bool, bool, PlaneRange, GsOrder);
template int gs_sweep<bfloat16, float>(const kernels::BlockSoa<bfloat16, float>&, const float*,
                                       float*, bool, bool, PlaneRange, GsOrder);

}  // namespace mpmg
