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
// a plain (strided) axpy. The line's coarse rows are accumulated in a buffer and stored once, so
// only one or two diagonals are streamed at a time (on power-of-two grids the diagonals lie a
// power of two apart, and touching all of them per cell thrashes the caches).
#include "structured/galerkin.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace mpmg {

namespace {

/// Coarse grids with fewer cells than this are built serially.
constexpr std::int64_t kParallelCells = std::int64_t{1} << 14;

using Int3 = std::array<int, 3>;

/// Which coarse neighbour an even or odd fine g reaches: J = (g + shift) / 2.
enum class Reach { odd, left, right };

int coarse_j(int g, Reach r) {
    return r == Reach::odd ? (g - 1) / 2 : r == Reach::left ? g / 2 - 1 : g / 2;
}

/// One inner loop of accumulate(): the coarse x-indices [lo, hi) of a line whose fine
/// neighbours reach coarse J = I + delta along dir by `reach`.
struct Run {
    Reach reach = Reach::odd;
    int lo = 0, hi = 0, delta = 0;
};
/// The loops of one fine offset and fine row: an odd g reaches one coarse J, an even g two.
struct Runs {
    std::array<Run, 2> run{};
    int count = 0;
    void add(const Run& r) {
        if (r.lo < r.hi) run[static_cast<std::size_t>(count++)] = r;
    }
};

/// What one directional Galerkin product needs, fixed before the loops.
struct Plan {
    const SgDiaMatrix<double>& a;
    const DirectionalTransfer& s;
    std::size_t dir = 0;
    int n = 0, nc = 0;                     ///< fine and coarse extents along dir
    std::int64_t rr = 1;                   ///< block entries
    std::int64_t line = 0;                 ///< values of one coarse x-line
    Int3 ext{};                            ///< fine extents
    std::array<std::int64_t, 3> stride{};  ///< fine cell strides
    std::vector<Int3> off{};               ///< fine offsets
    std::vector<std::int64_t> lin{};       ///< fine offsets as cell-index differences
    std::vector<Int3> target{};            ///< [d][J - I + 1] -> coarse diagonal
    const double* wl = nullptr;            ///< nullptr: 1/2 everywhere
    const double* wr = nullptr;
    /// dir = 0: the loops of fine offset d and row sp, [3 d + sp]; along x they are the same
    /// on every line (only the line's y and z decide whether it has them at all).
    std::vector<Runs> xruns{};
};

Int3 comps(const Offset& o) { return {o.dx, o.dy, o.dz}; }
int lex27(const Int3& o) { return (o[2] + 1) * 9 + (o[1] + 1) * 3 + (o[0] + 1); }

/// Coarse structure: the perpendicular part of every fine offset with each J - I in {-1,0,1}.
Stencil coarse_stencil(const Stencil& fine, std::size_t dir) {
    std::array<bool, 27> present{};
    for (const Offset& o : fine.offsets()) {
        Int3 c = comps(o);
        for (int big_o = -1; big_o <= 1; ++big_o) {
            c[dir] = big_o;
            present[static_cast<std::size_t>(lex27(c))] = true;
        }
    }
    std::vector<Offset> offsets;
    for (int l = 0; l < 27; ++l) {
        if (present[static_cast<std::size_t>(l)]) {
            offsets.push_back(Offset{l % 3 - 1, (l / 3) % 3 - 1, l / 9 - 1});
        }
    }
    return Stencil(std::move(offsets));
}

Plan make_plan(const SgDiaMatrix<double>& a, const DirectionalTransfer& s, const Stencil& cs) {
    Plan p{a, s};
    const Box& fb = a.box();
    p.dir = static_cast<std::size_t>(s.dir);
    p.n = fb.extent(s.dir);
    p.nc = s.coarse.extent(s.dir);
    p.rr = std::int64_t{a.block()} * a.block();
    p.line = std::int64_t{s.coarse.nx} * p.rr;
    p.ext = {fb.nx, fb.ny, fb.nz};
    p.stride = {1, fb.nx, std::int64_t{fb.nx} * fb.ny};
    for (const Offset& o : a.stencil().offsets()) {
        Int3 c = comps(o);
        p.off.push_back(c);
        p.lin.push_back(c[0] + p.stride[1] * c[1] + p.stride[2] * c[2]);
        Int3 t{};
        for (int big_o = -1; big_o <= 1; ++big_o) {
            c[p.dir] = big_o;
            t[static_cast<std::size_t>(big_o + 1)] = cs.find(Offset{c[0], c[1], c[2]});
        }
        p.target.push_back(t);
    }
    if (!s.w_left.empty()) p.wl = s.w_left.data();
    if (!s.w_right.empty()) p.wr = s.w_right.data();
    if (p.dir == 0) {
        // Fine x = 2 ci + sp: its row and its neighbour x + o inside, and the coarse J the
        // neighbour reaches inside; monotone in ci, so one interval per reach.
        const int ncx = s.coarse.nx;
        for (const Int3& o : p.off) {
            for (int sp = 0; sp < 3; ++sp) {
                Runs runs;
                const bool odd = ((sp + o[0]) & 1) != 0;
                for (const Reach reach : {Reach::odd, Reach::left, Reach::right}) {
                    if (odd != (reach == Reach::odd)) continue;
                    const auto ok = [&](int ci) {
                        const int x = 2 * ci + sp;
                        if (x >= p.n || x + o[0] < 0 || x + o[0] >= p.ext[0]) return false;
                        const int j = coarse_j(x + o[0], reach);
                        return j >= 0 && j < p.nc;
                    };
                    int lo = 0, hi = ncx;
                    while (lo < hi && !ok(lo)) ++lo;
                    while (hi > lo && !ok(hi - 1)) --hi;
                    runs.add(
                        {reach, lo, hi, lo < hi ? coarse_j(2 * lo + sp + o[0], reach) - lo : 0});
                }
                p.xruns.push_back(runs);
            }
        }
    }
    return p;
}

/// The loops of fine offset d, fine row sp on coarse line (cj, ck) of a y or z step, whose
/// row and neighbour lie inside along y and z: the fine neighbour's coordinate along dir is
/// the same for the whole line, so the range along x is that of the offset's x component.
Runs yz_runs(const Plan& p, const Int3& o, int sp, int cj, int ck) {
    const int c = p.dir == 1 ? cj : ck;
    const int g = 2 * c + sp + o[p.dir];
    Runs runs;
    const int lo = std::max(0, -o[0]), hi = std::min(p.s.coarse.nx, p.ext[0] - o[0]);
    for (const Reach reach : {Reach::odd, Reach::left, Reach::right}) {
        if (((g & 1) != 0) != (reach == Reach::odd)) continue;
        const int j = coarse_j(g, reach);
        if (j >= 0 && j < p.nc) runs.add({reach, lo, hi, j - c});
    }
    return runs;
}

/// Adds fine diagonal d, fine row sp (f = 2I + sp) of the coarse x-line (cj, ck) into `acc`.
void accumulate(const Plan& p, int d, int sp, int cj, int ck, double* acc) {
    const std::size_t dir = p.dir;
    const Int3& o = p.off[static_cast<std::size_t>(d)];
    // The fine cell of coarse cell (ci, cj, ck) is (fx, fy, fz), its coordinate along dir
    // 2 c + sp. The row and its neighbour must lie inside along y and z for the whole line;
    // along x the runs give the valid range.
    const int fy = dir == 1 ? 2 * cj + sp : cj;
    const int fz = dir == 2 ? 2 * ck + sp : ck;
    if ((dir == 1 && fy >= p.n) || (dir == 2 && fz >= p.n) || fy + o[1] < 0 ||
        fy + o[1] >= p.ext[1] || fz + o[2] < 0 || fz + o[2] >= p.ext[2]) {
        return;
    }
    const Runs runs =
        dir == 0 ? p.xruns[static_cast<std::size_t>(3 * d + sp)] : yz_runs(p, o, sp, cj, ck);
    const std::int64_t cf0 = (dir == 0 ? sp : 0) + p.stride[1] * fy + p.stride[2] * fz;
    const std::int64_t step = dir == 0 ? 2 : 1;
    const std::int64_t lin = p.lin[static_cast<std::size_t>(d)];
    const double* pw = sp == 1 ? nullptr : sp == 0 ? p.wr : p.wl;
    const double pc = sp == 1 ? 1.0 : 0.5;
    const double* src = p.a.diagonal(d);
    for (int k = 0; k < runs.count; ++k) {
        const Run& run = runs.run[static_cast<std::size_t>(k)];
        const Reach reach = run.reach;
        const int lo = run.lo, hi = run.hi, delta = run.delta;
        double* dst =
            acc +
            p.target[static_cast<std::size_t>(d)][static_cast<std::size_t>(delta + 1)] * p.line;
        const double* qw = reach == Reach::odd ? nullptr : reach == Reach::left ? p.wl : p.wr;
        const double qc = reach == Reach::odd ? 1.0 : 0.5;
        if (!pw && !qw && p.rr == 1) {
            const double w = pc * qc;
            for (int ci = lo; ci < hi; ++ci) dst[ci] += w * src[cf0 + ci * step];
            continue;
        }
        if (pw && qw && p.rr == 1) {  // operator-dependent weights, scalar
            for (int ci = lo; ci < hi; ++ci) {
                const std::int64_t cf = cf0 + ci * step;
                dst[ci] += pw[cf] * qw[cf + lin] * src[cf];
            }
            continue;
        }
        for (int ci = lo; ci < hi; ++ci) {
            const std::int64_t cf = cf0 + ci * step;
            const double w = (pw ? pw[cf] : pc) * (qw ? qw[cf + lin] : qc);
            for (std::int64_t q = 0; q < p.rr; ++q) dst[ci * p.rr + q] += w * src[cf * p.rr + q];
        }
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
    SgDiaMatrix<double> c(cb, coarse_stencil(a.stencil(), static_cast<std::size_t>(s.dir)),
                          a.block());
    const Plan p = make_plan(a, s, c.stencil());
    const int nd = a.stencil().size();
    const int ndc = c.stencil().size();
    // Which coarse offsets get any nonzero value, noted while the lines are stored (the
    // lines cover every value, so no second pass over the result is needed).
    std::vector<char> nonzero(static_cast<std::size_t>(ndc), 0);
#pragma omp parallel if (cb.cells() > kParallelCells)
    {
        std::vector<double> acc(static_cast<std::size_t>(ndc * p.line));
        std::vector<char> mine(nonzero.size(), 0);
#pragma omp for collapse(2) schedule(static)
        for (int ck = 0; ck < cb.nz; ++ck) {
            for (int cj = 0; cj < cb.ny; ++cj) {
                std::fill(acc.begin(), acc.end(), 0.0);
                for (int d = 0; d < nd; ++d) {
                    for (int sp = 0; sp < 3; ++sp) accumulate(p, d, sp, cj, ck, acc.data());
                }
                const std::int64_t first = (std::int64_t{ck} * cb.ny + cj) * p.line;
                for (int dc = 0; dc < ndc; ++dc) {
                    const double* line = acc.data() + dc * p.line;
                    std::copy(line, line + p.line, c.diagonal(dc) + first);
                    char& z = mine[static_cast<std::size_t>(dc)];
                    if (!z) z = std::any_of(line, line + p.line, [](double x) { return x != 0; });
                }
            }
        }
#pragma omp critical(mpmg_galerkin_nonzero)
        for (std::size_t dc = 0; dc < nonzero.size(); ++dc) {
            if (mine[dc]) nonzero[dc] = 1;
        }
    }
    return prune(std::move(c), nonzero);
}

}  // namespace mpmg
