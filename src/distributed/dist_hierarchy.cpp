#ifdef MPMG_HAVE_MPI

#include "distributed/dist_hierarchy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <stdexcept>

#include "distributed/agree.hpp"
#include "distributed/dist_galerkin.hpp"
#include "mpmg/errors.hpp"
#include "multigrid/cycle.hpp"
#include "multigrid/hierarchy.hpp"
#include "multigrid/level_precision.hpp"
#include "multigrid/level_vectors.hpp"
#include "multigrid/scaling.hpp"
#include "multigrid/truncate.hpp"

namespace mpmg::dist {
namespace {

using level_vectors::from_level;
using level_vectors::to_level;

// A level stays distributed while every process block has at least this many cells and at
// least two cells per direction; below, halo latency outweighs the work and the rest of the
// hierarchy is agglomerated: onto the processes of the merged partition (2 x 2 x 2 blocks
// into one) where its blocks are that large again and there are at least two, else onto
// rank 0.
constexpr std::int64_t kMinLocalCells = 512;

// An unscaled FP64 level keeps its block instead of a copy: the caller's (which outlives the
// hierarchy: no owner), or the one the setup owns.
void keep_fp64_block(LevelSetup& s) {
    if (s.precision.storage != Precision::fp64 || !s.s.empty()) return;
    if (!s.owns) {
        s.shared_fp64 = not_owned(*s.source);
        return;
    }
    auto m = std::make_shared<const SgDiaMatrix<double>>(std::move(s.owned));
    s.source = m.get();
    s.owns = false;
    s.shared_fp64 = std::move(m);
}

/// The storage decision's measures of a distributed level (LevelReductions): any, min and
/// counts combined over the processes; counts and nonzeros over each process's own rows, its
/// block (SIMD passes) plus its coupling to other processes.
class Reductions final : public LevelReductions {
public:
    /// `own`: gives this process's block of `rows`, which only counts() reads (may be empty
    /// when counts() is not asked for).
    Reductions(const GhostedRows& rows, const Partition& p, Fp64BlockSource own, MPI_Comm comm)
        : rows_(rows), p_(p), own_(std::move(own)), comm_(comm) {}
    bool any(bool local) const override {
        int in = local ? 1 : 0, out = 0;
        MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MAX, comm_);
        return out != 0;
    }
    double min(double local) const override {
        double out = 0.0;
        MPI_Allreduce(&local, &out, 1, MPI_DOUBLE, MPI_MIN, comm_);
        return out;
    }
    TruncationCounts counts(Precision st, const std::vector<double>* s) const override {
        return st == Precision::fp16 ? counts_as<half>(s) : counts_as<bfloat16>(s);
    }
    std::int64_t nnz() const override { return global_nnz(rows_, p_, comm_); }

private:
    template <class S>
    TruncationCounts counts_as(const std::vector<double>* s) const {
        if (!own_) throw std::logic_error("Reductions: counts() without the block");
        const SgDiaMatrix<double>& own = *own_();
        TruncationCounts c = s != nullptr ? count_scaled_truncation(own, own_values(*s, rows_, p_),
                                                                    range_limits<S>())
                                          : count_truncation<S>(own);
        const int r = own.block();
        for_each_coupling(
            rows_.a, rows_.lo, p_,
            [&](int d, std::int64_t, std::int64_t rc, std::int64_t rn, const std::array<int, 3>&) {
                for (int a = 0; a < r; ++a) {
                    for (int b = 0; b < r; ++b) {
                        (void)truncate_counted<S>(coupling_entry(rows_.a, d, rc, rn, a, b, s), c);
                    }
                }
            });
        return allreduce(c, comm_);
    }

