#include "multigrid/hierarchy.hpp"

#include <fmt/format.h>

#include <deque>

#include "mpmg/errors.hpp"
#include "multigrid/cycle.hpp"
#include "multigrid/level_precision.hpp"
#include "multigrid/scaling.hpp"

namespace mpmg {
namespace {

// Largest coarsest level solved by dense LU; a larger one (only when max_levels stops the
// coarsening early) is smoothed with this many symmetric sweeps instead.
constexpr std::int64_t kMaxDirectRows = 4096;
constexpr int kCoarseSweeps = 20;

}  // namespace

Hierarchy::Hierarchy(const SgDiaMatrix<double>& a, const MultigridOptions& mg,
                     const PrecisionPlan& plan)
    : mg_(mg) {
    const bool scale_first = mg.scaling == ScalingKind::scale_then_setup;
    std::vector<double> s0;
    // Level 0 is the caller's matrix (not copied) unless scale-then-setup scales it; coarser
    // levels are owned here. std::deque keeps the addresses in `mats` stable.
    std::deque<SgDiaMatrix<double>> owned;
    std::vector<const SgDiaMatrix<double>*> mats{&a};
    if (scale_first) {  // ablation variant (ICPP'24 §4.3): scale A once, then set up
        const LevelScaling sc = compute_scaling(a, kHalfMax);
        if (!sc.ok) {
            throw InvalidInput(fmt::format("--scaling scale-then-setup: {}", sc.problem));
        }
        s0 = sc.s;
        mats[0] = &owned.emplace_back(scale_matrix(a, sc.s));
    }
    const CoarseningOptions copt{.semi_threshold = mg.semi_threshold};
    while (static_cast<int>(mats.size()) < mg.max_levels &&
           mats.back()->rows() > mg.max_coarse_rows) {
        auto next = coarsen(*mats.back(), copt);
        if (!next) break;
        transfers_.push_back(std::move(next->transfer));
        mats.push_back(&owned.emplace_back(std::move(next->a)));
    }
    const int nl = static_cast<int>(mats.size());
    const bool direct = mats.back()->rows() <= kMaxDirectRows;
    if (!direct) coarse_sweeps_ = kCoarseSweeps;

    for (int l = 0; l < nl; ++l) {
        const bool last = l == nl - 1;
        LevelReport rep;
        const SgDiaMatrix<double>& m = *mats[static_cast<std::size_t>(l)];
        rep.box = m.box();
        rep.block = m.block();
        rep.stencil = m.stencil().name();
        rep.rows = m.rows();
        rep.nnz = m.nnz();
        LevelSetup setup;
        setup.smoother = mg.smoother;
        setup.jacobi_weight = mg.jacobi_weight;
        setup.to_coarse = last ? nullptr : &transfers_[static_cast<std::size_t>(l)];
        StorageDecision dec;   // outlives make_level below (setup.matrix may point into it)
        if (last && direct) {  // the coarsest level is solved in FP64 by LU
            const LevelPrecision lp = plan.level(l);
            setup.precision = LevelPrecision{lp.compute, lp.compute};
            setup.matrix = &m;
            rep.solve = "direct (LU, fp64)";
        } else {
            const bool may_scale = mg.scaling != ScalingKind::none && !scale_first;
            dec = decide_storage(m, plan.level(l), may_scale, plan.automatic, mg.setup_fallback);
            setup.precision = dec.precision;
            setup.matrix = &dec.matrix(m);
            setup.s = std::move(dec.s);
            rep.scaled = dec.scaled;
            rep.scale_g = dec.g;
            rep.scale_g_max = dec.g_max;
            rep.note = std::move(dec.note);
            rep.solve = last ? fmt::format("{} smoother sweeps", 2 * kCoarseSweeps) : "smoother";
        }
        if (scale_first && l == 0) {
            setup.s = s0;
            setup.scale_transfers = false;
            rep.scaled = true;
            rep.note = "scale-then-setup: A scaled before coarsening";
        }
        rep.storage = last && direct ? Precision::fp64 : setup.precision.storage;  // LU in FP64
        rep.compute = setup.precision.compute;
        levels_.push_back(make_level(l, setup, last && direct, rep));
        rep.matrix_bytes = m.nnz() * bytes_of(rep.storage);
        if (rep.counts.overflow > 0 && mg.setup_fallback) {
            throw NumericalError(fmt::format("level {}: {} entries overflow {} storage", l,
                                             rep.counts.overflow, to_string(rep.storage)));
        }
        report_.push_back(std::move(rep));
    }
}

}  // namespace mpmg
