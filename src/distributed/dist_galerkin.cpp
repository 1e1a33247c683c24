#ifdef MPMG_HAVE_MPI

#include "distributed/dist_galerkin.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "distributed/dist_ops.hpp"
#include "kernels/convert_simd.hpp"
#include "kernels/setup_simd.hpp"
#include "multigrid/truncate.hpp"
#include "structured/sgdia_ops.hpp"

namespace mpmg::dist {
namespace {

constexpr int kRowsTag = 7301;

/// Cells lo .. lo + box - 1 of the global grid.
struct Region {
    std::array<int, 3> lo{};
    Box box;
};

Region intersect(const Region& a, const Region& b) {
    Region r;
    std::array<int, 3> ext{};
    for (std::size_t d = 0; d < 3; ++d) {
        const int first = std::max(a.lo[d], b.lo[d]);
        const int last = std::min(a.lo[d] + a.box.extent(static_cast<int>(d)),
                                  b.lo[d] + b.box.extent(static_cast<int>(d)));
        r.lo[d] = first;
        ext[d] = std::max(0, last - first);
    }
    r.box = Box{ext[0], ext[1], ext[2]};
    return r;
}

Region owned(const Partition& p, int rank) { return {p.lo(rank), p.box(rank)}; }

Region grown(const Partition& p, int rank, int margin) {
    const auto [lo, box] = grown_box(p, rank, margin);
    return {lo, box};
}

/// Calls f(first, at, run) for each x-run of region `r` (global cells) in a matrix on `box`
/// whose first cell is the global cell `lo`: `first` indexes the run's first cell's values in
/// one offset's array, `at` counts the values before the run (runs in z, y order), `run` is
/// the run's values. Returns the values of the region.
template <class F>
std::int64_t for_each_run(const Box& box, const std::array<int, 3>& lo, int block, const Region& r,
                          F&& f) {
    const std::int64_t rr = std::int64_t{block} * block;
    const std::int64_t run = std::int64_t{r.box.nx} * rr;
    std::int64_t at = 0;
    for (int k = 0; k < r.box.nz; ++k) {
        for (int j = 0; j < r.box.ny; ++j) {
            const std::int64_t cell =
                (std::int64_t{r.lo[2] - lo[2] + k} * box.ny + (r.lo[1] - lo[1] + j)) * box.nx +
                (r.lo[0] - lo[0]);
            f(cell * rr, at, run);
            at += run;
        }
    }
    return at;
}

/// The rows of region `r` of `m` (first cell: global `m_lo`) into `buf`, offset after offset.
void pack_rows(const SgDiaMatrix<double>& m, const std::array<int, 3>& m_lo, const Region& r,
               double* buf) {
    for (int d = 0; d < m.stencil().size(); ++d) {
        const double* v = m.diagonal(d);
        buf += for_each_run(m.box(), m_lo, m.block(), r,
                            [&](std::int64_t first, std::int64_t at, std::int64_t run) {
                                std::copy_n(v + first, run, buf + at);
                            });
    }
}

/// The inverse of pack_rows.
void unpack_rows(const double* buf, const Region& r, SgDiaMatrix<double>& m,
                 const std::array<int, 3>& m_lo) {
    for (int d = 0; d < m.stencil().size(); ++d) {
        double* v = m.diagonal(d);
        buf += for_each_run(m.box(), m_lo, m.block(), r,
                            [&](std::int64_t first, std::int64_t at, std::int64_t run) {
                                std::copy_n(buf + at, run, v + first);
                            });
    }
}

/// Offset `ds` of `src`'s rows of region `r` into offset `dd` of `dst` (same block size).
void copy_offset(const SgDiaMatrix<double>& src, const std::array<int, 3>& src_lo, int ds,
                 SgDiaMatrix<double>& dst, const std::array<int, 3>& dst_lo, int dd,
                 const Region& r) {
    copy_cells(src.diagonal(ds), src.box(), src_lo, dst.diagonal(dd), dst.box(), dst_lo, r.lo,
               r.box, std::int64_t{src.block()} * src.block());
}

int as_count(std::int64_t n) {
    if (n > std::numeric_limits<int>::max()) {
        throw std::length_error("distributed setup: a message exceeds MPI's int count");
    }
    return static_cast<int>(n);
}

}  // namespace

std::pair<std::array<int, 3>, Box> grown_box(const Partition& p, int rank, int margin) {
    const auto lo = p.lo(rank);
    const Box b = p.box(rank), g = p.global();
    std::array<int, 3> first{}, ext{};
    for (int d = 0; d < 3; ++d) {
        const auto du = static_cast<std::size_t>(d);
        int a = std::max(0, lo[du] - margin);
        if (margin > 0 && a % 2 != 0) --a;  // even: coarse cells of the box are global ones
        const int e = std::min(g.extent(d), lo[du] + b.extent(d) + margin);
        first[du] = a;
        ext[du] = e - a;
    }
    return {first, Box{ext[0], ext[1], ext[2]}};
}

GhostedRows ghosted_from_global(const SgDiaMatrix<double>& global, const Partition& p, int margin) {
    const auto [lo, box] = grown_box(p, p.rank(), margin);
    GhostedRows g{lo, SgDiaMatrix<double>(box, global.stencil(), global.block())};
    const Region mine{lo, box};
    for (int d = 0; d < global.stencil().size(); ++d) {
        copy_offset(global, {0, 0, 0}, d, g.a, lo, d, mine);
    }
    zero_outside_box(g.a);
    return g;
}

void fill_ghost_rows(GhostedRows& g, const Partition& p, int margin, MPI_Comm comm) {
    const int me = p.rank();
    const Region box = grown(p, me, margin);
    if (box.lo != g.lo || box.box != g.a.box()) {
        throw std::logic_error("fill_ghost_rows: the rows are not this process's grown box");
    }
    const Region mine = owned(p, me);
    const std::int64_t per_cell = std::int64_t{g.a.stencil().size()} * g.a.block() * g.a.block();
    struct Message {
        int peer;
        Region region;
        std::vector<double> values;
    };
    std::vector<Message> sends, recvs;
    for (int q = 0; q < p.size(); ++q) {
        if (q == me) continue;
        const Region to = intersect(grown(p, q, margin), mine);  // my rows q needs
        if (to.box.cells() > 0) {
            Message m{q, to,
                      std::vector<double>(static_cast<std::size_t>(to.box.cells() * per_cell))};
            pack_rows(g.a, g.lo, to, m.values.data());
            sends.push_back(std::move(m));
        }
        const Region from = intersect(box, owned(p, q));  // q's rows I need
        if (from.box.cells() > 0) {
            recvs.push_back(
                {q, from,
                 std::vector<double>(static_cast<std::size_t>(from.box.cells() * per_cell))});
        }
    }
    std::vector<MPI_Request> req;
    req.reserve(sends.size() + recvs.size());
    for (Message& m : recvs) {
        MPI_Request r;
        MPI_Irecv(m.values.data(), as_count(static_cast<std::int64_t>(m.values.size())), MPI_DOUBLE,
                  m.peer, kRowsTag, comm, &r);
        req.push_back(r);
    }
    for (Message& m : sends) {
        MPI_Request r;
        MPI_Isend(m.values.data(), as_count(static_cast<std::int64_t>(m.values.size())), MPI_DOUBLE,
                  m.peer, kRowsTag, comm, &r);
        req.push_back(r);
    }
    MPI_Waitall(static_cast<int>(req.size()), req.data(), MPI_STATUSES_IGNORE);
    for (const Message& m : recvs) unpack_rows(m.values.data(), m.region, g.a, g.lo);
    zero_outside_box(g.a);
}

SgDiaMatrix<double> own_block(const GhostedRows& g, const Partition& p) {
    const Region own = owned(p, p.rank());
    SgDiaMatrix<double> out(own.box, g.a.stencil(), g.a.block());
    for (int d = 0; d < g.a.stencil().size(); ++d) copy_offset(g.a, g.lo, d, out, own.lo, d, own);
    zero_outside_box(out);
    return out;
}

std::optional<SgDiaView<double>> own_planes(const GhostedRows& g, const Partition& p) {
    const Region own = owned(p, p.rank());
    const Box& rb = g.a.box();
    if (own.box.nx != rb.nx || own.box.ny != rb.ny || own.lo[0] != g.lo[0] ||
        own.lo[1] != g.lo[1]) {
        return std::nullopt;
    }
    return planes_of(g.a, own.lo[2] - g.lo[2], own.box.nz);
}

namespace {

/// Calls f(rc, cell, n) for each x-run of this process's cells whose neighbour at offset d lies
/// inside its block (the entries own_block keeps), in own-cell order: `rc` the run's first cell
/// in g's rows, `cell` in the block, `n` its cells. Stops when f returns false.
template <class F>
void for_each_own_run(const GhostedRows& g, const Partition& p, int d, F&& f) {
    const Region own = owned(p, p.rank());
    const Box& b = own.box;
    const Box& rb = g.a.box();
    const Offset& o = g.a.stencil()[d];
    const int i0 = std::max(0, -o.dx), i1 = std::min(b.nx, b.nx - o.dx);
    const int j0 = std::max(0, -o.dy), j1 = std::min(b.ny, b.ny - o.dy);
    const int k0 = std::max(0, -o.dz), k1 = std::min(b.nz, b.nz - o.dz);
    if (i1 <= i0) return;
    for (int k = k0; k < k1; ++k) {
        for (int j = j0; j < j1; ++j) {
            const std::int64_t cell = (std::int64_t{k} * b.ny + j) * b.nx + i0;
            const std::int64_t rc =
                (std::int64_t{k + own.lo[2] - g.lo[2]} * rb.ny + (j + own.lo[1] - g.lo[1])) *
                    rb.nx +
                (i0 + own.lo[0] - g.lo[0]);
            if (!f(rc, cell, std::int64_t{i1 - i0})) return;
        }
    }
}

}  // namespace

bool own_block_holds_multiple(const GhostedRows& g, const Partition& p, double c,
                              SgDiaMatrix<half>& out, HalfFacts* facts) {
    if (out.box() != p.local() || out.stencil().offsets() != g.a.stencil().offsets() ||
        out.block() != g.a.block()) {
        throw std::logic_error("own_block_holds_multiple: out is not shaped as the block");
    }
    const std::int64_t rr = std::int64_t{g.a.block()} * g.a.block();
    std::atomic<bool> exact{true};
    std::vector<HalfFacts> per(static_cast<std::size_t>(g.a.stencil().size()));
#pragma omp parallel for schedule(dynamic, 1)
    for (int d = 0; d < g.a.stencil().size(); ++d) {
        const double* src = g.a.diagonal(d);
        half* dst = out.diagonal(d);
        HalfFacts* f = &per[static_cast<std::size_t>(d)];
        for_each_own_run(g, p, d, [&](std::int64_t rc, std::int64_t cell, std::int64_t n) {
            if (!exact.load(std::memory_order_relaxed)) return false;
            const double* from = src + rc * rr;
            half* to = dst + cell * rr;
            const bool ok = c == 1.0 ? kernels::narrow_exact(from, to, n * rr, f)
                                     : kernels::narrow_exact_multiple(from, c, to, n * rr, f);
            if (!ok) exact.store(false, std::memory_order_relaxed);
            return ok;
        });
    }
    if (!exact.load()) return false;
    if (facts != nullptr) {
        for (const HalfFacts& f : per) *facts += f;
    }
    return true;
}

double own_block_sampled_scale(const GhostedRows& g, const Partition& p) {
    const std::int64_t rr = std::int64_t{g.a.block()} * g.a.block();
    const std::int64_t per = std::min(kScaleSample, p.local().cells() * rr);
    double c = std::numeric_limits<double>::infinity();
    for (int d = 0; d < g.a.stencil().size(); ++d) {
        const double* v = g.a.diagonal(d);
        // The block's first `per` values of offset d; those it zeroes (neighbour outside) are
        // skipped, as sampled_scale skips zeros.
        for_each_own_run(g, p, d, [&](std::int64_t rc, std::int64_t cell, std::int64_t n) {
            if (cell * rr >= per) return false;
            const std::int64_t m = std::min(n * rr, per - cell * rr);
            for (std::int64_t k = 0; k < m; ++k) {
                const double x = std::fabs(v[rc * rr + k]);
                if (x > 0.0 && x < c) c = x;  // NaN and 0 never
            }
            return true;
        });
    }
    return c;
}

std::vector<double> own_values(const std::vector<double>& v, const GhostedRows& g,
                               const Partition& p) {
    const Region own = owned(p, p.rank());
    const int r = g.a.block();
    std::vector<double> out(static_cast<std::size_t>(own.box.cells() * r));
    copy_cells(v.data(), g.a.box(), g.lo, out.data(), own.box, own.lo, own.lo, own.box, r);
    return out;
}

void keep_own_values(std::vector<double>& v, const GhostedRows& g, const Partition& p) {
    const Region own = owned(p, p.rank());
    const Box from = g.a.box(), to = own.box;
    const std::int64_t r = g.a.block(), len = to.nx * r;
    if (static_cast<std::int64_t>(v.size()) != from.cells() * r) {
        throw std::logic_error("keep_own_values: the vector is not on the rows' box");
    }
    // Own cells keep their order and lie in g's box at or after their new place: line by line
    // from the first, each moves down (memmove within a line) without reaching a later line
    // that is still to be read.
    const std::array<int, 3> d{own.lo[0] - g.lo[0], own.lo[1] - g.lo[1], own.lo[2] - g.lo[2]};
    for (int k = 0; k < to.nz; ++k) {
        for (int j = 0; j < to.ny; ++j) {
            const std::int64_t src =
                ((std::int64_t{d[2] + k} * from.ny + (d[1] + j)) * from.nx + d[0]) * r;
            const std::int64_t dst = (std::int64_t{k} * to.ny + j) * len;
            if (src != dst) {
                std::memmove(v.data() + dst, v.data() + src,
                             static_cast<std::size_t>(len) * sizeof(double));
            }
        }
    }
    v.resize(static_cast<std::size_t>(to.cells() * r));
}

std::int64_t global_nnz(const GhostedRows& g, const Partition& p, MPI_Comm comm) {
    // This process's rows: per offset, the own cells whose neighbour lies inside the grid
    // (whether this process or another owns it), counted per direction.
    const long long rr = std::int64_t{g.a.block()} * g.a.block();
    const Box own = p.local(), grid = p.global();
    const auto lo = p.lo();
    const auto inside = [&](int d, int shift) {  // own i along d with 0 <= i + shift < grid
        const int first = std::max(lo[static_cast<std::size_t>(d)], -shift);
        const int last =
            std::min(lo[static_cast<std::size_t>(d)] + own.extent(d), grid.extent(d) - shift);
        return std::max(0LL, 0LL + last - first);
    };
    long long n = 0, all = 0;
    for (const Offset& o : g.a.stencil().offsets()) {
        n += inside(0, o.dx) * inside(1, o.dy) * inside(2, o.dz) * rr;
    }
    MPI_Allreduce(&n, &all, 1, MPI_LONG_LONG, MPI_SUM, comm);
    return all;
}

SgDiaMatrix<double> gather_whole(const GhostedRows& g, const Partition& p, MPI_Comm comm) {
    const std::int64_t per_cell = std::int64_t{g.a.stencil().size()} * g.a.block() * g.a.block();
    std::vector<int> counts(static_cast<std::size_t>(p.size())), displs(counts.size());
    std::int64_t total = 0;
    for (int q = 0; q < p.size(); ++q) {
        const std::int64_t n = p.box(q).cells() * per_cell;
        counts[static_cast<std::size_t>(q)] = as_count(n);
        displs[static_cast<std::size_t>(q)] = as_count(total);
        total += n;
    }
    std::vector<double> mine(static_cast<std::size_t>(p.local().cells() * per_cell));
    pack_rows(g.a, g.lo, owned(p, p.rank()), mine.data());
    const bool root = p.rank() == 0;
    std::vector<double> all(root ? static_cast<std::size_t>(total) : 0);
    MPI_Gatherv(mine.data(), as_count(static_cast<std::int64_t>(mine.size())), MPI_DOUBLE,
                all.data(), counts.data(), displs.data(), MPI_DOUBLE, 0, comm);
    if (!root) return {};
    SgDiaMatrix<double> whole(p.global(), g.a.stencil(), g.a.block());
    for (int q = 0; q < p.size(); ++q) {
        unpack_rows(all.data() + displs[static_cast<std::size_t>(q)], owned(p, q), whole,
                    {0, 0, 0});
    }
    return whole;
}

GhostedRows gather_merged_rows(const GhostedRows& g, const Partition& p, const Partition& merged,
                               int margin, MPI_Comm comm, MPI_Comm sub) {
    constexpr int kTag = 7102;
    const std::int64_t per_cell = std::int64_t{g.a.stencil().size()} * g.a.block() * g.a.block();
    const int me = p.rank(), m = p.merged_rank(me);
    std::vector<double> mine(static_cast<std::size_t>(p.local().cells() * per_cell));
    pack_rows(g.a, g.lo, owned(p, me), mine.data());
    if (p.holder(m) != me) {
        MPI_Send(mine.data(), as_count(static_cast<std::int64_t>(mine.size())), MPI_DOUBLE,
                 p.holder(m), kTag, comm);
        return {};
    }
    const auto [lo, box] = grown_box(merged, m, margin);
    GhostedRows out{lo, SgDiaMatrix<double>(box, g.a.stencil(), g.a.block())};
    unpack_rows(mine.data(), owned(p, me), out.a, out.lo);
    std::vector<double> in;
    for (const int r : p.members(m)) {
        if (r == me) continue;
        in.resize(static_cast<std::size_t>(p.box(r).cells() * per_cell));
        MPI_Recv(in.data(), as_count(static_cast<std::int64_t>(in.size())), MPI_DOUBLE, r, kTag,
                 comm, MPI_STATUS_IGNORE);
        unpack_rows(in.data(), owned(p, r), out.a, out.lo);
    }
    fill_ghost_rows(out, merged, margin, sub);
    return out;
}

std::array<double, 3> direction_strengths(const GhostedRows& g, const Partition& p, MPI_Comm comm) {
    // Per offset (in the 27-point order): sum of |a_ij| and entry count over this process's
    // rows whose neighbour lies inside the grid.
    double sums[27] = {}, counts[27] = {};
    const Box& b = g.a.box();
    const Box gb = p.global();
    const auto lo = p.lo();
    const Box own = p.local();
    const std::int64_t rr = std::int64_t{g.a.block()} * g.a.block();
    for (int d = 0; d < g.a.stencil().size(); ++d) {
        const Offset& o = g.a.stencil()[d];
        if (o == Offset{}) continue;
        const double* v = g.a.diagonal(d);
        // Global x range of the cells whose neighbour along x is inside the grid.
        const int i0 = std::max(lo[0], o.dx < 0 ? 1 : 0);
        const int i1 = std::min(lo[0] + own.nx, o.dx > 0 ? gb.nx - 1 : gb.nx);
        double s = 0.0, n = 0.0;
        for (int k = lo[2]; k < lo[2] + own.nz && i1 > i0; ++k) {
            if (k + o.dz < 0 || k + o.dz >= gb.nz) continue;
            for (int j = lo[1]; j < lo[1] + own.ny; ++j) {
                if (j + o.dy < 0 || j + o.dy >= gb.ny) continue;
                const std::int64_t cell =
                    (std::int64_t{k - g.lo[2]} * b.ny + (j - g.lo[1])) * b.nx + (i0 - g.lo[0]);
                s += kernels::sum_abs(v + cell * rr, (i1 - i0) * rr);
                n += static_cast<double>((i1 - i0) * rr);
            }
        }
        sums[Stencil::lex(o)] = s;
        counts[Stencil::lex(o)] = n;
    }
    double all[54], mine[54];
    std::copy_n(sums, 27, mine);
    std::copy_n(counts, 27, mine + 27);
    MPI_Allreduce(mine, all, 54, MPI_DOUBLE, MPI_SUM, comm);
    return strengths_from_sums(all, all + 27);
}

namespace {

/// The coarse rows after the directional steps `dirs` of the operator whose rows `fine` holds
/// (grown by at least kGalerkinMargin) on partition `p`: every process's own coarse rows by the
/// serial coarsen_along() on its grown box, the coarse stencil agreed over the processes,
/// `margin` ghost rows filled from their owners (collective). With operator-dependent weights
/// (one step only), `weights` receives this process's weight region of the step.
DistCoarseLevel coarse_rows(const GhostedRows& fine, const Partition& p,
                            const std::vector<int>& dirs, const CoarseningOptions& opt, int margin,
                            MPI_Comm comm, StepWeights* weights) {
    Partition cp = p;
    for (int dir : dirs) cp = cp.coarsened(dir);
    // This process's rows of the coarse operator, on the coarsening of its grown box.
    const CoarseLevel local = coarsen_along(fine.a, dirs, opt);
    if (weights != nullptr) {
        const DirectionalTransfer& step = local.transfer.steps().front();
        const auto [lo, box] = weight_region(p, dirs.front());
        weights->lo = lo;
        weights->box = box;
        for (auto [from, to] :
             {std::pair{&step.w_left, &weights->left}, {&step.w_right, &weights->right}}) {
            to->resize(static_cast<std::size_t>(box.cells()));
            copy_cells(from->data(), fine.a.box(), fine.lo, to->data(), box, lo, lo, box, 1);
        }
    }
    std::array<int, 3> clo = fine.lo;
    for (int dir : dirs) clo[static_cast<std::size_t>(dir)] /= 2;  // fine.lo is even there
    const Region own = owned(cp, cp.rank());
    const Box& lb = local.a.box();
    const std::int64_t rr = std::int64_t{local.a.block()} * local.a.block();

    // The coarse stencil: offsets with a nonzero entry in some process's own rows (to cells
    // inside the grid), plus the centre; the serial product keeps exactly these.
    int nonzero[27] = {}, any[27] = {};
    const Box cg = cp.global();
    for (int d = 0; d < local.a.stencil().size(); ++d) {
        const Offset& o = local.a.stencil()[d];
        int& z = nonzero[Stencil::lex(o)];
        const double* v = local.a.diagonal(d);
        for (int k = own.lo[2]; k < own.lo[2] + own.box.nz && !z; ++k) {
            if (k + o.dz < 0 || k + o.dz >= cg.nz) continue;
            for (int j = own.lo[1]; j < own.lo[1] + own.box.ny && !z; ++j) {
                if (j + o.dy < 0 || j + o.dy >= cg.ny) continue;
                const int i0 = std::max(own.lo[0], o.dx < 0 ? 1 : 0);
                const int i1 = std::min(own.lo[0] + own.box.nx, o.dx > 0 ? cg.nx - 1 : cg.nx);
                if (i1 <= i0) continue;
                const std::int64_t cell =
                    (std::int64_t{k - clo[2]} * lb.ny + (j - clo[1])) * lb.nx + (i0 - clo[0]);
                const double* row = v + cell * rr;
                z = std::any_of(row, row + (i1 - i0) * rr, [](double x) { return x != 0; });
            }
        }
    }
    nonzero[Stencil::lex(Offset{})] = 1;
    MPI_Allreduce(nonzero, any, 27, MPI_INT, MPI_MAX, comm);
    std::vector<Offset> offsets;
    for (int l = 0; l < 27; ++l) {
        if (any[l]) offsets.push_back(Offset{l % 3 - 1, (l / 3) % 3 - 1, l / 9 - 1});
    }

    DistCoarseLevel out;
    out.coarse = cp;
    const Region box = grown(cp, cp.rank(), margin);
    out.rows.lo = box.lo;
    out.rows.a = SgDiaMatrix<double>(box.box, Stencil(std::move(offsets)), local.a.block());
    // The own rows, offset by offset: those of the agreed stencil (the others are zero here).
    for (int d = 0; d < local.a.stencil().size(); ++d) {
        const int dd = out.rows.a.stencil().find(local.a.stencil()[d]);
        if (dd >= 0) copy_offset(local.a, clo, d, out.rows.a, box.lo, dd, own);
    }
    fill_ghost_rows(out.rows, cp, margin, comm);
    return out;
}

}  // namespace

std::optional<DistCoarseLevel> coarsen(const GhostedRows& fine, const Partition& p,
                                       const CoarseningOptions& opt, int margin, MPI_Comm comm) {
    if (margin < kGalerkinMargin) {
        throw std::logic_error("distributed coarsen: margin must be >= kGalerkinMargin");
    }
    const Region need = grown(p, p.rank(), kGalerkinMargin);
    if (intersect(need, Region{fine.lo, fine.a.box()}).box != need.box) {
        throw std::logic_error("distributed coarsen: fewer ghost rows than kGalerkinMargin");
    }
    const std::vector<int> dirs =
        choose_directions(direction_strengths(fine, p, comm), p.global(), opt);
    if (dirs.empty()) return std::nullopt;
    Partition cp = p;
    for (int dir : dirs) cp = cp.coarsened(dir);
    for (int q = 0; q < cp.size(); ++q) {
        if (cp.box(q).cells() == 0) return std::nullopt;
    }
    DistCoarseLevel out;
    if (!opt.operator_dependent) {
        out = coarse_rows(fine, p, dirs, opt, margin, comm, nullptr);
    } else {
        // A step's weights come from the operator of the step before, whose rows a process's
        // grown box gives exactly only on its own cells and one more (the margin's argument, in
        // the header, per step): so one step at a time, the ghost rows of each intermediate
        // operator filled from their owners before the next step reads them.
        GhostedRows between;
        const GhostedRows* cur = &fine;
        Partition cur_p = p;
        for (std::size_t i = 0; i < dirs.size(); ++i) {
            const bool last = i + 1 == dirs.size();
            StepWeights w;
            DistCoarseLevel step =
                coarse_rows(*cur, cur_p, {dirs[i]}, opt, last ? margin : kGalerkinMargin, comm, &w);
            out.weights.push_back(std::move(w));
            between = std::move(step.rows);
            cur = &between;
            cur_p = step.coarse;
        }
        out.coarse = cur_p;
        out.rows = std::move(between);
    }
    // The whole grid's steps (boxes and directions; the weights are in out.weights).
    out.transfer = Transfer(linear_steps(p.global(), dirs, fine.a.block()));
    return out;
}

}  // namespace mpmg::dist

#endif  // MPMG_HAVE_MPI