    const GhostedRows& rows_;
    const Partition& p_;
    Fp64BlockSource own_;
    MPI_Comm comm_;
};

/// Level l's setup on this process's rows (the distributed setup): the storage decision of
/// the whole level (decide_storage with Reductions), the level built from this process's block
/// (from `block` when the caller has it, else taken from `rows`; not at all when the level
/// shares `exact`'s FP16 copy of it, or reads it in place), the HaloBoundary for the rest.
/// `ghost` receives the boundary's truncation counts; `rep` the level's report (whole level).
/// `in_place`: `rows` outlive the level and hold only zero or normal values (level 0 of A), so
/// a level that keeps them as they are in FP64 may read its block in place (own_planes).
LevelSetup distributed_level_setup(const GhostedRows& rows, const Partition& p, int l,
                                   const MultigridOptions& mg, const PrecisionPlan& plan,
                                   MPI_Comm comm, const Fp64BlockSource& block,
                                   TruncationCounts& ghost, LevelReport& rep,
                                   const ExactHalfSource* exact = nullptr, bool in_place = false) {
    LevelSetup s;
    // The FP64 block, made on first use (s.source or s.owned).
    const Fp64BlockSource get_block = [&]() -> const SgDiaMatrix<double>* {
        if (s.source == nullptr && !s.owns) {
            if (block) {
                s.source = block();
            } else {
                s.owned = own_block(rows, p);
                s.owns = true;
            }
        }
        return &s.matrix();
    };
    s.smoother = mg.smoother;
    s.jacobi_weight = mg.jacobi_weight;
    const Reductions red(rows, p, get_block, comm);
    // Scale-then-setup: the levels are coarsened from the scaled level 0 and none scales
    // itself (as level_setup).
    const bool may_scale =
        mg.scaling != ScalingKind::none && mg.scaling != ScalingKind::scale_then_setup;
    // As level_setup: A = c M with M exact in FP16 is stored as M, scaled by the scalar c (the
    // operator's copy; c is one for all processes, and so is the decision).
    // (collective: the source is asked on every process alike)
    ExactHalf multiple = scalar_multiple(exact_half_for(exact, plan.level(l), may_scale));
    StorageDecision dec = multiple.m
                              ? scalar_scaling(plan.level(l), multiple.scale, rows.a.rows())
                              : decide_storage(rows.a, plan.level(l), may_scale, plan.automatic,
                                               mg.setup_fallback, false, &red);
    rep.nnz = red.nnz();  // before the block may move into shared_fp64 below
    s.precision = dec.precision;
    if (dec.scaled) {
        s.scale_in_truncation = !multiple.m;
        s.s = own_values(dec.s, rows, p);
    }
    s.shared_half = std::move(multiple);
    s.origin = p.lo();
    s.boundary = std::make_shared<HaloBoundary>(rows.a, rows.lo, p, s.precision.storage, comm,
                                                ghost, dec.scaled ? &dec.s : nullptr);
    // A level that stores the exact FP16 copy, A / c scaled by c or A itself unscaled (the
    // level's truncation takes it, LevelSetup::exact_half), reads no FP64 block unless ILU(0)
    // factors it; any other level does. (The same on every process: the decision is the whole
    // level's, and so is the copy.)
    const bool shares_exact =
        exact != nullptr && *exact && !dec.scaled && s.precision.storage == Precision::fp16 && [&] {
            const ExactHalf e = (*exact)();  // collective on first call
            return e.m != nullptr && e.scale == 1.0;
        }();
    // On a z-split the level takes this process's planes of the rows as they are, without a
    // copy of its block (LevelSetup::fp64_view): level 0 of A kept in FP64 with a point
    // smoother reads them in place, a level stored unscaled in a narrower format truncates
    // them in make_level (below, while `rows` are alive).
    if (!dec.scaled && !s.shared_half.m && !shares_exact &&
        (s.smoother == SmootherKind::symgs || s.smoother == SmootherKind::jacobi)) {
        if (s.precision.storage != Precision::fp64 || (in_place && rows.a.block() == 1)) {
            s.fp64_view = own_planes(rows, p);
        }
    }
    if (s.fp64_view) {
        s.owned = SgDiaMatrix<double>();  // a block the storage decision made, not needed now
        s.owns = false;
    } else {
        if (s.smoother == SmootherKind::ilu0 || !(s.shared_half.m || shares_exact)) {
            (void)get_block();
        }
        keep_fp64_block(s);
    }
    const Box g = p.global();
    rep.box = g;
    rep.block = rows.a.block();
    rep.stencil = rows.a.stencil().name();
    rep.rows = g.cells() * rows.a.block();
    rep.scaled = dec.scaled;
    rep.scale_g = dec.g;
    rep.scale_g_max = dec.g_max;
    rep.note = std::move(dec.note);
    rep.solve = "smoother";
    rep.storage = s.precision.storage;
    rep.compute = s.precision.compute;
    return s;
}

std::int64_t min_local_cells(const Partition& p) {
    std::int64_t m = std::numeric_limits<std::int64_t>::max();
    for (int r = 0; r < p.size(); ++r) m = std::min(m, p.box(r).cells());
    return m;
}

}  // namespace

