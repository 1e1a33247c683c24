// The directional Galerkin product one coarse x-line at a time (see galerkin.cpp).
#include "structured/galerkin_line.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/prefault.hpp"
#include "kernels/combine_simd.hpp"

namespace mpmg::galerkin {

namespace {

int coarse_j(int g, Reach r) {
    return r == Reach::odd ? (g - 1) / 2 : r == Reach::left ? g / 2 - 1 : g / 2;
}

Int3 comps(const Offset& o) { return {o.dx, o.dy, o.dz}; }

/// True when coarse line cj has, for every fine offset and fine row, its fine row and neighbour
/// inside along y and (y step) every coarse neighbour J the neighbour reaches: what
/// source_of() and yz_runs() decide from cj.
bool every_term_along_y(const Plan& p, int cj) {
    for (const Int3& o : p.off) {
        for (int sp = 0; sp < 3; ++sp) {
            const int fy = p.dir == 1 ? 2 * cj + sp : cj;
            if ((p.dir == 1 && fy >= p.n) || fy + o[1] < 0 || fy + o[1] >= p.ext[1]) return false;
            if (p.dir != 1) continue;
            const int g = fy + o[1];
            for (const Reach reach : {Reach::odd, Reach::left, Reach::right}) {
                if (((g & 1) != 0) != (reach == Reach::odd)) continue;
                const int j = coarse_j(g, reach);
                if (j < 0 || j >= p.nc) return false;
            }
        }
    }
    return true;
}

}  // namespace

Stencil coarse_stencil(const Stencil& fine, std::size_t dir) {
    std::array<bool, 27> present{};
    for (const Offset& o : fine.offsets()) {
        Int3 c = comps(o);
        for (int big_o = -1; big_o <= 1; ++big_o) {
            c[dir] = big_o;
            present[static_cast<std::size_t>(Stencil::lex(Offset{c[0], c[1], c[2]}))] = true;
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
    // The lines with every term: an interval (the conditions are monotone in cj); anything
    // else caches nothing.
    const int ny = s.coarse.ny;
    int lo = 0;
    while (lo < ny && !every_term_along_y(p, lo)) ++lo;
    int hi = lo;
    while (hi < ny && every_term_along_y(p, hi)) ++hi;
    for (int cj = hi; cj < ny; ++cj) {
        if (every_term_along_y(p, cj)) hi = lo;
    }
    p.full_lo = lo;
    p.full_hi = hi;
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

/// Where fine diagonal d, fine row sp (f = 2I + sp) of the coarse x-line (cj, ck) reads: its
/// runs, the fine x-line, and how a coarse ci maps onto it.
struct Source {
    Runs runs;
    const double* src = nullptr;  ///< the fine x-line (fy, fz) of diagonal d
    std::int64_t x0 = 0;          ///< fine x of coarse ci: x0 + ci * step
    std::int64_t cf0 = 0;         ///< fine cell index (for the weights): cf0 + ci * step
    std::int64_t step = 1;
};

/// False when the row or its neighbour lies outside along y or z for the whole line.
bool source_of(const Plan& p, int d, int sp, int cj, int ck, Source& out) {
    const std::size_t dir = p.dir;
    const Int3& o = p.off[static_cast<std::size_t>(d)];
    // The fine cell of coarse cell (ci, cj, ck) is (fx, fy, fz), its coordinate along dir
    // 2 c + sp. The row and its neighbour must lie inside along y and z for the whole line;
    // along x the runs give the valid range.
    const int fy = dir == 1 ? 2 * cj + sp : cj;
    const int fz = dir == 2 ? 2 * ck + sp : ck;
    if ((dir == 1 && fy >= p.n) || (dir == 2 && fz >= p.n) || fy + o[1] < 0 ||
        fy + o[1] >= p.ext[1] || fz + o[2] < 0 || fz + o[2] >= p.ext[2]) {
        return false;
    }
    out.runs = dir == 0 ? p.xruns[static_cast<std::size_t>(3 * d + sp)] : yz_runs(p, o, sp, cj, ck);
    out.x0 = dir == 0 ? sp : 0;
    out.cf0 = out.x0 + p.stride[1] * fy + p.stride[2] * fz;
    out.step = dir == 0 ? 2 : 1;
    out.src = p.in.line(static_cast<std::size_t>(d), fy, fz);
    return true;
}

/// Adds fine diagonal d, fine row sp (f = 2I + sp) of the coarse x-line (cj, ck) into `acc`.
void accumulate(const Plan& p, int d, int sp, int cj, int ck, double* acc) {
    Source at;
    if (!source_of(p, d, sp, cj, ck, at)) return;
    const Runs& runs = at.runs;
    const std::int64_t x0 = at.x0, cf0 = at.cf0, step = at.step;
    const double* src = at.src;
    const std::int64_t lin = p.lin[static_cast<std::size_t>(d)];
    const double* pw = sp == 1 ? nullptr : sp == 0 ? p.wr : p.wl;
    const double pc = sp == 1 ? 1.0 : 0.5;
    for (int k = 0; k < runs.count; ++k) {
        const Run& run = runs.run[static_cast<std::size_t>(k)];
        const Reach reach = run.reach;
        const int lo = run.lo, hi = run.hi, delta = run.delta;
        double* dst =
            acc +
            p.target[static_cast<std::size_t>(d)][static_cast<std::size_t>(delta + 1)] * p.line;
        const double* qw = reach == Reach::odd ? nullptr : reach == Reach::left ? p.wl : p.wr;
        const double qc = reach == Reach::odd ? 1.0 : 0.5;
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

/// Builds the terms of the coarse x-line (cj, ck) of an operator with constant weights (1/2)
/// into `t`: in the order accumulate() would add them (fine diagonal, fine row, run),
/// stably bucketed by output offset, with each output's covered ranges.
void build_terms(const Plan& p, int cj, int ck, LineCache& t) {
    std::array<Term, LineCache::kMaxTerms> terms;
    std::array<int, LineCache::kMaxTerms> term_dc;
    t.first.fill(0);
    t.count = 0;
    t.step = 1;
    const int nd = static_cast<int>(p.off.size());
    for (int d = 0; d < nd; ++d) {
        for (int sp = 0; sp < 3; ++sp) {
            Source at;
            if (!source_of(p, d, sp, cj, ck, at)) continue;
            t.step = at.step;
            const double pc = sp == 1 ? 1.0 : 0.5;
            for (int k = 0; k < at.runs.count; ++k) {
                const Run& run = at.runs.run[static_cast<std::size_t>(k)];
                const double qc = run.reach == Reach::odd ? 1.0 : 0.5;
                const int dc =
                    p.target[static_cast<std::size_t>(d)][static_cast<std::size_t>(run.delta + 1)];
                terms[static_cast<std::size_t>(t.count)] = {at.src + at.x0 * p.rr, pc * qc, run.lo,
                                                            run.hi};
                term_dc[static_cast<std::size_t>(t.count)] = dc;
                ++t.first[static_cast<std::size_t>(dc + 1)];
                ++t.count;
            }
        }
    }
    // Stable bucketing by output offset keeps each output's terms in accumulate()'s order.
    for (int dc = 0; dc < p.ndc; ++dc) {
        t.first[static_cast<std::size_t>(dc + 1)] += t.first[static_cast<std::size_t>(dc)];
    }
    std::array<int, 28> next = t.first;
    for (int k = 0; k < t.count; ++k) {
        const int dc = term_dc[static_cast<std::size_t>(k)];
        t.sorted[static_cast<std::size_t>(next[static_cast<std::size_t>(dc)]++)] =
            terms[static_cast<std::size_t>(k)];
    }
    for (int dc = 0; dc < p.ndc; ++dc) {
        const auto u = static_cast<std::size_t>(dc);
        const int t0 = t.first[u], m = t.first[u + 1] - t0;
        if (m == 0) continue;
        const Term* tm = t.sorted.data() + t0;
        int lo = tm[0].lo, hi = tm[0].hi, all_lo = tm[0].lo, all_hi = tm[0].hi;
        for (int k = 1; k < m; ++k) {
            lo = std::min(lo, tm[k].lo);
            hi = std::max(hi, tm[k].hi);
            all_lo = std::max(all_lo, tm[k].lo);
            all_hi = std::min(all_hi, tm[k].hi);
        }
        if (all_lo >= all_hi) all_lo = all_hi = hi;  // no common range: every cell at the ends
        t.lo[u] = lo;
        t.hi[u] = hi;
        t.all_lo[u] = all_lo;
        t.all_hi[u] = all_hi;
    }
}

/// Sums the terms of `t`, their fine lines moved by `shift` values, into the coarse line: in
/// registers over the cells every term covers (kernels::weighted_sum; weighted_block_sum for
/// r x r blocks) and one by one at the ends, each output value stored once. Bit for bit
/// accumulate()'s result: the same products, added in the same order, starting from 0.
void sum_terms(const Plan& p, const LineCache& t, std::ptrdiff_t shift, const Lines<double>& to,
               int cj, int ck) {
    std::array<const double*, LineCache::kMaxTerms> src;
    std::array<double, LineCache::kMaxTerms> w;
    const std::int64_t step = t.step, rr = p.rr;
    for (int dc = 0; dc < p.ndc; ++dc) {
        const auto u = static_cast<std::size_t>(dc);
        const int t0 = t.first[u], m = t.first[u + 1] - t0;
        double* out = to.line(u, cj, ck);
        if (m == 0) {
            std::fill(out, out + p.line, 0.0);
            continue;
        }
        std::fill(out, out + t.lo[u] * rr, 0.0);  // the cells no term covers
        std::fill(out + t.hi[u] * rr, out + p.line, 0.0);
        const Term* tm = t.sorted.data() + t0;
        for (int k = 0; k < m; ++k) {
            src[static_cast<std::size_t>(k)] = tm[k].src + shift;
            w[static_cast<std::size_t>(k)] = tm[k].w;
        }
        // The ends, where only some terms apply (cell ci: its rr values).
        const auto one = [&](int ci) {
            for (std::int64_t q = 0; q < rr; ++q) {
                double v = 0.0;
                for (int k = 0; k < m; ++k) {
                    if (tm[k].lo <= ci && ci < tm[k].hi) {
                        v = v + tm[k].w * src[static_cast<std::size_t>(k)][ci * step * rr + q];
                    }
                }
                out[ci * rr + q] = v;
            }
        };
        const int all_lo = t.all_lo[u], all_hi = t.all_hi[u];
        for (int ci = t.lo[u]; ci < all_lo; ++ci) one(ci);
        for (int ci = all_hi; ci < t.hi[u]; ++ci) one(ci);
        if (all_lo < all_hi) {
            for (int k = 0; k < m; ++k) src[static_cast<std::size_t>(k)] += all_lo * step * rr;
            if (rr == 1) {
                kernels::weighted_sum(src.data(), w.data(), m, static_cast<int>(step), out + all_lo,
                                      all_hi - all_lo);
            } else {
                kernels::weighted_block_sum(src.data(), w.data(), m, static_cast<int>(step),
                                            static_cast<int>(rr), out + all_lo * rr,
                                            all_hi - all_lo);
            }
        }
    }
}

/// The coarse x-line (cj, ck) by sum_terms, reusing the cached terms when both lines have
/// every term and lie in the same plane: the fine lines then move by whole rows.
void sum_line(const Plan& p, int cj, int ck, const Lines<double>& out, LineCache& cache) {
    const auto full = [&](int j) { return j >= p.full_lo && j < p.full_hi; };
    if (cache.valid && cache.ck == ck && full(cj) && full(cache.cj)) {
        const std::ptrdiff_t rows = p.dir == 1 ? 2 * (cj - cache.cj) : cj - cache.cj;
        sum_terms(p, cache, static_cast<std::ptrdiff_t>(rows * p.in.row), out, cj, ck);
        return;
    }
    build_terms(p, cj, ck, cache);
    cache.valid = true;
    cache.cj = cj;
    cache.ck = ck;
    sum_terms(p, cache, 0, out, cj, ck);
}

}  // namespace

void coarse_line(const Plan& p, int cj, int ck, const Lines<double>& out, double* acc,
                 LineCache& cache) {
    if (p.wl == nullptr && p.wr == nullptr) {
        sum_line(p, cj, ck, out, cache);
        return;
    }
    std::fill(acc, acc + p.ndc * p.line, 0.0);
    const int nd = static_cast<int>(p.off.size());
    for (int d = 0; d < nd; ++d) {
        for (int sp = 0; sp < 3; ++sp) accumulate(p, d, sp, cj, ck, acc);
    }
    for (int dc = 0; dc < p.ndc; ++dc) {
        const double* line = acc + dc * p.line;
        std::copy(line, line + p.line, out.line(static_cast<std::size_t>(dc), cj, ck));
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
    const auto n = static_cast<std::size_t>(ndiag * ring * l.plane);
    reserve_prefaulted(buf, n);  // new pages: faulted in at once (core/prefault.hpp)
    buf.resize(n);
    for (int d = 0; d < ndiag; ++d) l.base.push_back(buf.data() + d * ring * l.plane);
    return l;
}

}  // namespace mpmg::galerkin
