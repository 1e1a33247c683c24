#ifdef MPMG_HAVE_MPI

#include "distributed/dist_hierarchy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "mpmg/errors.hpp"
#include "multigrid/cycle.hpp"
#include "multigrid/hierarchy.hpp"

namespace mpmg::dist {
namespace {

// A level stays distributed while every process block has at least this many cells and at
// least two cells per direction; below, halo latency outweighs the work and the rest of the
// hierarchy is agglomerated onto rank 0.
constexpr std::int64_t kMinLocalCells = 512;

// Level l's setup on this process's block: the serial level built from the block of the level's
// FP64 operator (scaled inside its truncation when the level is), with a HaloBoundary for the
// rest. `block`: this process's block of global.matrix() when the caller has it (else it is
// extracted here). `counts` receives the boundary's truncation counts.
LevelSetup local_setup(const LevelSetup& global, const Partition& p, MPI_Comm comm,
                       const SgDiaMatrix<double>* block, TruncationCounts& counts) {
    LevelSetup s;
    if (block != nullptr) {
        s.source = block;
    } else {
        s.owned = extract_local(global.matrix(), p);
        s.owns = true;
    }
    const int r = global.matrix().block();
    if (!global.s.empty()) s.s = extract_local(global.s, p, r);
    s.scale_in_truncation = global.scale_in_truncation;
    s.scale_transfers = global.scale_transfers;
    s.precision = global.precision;
    s.smoother = global.smoother;
    s.jacobi_weight = global.jacobi_weight;
    s.boundary =
        std::make_shared<HaloBoundary>(global.matrix(), p, global.precision.storage, comm, counts,
                                       global.scale_in_truncation ? &global.s : nullptr);
    // An unscaled FP64 level keeps its block instead of a copy: the caller's (which outlives
    // the hierarchy: no owner), or the one extracted here.
    if (s.precision.storage == Precision::fp64 && s.s.empty()) {
        if (block != nullptr) {
            s.shared_fp64 = not_owned(*block);
        } else {
            auto m = std::make_shared<const SgDiaMatrix<double>>(std::move(s.owned));
            s.source = m.get();
            s.owns = false;
            s.shared_fp64 = std::move(m);
        }
    }
    return s;
}

std::int64_t min_local_cells(const Partition& p) {
    std::int64_t m = std::numeric_limits<std::int64_t>::max();
    for (int r = 0; r < p.size(); ++r) m = std::min(m, p.box(r).cells());
    return m;
}

// Copies between the C-typed data of a serial level and FP64 vectors.
void to_level(const std::vector<double>& v, Level& lev) {
    if (lev.compute() == Precision::fp64) {
        std::copy(v.begin(), v.end(), static_cast<double*>(lev.rhs_data()));
    } else {
        std::transform(v.begin(), v.end(), static_cast<float*>(lev.rhs_data()),
                       [](double x) { return static_cast<float>(x); });
    }
}
void from_level(Level& lev, std::vector<double>& v) {
    const auto n = static_cast<std::size_t>(lev.rows());
    if (lev.compute() == Precision::fp64) {
        const auto* u = static_cast<const double*>(lev.solution_data());
        v.assign(u, u + n);
    } else {
        const auto* u = static_cast<const float*>(lev.solution_data());
        v.assign(u, u + n);
    }
}

}  // namespace

DistHierarchy::DistHierarchy(const SgDiaMatrix<double>& a, const Partition& p,
                             const MultigridOptions& mg, const PrecisionPlan& plan, MPI_Comm comm,
                             const SgDiaMatrix<double>* block0)
    : comm_(comm), mg_(mg), block_(a.block()) {
    GalerkinLevels g = galerkin_levels(a, mg);
    coarse_sweeps_ = g.coarse_sweeps;
    transfers_ = std::move(g.transfers);
    const int nl = static_cast<int>(g.mats.size());
    parts_.push_back(p);
    int l = 0;
    for (; l < nl; ++l) {
        const Partition& pl = parts_.back();
        if (l == nl - 1 || pl.min_extent() < 2 || min_local_cells(pl) < kMinLocalCells) break;
        auto t = std::make_unique<DistTransfer>(transfers_[static_cast<std::size_t>(l)], pl, comm);
        if (!t->valid()) break;
        const Partition next = t->coarse();
        LevelReport rep;
        TruncationCounts ghost;
        const LevelSetup global = level_setup(g, l, mg, plan, rep);
        // The Krylov operator's FP64 block of A serves level 0 when that is A itself.
        const bool reuse = l == 0 && block0 != nullptr && !global.owns && global.source == &a;
        const LevelSetup setup = local_setup(global, pl, comm, reuse ? block0 : nullptr, ghost);
        dist_.push_back(make_level(l, setup, false, rep));
        rep.counts += ghost;
        rep.counts = allreduce(rep.counts, comm);
        dist_transfers_.push_back(std::move(t));
        coarse_.emplace_back();
        rep.matrix_bytes = g.mats[static_cast<std::size_t>(l)]->nnz() * bytes_of(rep.storage);
        report_.push_back(std::move(rep));
        parts_.push_back(next);
    }
    // The tail: every process builds it (so the reports and the overflow checks agree), only
    // rank 0 runs it.
    for (; l < nl; ++l) {
        const bool last = l == nl - 1;
        LevelReport rep;
        LevelSetup setup = level_setup(g, l, mg, plan, rep);
        setup.to_coarse = last ? nullptr : &transfers_[static_cast<std::size_t>(l)];
        setup.shared_fp64 = fp64_to_share(g, l, a, nullptr, setup);
        tail_.push_back(make_level(l, setup, last && g.direct, rep));
        rep.matrix_bytes = g.mats[static_cast<std::size_t>(l)]->nnz() * bytes_of(rep.storage);
        report_.push_back(std::move(rep));
    }
    for (std::size_t i = 0; i < report_.size(); ++i) {
        const LevelReport& rep = report_[i];
        if (rep.counts.overflow > 0 && mg.setup_fallback) {
            throw NumericalError(fmt::format("level {}: {} entries overflow {} storage", i,
                                             rep.counts.overflow, to_string(rep.storage)));
        }
    }
}

DistHierarchy::~DistHierarchy() = default;

double DistHierarchy::grid_complexity() const { return mpmg::grid_complexity(report_); }
double DistHierarchy::operator_complexity() const { return mpmg::operator_complexity(report_); }

void DistHierarchy::gather_to_root(const std::vector<double>& local, std::vector<double>& global) {
    gather(local, parts_[dist_.size()], block_, comm_, global, buf_);
}

void DistHierarchy::scatter_from_root(const std::vector<double>& global,
                                      std::vector<double>& local) {
    scatter(global, parts_[dist_.size()], block_, comm_, local, buf_);
}

void DistHierarchy::cycle(int l, CycleKind kind) {
    const int nd = distributed_levels();
    if (l == nd) {  // agglomerated: the rhs is on rank 0's first tail level
        if (parts_.front().rank() == 0) {
            const double t0 = MPI_Wtime();
            run_cycle(tail_, 0, kind, mg_, coarse_sweeps_);
            comm_stats().tail_s += MPI_Wtime() - t0;
        }
        return;
    }
    Level& lev = *dist_[static_cast<std::size_t>(l)];
    DistTransfer& t = *dist_transfers_[static_cast<std::size_t>(l)];
    lev.smooth(mg_.pre_sweeps, true);
    std::vector<double>& coarse = coarse_[static_cast<std::size_t>(l)];  // kept: no page faults
    lev.residual_unscaled(fine_);
    t.restrict_to(fine_, coarse);
    Level* next = l + 1 < nd ? dist_[static_cast<std::size_t>(l + 1)].get() : nullptr;
    if (next == nullptr) {
        gather_to_root(coarse, global_);
        if (parts_.front().rank() == 0) next = tail_.front().get();
    }
    if (next != nullptr) {
        to_level(l + 1 < nd ? coarse : global_, *next);
        next->finish_rhs();
    }
    switch (kind) {
        case CycleKind::v:
            cycle(l + 1, CycleKind::v);
            break;
        case CycleKind::w:
            cycle(l + 1, CycleKind::w);
            cycle(l + 1, CycleKind::w);
            break;
        case CycleKind::f:
            cycle(l + 1, CycleKind::f);
            cycle(l + 1, CycleKind::v);
            break;
    }
    if (next != nullptr) {
        next->unscale_solution();
        from_level(*next, l + 1 < nd ? coarse : global_);
    }
    if (l + 1 == nd) scatter_from_root(global_, coarse);
    t.interpolate(coarse, fine_);
    lev.add_correction(fine_);
    lev.smooth(mg_.post_sweeps, false);
}

template <class K>
void DistHierarchy::apply(const K* r, K* z) {
    if (!dist_.empty()) {
        dist_.front()->set_rhs(r);
        cycle(0, mg_.cycle);
        dist_.front()->get_solution(z);
        return;
    }
    // Everything agglomerated: gather r, one serial cycle on rank 0, scatter z.
    const Partition& p = parts_.front();
    std::vector<double> local(r, r + p.local().cells() * block_);
    gather_to_root(local, global_);
    if (p.rank() == 0) {
        const double t0 = MPI_Wtime();
        tail_.front()->set_rhs(global_.data());
        run_cycle(tail_, 0, mg_.cycle, mg_, coarse_sweeps_);
        comm_stats().tail_s += MPI_Wtime() - t0;
        tail_.front()->get_solution(global_.data());
    }
    scatter_from_root(global_, local);
    std::transform(local.begin(), local.end(), z, [](double v) { return static_cast<K>(v); });
}

template void DistHierarchy::apply<double>(const double*, double*);
template void DistHierarchy::apply<float>(const float*, float*);

}  // namespace mpmg::dist

#endif  // MPMG_HAVE_MPI