DistHierarchy::DistHierarchy(const GhostedRows& rows0, const Partition& p,
                             const MultigridOptions& mg, const PrecisionPlan& plan, MPI_Comm comm,
                             Fp64BlockSource block0, ExactHalfSource exact_half0, int first_level,
                             bool a_normal)
    : comm_(comm),
      mg_(mg),
      first_(first_level),
      a_normal_(a_normal && first_level == 0),
      block_(rows0.a.block()) {
    mg_.cycle = resolve_cycle(mg.cycle, false, 0);
    if (first_ > 0) block0 = {};    // a nested hierarchy's first level is not A
    if (!block0) exact_half0 = {};  // it is block0's copy
    setup(rows0, p, plan, std::move(block0), exact_half0);
    for (std::size_t i = 0; i < report_.size(); ++i) {
        const LevelReport& rep = report_[i];
        if (rep.counts.overflow > 0 && mg.setup_fallback) {
            throw NumericalError(fmt::format("level {}: {} entries overflow {} storage", i,
                                             rep.counts.overflow, to_string(rep.storage)));
        }
    }
}

void DistHierarchy::setup(const GhostedRows& rows0, const Partition& p, const PrecisionPlan& plan,
                          Fp64BlockSource block0, const ExactHalfSource& exact_half0) {
    const CoarseningOptions copt{
        .semi_threshold = mg_.semi_threshold,
        .operator_dependent = mg_.interpolation == InterpolationKind::operator_dependent};
    const GhostedRows* cur = &rows0;  // level l's rows (level 0's are the caller's: no copy)
    GhostedRows rows;
    // Scale-then-setup (the ablation, ICPP'24 §4.3): level 0 is S A S with the scaling of the
    // whole A (compute_scaling with the measures combined over the processes: each s_i comes
    // from its own row), scaled row by row on the grown box, and the hierarchy is coarsened
    // from it as serially.
    const bool scale_first = mg_.scaling == ScalingKind::scale_then_setup && first_ == 0;
    std::vector<double> s0;  // on rows0's box
    double g0 = 0.0, g0_max = 0.0;
    if (scale_first) {
        const Reductions red(rows0, p, {}, comm_);
        LevelScaling sc = compute_scaling(rows0.a, kHalfMax, &red);
        if (!sc.ok) throw InvalidInput(fmt::format("--scaling scale-then-setup: {}", sc.problem));
        rows = GhostedRows{rows0.lo, scale_matrix(rows0.a, sc.s)};
        cur = &rows;
        s0 = std::move(sc.s);
        g0 = sc.g;
        g0_max = sc.g_max;
        block0 = {};  // level 0 is not A
    }
    parts_.push_back(p);
    // Level l as this process's block of *cur on the partition parts_.back(), with its report.
    const auto add_level = [&](int l) -> LevelReport& {
        const Partition& pl = parts_.back();
        LevelReport rep;
        TruncationCounts ghost;
        // Level 0 of A (not scaled first), all of whose values are normal: its rows are the
        // caller's, which outlive the hierarchy.
        const bool normal_a = l == 0 && a_normal_ && !scale_first;
        LevelSetup setup = distributed_level_setup(
            *cur, pl, first_ + l, mg_, plan, comm_, l == 0 ? block0 : Fp64BlockSource{}, ghost, rep,
            l == 0 && block0 && exact_half0 ? &exact_half0 : nullptr, normal_a);
        if (l == 0 && block0) setup.exact_half = exact_half0;
        setup.shared_fp64_normal = normal_a;
        if (l == 0 && scale_first) {  // as level_setup: level 0 carries the scaling
            setup.s = own_values(s0, rows0, pl);
            setup.scale_transfers = false;
            rep.scaled = true;
            rep.scale_g = g0;
            rep.scale_g_max = g0_max;
            rep.note = "scale-then-setup: A scaled before coarsening";
        }
        // (Agreed: a level one process cannot build, e.g. a zero diagonal in its block, stops all.)
        dist_.push_back(
            run_agreed([&] { return make_level(first_ + l, setup, false, rep); }, comm_));
        rep.counts += ghost;
        rep.counts = allreduce(rep.counts, comm_);
        rep.matrix_bytes = rep.nnz * bytes_of(rep.storage);
        return report_.emplace_back(std::move(rep));
    };
    int l = 0;
    bool small_blocks = false;  // the loop stopped because level l's blocks are too small
    bool last = false;  // ... because level l is the hierarchy's coarsest, with large blocks
    for (;; ++l) {
        const Partition& pl = parts_.back();
        // Level l stays distributed when it has a coarser level (as galerkin_levels decides)
        // and the coarser blocks stay large enough.
        std::optional<DistCoarseLevel> next;
        const bool coarsens =
            first_ + l + 1 < mg_.max_levels && pl.global().cells() * block_ > mg_.max_coarse_rows;
        const bool large = pl.min_extent() >= 2 && min_local_cells(pl) >= kMinLocalCells;
        if (coarsens && large) next = coarsen(*cur, pl, copt, kGalerkinMargin, comm_);
        if (!next) {
            small_blocks = coarsens && !large;
            last = !coarsens && large;
            break;
        }
        auto t = std::make_unique<DistTransfer>(transfers_.emplace_back(std::move(next->transfer)),
                                                pl, comm_, std::move(next->weights));
        if (!t->valid()) {
            transfers_.pop_back();
            break;
        }
        add_level(l);
        dist_transfers_.push_back(std::move(t));
        coarse_.emplace_back();
        rows = std::move(next->rows);
        cur = &rows;
        parts_.push_back(next->coarse);
    }
    // The distributed coarsest solve: a coarsest level too large for the LU (max_levels reached
    // with large blocks; coarse_sweeps_for) keeps its blocks and takes its symmetric sweeps with
    // the distributed smoother on every process, where gathering it would leave the others idle
    // while rank 0 swept the whole level.
    if (last) {
        const int sweeps = coarse_sweeps_for(mg_, parts_.back().global().cells() * block_);
        if (sweeps > 0) {
            LevelReport& rep = add_level(l);
            rep.solve = fmt::format("{} smoother sweeps", 2 * sweeps);
            coarse_sweeps_ = sweeps;
            distributed_coarsest_ = true;
            return;
        }
    }
    // Level l and the coarser ones are agglomerated. Onto the merged partition's processes when
    // its blocks are large enough to stay distributed: each holder of a merged block gathers
    // the rows of its 2 x 2 x 2 blocks and the holders build the rest of the hierarchy as a
    // nested DistHierarchy over their own communicator, from level l on (which agglomerates
    // again, in turn, where its blocks get small); every process reports its levels, and an
    // error there stops all.
    const bool whole_a = first_ == 0 && l == 0;
    if (!whole_a && small_blocks) {
        const Partition& pl = parts_.back();
        const Partition any = pl.merged(-1);
        if (any.size() >= 2 && any.size() < pl.size() && any.min_extent() >= 2 &&
            min_local_cells(any) >= kMinLocalCells) {
            const int m = pl.merged_rank(pl.rank());
            const bool holder = pl.holder(m) == pl.rank();
            merged_ = pl.merged(holder ? m : -1);
            merging_ = true;
            MPI_Comm_split(comm_, holder ? 0 : MPI_UNDEFINED, m, &sub_);
            const GhostedRows rows_m =
                gather_merged_rows(*cur, pl, merged_, kGalerkinMargin, comm_, sub_);
            std::vector<LevelReport> nested_reports;
            (void)run_agreed(
                [&] {
                    if (holder) {
                        nested_ = std::make_unique<DistHierarchy>(rows_m, merged_, mg_, plan, sub_,
                                                                  Fp64BlockSource{},
                                                                  ExactHalfSource{}, first_ + l);
                        nested_reports = nested_->report();
                    }
                    return 0;
                },
                comm_);
            broadcast_reports(nested_reports, comm_);
            report_.insert(report_.end(), nested_reports.begin(), nested_reports.end());
            return;
        }
    }
    // Else onto rank 0, which gathers level l whole (A itself when nothing is distributed: the
    // serial setup then scales it where it must) and coarses it on.
    const bool root = parts_.front().rank() == 0;
    tail_first_ = gather_whole(whole_a ? rows0 : *cur, parts_.back(), comm_);
    std::vector<LevelReport> tail_reports;
    (void)run_agreed(
        [&] {
            if (root) {
                GalerkinLevels g = whole_a ? galerkin_levels(tail_first_, mg_)
                                           : galerkin_levels_from(tail_first_, first_ + l, mg_);
                build_tail(g, tail_first_, not_owned(tail_first_), plan, tail_reports);
            }
            return 0;
        },
        comm_);
    broadcast_reports(tail_reports, comm_);
    report_.insert(report_.end(), tail_reports.begin(), tail_reports.end());
}

