#ifdef MPMG_HAVE_MPI

#include "distributed/dist_ops.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <type_traits>

namespace mpmg::dist {

template <class S>
GhostCoupling GhostCoupling::build(const SgDiaMatrix<double>& rows,
                                   const std::array<int, 3>& rows_lo, const Partition& p,
                                   const Halo& halo, TruncationCounts& counts,
                                   const std::vector<double>* scale) {
    GhostCoupling g;
    g.block_ = rows.block();
    const int r = rows.block();
    // Sized first: grown entry by entry, the vectors would leave behind about as much again in
    // larger and larger fresh blocks, each a first touch (about 4 ms per MiB on the Zen 5 VM).
    std::int64_t entries = 0, cells = 0, last = -1;
    for_each_coupling(
        rows, rows_lo, p,
        [&](int, std::int64_t cell, std::int64_t, std::int64_t, const std::array<int, 3>&) {
            ++entries;
            if (cell != last) ++cells;
            last = cell;
        });
    g.rows_.reserve(static_cast<std::size_t>(cells));
    g.ptr_.reserve(static_cast<std::size_t>(cells + 1));
    g.slot_.reserve(static_cast<std::size_t>(entries));
    g.val_.reserve(static_cast<std::size_t>(entries * r * r));
    g.ptr_.push_back(0);
    for_each_coupling(rows, rows_lo, p,
                      [&](int d, std::int64_t cell, std::int64_t rc, std::int64_t rn,
                          const std::array<int, 3>& nb) {
                          const std::int64_t s = halo.slot(nb[0], nb[1], nb[2]);
                          if (s < 0) throw std::logic_error("GhostCoupling: halo does not reach");
                          if (g.rows_.empty() || g.rows_.back() != cell) {
                              if (!g.rows_.empty()) {
                                  g.ptr_.push_back(static_cast<std::int64_t>(g.slot_.size()));
                              }
                              g.rows_.push_back(cell);
                          }
                          g.slot_.push_back(s);
                          for (int a = 0; a < r; ++a) {
                              for (int b = 0; b < r; ++b) {
                                  const double v = coupling_entry(rows, d, rc, rn, a, b, scale);
                                  g.val_.push_back(to_double(truncate_counted<S>(v, counts)));
                              }
                          }
                      });
    if (!g.rows_.empty()) g.ptr_.push_back(static_cast<std::int64_t>(g.slot_.size()));
    return g;
}

template <class T>
void GhostCoupling::add(const std::vector<double>& ghost, T* y, double sign) const {
    const std::int64_t r = block_;
    const auto nrows = static_cast<std::int64_t>(rows_.size());
#pragma omp parallel for schedule(static) if (nrows > 4096)
    for (std::int64_t q = 0; q < nrows; ++q) {
        const auto uq = static_cast<std::size_t>(q);
        T* yr = y + rows_[uq] * r;
        for (std::int64_t a = 0; a < r; ++a) {
            double acc = 0.0;
            for (std::int64_t e = ptr_[uq]; e < ptr_[uq + 1]; ++e) {
                const double* v = val_.data() + (e * r + a) * r;
                const double* x = ghost.data() + slot_[static_cast<std::size_t>(e)] * r;
                for (std::int64_t b = 0; b < r; ++b) acc += v[b] * x[b];
            }
            yr[a] = static_cast<T>(static_cast<double>(yr[a]) + sign * acc);
        }
    }
}

#define MPMG_COUPLING(S)                                                                      \
    template GhostCoupling GhostCoupling::build<S>(                                           \
        const SgDiaMatrix<double>&, const std::array<int, 3>&, const Partition&, const Halo&, \
        TruncationCounts&, const std::vector<double>*);
MPMG_COUPLING(double)
MPMG_COUPLING(float)
MPMG_COUPLING(half)
MPMG_COUPLING(bfloat16)
#undef MPMG_COUPLING
template void GhostCoupling::add<double>(const std::vector<double>&, double*, double) const;
template void GhostCoupling::add<float>(const std::vector<double>&, float*, double) const;

HaloBoundary::HaloBoundary(const SgDiaMatrix<double>& rows, const std::array<int, 3>& rows_lo,
                           const Partition& p, Precision storage, MPI_Comm comm,
                           TruncationCounts& counts, const std::vector<double>* s)
    : halo_(p, rows.block(), rows.stencil().offsets(), comm) {
    if (p.dims()[0] == 1 && p.dims()[1] == 1 && p.size() > 1) {
        int planes = p.global().nz;
        for (int r = 0; r < p.size(); ++r) planes = std::min(planes, p.box(r).nz);
        if (planes >= 2) z_split_ = p.coord(p.rank())[2] == 0 ? ZSplit::bottom : ZSplit::above;
    }
    switch (storage) {
        case Precision::fp64:
            coupling_ = GhostCoupling::build<double>(rows, rows_lo, p, halo_, counts, s);
            break;
        case Precision::fp32:
            coupling_ = GhostCoupling::build<float>(rows, rows_lo, p, halo_, counts, s);
            break;
        case Precision::fp16:
            coupling_ = GhostCoupling::build<half>(rows, rows_lo, p, halo_, counts, s);
            break;
        case Precision::bf16:
            coupling_ = GhostCoupling::build<bfloat16>(rows, rows_lo, p, halo_, counts, s);
            break;
    }
}

namespace {

std::vector<Offset> along(int dir) {
    Offset lo, hi;
    (dir == 0 ? lo.dx : dir == 1 ? lo.dy : lo.dz) = -1;
    (dir == 0 ? hi.dx : dir == 1 ? hi.dy : hi.dz) = 1;
    return {lo, hi};
}

// Local coordinates (i, j, k) with coordinate `dir` replaced by `v`.
std::array<int, 3> with(std::array<int, 3> c, int dir, int v) {
    c[static_cast<std::size_t>(dir)] = v;
    return c;
}

std::int64_t cell_of(const Box& b, const std::array<int, 3>& c) {
    return (std::int64_t{c[2]} * b.ny + c[1]) * b.nx + c[0];
}

// Pointer to the values of local-or-shell cell c of a local vector with its halo (`shell`:
// the halo's values in the vector's type).
template <class T>
const T* value_at(const Box& b, const T* local, const T* shell, const Halo& h,
                  const std::array<int, 3>& c, int r) {
    if (c[0] >= 0 && c[0] < b.nx && c[1] >= 0 && c[1] < b.ny && c[2] >= 0 && c[2] < b.nz) {
        return local + cell_of(b, c) * r;
    }
    const std::int64_t s = h.slot(c[0], c[1], c[2]);
    if (s < 0) throw std::logic_error("DistTransfer: halo does not reach");
    return shell + s * r;
}

// A local box viewed around direction `dir` as in structured/transfer.cpp: cell = (o * n + f) *
// inner + in. With one halo layer along `dir`, plane f = -1 and f = n are the halo's faces, laid
// out in the same (o, in) order.
struct LineView {
    std::int64_t outer = 1, n = 1, inner = 1;
    std::int64_t low = -1, high = -1;  // halo slots of the faces' first cells (-1: none)
};

LineView line_view(const Box& b, int dir, const Halo& h) {
    LineView v;
    v.n = b.extent(dir);
    v.inner = dir == 0 ? 1 : dir == 1 ? std::int64_t{b.nx} : std::int64_t{b.nx} * b.ny;
    v.outer = dir == 0 ? std::int64_t{b.ny} * b.nz : dir == 1 ? std::int64_t{b.nz} : 1;
    std::array<int, 3> lo{0, 0, 0}, hi{0, 0, 0};
    lo[static_cast<std::size_t>(dir)] = -1;
    hi[static_cast<std::size_t>(dir)] = b.extent(dir);
    v.low = h.slot(lo[0], lo[1], lo[2]);
    v.high = h.slot(hi[0], hi[1], hi[2]);
    return v;
}

// The `inner * r` values of plane f (local index along dir, -1 .. n) of line block o, or null
// when no process owns that plane (`shell`: the halo's values in the vector's type).
template <class T>
const T* plane(const LineView& v, const T* local, const T* shell, std::int64_t o, std::int64_t f,
               int r) {
    if (f >= 0 && f < v.n) return local + ((o * v.n + f) * v.inner) * r;
    const std::int64_t base = f < 0 ? v.low : v.high;
    if (base < 0) return nullptr;
    return shell + (base + o * v.inner) * r;
}

// The halo's values (FP64) as T: themselves for FP64; for FP32 a copy in `scratch`, exact,
// since they are a neighbour's FP32 values.
template <class T>
const T* shell_as(const Halo& h, std::vector<float>& scratch) {
    if constexpr (std::is_same_v<T, double>) {
        return h.values().data();
    } else {
        const std::vector<double>& v = h.values();
        scratch.resize(v.size());
        std::transform(v.begin(), v.end(), scratch.begin(),
                       [](double x) { return static_cast<float>(x); });
        return scratch.data();
    }
}

// y = v, or y += v rounded to T (a level's correction added in place).
template <bool Add, class T>
inline void put(T& y, double v) {
    if constexpr (Add) {
        y += static_cast<T>(v);
    } else {
        y = static_cast<T>(v);
    }
}

}  // namespace

std::pair<std::array<int, 3>, Box> weight_region(const Partition& fine, int dir) {
    std::array<int, 3> lo = fine.lo();
    Box b = fine.local();
    const auto ud = static_cast<std::size_t>(dir);
    const int first = std::max(0, lo[ud] - 1);
    const int last = std::min(fine.global().extent(dir), lo[ud] + b.extent(dir) + 1);
    lo[ud] = first;
    (dir == 0 ? b.nx : dir == 1 ? b.ny : b.nz) = last - first;
    return {lo, b};
}

DistTransfer::DistTransfer(const Transfer& t, const Partition& fine, MPI_Comm comm,
                           std::vector<StepWeights> weights) {
    if (!weights.empty() && weights.size() != t.steps().size()) {
        throw std::logic_error("DistTransfer: one StepWeights per step");
    }
    Partition cur = fine;
    for (std::size_t i = 0; i < t.steps().size(); ++i) {
        const DirectionalTransfer& s = t.steps()[i];
        Step st;
        st.s = &s;
        st.fine = cur;
        st.coarse = cur.coarsened(s.dir);
        if (st.coarse.global() != s.coarse || st.fine.global() != s.fine) {
            throw std::logic_error("DistTransfer: partition and transfer disagree");
        }
        if (!s.w_left.empty()) {
            throw std::logic_error("DistTransfer: weights come as StepWeights, not whole-grid");
        }
        if (!weights.empty()) st.w = std::move(weights[i]);
        if (!st.w.linear()) {
            const auto [lo, box] = weight_region(cur, s.dir);
            if (st.w.lo != lo || st.w.box != box ||
                st.w.left.size() != static_cast<std::size_t>(box.cells()) ||
                st.w.right.size() != st.w.left.size()) {
                throw std::logic_error("DistTransfer: weights do not cover the weight region");
            }
        }
        if (st.fine.min_extent() < 1 || st.coarse.min_extent() < 1) valid_ = false;
        cur = st.coarse;
        steps_.push_back(std::move(st));
    }
    if (steps_.empty()) throw std::logic_error("DistTransfer: no steps");
    if (!valid_) return;
    for (Step& st : steps_) {
        st.fine_halo = Halo(st.fine, st.s->block, along(st.s->dir), comm);
        st.coarse_halo = Halo(st.coarse, st.s->block, along(st.s->dir), comm);
    }
}

template <class T>
void DistTransfer::restrict_step(Step& st, const T* fine, std::vector<double>& coarse) {
    const DirectionalTransfer& s = *st.s;
    const int dir = s.dir, r = s.block;
    const auto ud = static_cast<std::size_t>(dir);
    const Box fb = st.fine.local(), cb = st.coarse.local(), fg = s.fine;
    const auto flo = st.fine.lo(), clo = st.coarse.lo();
    const int nfine = fg.extent(dir);
    st.fine_halo.exchange(fine);
    const T* shell = shell_as<T>(st.fine_halo, shell_f_);
    coarse.resize(static_cast<std::size_t>(cb.cells() * r));  // every value is written below
    if (st.w.linear() && dir == 0 && r == 1) {
        // Along x with scalar unknowns a plane is one value: whole lines at a time, the halo
        // only at the two ends (fine 2I of the first and 2I+2 of the last coarse cell).
        const LineView fv = line_view(fb, dir, st.fine_halo);
        const std::int64_t ncl = cb.nx, n = fb.nx, f00 = 2 * std::int64_t{clo[0]} - flo[0];
#pragma omp parallel for schedule(static) if (cb.cells() > 32768)
        for (std::int64_t o = 0; o < fv.outer; ++o) {
            const T* x = fine + o * n;
            const T* lo = plane(fv, fine, shell, o, -1, 1);
            const T* hi = plane(fv, fine, shell, o, n, 1);
            const auto at = [&](std::int64_t f) -> double {
                return f < 0 ? *lo : f >= n ? *hi : x[f];
            };
            double* y = coarse.data() + o * ncl;
            // ic in [a, b): fine 2I .. 2I+2 all local and 2I+2 inside the grid.
            const std::int64_t a = f00 < 0 ? 1 : 0;
            std::int64_t b = ncl;
            while (b > a && (f00 + 2 * (b - 1) + 2 >= n || 2 * (b - 1 + clo[0]) + 2 >= nfine)) {
                --b;
            }
            const auto edge = [&](std::int64_t ic) {
                const std::int64_t f0 = f00 + 2 * ic;
                const double v = at(f0 + 1) + 0.5 * at(f0);
                y[ic] = 2 * (ic + clo[0]) + 2 < nfine ? v + 0.5 * at(f0 + 2) : v;
            };
            for (std::int64_t ic = 0; ic < a; ++ic) edge(ic);
            for (std::int64_t ic = a; ic < b; ++ic) {
                const T* x0 = x + f00 + 2 * ic;
                y[ic] = static_cast<double>(x0[1]) + 0.5 * x0[0] + 0.5 * x0[2];
            }
            for (std::int64_t ic = std::max(a, b); ic < ncl; ++ic) edge(ic);
        }
        return;
    }
    if (st.w.linear()) {  // linear weights 1/2: plane-wise, vectorised
        const LineView fv = line_view(fb, dir, st.fine_halo);
        const std::int64_t ncl = cb.extent(dir), len = fv.inner * r;
#pragma omp parallel for collapse(2) schedule(static) if (cb.cells() > 32768)
        for (std::int64_t o = 0; o < fv.outer; ++o) {
            for (std::int64_t ic = 0; ic < ncl; ++ic) {
                const std::int64_t g = 2 * (ic + clo[ud]);  // global fine 2I
                const T* x0 = plane(fv, fine, shell, o, g - flo[ud], r);
                const T* x1 = plane(fv, fine, shell, o, g + 1 - flo[ud], r);
                const T* x2 =
                    g + 2 < nfine ? plane(fv, fine, shell, o, g + 2 - flo[ud], r) : nullptr;
                double* y = coarse.data() + (o * ncl + ic) * len;
                if (x2 != nullptr) {
                    for (std::int64_t q = 0; q < len; ++q) {
                        y[q] = static_cast<double>(x1[q]) + 0.5 * x0[q] + 0.5 * x2[q];
                    }
                } else {
                    for (std::int64_t q = 0; q < len; ++q)
                        y[q] = static_cast<double>(x1[q]) + 0.5 * x0[q];
                }
            }
        }
        return;
    }
    const auto weight = [&](const std::vector<double>& w, const std::array<int, 3>& c) {
        return w[st.w.at({c[0] + flo[0], c[1] + flo[1], c[2] + flo[2]})];  // at local fine c
    };
#pragma omp parallel for collapse(2) schedule(static) if (cb.cells() > 32768)
    for (int k = 0; k < cb.nz; ++k) {
        for (int j = 0; j < cb.ny; ++j) {
            for (int i = 0; i < cb.nx; ++i) {
                const std::array<int, 3> c{i, j, k};
                const int gI = c[ud] + clo[ud];
                const std::array<int, 3> f0 = with(c, dir, 2 * gI - flo[ud]);
                const std::array<int, 3> f1 = with(c, dir, 2 * gI + 1 - flo[ud]);
                const std::array<int, 3> f2 = with(c, dir, 2 * gI + 2 - flo[ud]);
                const T* x0 = value_at(fb, fine, shell, st.fine_halo, f0, r);
                const T* x1 = value_at(fb, fine, shell, st.fine_halo, f1, r);
                const bool has2 = 2 * gI + 2 < nfine;
                const T* x2 = has2 ? value_at(fb, fine, shell, st.fine_halo, f2, r) : nullptr;
                const double wr = weight(st.w.right, f0);
                const double wl = has2 ? weight(st.w.left, f2) : 0.0;
                double* y = coarse.data() + cell_of(cb, c) * r;
                for (int a = 0; a < r; ++a) {
                    double v = static_cast<double>(x1[a]) + wr * x0[a];
                    if (has2) v += wl * x2[a];
                    y[a] = v;
                }
            }
        }
    }
}

template <class T, bool Add>
void DistTransfer::prolong_step(Step& st, const std::vector<double>& coarse, T* fine) {
    const DirectionalTransfer& s = *st.s;
    const int dir = s.dir, r = s.block;
    const auto ud = static_cast<std::size_t>(dir);
    const Box fb = st.fine.local(), cb = st.coarse.local();
    const auto flo = st.fine.lo(), clo = st.coarse.lo();
    const int ncoarse = s.coarse.extent(dir);
    st.coarse_halo.exchange(coarse.data());
    const double* shell = st.coarse_halo.values().data();
    if (st.w.linear() && dir == 0 && r == 1) {
        // Along x with scalar unknowns: whole lines, the coarse halo only at the two ends.
        const LineView cv = line_view(cb, dir, st.coarse_halo);
        const std::int64_t n = fb.nx, ncl = cb.nx, f00 = 2 * std::int64_t{clo[0]} - flo[0];
#pragma omp parallel for schedule(static) if (fb.cells() > 32768)
        for (std::int64_t o = 0; o < cv.outer; ++o) {
            const double* x = coarse.data() + o * ncl;
            const double* lo = plane(cv, coarse.data(), shell, o, -1, 1);
            const double* hi = plane(cv, coarse.data(), shell, o, ncl, 1);
            // Coarse global I at local I - clo; absent (zero) outside the grid.
            const auto at = [&](std::int64_t gi) -> double {
                if (gi < 0 || gi >= ncoarse) return 0.0;
                const std::int64_t c = gi - clo[0];
                return c < 0 ? *lo : c >= ncl ? *hi : x[c];
            };
            T* y = fine + o * n;
            const auto one = [&](std::int64_t f) {
                const std::int64_t g = f + flo[0];
                if (g % 2 == 1) {
                    put<Add>(y[f], at((g - 1) / 2));
                } else {
                    const std::int64_t ic = g / 2;
                    double v = 0.0;
                    if (ic >= 1) v += 0.5 * at(ic - 1);
                    if (ic < ncoarse) v += 0.5 * at(ic);
                    put<Add>(y[f], v);
                }
            };
            // Local coarse c in [a, b): fine f00 + 2c (from c - 1 and c) and f00 + 2c + 1 (from c)
            // are local, and so are both coarse cells: no halo, no test per cell. The same
            // operations as one().
            std::int64_t a = 1;
            while (a < ncl && f00 + 2 * a < 0) ++a;
            std::int64_t b = ncl;
            while (b > a && f00 + 2 * (b - 1) + 1 >= n) --b;
            const std::int64_t f_a = b > a ? f00 + 2 * a : n, f_b = b > a ? f00 + 2 * b : n;
            for (std::int64_t f = 0; f < f_a; ++f) one(f);
            for (std::int64_t c = a; c < b; ++c) {
                put<Add>(y[f00 + 2 * c], (0.0 + 0.5 * x[c - 1]) + 0.5 * x[c]);
                put<Add>(y[f00 + 2 * c + 1], x[c]);
            }
            for (std::int64_t f = f_b; f < n; ++f) one(f);
        }
        return;
    }
    if (st.w.linear()) {  // linear weights 1/2: plane-wise, vectorised
        const LineView cv = line_view(cb, dir, st.coarse_halo);
        const std::int64_t nfl = fb.extent(dir), len = cv.inner * r;
#pragma omp parallel for collapse(2) schedule(static) if (fb.cells() > 32768)
        for (std::int64_t o = 0; o < cv.outer; ++o) {
            for (std::int64_t f = 0; f < nfl; ++f) {
                const std::int64_t g = f + flo[ud];
                T* y = fine + (o * nfl + f) * len;
                if (g % 2 == 1) {
                    const double* x = plane(cv, coarse.data(), shell, o, (g - 1) / 2 - clo[ud], r);
                    for (std::int64_t q = 0; q < len; ++q) put<Add>(y[q], x[q]);
                    continue;
                }
                const std::int64_t ic = g / 2;
                const double* xl =
                    ic >= 1 ? plane(cv, coarse.data(), shell, o, ic - 1 - clo[ud], r) : nullptr;
                const double* xr =
                    ic < ncoarse ? plane(cv, coarse.data(), shell, o, ic - clo[ud], r) : nullptr;
                for (std::int64_t q = 0; q < len; ++q) {
                    double v = 0.0;
                    if (xl != nullptr) v += 0.5 * xl[q];
                    if (xr != nullptr) v += 0.5 * xr[q];
                    put<Add>(y[q], v);
                }
            }
        }
        return;
    }
#pragma omp parallel for collapse(2) schedule(static) if (fb.cells() > 32768)
    for (int k = 0; k < fb.nz; ++k) {
        for (int j = 0; j < fb.ny; ++j) {
            for (int i = 0; i < fb.nx; ++i) {
                const std::array<int, 3> c{i, j, k};
                const int g = c[ud] + flo[ud];
                T* y = fine + cell_of(fb, c) * r;
                if (g % 2 == 1) {
                    const double* x = value_at(cb, coarse.data(), shell, st.coarse_halo,
                                               with(c, dir, (g - 1) / 2 - clo[ud]), r);
                    for (int a = 0; a < r; ++a) put<Add>(y[a], x[a]);
                    continue;
                }
                const int ic = g / 2;
                const std::size_t gc = st.w.at({c[0] + flo[0], c[1] + flo[1], c[2] + flo[2]});
                const double* xl = ic >= 1 ? value_at(cb, coarse.data(), shell, st.coarse_halo,
                                                      with(c, dir, ic - 1 - clo[ud]), r)
                                           : nullptr;
                const double* xr = ic < ncoarse ? value_at(cb, coarse.data(), shell, st.coarse_halo,
                                                           with(c, dir, ic - clo[ud]), r)
                                                : nullptr;
                const double wl = xl ? st.w.left[gc] : 0.0, wr = xr ? st.w.right[gc] : 0.0;
                for (int a = 0; a < r; ++a) {
                    double v = 0.0;
                    if (xl) v += wl * xl[a];
                    if (xr) v += wr * xr[a];
                    put<Add>(y[a], v);
                }
            }
        }
    }
}

template <class T>
void DistTransfer::restrict_to(const T* fine, std::vector<double>& coarse) {
    if (steps_.size() == 1) {
        restrict_step(steps_[0], fine, coarse);
        return;
    }
    restrict_step(steps_[0], fine, tmp_a_);
    for (std::size_t i = 1; i + 1 < steps_.size(); ++i) {
        restrict_step(steps_[i], tmp_a_.data(), tmp_b_);
        tmp_a_.swap(tmp_b_);
    }
    restrict_step(steps_.back(), tmp_a_.data(), coarse);
}

void DistTransfer::prolong_into(Step& st, const std::vector<double>& coarse,
                                std::vector<double>& fine) {
    fine.resize(static_cast<std::size_t>(st.fine.local().cells() * st.s->block));
    prolong_step<double, false>(st, coarse, fine.data());  // writes every value
}

// The steps in reverse; the last (steps_[0]) writes or adds into `fine`.
template <class T, bool Add>
void DistTransfer::prolong_chain(const std::vector<double>& coarse, T* fine) {
    const std::size_t n = steps_.size();
    if (n == 1) {
        prolong_step<T, Add>(steps_[0], coarse, fine);
        return;
    }
    prolong_into(steps_[n - 1], coarse, tmp_a_);
    for (std::size_t i = n - 1; i-- > 1;) {
        prolong_into(steps_[i], tmp_a_, tmp_b_);
        tmp_a_.swap(tmp_b_);
    }
    prolong_step<T, Add>(steps_[0], tmp_a_, fine);
}

void DistTransfer::interpolate(const std::vector<double>& coarse, std::vector<double>& fine) {
    fine.resize(static_cast<std::size_t>(steps_[0].fine.local().cells() * steps_[0].s->block));
    prolong_chain<double, false>(coarse, fine.data());
}

template <class T>
void DistTransfer::interpolate_add(const std::vector<double>& coarse, T* fine) {
    prolong_chain<T, true>(coarse, fine);
}

template void DistTransfer::restrict_to<double>(const double*, std::vector<double>&);
template void DistTransfer::restrict_to<float>(const float*, std::vector<double>&);
template void DistTransfer::interpolate_add<double>(const std::vector<double>&, double*);
template void DistTransfer::interpolate_add<float>(const std::vector<double>&, float*);

namespace {

// Per-process counts and displacements (values) of the blocks of `p`, in rank order.
int block_layout(const Partition& p, int block, std::vector<int>& counts,
                 std::vector<int>& displs) {
    counts.resize(static_cast<std::size_t>(p.size()));
    displs.resize(counts.size());
    int total = 0;
    for (int r = 0; r < p.size(); ++r) {
        counts[static_cast<std::size_t>(r)] = static_cast<int>(p.box(r).cells() * block);
        displs[static_cast<std::size_t>(r)] = total;
        total += counts[static_cast<std::size_t>(r)];
    }
    return total;
}

// Copies block `b` (at `lo`) between packed (rank-ordered) and whole-grid layout.
template <bool ToGlobal, class Packed, class Global>
void copy_block(const Box& gb, const Box& b, const std::array<int, 3>& lo, int block,
                Packed* packed, Global* global) {
    for (int k = 0; k < b.nz; ++k) {
        for (int j = 0; j < b.ny; ++j) {
            const std::int64_t g =
                ((std::int64_t{k} + lo[2]) * gb.ny + (j + lo[1])) * gb.nx + lo[0];
            if constexpr (ToGlobal) {
                std::copy_n(packed, b.nx * block, global + g * block);
            } else {
                std::copy_n(global + g * block, b.nx * block, packed);
            }
            packed += b.nx * block;
        }
    }
}

}  // namespace

void gather(const std::vector<double>& local, const Partition& p, int block, MPI_Comm comm,
            std::vector<double>& global, std::vector<double>& buf) {
    const double t0 = MPI_Wtime();
    std::vector<int> counts, displs;
    const int total = block_layout(p, block, counts, displs);
    if (p.rank() == 0) buf.resize(static_cast<std::size_t>(total));
    MPI_Gatherv(local.data(), static_cast<int>(local.size()), MPI_DOUBLE, buf.data(), counts.data(),
                displs.data(), MPI_DOUBLE, 0, comm);
    comm_stats().agglomerate_s += MPI_Wtime() - t0;
    ++comm_stats().agglomerations;
    if (p.rank() != 0) return;
    global.resize(static_cast<std::size_t>(p.global().cells() * block));
    for (int r = 0; r < p.size(); ++r) {
        copy_block<true>(p.global(), p.box(r), p.lo(r), block,
                         buf.data() + displs[static_cast<std::size_t>(r)], global.data());
    }
}

void scatter(const std::vector<double>& global, const Partition& p, int block, MPI_Comm comm,
             std::vector<double>& local, std::vector<double>& buf) {
    std::vector<int> counts, displs;
    const int total = block_layout(p, block, counts, displs);
    const double t0 = MPI_Wtime();
    if (p.rank() == 0) {
        buf.resize(static_cast<std::size_t>(total));
        for (int r = 0; r < p.size(); ++r) {
            copy_block<false>(p.global(), p.box(r), p.lo(r), block,
                              buf.data() + displs[static_cast<std::size_t>(r)], global.data());
        }
    }
    local.resize(static_cast<std::size_t>(counts[static_cast<std::size_t>(p.rank())]));
    MPI_Scatterv(buf.data(), counts.data(), displs.data(), MPI_DOUBLE, local.data(),
                 static_cast<int>(local.size()), MPI_DOUBLE, 0, comm);
    comm_stats().agglomerate_s += MPI_Wtime() - t0;
    ++comm_stats().agglomerations;
}

namespace {
constexpr int kMergedTag = 7101;
}  // namespace

void gather_merged(const std::vector<double>& local, const Partition& p, const Partition& merged,
                   int block, MPI_Comm comm, std::vector<double>& merged_local) {
    const double t0 = MPI_Wtime();
    const int me = p.rank(), m = p.merged_rank(me);
    if (p.holder(m) != me) {
        MPI_Send(local.data(), static_cast<int>(local.size()), MPI_DOUBLE, p.holder(m), kMergedTag,
                 comm);
    } else {
        const Box mb = merged.box(m);
        const auto mlo = merged.lo(m);
        merged_local.resize(static_cast<std::size_t>(mb.cells() * block));
        std::vector<double> in;
        for (const int r : p.members(m)) {
            const std::vector<double>* from = &local;
            if (r != me) {
                in.resize(static_cast<std::size_t>(p.box(r).cells() * block));
                MPI_Recv(in.data(), static_cast<int>(in.size()), MPI_DOUBLE, r, kMergedTag, comm,
                         MPI_STATUS_IGNORE);
                from = &in;
            }
            copy_cells(from->data(), p.box(r), p.lo(r), merged_local.data(), mb, mlo, p.lo(r),
                       p.box(r), block);
        }
    }
    comm_stats().agglomerate_s += MPI_Wtime() - t0;
    ++comm_stats().agglomerations;
}

void scatter_merged(const std::vector<double>& merged_local, const Partition& p,
                    const Partition& merged, int block, MPI_Comm comm, std::vector<double>& local) {
    const double t0 = MPI_Wtime();
    const int me = p.rank(), m = p.merged_rank(me);
    local.resize(static_cast<std::size_t>(p.local().cells() * block));
    if (p.holder(m) != me) {
        MPI_Recv(local.data(), static_cast<int>(local.size()), MPI_DOUBLE, p.holder(m), kMergedTag,
                 comm, MPI_STATUS_IGNORE);
    } else {
        const Box mb = merged.box(m);
        const auto mlo = merged.lo(m);
        std::vector<double> out;
        for (const int r : p.members(m)) {
            std::vector<double>* to = r == me ? &local : &out;
            to->resize(static_cast<std::size_t>(p.box(r).cells() * block));
            copy_cells(merged_local.data(), mb, mlo, to->data(), p.box(r), p.lo(r), p.lo(r),
                       p.box(r), block);
            if (r != me) {
                MPI_Send(out.data(), static_cast<int>(out.size()), MPI_DOUBLE, r, kMergedTag, comm);
            }
        }
    }
    comm_stats().agglomerate_s += MPI_Wtime() - t0;
    ++comm_stats().agglomerations;
}

CommStats& comm_stats() {
    static CommStats stats;
    return stats;
}

namespace {

void broadcast_string(std::string& text, MPI_Comm comm) {
    int n = static_cast<int>(text.size());
    MPI_Bcast(&n, 1, MPI_INT, 0, comm);
    text.resize(static_cast<std::size_t>(n));
    MPI_Bcast(text.data(), n, MPI_CHAR, 0, comm);
}

}  // namespace

void report_comm(PartitionInfo& info) {
    const CommStats& cs = comm_stats();
    info.halo_s = cs.halo_s;
    info.halo_exchanges = cs.halo_exchanges;
    info.halo_values = cs.halo_values;
    info.reduce_s = cs.reduce_s;
    info.reductions = cs.reductions;
    info.agglomerate_s = cs.agglomerate_s;
    info.agglomerations = cs.agglomerations;
    info.tail_s = cs.tail_s;
}

void broadcast_reports(std::vector<LevelReport>& reports, MPI_Comm comm) {
    int n = static_cast<int>(reports.size());
    MPI_Bcast(&n, 1, MPI_INT, 0, comm);
    reports.resize(static_cast<std::size_t>(n));
    for (LevelReport& r : reports) {
        long long ints[14] = {r.box.nx,
                              r.box.ny,
                              r.box.nz,
                              r.block,
                              r.rows,
                              r.nnz,
                              static_cast<long long>(r.storage),
                              static_cast<long long>(r.compute),
                              r.scaled ? 1 : 0,
                              r.counts.overflow,
                              r.counts.underflow,
                              r.counts.subnormal,
                              r.counts.nonfinite_input,
                              r.matrix_bytes};
        double g[2] = {r.scale_g, r.scale_g_max};
        MPI_Bcast(ints, 14, MPI_LONG_LONG, 0, comm);
        MPI_Bcast(g, 2, MPI_DOUBLE, 0, comm);
        r.box =
            Box{static_cast<int>(ints[0]), static_cast<int>(ints[1]), static_cast<int>(ints[2])};
        r.block = static_cast<int>(ints[3]);
        r.rows = ints[4];
        r.nnz = ints[5];
        r.storage = static_cast<Precision>(ints[6]);
        r.compute = static_cast<Precision>(ints[7]);
        r.scaled = ints[8] != 0;
        r.counts = {ints[9], ints[10], ints[11], ints[12]};
        r.matrix_bytes = ints[13];
        r.scale_g = g[0];
        r.scale_g_max = g[1];
        broadcast_string(r.stencil, comm);
        broadcast_string(r.solve, comm);
        broadcast_string(r.note, comm);
    }
}

std::int64_t reduce(std::int64_t v, MPI_Op op, MPI_Comm comm) {
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT64_T, op, comm);
    return v;
}

double allreduce_sum(double local, MPI_Comm comm) {
    const double t0 = MPI_Wtime();
    double global = 0.0;
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, comm);
    comm_stats().reduce_s += MPI_Wtime() - t0;
    ++comm_stats().reductions;
    return global;
}

void allreduce_sums(double* values, int count, MPI_Comm comm) {
    const double t0 = MPI_Wtime();
    MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, MPI_SUM, comm);
    comm_stats().reduce_s += MPI_Wtime() - t0;
    ++comm_stats().reductions;
}

TruncationCounts allreduce(const TruncationCounts& local, MPI_Comm comm) {
    long long in[4] = {local.overflow, local.underflow, local.subnormal, local.nonfinite_input};
    long long out[4] = {0, 0, 0, 0};
    MPI_Allreduce(in, out, 4, MPI_LONG_LONG, MPI_SUM, comm);
    TruncationCounts c;
    c.overflow = out[0];
    c.underflow = out[1];
    c.subnormal = out[2];
    c.nonfinite_input = out[3];
    return c;
}

}  // namespace mpmg::dist

#endif  // MPMG_HAVE_MPI
