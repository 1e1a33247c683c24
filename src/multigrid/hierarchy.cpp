#include "multigrid/hierarchy.hpp"

#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <optional>

#include "mpmg/errors.hpp"
#include "multigrid/cycle.hpp"
#include "multigrid/level_precision.hpp"
#include "multigrid/scaling.hpp"

namespace mpmg {

namespace {

// Coarsens g's last level until the hierarchy has mg.max_levels levels or the last is small.
void coarsen_levels(GalerkinLevels& g, const MultigridOptions& mg) {
    const CoarseningOptions copt{
        .semi_threshold = mg.semi_threshold,
        .operator_dependent = mg.interpolation == InterpolationKind::operator_dependent};
    while (g.first + static_cast<int>(g.mats.size()) < mg.max_levels &&
           g.mats.back()->rows() > mg.max_coarse_rows) {
        auto next = coarsen(*g.mats.back(), copt);
        if (!next) break;
        g.transfers.push_back(std::move(next->transfer));
        g.mats.push_back(&g.owned.emplace_back(std::move(next->a)));
    }
    g.coarse_sweeps = coarse_sweeps_for(mg, g.mats.back()->rows());
    g.direct = g.coarse_sweeps == 0;
}

}  // namespace

GalerkinLevels galerkin_levels_from(const SgDiaMatrix<double>& a, int first,
                                    const MultigridOptions& mg) {
    GalerkinLevels g;
    g.first = first;
    g.mats.push_back(&a);
    coarsen_levels(g, mg);
    return g;
}

GalerkinLevels galerkin_levels(const SgDiaMatrix<double>& a, const MultigridOptions& mg) {
    GalerkinLevels g;
    g.mats.push_back(&a);  // level 0 is the caller's matrix, not a copy
    if (mg.scaling == ScalingKind::scale_then_setup) {  // ablation (ICPP'24 §4.3): scale, set up
        const LevelScaling sc = compute_scaling(a, kHalfMax);
        if (!sc.ok) {
            throw InvalidInput(fmt::format("--scaling scale-then-setup: {}", sc.problem));
        }
        g.s0 = sc.s;
        g.g0 = sc.g;
        g.g0_max = sc.g_max;
        g.mats[0] = &g.owned.emplace_back(scale_matrix(a, sc.s));
    }
    coarsen_levels(g, mg);
    return g;
}

ExactHalf exact_half_for(const ExactHalfSource* exact, const LevelPrecision& p, bool may_scale) {
    if (exact == nullptr || !*exact || !may_scale || p.storage != Precision::fp16) return {};
    return (*exact)();
}

StorageDecision scalar_scaling(const LevelPrecision& p, double c, std::int64_t rows) {
    // A = c M with M exact in FP16: the scalar scaling Q = c I stores M as it is. It needs no G
    // (Â's diagonal is A's over c) and rounds nothing, where the diagonal scaling would round
    // every value (Laplace's -1 / 26 is not in FP16).
    StorageDecision dec;
    dec.precision = p;
    dec.scaled = true;
    dec.s.assign(static_cast<std::size_t>(rows), std::sqrt(c));
    dec.note = fmt::format("scaled by 1/{:g}: A / {:g} is exact in FP16", c, c);
    return dec;
}

LevelSetup level_setup(const GalerkinLevels& g, int l, const MultigridOptions& mg,
                       const PrecisionPlan& plan, LevelReport& rep, bool pretruncate,
                       const ExactHalfSource* exact) {
    // Scale-then-setup: every level is coarsened from the scaled level 0 (none scales itself);
    // level 0 carries the scaling (a tail that starts later has no level 0).
    const bool scaled_before = mg.scaling == ScalingKind::scale_then_setup;
    const bool scale_first = scaled_before && g.first == 0;
    const bool last = l == static_cast<int>(g.mats.size()) - 1;
    const int index = g.first + l;  // in the whole hierarchy (the precision plan's level)
    const SgDiaMatrix<double>& m = *g.mats[static_cast<std::size_t>(l)];
    rep.box = m.box();
    rep.block = m.block();
    rep.stencil = m.stencil().name();
    rep.rows = m.rows();
    rep.nnz = m.nnz();
    LevelSetup setup;
    setup.smoother = mg.smoother;
    setup.jacobi_weight = mg.jacobi_weight;
    if (last && g.direct) {  // the coarsest level is solved in FP64 by LU
        const Precision c = plan.direct_compute(index);
        setup.precision = LevelPrecision{c, c};
        setup.source = &m;
        rep.solve = "direct (LU, fp64)";
    } else {
        const bool may_scale = mg.scaling != ScalingKind::none && !scaled_before;
        // Â is never built as an FP64 matrix: the level scales inside its truncation, ILU(0)
        // factors included (LevelImpl::truncate_factors_scaled), or stores A / c as it is.
        const ExactHalf asked = exact_half_for(exact, plan.level(index), may_scale);
        ExactHalf multiple = scalar_multiple(asked);
        // A itself exact in FP16 (the copy an FP16 level 0 shares unscaled): the range check
        // is the copy's, found while it was made.
        const HalfFacts* same = !multiple.m && asked.m ? &asked.facts : nullptr;
        StorageDecision dec = multiple.m
                                  ? scalar_scaling(plan.level(index), multiple.scale, m.rows())
                                  : decide_storage(m, plan.level(index), may_scale, plan.automatic,
                                                   mg.setup_fallback, pretruncate, nullptr, same);
        setup.precision = dec.precision;
        setup.source = &m;
        setup.shared_half = std::move(multiple);
        if (dec.scaled && !setup.shared_half.m) {
            setup.scale_in_truncation = true;
            setup.truncated = std::move(dec.truncated);
            setup.truncated_counts = dec.truncated_counts;
        }
        setup.s = std::move(dec.s);
        rep.scaled = dec.scaled;
        rep.scale_g = dec.g;
        rep.scale_g_max = dec.g_max;
        rep.note = std::move(dec.note);
        rep.solve = last ? fmt::format("{} smoother sweeps", 2 * g.coarse_sweeps) : "smoother";
    }
    if (scale_first && l == 0) {
        setup.s = g.s0;
        setup.scale_transfers = false;
        rep.scaled = true;
        rep.scale_g = g.g0;
        rep.scale_g_max = g.g0_max;
        rep.note = "scale-then-setup: A scaled before coarsening";
    }
    rep.storage = last && g.direct ? Precision::fp64 : setup.precision.storage;  // LU in FP64
    rep.compute = setup.precision.compute;
    return setup;
}

std::shared_ptr<const SgDiaMatrix<double>> fp64_to_share(
    GalerkinLevels& g, int l, const SgDiaMatrix<double>& a,
    const std::shared_ptr<const SgDiaMatrix<double>>& shared_a, LevelSetup& setup) {
    if (setup.precision.storage != Precision::fp64 || !setup.s.empty() || setup.owns) return {};
    const SgDiaMatrix<double>* m = g.mats[static_cast<std::size_t>(l)];
    if (m == &a) return shared_a.get() == &a ? shared_a : nullptr;
    for (SgDiaMatrix<double>& owned : g.owned) {
        if (&owned != m) continue;
        auto moved = std::make_shared<const SgDiaMatrix<double>>(std::move(owned));
        g.mats[static_cast<std::size_t>(l)] = setup.source = moved.get();
        return moved;
    }
    return {};
}

Hierarchy::Hierarchy(const SgDiaMatrix<double>& a, const MultigridOptions& mg,
                     const PrecisionPlan& plan, ExactHalfSource exact_half,
                     std::shared_ptr<const SgDiaMatrix<double>> shared_a, bool a_normal)
    : mg_(mg) {
    mg_.cycle = resolve_cycle(mg.cycle, false, 0);
    GalerkinLevels g = galerkin_levels(a, mg);
    if (exact_half) {  // level 0 asks for a multiple, then for A itself: one call of the source
        auto got = std::make_shared<std::optional<ExactHalf>>();
        exact_half = [source = std::move(exact_half), got] {
            if (!*got) *got = source();
            return **got;
        };
    }
    coarse_sweeps_ = g.coarse_sweeps;
    transfers_ = std::move(g.transfers);
    const int nl = static_cast<int>(g.mats.size());
    for (int l = 0; l < nl; ++l) {
        const bool last = l == nl - 1;
        LevelReport rep;
        const bool is_a = l == 0 && g.mats[0] == &a;
        LevelSetup setup = level_setup(g, l, mg, plan, rep, /*pretruncate=*/true,
                                       is_a && exact_half ? &exact_half : nullptr);
        setup.to_coarse = last ? nullptr : &transfers_[static_cast<std::size_t>(l)];
        if (is_a) setup.exact_half = exact_half;
        setup.shared_fp64 = fp64_to_share(g, l, a, shared_a, setup);
        setup.shared_fp64_normal = a_normal && setup.shared_fp64.get() == &a;
        levels_.push_back(make_level(l, setup, last && g.direct, rep));
        rep.matrix_bytes = g.mats[static_cast<std::size_t>(l)]->nnz() * bytes_of(rep.storage);
        if (rep.counts.overflow > 0 && mg.setup_fallback) {
            throw NumericalError(fmt::format("level {}: {} entries overflow {} storage", l,
                                             rep.counts.overflow, to_string(rep.storage)));
        }
        report_.push_back(std::move(rep));
    }
}

}  // namespace mpmg