void DistHierarchy::build_tail(GalerkinLevels& g, const SgDiaMatrix<double>& first,
                               const std::shared_ptr<const SgDiaMatrix<double>>& shared_first,
                               const PrecisionPlan& plan, std::vector<LevelReport>& reports) {
    coarse_sweeps_ = g.coarse_sweeps;
    const int l0 = g.first - first_;  // in transfers_ (this hierarchy's levels)
    // The tail's transfers continue transfers_ (level l0 + i -> l0 + i + 1).
    for (Transfer& t : g.transfers) transfers_.push_back(std::move(t));
    const int nl = static_cast<int>(g.mats.size());
    for (int i = 0; i < nl; ++i) {
        const bool last = i == nl - 1;
        LevelReport rep;
        LevelSetup setup = level_setup(g, i, mg_, plan, rep);
        setup.to_coarse = last ? nullptr : &transfers_[static_cast<std::size_t>(l0 + i)];
        setup.shared_fp64 = fp64_to_share(g, i, first, shared_first, setup);
        tail_.push_back(make_level(g.first + i, setup, last && g.direct, rep));
        rep.matrix_bytes = g.mats[static_cast<std::size_t>(i)]->nnz() * bytes_of(rep.storage);
        reports.push_back(std::move(rep));
    }
}

