// The multigrid hierarchy (ICPP'24 Algorithm 1) and its cycles (Algorithm 3): Galerkin setup
// in FP64 on all levels first, then per level scaling and truncation to the storage precision;
// the high-precision copies are dropped after setup.
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "mpmg/options.hpp"
#include "mpmg/precision.hpp"
#include "mpmg/sgdia_matrix.hpp"
#include "multigrid/cycle.hpp"
#include "multigrid/level.hpp"
#include "multigrid/level_precision.hpp"
#include "structured/coarsen.hpp"

namespace mpmg {

/// The FP64 Galerkin hierarchy before any level is built (ICPP'24 Algorithm 1 lines 1-3): what
/// Hierarchy builds its levels from, and what the distributed hierarchy (src/distributed/) takes
/// each rank's blocks from.
struct GalerkinLevels {
    /// mats[l]: level l's operator. Level 0 is the caller's matrix (which must outlive this)
    /// unless scale-then-setup scaled it; the others live in `owned` (a deque: stable
    /// addresses, also when the GalerkinLevels is moved).
    std::vector<const SgDiaMatrix<double>*> mats;
    std::deque<SgDiaMatrix<double>> owned;
    std::vector<Transfer> transfers;  ///< transfers[l]: level l -> l+1
    std::vector<double> s0;           ///< scale-then-setup: the scaling of level 0
    double g0 = 0.0, g0_max = 0.0;    ///< scale-then-setup: its G and G_max
    bool direct = true;               ///< coarsest level solved by LU
    int coarse_sweeps = 0;            ///< > 0: coarsest level smoothed instead
    /// The hierarchy's index of mats[0]: 0, or the first level agglomerated onto one process
    /// by the distributed hierarchy, which continues the coarsening from there.
    int first = 0;
};

/// Coarsens `a` as Hierarchy does.
GalerkinLevels galerkin_levels(const SgDiaMatrix<double>& a, const MultigridOptions& mg);

/// The levels from `first` on, where `a` is level `first` (> 0) of a hierarchy coarsened with
/// `mg` (the level count and the coarsest level as galerkin_levels would give them).
GalerkinLevels galerkin_levels_from(const SgDiaMatrix<double>& a, int first,
                                    const MultigridOptions& mg);

/// Level l's setup (g.mats[l], level g.first + l of the hierarchy: storage decision and
/// scaling; to_coarse left null) and its report, all but
/// the truncation counts and matrix bytes, which building the level fills in.
/// A scaled level scales inside its truncation (LevelSetup::scale_in_truncation; its ILU(0)
/// factors too, no FP64 Â is built), or, with `pretruncate`, takes the FP16 matrix the decision
/// truncated while counting (LevelSetup::truncated; the serial hierarchy, whose levels are the
/// whole grid). With `exact` (level 0, a's ExactHalfSource), an FP16 level that may scale
/// first asks it for A as c x (a matrix FP16 holds exactly): when c is not 1, the level stores
/// that matrix, scaled by the scalar c (LevelSetup::shared_half), and no value is rounded.
/// What `exact` (a's ExactHalfSource) gives for a level with precision `p` that stores FP16 and
/// may scale: A as c x (a matrix FP16 holds exactly). With c not 1 the level stores that matrix
/// (LevelSetup::shared_half, under scalar_scaling); with c = 1 it is A itself, whose range the
/// storage decision reads from it. Else nothing (nothing asked).
ExactHalf exact_half_for(const ExactHalfSource* exact, const LevelPrecision& p, bool may_scale);

/// The part of exact_half_for's answer a level stores scaled: A / c with c not 1, else nothing.
inline ExactHalf scalar_multiple(const ExactHalf& e) {
    return e.m && e.scale != 1.0 ? e : ExactHalf{};
}

/// The storage decision of a level that stores A / c exactly: `p`, scaled by the scalar
/// Q = c I (s = sqrt(c) on each of `rows` rows), no G.
StorageDecision scalar_scaling(const LevelPrecision& p, double c, std::int64_t rows);

LevelSetup level_setup(const GalerkinLevels& g, int l, const MultigridOptions& mg,
                       const PrecisionPlan& plan, LevelReport& rep, bool pretruncate = false,
                       const ExactHalfSource* exact = nullptr);

/// The level's FP64 operator for LevelSetup::shared_fp64 when level l stores it unscaled in FP64
/// (else null: the level copies): `shared_a` for level 0 when it points to `a` itself, else the
/// Galerkin product, moved out of `g` (g.mats[l] and setup.source follow it).
std::shared_ptr<const SgDiaMatrix<double>> fp64_to_share(
    GalerkinLevels& g, int l, const SgDiaMatrix<double>& a,
    const std::shared_ptr<const SgDiaMatrix<double>>& shared_a, LevelSetup& setup);

class Hierarchy {
public:
    /// Builds all levels from the FP64 finest operator. `exact_half`, when given, makes a's
    /// values in FP16 if FP16 holds them exactly, or those of A / c: level 0 asks for them if
    /// it stores FP16 and shares them, unscaled (LevelSetup::exact_half) or scaled by the
    /// scalar c (LevelSetup::shared_half). `shared_a`, when given, points to a
    /// itself, kept alive as long as the hierarchy (an owner, or none when the caller keeps a
    /// alive): level 0 reads it if it stores FP64 unscaled, instead of a copy. Coarse FP64
    /// levels always keep their Galerkin matrix instead of a copy. `a_normal`: every value of
    /// a is zero or a normal FP64 number (StructuredProblem::a_normal), so that level 0 reading
    /// it needs no counting pass.
    Hierarchy(const SgDiaMatrix<double>& a, const MultigridOptions& mg, const PrecisionPlan& plan,
              ExactHalfSource exact_half = {},
              std::shared_ptr<const SgDiaMatrix<double>> shared_a = {}, bool a_normal = false);

    int num_levels() const { return static_cast<int>(levels_.size()); }
    const std::vector<LevelReport>& report() const { return report_; }
    double grid_complexity() const { return mpmg::grid_complexity(report_); }
    double operator_complexity() const { return mpmg::operator_complexity(report_); }

    /// z = M^{-1} r: one cycle with zero initial guess. K is double or float.
    template <class K>
    void apply(const K* r, K* z) {
        levels_.front()->set_rhs(r);
        run_cycle(levels_, 0, mg_.cycle, mg_, coarse_sweeps_);
        levels_.front()->get_solution(z);
    }

private:
    MultigridOptions mg_;
    std::vector<Transfer> transfers_;  // transfers_[l]: level l -> l+1
    std::vector<std::unique_ptr<Level>> levels_;
    std::vector<LevelReport> report_;
    int coarse_sweeps_ = 0;  // > 0: coarsest level too large for LU, smoothed instead
};

}  // namespace mpmg
