// Choice of coarsening directions, interpolation weights and the directional Galerkin product
// A_c = P_d^T A P_d on the SG-DIA structure, all in FP64 before any truncation (ICPP'24 §4.1,
// Algorithm 1 lines 1-3).
#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "structured/coarsen.hpp"

namespace mpmg {

namespace {

/// Coarse grids with fewer cells than this are built serially.
constexpr std::int64_t kParallelCells = std::int64_t{1} << 14;

int lex27(int dx, int dy, int dz) { return (dz + 1) * 9 + (dy + 1) * 3 + (dx + 1); }

std::array<int, 3> comps(const Offset& o) { return {o.dx, o.dy, o.dz}; }

/// Mean |value| over the in-box entries of the offsets that reach along each direction
/// (0 where a direction has no in-box entries, e.g. a 1-cell-thick grid).
std::array<double, 3> direction_strengths(const SgDiaMatrix<double>& a) {
    const Box& b = a.box();
    const std::int64_t rr = std::int64_t{a.block()} * a.block();
    std::array<double, 3> sum{}, count{};
    for (int d = 0; d < a.stencil().size(); ++d) {
        const Offset& o = a.stencil()[d];
        if (o == Offset{}) continue;
        const double* v = a.diagonal(d);
        double s = 0.0;
        std::int64_t n = 0;
        for (int k = std::max(0, -o.dz); k < std::min(b.nz, b.nz - o.dz); ++k) {
            for (int j = std::max(0, -o.dy); j < std::min(b.ny, b.ny - o.dy); ++j) {
                const std::int64_t row = (std::int64_t{k} * b.ny + j) * b.nx;
                for (int i = std::max(0, -o.dx); i < std::min(b.nx, b.nx - o.dx); ++i) {
                    const double* e = v + (row + i) * rr;
                    for (std::int64_t q = 0; q < rr; ++q) s += std::fabs(e[q]);
                    n += rr;
                }
            }
        }
        const std::array<int, 3> c = comps(o);
        for (int dir = 0; dir < 3; ++dir) {
            if (c[static_cast<std::size_t>(dir)] == 0) continue;
            sum[static_cast<std::size_t>(dir)] += s;
            count[static_cast<std::size_t>(dir)] += static_cast<double>(n);
        }
    }
    std::array<double, 3> mean{};
    for (std::size_t dir = 0; dir < 3; ++dir) mean[dir] = count[dir] > 0 ? sum[dir] / count[dir] : 0;
    return mean;
}

std::vector<int> choose_directions(const SgDiaMatrix<double>& a, const CoarseningOptions& opt) {
    const std::array<double, 3> strength = direction_strengths(a);
    const int min_extent = std::max(opt.min_extent, 2);
    std::vector<int> eligible;
    double strongest = 0.0;
    for (int dir = 0; dir < 3; ++dir) {
        if (a.box().extent(dir) < min_extent) continue;
        eligible.push_back(dir);
        strongest = std::max(strongest, strength[static_cast<std::size_t>(dir)]);
    }
    std::vector<int> chosen;
    for (int dir : eligible) {
        if (strength[static_cast<std::size_t>(dir)] >= opt.semi_threshold * strongest) {
            chosen.push_back(dir);
        }
    }
    return chosen;  // ascending: x, y, z
}

/// Operator-dependent weights from the stencil collapsed perpendicular to `s.dir` (trace of
/// each block): w_left = -a_minus / a_centre, w_right = -a_plus / a_centre, falling back to
/// 1/2 each where a_centre <= 0 or either weight lies outside [0, 1].
void operator_weights(const SgDiaMatrix<double>& a, DirectionalTransfer& s) {
    const Box& b = a.box();
    const int r = a.block();
    const std::int64_t cells = b.cells();
    s.w_left.assign(static_cast<std::size_t>(cells), 0.5);
    s.w_right.assign(static_cast<std::size_t>(cells), 0.5);
    const int nd = a.stencil().size();
    const std::array<int, 3> ext{b.nx, b.ny, b.nz};
#pragma omp parallel for collapse(2) schedule(static) if (cells > kParallelCells)
    for (int k = 0; k < b.nz; ++k) {
        for (int j = 0; j < b.ny; ++j) {
            for (int i = 0; i < b.nx; ++i) {
                const std::array<int, 3> x{i, j, k};
                if (x[static_cast<std::size_t>(s.dir)] % 2 == 1) continue;
                const std::int64_t cell = (std::int64_t{k} * b.ny + j) * b.nx + i;
                std::array<double, 3> plane{};  // along dir: -1, 0, +1
                for (int d = 0; d < nd; ++d) {
                    const std::array<int, 3> o = comps(a.stencil()[d]);
                    bool inside = true;
                    for (std::size_t e = 0; e < 3; ++e) {
                        inside = inside && x[e] + o[e] >= 0 && x[e] + o[e] < ext[e];
                    }
                    if (!inside) continue;
                    double trace = 0.0;
                    for (int c = 0; c < r; ++c) trace += a.value(d, cell, c, c);
                    plane[static_cast<std::size_t>(o[static_cast<std::size_t>(s.dir)] + 1)] +=
                        trace;
                }
                if (plane[1] <= 0.0) continue;
                const double wl = -plane[0] / plane[1];
                const double wr = -plane[2] / plane[1];
                if (wl < 0.0 || wl > 1.0 || wr < 0.0 || wr > 1.0) continue;
                s.w_left[static_cast<std::size_t>(cell)] = wl;
                s.w_right[static_cast<std::size_t>(cell)] = wr;
            }
        }
    }
}

/// Keeps the offsets with any nonzero value, plus the centre.
SgDiaMatrix<double> prune(SgDiaMatrix<double>&& a) {
    std::vector<Offset> kept;
    std::vector<int> from;
    for (int d = 0; d < a.stencil().size(); ++d) {
        const double* v = a.diagonal(d);
        const bool nonzero = d == a.stencil().center() ||
                             std::any_of(v, v + a.diag_stride(), [](double x) { return x != 0; });
        if (!nonzero) continue;
        kept.push_back(a.stencil()[d]);
        from.push_back(d);
    }
    if (static_cast<int>(kept.size()) == a.stencil().size()) return std::move(a);
    SgDiaMatrix<double> p(a.box(), Stencil(kept), a.block());
    for (std::size_t q = 0; q < kept.size(); ++q) {
        const double* v = a.diagonal(from[q]);
        std::copy(v, v + a.diag_stride(), p.diagonal(static_cast<int>(q)));
    }
    return p;
}

/// A_c = P_s^T A P_s. For coarse cell I (along s.dir) the fine rows are f = 2I+s' (s' = 0,1,2)
/// with P[f, I] = w_right(2I), 1, w_left(2I+2); a fine neighbour g = f + o reaches coarse J
/// with P[g, J] = 1 (g = 2J+1) or w_left(g) (J = g/2 - 1), w_right(g) (J = g/2) for even g.
/// Since |g - 2I - 1| <= 2, J - I lies in {-1, 0, 1}: the stencil stays 27-point.
SgDiaMatrix<double> galerkin_step(const SgDiaMatrix<double>& a, const DirectionalTransfer& s) {
    const Box& fb = a.box();
    const Box& cb = s.coarse;
    const std::size_t dir = static_cast<std::size_t>(s.dir);
    const int nd = a.stencil().size();
    // Coarse structure: every perpendicular part of a fine offset with each O in {-1, 0, 1}.
    std::array<bool, 27> present{};
    for (const Offset& o : a.stencil().offsets()) {
        std::array<int, 3> c = comps(o);
        for (int big_o = -1; big_o <= 1; ++big_o) {
            c[dir] = big_o;
            present[static_cast<std::size_t>(lex27(c[0], c[1], c[2]))] = true;
        }
    }
    std::vector<Offset> coarse_offsets;
    for (int l = 0; l < 27; ++l) {
        if (present[static_cast<std::size_t>(l)]) {
            coarse_offsets.push_back(Offset{l % 3 - 1, (l / 3) % 3 - 1, l / 9 - 1});
        }
    }
    SgDiaMatrix<double> c(cb, Stencil(coarse_offsets), a.block());
    // target[d][J - I + 1]: the coarse diagonal fine offset d lands on.
    std::vector<std::array<int, 3>> target(static_cast<std::size_t>(nd));
    std::vector<std::array<int, 3>> off(static_cast<std::size_t>(nd));
    std::vector<std::int64_t> lin(static_cast<std::size_t>(nd));
    for (int d = 0; d < nd; ++d) {
        std::array<int, 3> o = comps(a.stencil()[d]);
        off[static_cast<std::size_t>(d)] = o;
        lin[static_cast<std::size_t>(d)] = o[0] + std::int64_t{fb.nx} * (o[1] + std::int64_t{fb.ny} * o[2]);
        for (int big_o = -1; big_o <= 1; ++big_o) {
            o[dir] = big_o;
            target[static_cast<std::size_t>(d)][static_cast<std::size_t>(big_o + 1)] =
                c.stencil().find(Offset{o[0], o[1], o[2]});
        }
    }
    const int r = a.block();
    const std::int64_t rr = std::int64_t{r} * r;
    const std::array<int, 3> ext{fb.nx, fb.ny, fb.nz};
    const std::array<std::int64_t, 3> fstride{1, fb.nx, std::int64_t{fb.nx} * fb.ny};
    const int n = fb.extent(s.dir);
    const int nc = cb.extent(s.dir);
#pragma omp parallel for collapse(2) schedule(static) if (cb.cells() > kParallelCells)
    for (int ck = 0; ck < cb.nz; ++ck) {
        for (int cj = 0; cj < cb.ny; ++cj) {
            for (int ci = 0; ci < cb.nx; ++ci) {
                const std::int64_t cell_c = (std::int64_t{ck} * cb.ny + cj) * cb.nx + ci;
                std::array<int, 3> x{ci, cj, ck};
                const int big_i = x[dir];
                for (int sp = 0; sp < 3; ++sp) {
                    const int f = 2 * big_i + sp;
                    if (f >= n) break;
                    x[dir] = f;
                    const std::int64_t cell_f = x[0] + fstride[1] * x[1] + fstride[2] * x[2];
                    const double p = sp == 1 ? 1.0 : sp == 0 ? s.right(cell_f) : s.left(cell_f);
                    if (p == 0.0) continue;
                    const auto add = [&](int d, int big_j, double w) {
                        const int dc = target[static_cast<std::size_t>(d)]
                                             [static_cast<std::size_t>(big_j - big_i + 1)];
                        const double* src = a.diagonal(d) + cell_f * rr;
                        double* dst = c.diagonal(dc) + cell_c * rr;
                        for (std::int64_t q = 0; q < rr; ++q) dst[q] += w * src[q];
                    };
                    for (int d = 0; d < nd; ++d) {
                        const std::array<int, 3>& o = off[static_cast<std::size_t>(d)];
                        bool inside = true;
                        for (std::size_t e = 0; e < 3; ++e) {
                            inside = inside && x[e] + o[e] >= 0 && x[e] + o[e] < ext[e];
                        }
                        if (!inside) continue;
                        const int g = x[dir] + o[dir];
                        if (g % 2 == 1) {
                            add(d, (g - 1) / 2, p);
                            continue;
                        }
                        const std::int64_t cell_g = cell_f + lin[static_cast<std::size_t>(d)];
                        if (g / 2 >= 1) add(d, g / 2 - 1, p * s.left(cell_g));
                        if (g / 2 < nc) add(d, g / 2, p * s.right(cell_g));
                    }
                }
            }
        }
    }
    return prune(std::move(c));
}

}  // namespace

std::optional<CoarseLevel> coarsen(const SgDiaMatrix<double>& a, const CoarseningOptions& opt) {
    const std::vector<int> dirs = choose_directions(a, opt);
    if (dirs.empty()) return std::nullopt;
    std::vector<DirectionalTransfer> steps;
    SgDiaMatrix<double> owned;            // the latest intermediate operator
    const SgDiaMatrix<double>* cur = &a;  // no copy of the fine operator
    for (int dir : dirs) {
        DirectionalTransfer s;
        s.dir = dir;
        s.fine = cur->box();
        s.coarse = cur->box();
        (dir == 0 ? s.coarse.nx : dir == 1 ? s.coarse.ny : s.coarse.nz) = s.fine.extent(dir) / 2;
        s.block = cur->block();
        if (opt.operator_dependent) operator_weights(*cur, s);
        owned = galerkin_step(*cur, s);
        cur = &owned;
        steps.push_back(std::move(s));
    }
    return CoarseLevel{std::move(owned), Transfer(std::move(steps))};
}

}  // namespace mpmg