DistHierarchy::~DistHierarchy() {
    nested_.reset();  // its levels and communicators first
    // A Solver may outlive MPI (a Python object collected at exit, a static): nothing of MPI's
    // is freed after MPI_Finalize.
    int finalised = 0;
    MPI_Finalized(&finalised);
    if (sub_ != MPI_COMM_NULL && finalised == 0) MPI_Comm_free(&sub_);
}

int DistHierarchy::distributed_levels() const {
    return static_cast<int>(dist_.size()) + (nested_ ? nested_->distributed_levels() : 0);
}

double DistHierarchy::grid_complexity() const { return mpmg::grid_complexity(report_); }
double DistHierarchy::operator_complexity() const { return mpmg::operator_complexity(report_); }

std::vector<int> DistHierarchy::level_ranks() const {
    std::vector<int> out;
    for (std::size_t l = 0; l < dist_.size(); ++l) out.push_back(parts_[l].size());
    if (nested_) {
        const std::vector<int> more = nested_->level_ranks();
        out.insert(out.end(), more.begin(), more.end());
    }
    out.resize(report_.size(), 1);
    return out;
}

void DistHierarchy::enter(int l, std::vector<double>& v) {
    const int nd = static_cast<int>(dist_.size());
    if (l < nd) {
        Level& lev = *dist_[static_cast<std::size_t>(l)];
        to_level(v, lev);
        lev.finish_rhs();
    } else if (merging_) {
        gather_merged(v, parts_[static_cast<std::size_t>(nd)], merged_, block_, comm_, merged_v_);
        if (nested_) nested_->enter(0, merged_v_);
    } else {
        gather_to_root(v, global_);
        if (parts_.front().rank() == 0) {
            to_level(global_, *tail_.front());
            tail_.front()->finish_rhs();
        }
    }
}

