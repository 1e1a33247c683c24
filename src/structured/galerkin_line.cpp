// The directional Galerkin product one coarse x-line at a time (see galerkin.cpp).
#include "structured/galerkin_line.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace mpmg::galerkin {

namespace {

int coarse_j(int g, Reach r) {
    return r == Reach::odd ? (g - 1) / 2 : r == Reach::left ? g / 2 - 1 : g / 2;
}

Int3 comps(const Offset& o) { return {o.dx, o.dy, o.dz}; }
int lex27(const Int3& o) { return (o[2] + 1) * 9 + (o[1] + 1) * 3 + (o[0] + 1); }

}  // namespace

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

Plan make_plan(const Stencil& fine, int block, const DirectionalTransfer& s, const Stencil& cs,
               Lines<const double> in) {
    Plan p;
    p.s = &s;
    p.in = std::move(in);
    const Box& fb = s.fine;
    p.dir = static_cast<std::size_t>(s.dir);
    p.n = fb.extent(s.dir);
    p.nc = s.coarse.extent(s.dir);
    p.rr = std::int64_t{block} * block;
    p.line = std::int64_t{s.coarse.nx} * p.rr;
    p.ndc = cs.size();
    p.ext = {fb.nx, fb.ny, fb.nz};
    p.stride = {1, fb.nx, std::int64_t{fb.nx} * fb.ny};
    for (const Offset& o : fine.offsets()) {
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

namespace {

/// The loops of fine offset d, fine row sp on coarse line (cj, ck) of a y or z step, whose
/// row and neighbour lie inside along y and z: the fine neighbour's coordinate along dir is
/// the same for the whole line, so the range along x is that of the offset's x component.
Runs yz_runs(const Plan& p, const Int3& o, int sp, int cj, int ck) {
    const int c = p.dir == 1 ? cj : ck;
    const int g = 2 * c + sp + o[p.dir];
    Runs runs;
    const int lo = std::max(0, -o[0]), hi = std::min(p.s->coarse.nx, p.ext[0] - o[0]);
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
    // Fine x of coarse ci: x0 + ci * step; cell index (for the weights) cf0 + ci * step.
    const std::int64_t x0 = dir == 0 ? sp : 0;
    const std::int64_t cf0 = x0 + p.stride[1] * fy + p.stride[2] * fz;
    const std::int64_t step = dir == 0 ? 2 : 1;
    const std::int64_t lin = p.lin[static_cast<std::size_t>(d)];
    const double* pw = sp == 1 ? nullptr : sp == 0 ? p.wr : p.wl;
    const double pc = sp == 1 ? 1.0 : 0.5;
    const double* src = p.in.line(static_cast<std::size_t>(d), fy, fz);  // fine x-line (fy, fz)
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
            for (int ci = lo; ci < hi; ++ci) dst[ci] += w * src[x0 + ci * step];
            continue;
        }
        if (pw && qw && p.rr == 1) {  // operator-dependent weights, scalar
            for (int ci = lo; ci < hi; ++ci) {
                const std::int64_t cf = cf0 + ci * step;
                dst[ci] += pw[cf] * qw[cf + lin] * src[x0 + ci * step];
            }
            continue;
        }
        for (int ci = lo; ci < hi; ++ci) {
            const std::int64_t cf = cf0 + ci * step;
            const double w = (pw ? pw[cf] : pc) * (qw ? qw[cf + lin] : qc);
            const double* e = src + (x0 + ci * step) * p.rr;
            for (std::int64_t q = 0; q < p.rr; ++q) dst[ci * p.rr + q] += w * e[q];
        }
    }
}

}  // namespace

void coarse_line(const Plan& p, int cj, int ck, double* acc) {
    std::fill(acc, acc + p.ndc * p.line, 0.0);
    const int nd = static_cast<int>(p.off.size());
    for (int d = 0; d < nd; ++d) {
        for (int sp = 0; sp < 3; ++sp) accumulate(p, d, sp, cj, ck, acc);
    }
}

Lines<const double> lines_of(const SgDiaMatrix<double>& a) {
    Lines<const double> l;
    for (int d = 0; d < a.stencil().size(); ++d) l.base.push_back(a.diagonal(d));
    l.row = std::int64_t{a.box().nx} * a.block() * a.block();
    l.plane = l.row * a.box().ny;
    return l;
}

Lines<double> lines_of(SgDiaMatrix<double>& a) {
    Lines<double> l;
    for (int d = 0; d < a.stencil().size(); ++d) l.base.push_back(a.diagonal(d));
    l.row = std::int64_t{a.box().nx} * a.block() * a.block();
    l.plane = l.row * a.box().ny;
    return l;
}

Lines<double> window(std::vector<double>& buf, int ndiag, const Box& box, int block, int ring) {
    Lines<double> l;
    l.row = std::int64_t{box.nx} * block * block;
    l.plane = l.row * box.ny;
    l.ring = ring;
    buf.resize(static_cast<std::size_t>(ndiag * ring * l.plane));
    for (int d = 0; d < ndiag; ++d) l.base.push_back(buf.data() + d * ring * l.plane);
    return l;
}

}  // namespace mpmg::galerkin
