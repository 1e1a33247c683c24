// Directional restriction and interpolation (ICPP'24 §4.1; PFMG-style directional steps).
// A box is viewed around direction `dir` as lines: cell = (o * n + f) * inner + in, where f is
// the index along `dir`, `inner` the cells below `dir` and `outer` the cells above it, so one
// loop nest serves all three directions and the inner loop has unit stride.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

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
    const bool uniform = s.w_left.empty() && s.w_right.empty();
#pragma omp parallel for schedule(static) if (s.fine.cells() > kParallelCells)
    for (std::int64_t o = 0; o < l.outer; ++o) {
        const In* x = coarse + o * l.nc;
        Out* y = fine + o * l.n;
        const std::int64_t cell0 = o * l.n;
        for (std::int64_t f = 0; f < l.n; ++f) {
            double v;
            if (f % 2 == 1) {
                v = static_cast<double>(x[(f - 1) / 2]);
            } else {
                const std::int64_t ic = f / 2;
                const double xl = ic >= 1 ? static_cast<double>(x[ic - 1]) : 0.0;
                const double xr = ic < l.nc ? static_cast<double>(x[ic]) : 0.0;
                v = uniform ? 0.5 * xl + 0.5 * xr
                            : s.left(cell0 + f) * xl + s.right(cell0 + f) * xr;
            }
            store(y[f], v, Add);
        }
    }
}

/// restrict_step along x for scalar unknowns (see prolong_step_x).
template <class In, class Out>
void restrict_step_x(const DirectionalTransfer& s, const Lines& l, const In* fine, Out* coarse) {
    const bool uniform = s.w_left.empty() && s.w_right.empty();
#pragma omp parallel for schedule(static) if (s.fine.cells() > kParallelCells)
    for (std::int64_t o = 0; o < l.outer; ++o) {
        const In* x = fine + o * l.n;
        Out* y = coarse + o * l.nc;
        const std::int64_t cell0 = o * l.n;
        for (std::int64_t ic = 0; ic < l.nc; ++ic) {
            const std::int64_t f = 2 * ic;
            const double x0 = static_cast<double>(x[f]), x1 = static_cast<double>(x[f + 1]);
            const double x2 = f + 2 < l.n ? static_cast<double>(x[f + 2]) : 0.0;
            // The order of the general loop nest's operations: x1 + w_r x0 + w_l x2.
            const double v = uniform ? x1 + 0.5 * x0 + 0.5 * x2
                                     : x1 + s.right(cell0 + f) * x0 +
                                           (f + 2 < l.n ? s.left(cell0 + f + 2) * x2 : 0.0);
            y[ic] = static_cast<Out>(v);
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
void Transfer::restrict_to(const CF* fine, CC* coarse) const {
    const std::size_t k = steps_.size();
    if (k == 0) return;
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

template <class CC, class CF>
void Transfer::interpolate_add(const CC* coarse, CF* fine) const {
    const std::size_t k = steps_.size();
    if (k == 0) return;
    if (k == 1) {
        prolong_step<CC, CF, true>(steps_[0], coarse, fine);
        return;
    }
    const std::size_t need = static_cast<std::size_t>(steps_[0].coarse.cells() * steps_[0].block);
    if (scratch_a_.size() < need) scratch_a_.resize(need);
    if (scratch_b_.size() < need) scratch_b_.resize(need);
    double* cur = scratch_a_.data();
    double* next = scratch_b_.data();
    prolong_step<CC, double, false>(steps_[k - 1], coarse, cur);
    for (std::size_t i = k - 2; i >= 1; --i) {
        prolong_step<double, double, false>(steps_[i], cur, next);
        std::swap(cur, next);
    }
    prolong_step<double, CF, true>(steps_[0], cur, fine);
}

CsrMatrix Transfer::prolongation_csr() const {
    if (steps_.empty()) return CsrMatrix{};
    CsrMatrix p = step_csr(steps_[0]);
    for (std::size_t i = 1; i < steps_.size(); ++i) p = multiply(p, step_csr(steps_[i]));
    return p;
}

template void Transfer::restrict_to<double, double>(const double*, double*) const;
template void Transfer::restrict_to<double, float>(const double*, float*) const;
template void Transfer::restrict_to<float, double>(const float*, double*) const;
template void Transfer::restrict_to<float, float>(const float*, float*) const;

template void Transfer::interpolate_add<double, double>(const double*, double*) const;
template void Transfer::interpolate_add<double, float>(const double*, float*) const;
template void Transfer::interpolate_add<float, double>(const float*, double*) const;
template void Transfer::interpolate_add<float, float>(const float*, float*) const;

}  // namespace mpmg
