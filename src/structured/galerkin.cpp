// Directional Galerkin product A_c = P_d^T A P_d computed on the SG-DIA structure in FP64
// (ICPP'24 §4.1: coarsening happens in high precision before any truncation).
//
// For coarse index I along d the fine rows are f = 2I+s (s = 0, 1, 2) with P[f, I] = w_right(2I),
// 1, w_left(2I+2). A fine neighbour g = f + o reaches coarse J with P[g, J] = 1 for odd g
// (J = (g-1)/2), and w_left(g) (J = g/2 - 1), w_right(g) (J = g/2) for even g. Since
// |g - 2I - 1| <= 2, J - I lies in {-1, 0, 1}: the stencil stays inside the 27-point one.
//
// Work is organised per coarse x-line, per fine diagonal, per fine row s: along such a line the
// parity of g and J - I are constant and the valid cells form one interval, so the inner loop is
// a plain (strided) axpy. The line's coarse rows are summed in registers and stored once
// (constant weights), or accumulated in a buffer and copied (operator-dependent weights), so
// only one or two diagonals are streamed at a time (on power-of-two grids the diagonals lie a
// power of two apart, and touching all of them per cell thrashes the caches).
//
// Several steps at once (galerkin_steps): the x and y steps keep each z-plane to itself, so a
// plane of the fine operator goes through them alone, and the z step (always the last) reads
// three consecutive planes of its input. The intermediate operators then exist only as one
// plane, or a ring of three, per thread: no whole intermediate matrix is written, read back
// and faulted into memory (on this machine a fresh page costs ~2.5 us: ~0.65 ms per MB).
#include "structured/galerkin.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "structured/galerkin_line.hpp"

