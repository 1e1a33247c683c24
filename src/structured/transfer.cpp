// Directional restriction and interpolation (ICPP'24 §4.1; PFMG-style directional steps).
// A box is viewed around direction `dir` as lines: cell = (o * n + f) * inner + in, where f is
// the index along `dir`, `inner` the cells below `dir` and `outer` the cells above it, so one
// loop nest serves all three directions and the inner loop has unit stride.
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <functional>
#include <type_traits>
#include <utility>

#include "kernels/transfer_simd.hpp"
#include "mpmg/errors.hpp"
#include "structured/coarsen.hpp"

namespace mpmg {

namespace {

/// Grids with fewer cells than this are transferred serially (thread start-up dominates).
constexpr std::int64_t kParallelCells = std::int64_t{1} << 15;

struct Lines {
    std::int64_t outer = 1;  ///< cells above `dir` (product of higher extents)
    std::int64_t n = 1;      ///< fine extent along `dir`
    std::int64_t nc = 0;     ///< coarse extent along `dir`
    std::int64_t inner = 1;  ///< cells below `dir` (product of lower extents)
};

Lines lines(const DirectionalTransfer& s) {
    const Box& b = s.fine;
    Lines l;
    l.n = b.extent(s.dir);
    l.nc = l.n / 2;
    l.inner = s.dir == 0 ? 1 : s.dir == 1 ? std::int64_t{b.nx} : std::int64_t{b.nx} * b.ny;
    l.outer = s.dir == 0 ? std::int64_t{b.ny} * b.nz : s.dir == 1 ? std::int64_t{b.nz} : 1;
    return l;
}

template <class Out>
void store(Out& y, double v, bool add) {
    y = add ? static_cast<Out>(static_cast<double>(y) + v) : static_cast<Out>(v);
}

/// prolong_step along x for scalar unknowns: one tight loop per line of unit stride (the
/// general loop nest below would handle one cell per iteration of its (o, f) loops).
template <class In, class Out, bool Add>
void prolong_step_x(const DirectionalTransfer& s, const Lines& l, const In* coarse, Out* fine) {
    const double* wl_all = s.w_left.empty() ? nullptr : s.w_left.data();
    const double* wr_all = s.w_right.empty() ? nullptr : s.w_right.data();
#pragma omp parallel for schedule(static) if (s.fine.cells() > kParallelCells)
    for (std::int64_t o = 0; o < l.outer; ++o) {
        const In* x = coarse + o * l.nc;
        Out* y = fine + o * l.n;
        const std::int64_t cell0 = o * l.n;
        // Even fine index 2 ic: (1/2 or w_left) x[ic-1] + (1/2 or w_right) x[ic], absent
        // neighbours zero; odd 2 ic + 1: x[ic].
        const auto even = [&](std::int64_t ic) {
            const double xl = ic >= 1 ? static_cast<double>(x[ic - 1]) : 0.0;
            const double xr = ic < l.nc ? static_cast<double>(x[ic]) : 0.0;
            if (wl_all == nullptr && wr_all == nullptr) return 0.5 * xl + 0.5 * xr;
            const std::int64_t c = cell0 + 2 * ic;
            return (wl_all ? wl_all[c] : 0.5) * xl + (wr_all ? wr_all[c] : 0.5) * xr;
        };
        store(y[0], even(0), Add);
        if (wl_all == nullptr && wr_all == nullptr) {
            for (std::int64_t ic = 1; ic < l.nc; ++ic) {
                store(y[2 * ic - 1], static_cast<double>(x[ic - 1]), Add);
                store(y[2 * ic],
                      0.5 * static_cast<double>(x[ic - 1]) + 0.5 * static_cast<double>(x[ic]), Add);
            }
        } else {
            for (std::int64_t ic = 1; ic < l.nc; ++ic) {
                store(y[2 * ic - 1], static_cast<double>(x[ic - 1]), Add);
                store(y[2 * ic], even(ic), Add);
            }
        }
        store(y[2 * l.nc - 1], static_cast<double>(x[l.nc - 1]), Add);
        if (l.n % 2 == 1) store(y[l.n - 1], even(l.nc), Add);
    }
}

/// restrict_step along x for scalar unknowns (see prolong_step_x).
template <class In, class Out>
void restrict_step_x(const DirectionalTransfer& s, const Lines& l, const In* fine, Out* coarse) {
    const bool uniform = s.w_left.empty() && s.w_right.empty();
    const std::int64_t full = (l.n - 1) / 2;  // coarse indices whose 2 ic + 2 lies inside
#pragma omp parallel for schedule(static) if (s.fine.cells() > kParallelCells)
    for (std::int64_t o = 0; o < l.outer; ++o) {
        const In* x = fine + o * l.n;
        Out* y = coarse + o * l.nc;
        const std::int64_t cell0 = o * l.n;
        // The order of the general loop nest's operations: x1 + w_r x0 + w_l x2.
        if (uniform) {
            for (std::int64_t ic = 0; ic < full; ++ic) {
                y[ic] = static_cast<Out>(static_cast<double>(x[2 * ic + 1]) +
                                         0.5 * static_cast<double>(x[2 * ic]) +
                                         0.5 * static_cast<double>(x[2 * ic + 2]));
            }
        } else {
            for (std::int64_t ic = 0; ic < full; ++ic) {
                const std::int64_t f = 2 * ic;
                y[ic] = static_cast<Out>(static_cast<double>(x[f + 1]) +
                                         s.right(cell0 + f) * static_cast<double>(x[f]) +
                                         s.left(cell0 + f + 2) * static_cast<double>(x[f + 2]));
            }
        }
        for (std::int64_t ic = full; ic < l.nc; ++ic) {
            const std::int64_t f = 2 * ic;
            y[ic] = static_cast<Out>(static_cast<double>(x[f + 1]) +
                                     s.right(cell0 + f) * static_cast<double>(x[f]) + 0.0);
        }
    }
}

/// fine = P_s coarse (Add = false) or fine += P_s coarse (Add = true).
template <class In, class Out, bool Add>
void prolong_step(const DirectionalTransfer& s, const In* coarse, Out* fine) {
    const Lines l = lines(s);
    const std::int64_t r = s.block;
    if (l.inner == 1 && r == 1) {
        prolong_step_x<In, Out, Add>(s, l, coarse, fine);
        return;
    }
    const std::int64_t len = l.inner * r;  // values of one (o, f) plane segment
#pragma omp parallel for collapse(2) schedule(static) if (s.fine.cells() > kParallelCells)
    for (std::int64_t o = 0; o < l.outer; ++o) {
        for (std::int64_t f = 0; f < l.n; ++f) {
            const std::int64_t cell0 = (o * l.n + f) * l.inner;
            Out* y = fine + cell0 * r;
            if (f % 2 == 1) {
                const In* x = coarse + (o * l.nc + (f - 1) / 2) * len;
                for (std::int64_t q = 0; q < len; ++q) store(y[q], static_cast<double>(x[q]), Add);
                continue;
            }
            const std::int64_t ic = f / 2;
            const In* xl = ic >= 1 ? coarse + (o * l.nc + ic - 1) * len : nullptr;
            const In* xr = ic < l.nc ? coarse + (o * l.nc + ic) * len : nullptr;
            if (r == 1) {  // the loop below, branch-free inside
                const double* wl = s.w_left.empty() ? nullptr : s.w_left.data() + cell0;
                const double* wr = s.w_right.empty() ? nullptr : s.w_right.data() + cell0;
                if (xl != nullptr && xr != nullptr) {
                    for (std::int64_t q = 0; q < len; ++q) {
                        store(y[q],
                              0.0 + (wl ? wl[q] : 0.5) * static_cast<double>(xl[q]) +
                                  (wr ? wr[q] : 0.5) * static_cast<double>(xr[q]),
                              Add);
                    }
                } else {
                    const In* x1 = xl != nullptr ? xl : xr;
                    const double* w1 = xl != nullptr ? wl : wr;
                    for (std::int64_t q = 0; q < len; ++q)
                        store(y[q], 0.0 + (w1 ? w1[q] : 0.5) * static_cast<double>(x1[q]), Add);
                }
                continue;
            }
            for (std::int64_t in = 0; in < l.inner; ++in) {
                const double wl = xl ? s.left(cell0 + in) : 0.0;
                const double wr = xr ? s.right(cell0 + in) : 0.0;
                for (std::int64_t a = 0; a < r; ++a) {
                    const std::int64_t q = in * r + a;
                    double v = 0.0;
                    if (xl) v += wl * static_cast<double>(xl[q]);
                    if (xr) v += wr * static_cast<double>(xr[q]);
                    store(y[q], v, Add);
                }
            }
        }
    }
}

/// coarse = P_s^T fine.
template <class In, class Out>
void restrict_step(const DirectionalTransfer& s, const In* fine, Out* coarse) {
    const Lines l = lines(s);
    const std::int64_t r = s.block;
    if (l.inner == 1 && r == 1) {
        restrict_step_x(s, l, fine, coarse);
        return;
    }
    const std::int64_t len = l.inner * r;
#pragma omp parallel for collapse(2) schedule(static) if (s.fine.cells() > kParallelCells)
    for (std::int64_t o = 0; o < l.outer; ++o) {
        for (std::int64_t ic = 0; ic < l.nc; ++ic) {
            Out* y = coarse + (o * l.nc + ic) * len;
            const std::int64_t cell_even = (o * l.n + 2 * ic) * l.inner;  // fine 2I
            const std::int64_t cell_next = cell_even + 2 * l.inner;       // fine 2I+2
            const In* x0 = fine + cell_even * r;
            const In* x1 = x0 + len;
            const In* x2 = 2 * ic + 2 < l.n ? x0 + 2 * len : nullptr;
            if (r == 1) {  // the loop below, branch-free inside
                const double* wr = s.w_right.empty() ? nullptr : s.w_right.data() + cell_even;
                const double* wl = s.w_left.empty() || !x2 ? nullptr : s.w_left.data() + cell_next;
                for (std::int64_t q = 0; q < len; ++q) {
                    const double v = static_cast<double>(x1[q]) +
                                     (wr ? wr[q] : 0.5) * static_cast<double>(x0[q]);
                    y[q] = static_cast<Out>(x2 ? v + (wl ? wl[q] : 0.5) * static_cast<double>(x2[q])
                                               : v);
                }
                continue;
            }
            for (std::int64_t in = 0; in < l.inner; ++in) {
                const double wr = s.right(cell_even + in);
                const double wl = x2 ? s.left(cell_next + in) : 0.0;
                for (std::int64_t a = 0; a < r; ++a) {
                    const std::int64_t q = in * r + a;
                    double v = static_cast<double>(x1[q]) + wr * static_cast<double>(x0[q]);
                    if (x2) v += wl * static_cast<double>(x2[q]);
                    y[q] = static_cast<Out>(v);
                }
            }
        }
    }
}

/// P_s as CSR: rows = fine cells * block, columns = coarse cells * block, sorted.
CsrMatrix step_csr(const DirectionalTransfer& s) {
    const Lines l = lines(s);
    const std::int64_t r = s.block;
    CsrMatrix p;
    p.rows = s.fine.cells() * r;
    p.cols = s.coarse.cells() * r;
    p.row_ptr.assign(1, 0);
    for (std::int64_t o = 0; o < l.outer; ++o) {
        for (std::int64_t f = 0; f < l.n; ++f) {
            for (std::int64_t in = 0; in < l.inner; ++in) {
                const std::int64_t cell = (o * l.n + f) * l.inner + in;
                const auto coarse_cell = [&](std::int64_t ic) {
                    return (o * l.nc + ic) * l.inner + in;
                };
                for (std::int64_t a = 0; a < r; ++a) {
                    if (f % 2 == 1) {
                        p.col.push_back(coarse_cell((f - 1) / 2) * r + a);
                        p.val.push_back(1.0);
                    } else {
                        const std::int64_t ic = f / 2;
                        if (ic >= 1) {
                            p.col.push_back(coarse_cell(ic - 1) * r + a);
                            p.val.push_back(s.left(cell));
                        }
                        if (ic < l.nc) {
                            p.col.push_back(coarse_cell(ic) * r + a);
                            p.val.push_back(s.right(cell));
                        }
                    }
                    p.row_ptr.push_back(p.nnz());
                }
            }
        }
    }
    return p;
}

/// Full coarsening x, y, z with linear weights (1/2): the three steps of such a Transfer run
/// fused, one pass over the fine vector, instead of three passes with FP64 intermediate grids
/// (half and a quarter of the fine grid, written and read again) and per-cell weight lookups.
/// Measured on 128^3 (one thread, FP32 vectors, medians of 9): restriction 8.0 -> 1.6 ms,
/// interpolation 8.3-10.3 -> 2.5 ms, against a V-cycle of ~68 ms with FP16 matrices (the
/// staged passes were a quarter of it). Every value is computed with the staged code's
/// operations in the staged code's order (products with 1/2 are exact), so the results are
/// bitwise those of the steps applied one after the other.
bool fused_trilinear(const std::vector<DirectionalTransfer>& st) {
    if (st.size() != 3) return false;
    for (int i = 0; i < 3; ++i) {
        const DirectionalTransfer& s = st[static_cast<std::size_t>(i)];
        if (s.dir != i || !s.w_left.empty() || !s.w_right.empty()) return false;
    }
    return true;
}

/// The fine vector a fused restriction reads: f, or with Scaled the products s[q] f[q]
/// rounded to In (a scaled level's unscaled residual s ⊙ r̂, formed on the fly as the separate
/// pass r = s ⊙ r̂ formed it; kernels::restrict_line).
template <class In, bool Scaled>
struct FineIn {
    const In* f;
    const In* s;
    FineIn operator+(std::int64_t o) const { return {f + o, Scaled ? s + o : s}; }
    const In* scale() const { return Scaled ? s : nullptr; }
};

/// out = m + l/2 (+ h/2 when h is not null), len values.
inline void combine3(const double* m, const double* l, const double* h, std::int64_t len,
                     double* out) {
    if (h != nullptr) {
        for (std::int64_t q = 0; q < len; ++q) out[q] = m[q] + 0.5 * l[q] + 0.5 * h[q];
    } else {
        for (std::int64_t q = 0; q < len; ++q) out[q] = m[q] + 0.5 * l[q];
    }
}

/// The x- and y-restriction of a fine plane (fp: its first value): plane[J][ic*r + a], cy
/// lines of cx*r values; lines holds three lines of scratch.
template <class F>
void restrict_plane_xy(const Box& fb, std::int64_t r, F fp, double* plane, double* lines) {
    const std::int64_t nx = fb.nx, ny = fb.ny, cx = nx / 2, cy = ny / 2, len = cx * r;
    const auto x_line = [&](F f, double* out) {  // f[2ic+1] + f[2ic]/2 + f[2ic+2]/2
        kernels::restrict_line(f.f, f.scale(), nx, static_cast<int>(r), out);
    };
    double* l0 = lines;
    double* l1 = lines + len;
    double* l2 = lines + 2 * len;
    std::int64_t have2 = -1;  // the fine line whose restriction l2 holds
    for (std::int64_t J = 0; J < cy; ++J) {
        const std::int64_t q0 = 2 * J;
        if (have2 == q0) {
            std::swap(l0, l2);
        } else {
            x_line(fp + q0 * nx * r, l0);
        }
        x_line(fp + (q0 + 1) * nx * r, l1);
        const bool up = q0 + 2 < ny;
        if (up) {
            x_line(fp + (q0 + 2) * nx * r, l2);
            have2 = q0 + 2;
        }
        combine3(l1, l0, up ? l2 : nullptr, len, plane + J * len);
    }
}

/// Grows scratch to per_thread values for every thread of a parallel region (one if not).
void reserve_per_thread(std::vector<double>& scratch, std::int64_t per_thread, bool parallel) {
    const std::size_t need =
        static_cast<std::size_t>(per_thread * (parallel ? omp_get_max_threads() : 1));
    if (scratch.size() < need) scratch.resize(need);
}

/// The fine planes of a vector: plane p at fine + p nx ny r.
template <class F>
struct VectorPlanes {
    F fine;
    std::int64_t plane_values;
    F at(std::int64_t p, void* /*buffer*/) const { return fine + p * plane_values; }
};

/// The fine planes that `source` writes one at a time into a thread's buffer (restrict_planes):
/// s[q] f[q] when Scaled, as FineIn forms it from a whole vector.
template <class CF, bool Scaled>
struct SourcePlanes {
    const std::function<void(int, CF*)>* source;
    const CF* scale;
    std::int64_t plane_values;
    FineIn<CF, Scaled> at(std::int64_t p, CF* buffer) const {
        (*source)(static_cast<int>(p), buffer);
        return {buffer, Scaled ? scale + p * plane_values : nullptr};
    }
};

/// The fused restriction of the fine planes `planes.at(p, buffer)` gives, in increasing p on
/// each thread, each plane once (a thread's first coarse plane reads its lower fine plane
/// again). `buffers` holds `buffer` values of scratch per thread for them (0: none).
template <class P, class B, class Out>
void restrict_fused(const std::vector<DirectionalTransfer>& st, const P& planes, Out* coarse,
                    std::vector<double>& scratch, std::int64_t buffer = 0,
                    std::vector<B>* buffers = nullptr) {
    const Box& fb = st[0].fine;
    const std::int64_t r = st[0].block;
    const std::int64_t nz = fb.nz, cz = nz / 2;
    const std::int64_t len = (fb.nx / 2) * r, plane = len * (fb.ny / 2);
    const std::int64_t per_thread = 3 * plane + 3 * len;
    const bool parallel = fb.cells() > kParallelCells;
    reserve_per_thread(scratch, per_thread, parallel);
    if (buffers != nullptr) {
        const std::size_t need =
            static_cast<std::size_t>(buffer * (parallel ? omp_get_max_threads() : 1));
        if (buffers->size() < need) buffers->resize(need);
    }
#pragma omp parallel if (parallel)
    {
        double* buf = scratch.data() + per_thread * omp_get_thread_num();
        B* own = buffers != nullptr ? buffers->data() + buffer * omp_get_thread_num() : nullptr;
        double* p0 = buf;
        double* p1 = buf + plane;
        double* p2 = buf + 2 * plane;
        double* lines = buf + 3 * plane;
        const auto xy = [&](std::int64_t z, double* out) {
            restrict_plane_xy(fb, r, planes.at(z, own), out, lines);
        };
        std::int64_t have2 = -1;  // the fine plane whose restriction p2 holds
#pragma omp for schedule(static)
        for (std::int64_t K = 0; K < cz; ++K) {
            const std::int64_t z0 = 2 * K;
            if (have2 == z0) {
                std::swap(p0, p2);
            } else {
                xy(z0, p0);
            }
            xy(z0 + 1, p1);
            const bool up = z0 + 2 < nz;
            if (up) {
                xy(z0 + 2, p2);
                have2 = z0 + 2;
            }
            Out* out = coarse + K * plane;
            if (up) {
                for (std::int64_t q = 0; q < plane; ++q)
                    out[q] = static_cast<Out>(p1[q] + 0.5 * p0[q] + 0.5 * p2[q]);
            } else {
                for (std::int64_t q = 0; q < plane; ++q)
                    out[q] = static_cast<Out>(p1[q] + 0.5 * p0[q]);
            }
        }
    }
}

/// The staged interpolation step for one fine index f of a direction with nc coarse indices:
/// out = lo/2 + hi/2 (each absent outside), or the coarse value itself at odd f. `at(ic)` gives
/// coarse index ic's `len` values.
template <class In, class At>
void prolong_index(std::int64_t f, std::int64_t nc, std::int64_t len, At&& at, double* out) {
    if (f % 2 == 1) {
        const In* x = at((f - 1) / 2);
        for (std::int64_t q = 0; q < len; ++q) out[q] = static_cast<double>(x[q]);
        return;
    }
    const std::int64_t ic = f / 2;
    const In* xl = ic >= 1 ? at(ic - 1) : nullptr;
    const In* xr = ic < nc ? at(ic) : nullptr;
    for (std::int64_t q = 0; q < len; ++q) {
        double v = 0.0;
        if (xl) v += 0.5 * static_cast<double>(xl[q]);
        if (xr) v += 0.5 * static_cast<double>(xr[q]);
        out[q] = v;
    }
}

/// The fused interpolation into fine plane k (fine += P coarse there, or scale ⊙ (P coarse)),
/// in `scratch` (interpolate_scratch values: a coarse plane, then a line).
template <class In, class Out>
void interpolate_plane(const std::vector<DirectionalTransfer>& st, const In* coarse, Out* fine,
                       const Out* scale, std::int64_t k, double* scratch) {
    const Box& fb = st[0].fine;
    const std::int64_t r = st[0].block;
    const std::int64_t nx = fb.nx, ny = fb.ny;
    const std::int64_t cx = nx / 2, cy = ny / 2, cz = fb.nz / 2;
    const std::int64_t len = cx * r, plane = len * cy;
    double* tz = scratch;
    double* ty = scratch + plane;
    prolong_index<In>(
        k, cz, plane, [&](std::int64_t K) { return coarse + K * plane; }, tz);
    for (std::int64_t j = 0; j < ny; ++j) {
        // An odd fine line takes its coarse line as it is: read in place, not copied.
        const double* line = ty;
        if (j % 2 == 1) {
            line = tz + (j - 1) / 2 * len;
        } else {
            prolong_index<double>(
                j, cy, len, [&](std::int64_t J) { return tz + J * len; }, ty);
        }
        const std::int64_t y0 = (k * ny + j) * nx * r;
        Out* y = fine + y0;
        const Out* sc = scale != nullptr ? scale + y0 : nullptr;
        kernels::interpolate_line_add(line, nx, static_cast<int>(r), y, sc);
    }
}

/// Scratch values interpolate_plane needs.
std::int64_t interpolate_scratch(const std::vector<DirectionalTransfer>& st) {
    const Box& fb = st[0].fine;
    const std::int64_t len = (fb.nx / 2) * st[0].block;
    return len * (fb.ny / 2) + len;
}

template <class In, class Out>
void interpolate_fused(const std::vector<DirectionalTransfer>& st, const In* coarse, Out* fine,
                       const Out* scale, std::vector<double>& scratch) {
    const Box& fb = st[0].fine;
    const std::int64_t per_thread = interpolate_scratch(st);
    const bool parallel = fb.cells() > kParallelCells;
    reserve_per_thread(scratch, per_thread, parallel);
#pragma omp parallel if (parallel)
    {
        double* mine = scratch.data() + per_thread * omp_get_thread_num();
#pragma omp for schedule(static)
        for (std::int64_t k = 0; k < fb.nz; ++k)
            interpolate_plane(st, coarse, fine, scale, k, mine);
    }
}

Box halved(const Box& b, int dir) {
    Box c = b;
    (dir == 0 ? c.nx : dir == 1 ? c.ny : c.nz) = b.extent(dir) / 2;
    return c;
}

}  // namespace

Transfer::Transfer(std::vector<DirectionalTransfer> steps) : steps_(std::move(steps)) {
    for (std::size_t i = 0; i < steps_.size(); ++i) {
        const DirectionalTransfer& s = steps_[i];
        const std::int64_t cells = s.fine.cells();
        const bool ok_dir = s.dir >= 0 && s.dir <= 2 && s.fine.extent(s.dir) >= 2 &&
                            s.coarse == halved(s.fine, s.dir);
        const bool ok_chain =
            i == 0 || (steps_[i - 1].coarse == s.fine && steps_[i - 1].block == s.block);
        const bool ok_w = (s.w_left.empty() || std::ssize(s.w_left) == cells) &&
                          (s.w_right.empty() || std::ssize(s.w_right) == cells);
        if (!ok_dir || !ok_chain || !ok_w || s.block < 1) {
            throw InvalidInput(fmt::format(
                "transfer step {} (dir {}, {}x{}x{} -> {}x{}x{}) does not halve its direction, "
                "chain onto the previous step or match its weight sizes; build steps with "
                "coarsen()",
                i, s.dir, s.fine.nx, s.fine.ny, s.fine.nz, s.coarse.nx, s.coarse.ny, s.coarse.nz));
        }
    }
}

const Box& Transfer::fine() const {
    static const Box empty{};
    return steps_.empty() ? empty : steps_.front().fine;
}

const Box& Transfer::coarse() const {
    static const Box empty{};
    return steps_.empty() ? empty : steps_.back().coarse;
}

template <class CF, class CC>
void Transfer::restrict_to(const CF* fine, CC* coarse, const CF* scale) const {
    const std::size_t k = steps_.size();
    if (k == 0) return;
    if (fused_trilinear(steps_)) {
        const std::int64_t pv =
            steps_[0].fine.nx * std::int64_t{steps_[0].fine.ny} * steps_[0].block;
        if (scale != nullptr) {
            restrict_fused<VectorPlanes<FineIn<CF, true>>, CF>(
                steps_, {FineIn<CF, true>{fine, scale}, pv}, coarse, scratch_a_);
        } else {
            restrict_fused<VectorPlanes<FineIn<CF, false>>, CF>(
                steps_, {FineIn<CF, false>{fine, nullptr}, pv}, coarse, scratch_a_);
        }
        return;
    }
    if (scale != nullptr) {  // the staged steps read s ⊙ fine from a scratch vector
        std::vector<CF>& t = scratch_of<CF>();
        const std::size_t n = static_cast<std::size_t>(steps_[0].fine.cells() * steps_[0].block);
        if (t.size() < n) t.resize(n);
#pragma omp parallel for schedule(static) if (static_cast <std::int64_t>(n) > kParallelCells)
        for (std::size_t q = 0; q < n; ++q) t[q] = fine[q] * scale[q];
        fine = t.data();
    }
    if (k == 1) {
        restrict_step(steps_[0], fine, coarse);
        return;
    }
    const std::size_t need = static_cast<std::size_t>(steps_[0].coarse.cells() * steps_[0].block);
    if (scratch_a_.size() < need) scratch_a_.resize(need);
    if (scratch_b_.size() < need) scratch_b_.resize(need);
    double* cur = scratch_a_.data();
    double* next = scratch_b_.data();
    restrict_step(steps_[0], fine, cur);
    for (std::size_t i = 1; i + 1 < k; ++i) {
        restrict_step(steps_[i], static_cast<const double*>(cur), next);
        std::swap(cur, next);
    }
    restrict_step(steps_[k - 1], static_cast<const double*>(cur), coarse);
}

bool Transfer::restricts_by_planes() const { return fused_trilinear(steps_); }

template <class CF, class CC>
bool Transfer::restrict_planes(const std::function<void(int, CF*)>& plane, CC* coarse,
                               const CF* scale) const {
    if (!restricts_by_planes()) return false;
    const std::int64_t pv = steps_[0].fine.nx * std::int64_t{steps_[0].fine.ny} * steps_[0].block;
    if (scale != nullptr) {
        restrict_fused<SourcePlanes<CF, true>, CF>(steps_,
                                                   SourcePlanes<CF, true>{&plane, scale, pv},
                                                   coarse, scratch_a_, pv, &scratch_of<CF>());
    } else {
        restrict_fused<SourcePlanes<CF, false>, CF>(steps_,
                                                    SourcePlanes<CF, false>{&plane, nullptr, pv},
                                                    coarse, scratch_a_, pv, &scratch_of<CF>());
    }
    return true;
}

template <class CC, class CF>
void Transfer::interpolate_add(const CC* coarse, CF* fine, const CF* scale) const {
    const std::size_t k = steps_.size();
    if (k == 0) return;
    if (fused_trilinear(steps_)) {
        interpolate_fused(steps_, coarse, fine, scale, scratch_a_);
        return;
    }
    CF* target = fine;
    const std::size_t n = static_cast<std::size_t>(steps_[0].fine.cells() * steps_[0].block);
    if (scale != nullptr) {  // the staged steps add P e into a zeroed scratch vector
        std::vector<CF>& t = scratch_of<CF>();
        t.assign(n, CF{0});
        target = t.data();
    }
    if (k == 1) {
        prolong_step<CC, CF, true>(steps_[0], coarse, target);
    } else {
        const std::size_t need =
            static_cast<std::size_t>(steps_[0].coarse.cells() * steps_[0].block);
        if (scratch_a_.size() < need) scratch_a_.resize(need);
        if (scratch_b_.size() < need) scratch_b_.resize(need);
        double* cur = scratch_a_.data();
        double* next = scratch_b_.data();
        prolong_step<CC, double, false>(steps_[k - 1], coarse, cur);
        for (std::size_t i = k - 2; i >= 1; --i) {
            prolong_step<double, double, false>(steps_[i], cur, next);
            std::swap(cur, next);
        }
        prolong_step<double, CF, true>(steps_[0], cur, target);
    }
    if (scale == nullptr) return;
#pragma omp parallel for schedule(static) if (static_cast <std::int64_t>(n) > kParallelCells)
    for (std::size_t q = 0; q < n; ++q) fine[q] += scale[q] * target[q];
}

template <class CC, class CF>
bool Transfer::interpolate_add_planes(const CC* coarse, CF* fine, const CF* scale, int z_begin,
                                      int z_end) const {
    if (!restricts_by_planes()) return false;
    // Per thread: the sweeps that call this run it on several threads at once.
    thread_local std::vector<double> scratch;
    const std::int64_t need = interpolate_scratch(steps_);
    if (std::ssize(scratch) < need) scratch.resize(static_cast<std::size_t>(need));
    for (int k = z_begin; k < z_end; ++k) {
        interpolate_plane(steps_, coarse, fine, scale, k, scratch.data());
    }
    return true;
}

template <class T>
std::vector<T>& Transfer::scratch_of() const {
    if constexpr (std::is_same_v<T, float>) {
        return scratch_f_;
    } else {
        return scratch_d_;
    }
}

CsrMatrix Transfer::prolongation_csr() const {
    if (steps_.empty()) return CsrMatrix{};
    CsrMatrix p = step_csr(steps_[0]);
    for (std::size_t i = 1; i < steps_.size(); ++i) p = multiply(p, step_csr(steps_[i]));
    return p;
}

template void Transfer::restrict_to<double, double>(const double*, double*, const double*) const;
template void Transfer::restrict_to<double, float>(const double*, float*, const double*) const;
template void Transfer::restrict_to<float, double>(const float*, double*, const float*) const;
template void Transfer::restrict_to<float, float>(const float*, float*, const float*) const;

template bool Transfer::restrict_planes<double, double>(const std::function<void(int, double*)>&,
                                                        double*, const double*) const;
template bool Transfer::restrict_planes<double, float>(const std::function<void(int, double*)>&,
                                                       float*, const double*) const;
template bool Transfer::restrict_planes<float, double>(const std::function<void(int, float*)>&,
                                                       double*, const float*) const;
template bool Transfer::restrict_planes<float, float>(const std::function<void(int, float*)>&,
                                                      float*, const float*) const;

template void Transfer::interpolate_add<double, double>(const double*, double*,
                                                        const double*) const;
template void Transfer::interpolate_add<double, float>(const double*, float*, const float*) const;
template void Transfer::interpolate_add<float, double>(const float*, double*, const double*) const;
template void Transfer::interpolate_add<float, float>(const float*, float*, const float*) const;

template bool Transfer::interpolate_add_planes<double, double>(const double*, double*,
                                                               const double*, int, int) const;
template bool Transfer::interpolate_add_planes<double, float>(const double*, float*, const float*,
                                                              int, int) const;
template bool Transfer::interpolate_add_planes<float, double>(const float*, double*, const double*,
                                                              int, int) const;
template bool Transfer::interpolate_add_planes<float, float>(const float*, float*, const float*,
                                                             int, int) const;

}  // namespace mpmg