void DistHierarchy::leave(int l, std::vector<double>& v) {
    const int nd = static_cast<int>(dist_.size());
    if (l < nd) {
        Level& lev = *dist_[static_cast<std::size_t>(l)];
        lev.unscale_solution();
        from_level(lev, v);
    } else if (merging_) {
        if (nested_) nested_->leave(0, merged_v_);
        scatter_merged(merged_v_, parts_[static_cast<std::size_t>(nd)], merged_, block_, comm_, v);
    } else {
        if (parts_.front().rank() == 0) {
            tail_.front()->unscale_solution();
            from_level(*tail_.front(), global_);
        }
        scatter_from_root(global_, v);
    }
}

void DistHierarchy::gather_to_root(const std::vector<double>& local, std::vector<double>& global) {
    gather(local, parts_[dist_.size()], block_, comm_, global, buf_);
}

void DistHierarchy::scatter_from_root(const std::vector<double>& global,
                                      std::vector<double>& local) {
    scatter(global, parts_[dist_.size()], block_, comm_, local, buf_);
}

void DistHierarchy::cycle(int l, CycleKind kind) {
    const int nd = static_cast<int>(dist_.size());
    if (distributed_coarsest_ && l == nd - 1) {  // as run_cycle's coarsest level
        Level& lev = *dist_.back();
        for (int s = 0; s < coarse_sweeps_; ++s) {
            lev.smooth(1, true);
            lev.smooth(1, false);
        }
        return;
    }
    if (l == nd && merging_) {  // agglomerated onto the holders: the rhs is in nested_'s level
        if (nested_) nested_->cycle(0, kind);
        return;
    }
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
    // An unscaled level's own residual and û are read and corrected in place (no FP64 copy of
    // the level's vector: on level 0 that copy was a pass each way and its first touch).
    const bool fp64 = lev.compute() == Precision::fp64;
    if (const void* r = lev.residual_in_place()) {
        if (fp64) {
            t.restrict_to(static_cast<const double*>(r), coarse);
        } else {
            t.restrict_to(static_cast<const float*>(r), coarse);
        }
    } else {
        lev.residual_unscaled(fine_);
        t.restrict_to(fine_, coarse);
    }
    enter(l + 1, coarse);
    visit_coarser(kind, [&](CycleKind k) { cycle(l + 1, k); });
    leave(l + 1, coarse);
    if (void* u = lev.correction_in_place()) {
        if (fp64) {
            t.interpolate_add(coarse, static_cast<double*>(u));
        } else {
            t.interpolate_add(coarse, static_cast<float*>(u));
        }
    } else {
        t.interpolate(coarse, fine_);
        lev.add_correction(fine_);
    }
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
