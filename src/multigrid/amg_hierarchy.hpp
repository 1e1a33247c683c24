// The unstructured AMG hierarchy (FGCS'23 §3-4, Ginkgo's three-precision AMG): PGM aggregation
// and Galerkin products R A P in FP64 on all levels first (R = P^T / 2, FGCS'23 §4.2.2), then
// per level the storage decision (equilibration, range checks of the matrix and the inverted
// diagonal), truncation to the storage precision, and the level's compute precision from the
// plan (PrecisionPlan::level(l), e.g. work DP-SP, matrix DP-SP-HP). The FP64 copies are dropped
// after setup, except the coarsest level's dense LU. Cycles V/W/F as the structured Hierarchy,
// and K (Level::k_correction: Krylov steps on every second level, AmgSettings::k_cycle_every).
#pragma once

#include <memory>
#include <vector>

#include "mpmg/csr_matrix.hpp"
#include "mpmg/options.hpp"
#include "mpmg/precision.hpp"
#include "multigrid/amg_transfer.hpp"
#include "multigrid/cycle.hpp"
#include "multigrid/level.hpp"
#include "unstructured/pgm.hpp"
#include "unstructured/row_weights.hpp"

namespace mpmg {

/// Settings of the AMG path that MultigridOptions does not carry (defaults from FGCS'23 §4.2).
struct AmgSettings {
    /// PGM passes per level: 1 = Ginkgo's pairwise aggregation (rows / ~2 per level);
    /// 2 = double pairwise (rows / ~4 per level). Measured with CG, Jacobi 0.9, rtol 1e-10
    /// (amg_table_test.cpp): 2 passes need more iterations everywhere (poisson2d 128^2 46 -> 55,
    /// L-shape o3r5 38 -> 56, 1138_bus 27 -> 105), so 1 pass, as Ginkgo, is the default.
    int pgm_passes = 1;
    /// PGM passes of the aggregates that smoothed aggregation smooths (mg.aggregation smoothed):
    /// 2 (pairs of pairs, ~4 rows per aggregate), the usual SA aggregate size; smoothing widens
    /// P, and pairs would make the coarse operators denser for less coarsening.
    int sa_pgm_passes = 2;
    /// The K-cycle's Krylov steps are taken on the levels whose index is a multiple of this
    /// (2: levels 2, 4, ...; the others are visited once, as in a V-cycle), on the V-cycle's
    /// pairwise aggregates. A K-visit may visit the next level twice, so with pairs (rows / ~2
    /// per level) steps on every level would cost like a W-cycle. Measured against pairs of
    /// pairs with steps on every level (Notay's AGMG): mfem L-shape o3 r7 23 CG iterations
    /// against 26 (5.1 s against 4.6 s), but 1138_bus 13 against 79, bcsstk15 181 against not
    /// converged, bcsstk13 179 against not converged (the V-cycle: 70, 13, 113, 179).
    int k_cycle_every = 2;
    /// Strength threshold of the filtered matrix SA smooths P with (smoothed_aggregation.hpp).
    /// 0.08 (the customary SA value) cut the operator complexity of mfem L-shape o3 r5 from 2.50
    /// to 1.31 and of beam o3 r2 from 2.75 to 1.39 (16 / 13 CG iterations against 14 / 10
    /// unfiltered, 37 / 14 with PGM).
    double sa_theta = 0.08;
    /// Ginkgo's max_levels (FGCS'23 §4.2: 11, as AmgX); the hierarchy uses
    /// min(mg.max_levels, this).
    int max_levels = 11;
    /// Stop coarsening when a level's rows shrink by less than this factor.
    double min_coarsening_ratio = 1.2;
    /// Levels whose matrix values take at most this many bytes store their column indices as
    /// per-row base + uint16 offsets where every row fits (AmgLevelSetup): 2 = the FP16/BF16
    /// levels, which lifts their bytes per nonzero from 2 + 4 to 2 + 2 (README, "AMG"); 0 =
    /// int32 everywhere (FGCS'23 §3); 8 = every level.
    std::size_t compact_index_max_bytes = 2;
    /// Aggregates of earlier setups, level by level, used instead of new PGM passes where
    /// there are some, and extended by the passes of the levels beyond (null: PGM everywhere,
    /// nothing kept). Solver::update_values builds on the aggregates of an earlier setup of
    /// the same pattern; they must have been made with the same aggregation and block size.
    std::vector<Aggregation>* aggregates = nullptr;
    /// The whole hierarchy's index of this one's level 0: > 0 for the levels the distributed
    /// AMG gathers onto rank 0 (distributed/dist_amg.hpp), which take the precision plan's
    /// levels, the level count and the names from there.
    int first_level = 0;
    /// True when the caller knows that A = A^T to the bit (a file stored symmetric:
    /// api/problem_input.hpp); the hierarchy then skips its own pass over A and its mirrors.
    /// False: measured where it matters.
    bool exactly_symmetric = false;
};

class AmgHierarchy {
public:
    /// Builds all levels from the FP64 finest operator `a` (square). The coarsening stops when
    /// a level has at most mg.max_coarse_rows rows. Throws NumericalError for a zero diagonal
    /// (smoothers), a zero ILU(0) pivot or a singular coarsest level, Unsupported for an
    /// unsupported precision pair.
    AmgHierarchy(const CsrMatrix& a, const MultigridOptions& mg, const PrecisionPlan& plan,
                 const AmgSettings& settings = {});

    int num_levels() const { return static_cast<int>(levels_.size()); }
    const std::vector<LevelReport>& report() const { return report_; }
    double grid_complexity() const { return mpmg::grid_complexity(report_); }
    double operator_complexity() const { return mpmg::operator_complexity(report_); }

    /// z = M^{-1} r: one cycle with zero initial guess. K is double or float.
    template <class K>
    void apply(const K* r, K* z) {
        levels_.front()->set_rhs(row_weighting_.apply(r));
        run_cycle(levels_, 0, mg_.cycle, mg_, coarse_sweeps_);
        levels_.front()->get_solution(z);
    }

    /// The row weights the hierarchy was built with (W A; empty: A itself).
    const std::vector<double>& row_weights() const { return row_weighting_.weights(); }

private:
    MultigridOptions mg_;
    RowWeighting row_weighting_;          // W of W A (unstructured/row_weights.hpp)
    std::vector<AmgTransfer> transfers_;  // transfers_[l]: level l -> l+1
    std::vector<std::unique_ptr<Level>> levels_;
    std::vector<LevelReport> report_;
    int coarse_sweeps_ = 0;  // > 0: coarsest level too large for LU, smoothed instead
};

}  // namespace mpmg
