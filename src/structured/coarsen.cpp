// Choice of coarsening directions, interpolation weights and the directional Galerkin product
// A_c = P_d^T A P_d on the SG-DIA structure, all in FP64 before any truncation (ICPP'24 §4.1,
// Algorithm 1 lines 1-3).
#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include "core/inside_runs.hpp"
#include "kernels/setup_simd.hpp"
#include "structured/coarsen.hpp"
#include "structured/galerkin.hpp"

namespace mpmg {

namespace {

/// Grids with fewer cells than this are processed serially.
constexpr std::int64_t kParallelCells = std::int64_t{1} << 14;

std::array<int, 3> comps(const Offset& o) { return {o.dx, o.dy, o.dz}; }

}  // namespace

std::vector<int> choose_directions(const std::array<double, 3>& strength, const Box& box,
                                   const CoarseningOptions& opt) {
    const int min_extent = std::max(opt.min_extent, 2);
    std::vector<int> eligible;
    double strongest = 0.0;
    for (int dir = 0; dir < 3; ++dir) {
        if (box.extent(dir) < min_extent) continue;
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

namespace {

/// Operator-dependent weights from the stencil collapsed perpendicular to `s.dir` (trace of
/// each block): w_left = -a_minus / a_centre, w_right = -a_plus / a_centre, falling back to
/// 1/2 each where a_centre <= 0 or either weight lies outside [0, 1].
void operator_weights(const SgDiaMatrix<double>& a, DirectionalTransfer& s) {
    const Box& b = a.box();
    const int r = a.block();
    const std::int64_t rr = std::int64_t{r} * r;
    const std::int64_t cells = b.cells();
    const std::size_t dir = static_cast<std::size_t>(s.dir);
    s.w_left.assign(static_cast<std::size_t>(cells), 0.5);
    s.w_right.assign(static_cast<std::size_t>(cells), 0.5);
    // Per x-line, one diagonal at a time (touching all diagonals per cell thrashes the caches).
#pragma omp parallel if (cells > kParallelCells)
    {
        std::vector<double> plane(3 * static_cast<std::size_t>(b.nx));  // along dir: -1, 0, +1
#pragma omp for collapse(2) schedule(static)
        for (int k = 0; k < b.nz; ++k) {
            for (int j = 0; j < b.ny; ++j) {
                if ((dir == 1 && j % 2 == 1) || (dir == 2 && k % 2 == 1)) continue;
                std::fill(plane.begin(), plane.end(), 0.0);
                const std::int64_t first = (std::int64_t{k} * b.ny + j) * b.nx;
                for (int d = 0; d < a.stencil().size(); ++d) {
                    const std::array<int, 3> o = comps(a.stencil()[d]);
                    if (j + o[1] < 0 || j + o[1] >= b.ny || k + o[2] < 0 || k + o[2] >= b.nz) {
                        continue;
                    }
                    double* acc = plane.data() + (o[dir] + 1) * b.nx;
                    const double* v = a.diagonal(d) + first * rr;
                    for (int i = std::max(0, -o[0]); i < std::min(b.nx, b.nx - o[0]); ++i) {
                        for (int c = 0; c < r; ++c) acc[i] += v[i * rr + c * (r + 1)];
                    }
                }
                for (int i = 0; i < b.nx; i += dir == 0 ? 2 : 1) {
                    const double am = plane[static_cast<std::size_t>(i)];
                    const double a0 = plane[static_cast<std::size_t>(b.nx + i)];
                    const double ap = plane[static_cast<std::size_t>(2 * b.nx + i)];
                    if (a0 <= 0.0) continue;
                    const double wl = -am / a0, wr = -ap / a0;
                    if (wl < 0.0 || wl > 1.0 || wr < 0.0 || wr > 1.0) continue;
                    s.w_left[static_cast<std::size_t>(first + i)] = wl;
                    s.w_right[static_cast<std::size_t>(first + i)] = wr;
                }
            }
        }
    }
}

}  // namespace

std::array<double, 3> direction_strengths(const SgDiaMatrix<double>& a) {
    const std::int64_t rr = std::int64_t{a.block()} * a.block();
    const int nd = a.stencil().size();
    // Per offset: sum of |a_ij| and number of entries (one offset per thread, summed in SIMD
    // lanes: the same result for any thread count), then combined in offset order.
    double sums[27] = {}, counts[27] = {};  // by Stencil::lex
#pragma omp parallel for schedule(dynamic, 1) if (a.box().cells() > kParallelCells)
    for (int d = 0; d < nd; ++d) {
        if (a.stencil()[d] == Offset{}) continue;
        const double* v = a.diagonal(d);
        double s = 0.0;
        std::int64_t n = 0;
        for_each_inside_run(a, d, [&](std::int64_t first, std::int64_t cells) {
            s += kernels::sum_abs(v + first * rr, cells * rr);
            n += cells * rr;
        });
        sums[Stencil::lex(a.stencil()[d])] = s;
        counts[Stencil::lex(a.stencil()[d])] = static_cast<double>(n);
    }
    return strengths_from_sums(sums, counts);
}

std::array<double, 3> strengths_from_sums(const double* sums, const double* counts) {
    std::array<double, 3> sum{}, count{};
    for (int l = 0; l < 27; ++l) {
        const int c[3] = {l % 3 - 1, (l / 3) % 3 - 1, l / 9 - 1};
        for (std::size_t dir = 0; dir < 3; ++dir) {
            if (c[dir] == 0) continue;
            sum[dir] += sums[l];
            count[dir] += counts[l];
        }
    }
    std::array<double, 3> mean{};
    for (std::size_t dir = 0; dir < 3; ++dir)
        mean[dir] = count[dir] > 0 ? sum[dir] / count[dir] : 0;
    return mean;
}

std::optional<CoarseLevel> coarsen(const SgDiaMatrix<double>& a, const CoarseningOptions& opt) {
    const std::vector<int> dirs = choose_directions(direction_strengths(a), a.box(), opt);
    if (dirs.empty()) return std::nullopt;
    return coarsen_along(a, dirs, opt);
}

std::vector<DirectionalTransfer> linear_steps(Box fine, const std::vector<int>& dirs, int block) {
    std::vector<DirectionalTransfer> steps;
    for (int dir : dirs) {
        DirectionalTransfer s;
        s.dir = dir;
        s.fine = fine;
        s.coarse = fine;
        (dir == 0 ? s.coarse.nx : dir == 1 ? s.coarse.ny : s.coarse.nz) = fine.extent(dir) / 2;
        s.block = block;
        fine = s.coarse;
        steps.push_back(std::move(s));
    }
    return steps;
}

CoarseLevel coarsen_along(const SgDiaMatrix<double>& a, const std::vector<int>& dirs,
                          const CoarseningOptions& opt) {
    std::vector<DirectionalTransfer> steps;
    if (!opt.operator_dependent && dirs.size() > 1) {  // all steps at once, plane by plane
        steps = linear_steps(a.box(), dirs, a.block());
        if (auto c = galerkin_steps(a, steps))
            return CoarseLevel{std::move(*c), Transfer(std::move(steps))};
        steps.clear();
    }
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