namespace mpmg {

namespace {

using galerkin::Lines;
using galerkin::Plan;

/// Coarse grids with fewer cells than this are built serially.
constexpr std::int64_t kParallelCells = std::int64_t{1} << 14;

/// Notes the offsets whose coarse x-line (cj, ck), just written, has any nonzero value (the
/// lines cover every value, so no second pass over a result is needed).
void note_nonzero(const Plan& p, const Lines<double>& out, int cj, int ck,
                  std::vector<char>& nonzero) {
    for (int dc = 0; dc < p.ndc; ++dc) {
        char& z = nonzero[static_cast<std::size_t>(dc)];
        if (z) continue;
        const double* line = out.line(static_cast<std::size_t>(dc), cj, ck);
        z = std::any_of(line, line + p.line, [](double x) { return x != 0; });
    }
}

/// A read-only view of the same lines.
Lines<const double> as_input(const Lines<double>& l) {
    Lines<const double> in;
    in.base.assign(l.base.begin(), l.base.end());
    in.plane = l.plane;
    in.row = l.row;
    in.ring = l.ring;
    return in;
}

/// nonzero |= mine, element-wise.
void merge(std::vector<char>& nonzero, const std::vector<char>& mine) {
    for (std::size_t d = 0; d < nonzero.size(); ++d) {
        if (mine[d]) nonzero[d] = 1;
    }
}

/// Keeps the offsets with any nonzero value (nonzero[d]), plus the centre.
SgDiaMatrix<double> prune(SgDiaMatrix<double>&& a, const std::vector<char>& nonzero) {
    std::vector<Offset> kept;
    std::vector<int> from;
    for (int d = 0; d < a.stencil().size(); ++d) {
        if (d != a.stencil().center() && !nonzero[static_cast<std::size_t>(d)]) continue;
        kept.push_back(a.stencil()[d]);
        from.push_back(d);
    }
    if (static_cast<int>(kept.size()) == a.stencil().size()) return std::move(a);
    SgDiaMatrix<double> p(a.box(), Stencil(kept), a.block());
    for (std::size_t q = 0; q < kept.size(); ++q) {
        const double* v = a.diagonal(from[q]);
        std::copy(v, v + a.diag_values(), p.diagonal(static_cast<int>(q)));
    }
    return p;
}

}  // namespace

SgDiaMatrix<double> galerkin_step(const SgDiaMatrix<double>& a, const DirectionalTransfer& s) {
    const Box& cb = s.coarse;
    SgDiaMatrix<double> c(
        cb, galerkin::coarse_stencil(a.stencil(), static_cast<std::size_t>(s.dir)), a.block());
    const Plan p =
        galerkin::make_plan(a.stencil(), a.block(), s, c.stencil(), galerkin::lines_of(a));
    const Lines<double> out = galerkin::lines_of(c);
    std::vector<char> nonzero(static_cast<std::size_t>(p.ndc), 0);
#pragma omp parallel if (cb.cells() > kParallelCells)
    {
        std::vector<double> acc(static_cast<std::size_t>(p.ndc * p.line));
        galerkin::LineCache cache;
        std::vector<char> mine(nonzero.size(), 0);
#pragma omp for collapse(2) schedule(static)
        for (int ck = 0; ck < cb.nz; ++ck) {
            for (int cj = 0; cj < cb.ny; ++cj) {
                galerkin::coarse_line(p, cj, ck, out, acc.data(), cache);
                note_nonzero(p, out, cj, ck, mine);
            }
        }
#pragma omp critical(mpmg_galerkin_nonzero)
        merge(nonzero, mine);
    }
    return prune(std::move(c), nonzero);
}

std::optional<SgDiaMatrix<double>> galerkin_steps(const SgDiaMatrix<double>& a,
                                                  const std::vector<DirectionalTransfer>& steps) {
    const int ns = static_cast<int>(steps.size());
    const int block = a.block();
    std::vector<Stencil> st{a.stencil()};  // st[i]: step i's fine stencil, unpruned
    for (const DirectionalTransfer& s : steps) {
        st.push_back(galerkin::coarse_stencil(st.back(), static_cast<std::size_t>(s.dir)));
    }
    // Directions ascend, so only the last step can be along z; the others keep every z-plane
    // to itself (a row's own values are all a step reads; its neighbours are only tested for
    // lying inside the box).
    const bool has_z = steps.back().dir == 2;
    const int in_plane = has_z ? ns - 1 : ns;
    SgDiaMatrix<double> c(steps.back().coarse, st.back(), block);
    const Lines<double> out = galerkin::lines_of(c);
    std::vector<std::vector<char>> nonzero;
    for (int i = 0; i < ns; ++i) nonzero.emplace_back(st[i + 1].size(), 0);
#pragma omp parallel if (a.box().cells() > kParallelCells)
    {
        // Step i < ns - 1 writes one plane, or the ring of three planes the z step reads.
        std::vector<std::vector<double>> buf(static_cast<std::size_t>(ns));
        std::vector<Lines<double>> to(static_cast<std::size_t>(ns));
        std::vector<Plan> plans;
        std::size_t acc_size = 0;
        for (int i = 0; i < ns; ++i) {
            const auto u = static_cast<std::size_t>(i);
            if (i < ns - 1) {
                const int ring = has_z && i == in_plane - 1 ? 3 : 1;
                to[u] = galerkin::window(buf[u], st[u + 1].size(), steps[u].coarse, block, ring);
            } else {
                to[u] = out;
            }
            plans.push_back(
                galerkin::make_plan(st[u], block, steps[u], st[u + 1],
                                    i == 0 ? galerkin::lines_of(a) : as_input(to[u - 1])));
            acc_size = std::max(acc_size, static_cast<std::size_t>(plans[u].ndc * plans[u].line));
        }
        std::vector<double> acc(acc_size);
        std::vector<galerkin::LineCache> cache(static_cast<std::size_t>(ns));  // one per step
        std::vector<std::vector<char>> mine = nonzero;
        const auto lines = [&](int i, int ck) {
            const auto u = static_cast<std::size_t>(i);
            for (int cj = 0; cj < steps[u].coarse.ny; ++cj) {
                galerkin::coarse_line(plans[u], cj, ck, to[u], acc.data(), cache[u]);
                note_nonzero(plans[u], to[u], cj, ck, mine[u]);
            }
        };
        const auto in_plane_steps = [&](int z) {
            for (int i = 0; i < in_plane; ++i) lines(i, z);
        };
        if (!has_z) {
#pragma omp for schedule(static)
            for (int z = 0; z < a.box().nz; ++z) in_plane_steps(z);
        } else {
            // Coarse plane ck reads planes 2ck .. 2ck+2 of the ring; each thread's planes
            // ascend, so plane 2ck+2 is still there for ck + 1.
            const int nzf = steps.back().fine.nz;
            int next = 0;
#pragma omp for schedule(static)
            for (int ck = 0; ck < steps.back().coarse.nz; ++ck) {
                const int last = std::min(2 * ck + 2, nzf - 1);
                for (int z = std::max(next, 2 * ck); z <= last; ++z) in_plane_steps(z);
                next = last + 1;
                lines(ns - 1, ck);
            }
        }
#pragma omp critical(mpmg_galerkin_nonzero)
        for (int i = 0; i < ns; ++i) {
            merge(nonzero[static_cast<std::size_t>(i)], mine[static_cast<std::size_t>(i)]);
        }
    }
    // Step by step, an intermediate operator would have been pruned before the next step.
    for (int i = 0; i + 1 < ns; ++i) {
        const Stencil& si = st[static_cast<std::size_t>(i + 1)];
        for (int d = 0; d < si.size(); ++d) {
            if (d != si.center() &&
                !nonzero[static_cast<std::size_t>(i)][static_cast<std::size_t>(d)]) {
                return std::nullopt;
            }
        }
    }
    return prune(std::move(c), nonzero.back());
}

}  // namespace mpmg
