// The multigrid cycles (ICPP'24 Algorithm 3; W and F cycles as usual), shared by the structured
// and the AMG hierarchy: both are a vector of type-erased Levels.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "mpmg/csr_matrix.hpp"
#include "mpmg/options.hpp"
#include "multigrid/level.hpp"

namespace mpmg {

/// The visits of the next coarser level in one cycle of `kind`: a V-cycle visits it once with a
/// V-cycle, a W-cycle twice with W-cycles, an F-cycle with an F-cycle and then a V-cycle.
/// visit(kind) runs one visit.
template <class F>
void visit_coarser(CycleKind kind, F&& visit) {
    switch (kind) {
        case CycleKind::automatic:  // resolved before a cycle runs (resolve_cycle); V if not
        case CycleKind::v:
            visit(CycleKind::v);
            break;
        case CycleKind::w:
            visit(CycleKind::w);
            visit(CycleKind::w);
            break;
        case CycleKind::f:
            visit(CycleKind::f);
            visit(CycleKind::v);
            break;
        case CycleKind::k:  // run_cycle wraps the visit in Level::k_correction (AMG levels)
            visit(CycleKind::k);
            break;
    }
}

/// One cycle of `kind` from level l down. The coarsest level is solved directly, or, when
/// `coarse_sweeps` > 0 (too large for LU), by that many symmetric smoothing sweeps.
void run_cycle(std::vector<std::unique_ptr<Level>>& levels, int l, CycleKind kind,
               const MultigridOptions& mg, int coarse_sweeps);

/// Rows of A from which the cycle `auto` is the K-cycle on the AMG path. Its Krylov steps cost
/// about a third more per iteration than a V-cycle, and win where the V-cycle of pairwise
/// aggregation slows with the hierarchy's depth. CG iterations V / K (one thread, b = A 1,
/// rtol 1e-10, forty-first session): 2D 5-point Poisson 10^4 rows 26 / 18, 4.0e4 38 / 19 (0.105
/// / 0.074 s), 9.0e4 47 / 19, 1.0e6 114 / 23 (12 / 7 s with setup); 3D 7-point 2.7e4 20 / 16
/// (0.046 / 0.052 s), 6.4e4 22 / 16 (0.127 / 0.138 s), 2.2e5 27 / 16 (0.54 / 0.50 s); mfem
/// L-shape o3 r5 (2.8e4) 37 / 19, r7 (4.4e5) 68 / 21 (7.2 / 4.0 s), beam o3 r2 (1.6e4) 14 / 12
/// (0.16 / 0.20 s), r3 (1.2e5) 19 / 13 (3.7 / 2.9 s); bcsstk15 (3948) 113 / 176.
inline constexpr std::int64_t kKCycleRows = 50000;

/// The largest spread of A's diagonal (largest / smallest nonzero |a_ii|) for which `auto` takes
/// the K-cycle. Coefficient jumps spread the diagonal, and from some contrast on its Krylov
/// steps lose to the V-cycle: a 400 x 400 5-point diffusion with a 10 x 10 checkerboard of
/// coefficients 1 and c (b = A 1, one thread, forty-second session, FP16 levels with the steps'
/// row-sum correction, AmgLevelImpl::row_sum_errors) took V / K CG iterations 51 / 19 for c = 10
/// (diagonal spread 15), 64 / 21 for 1e2 (150), 99 / 32 for 1e3 (1.5e3; 1.40 / 0.76 s), 79 / 43
/// for 3e3 (4.5e3; 1.13 / 0.99 s), 112 / 85 for 1e4 (1.5e4; 1.61 / 2.61 s), 172 / not converged
/// in 200 for 1e5 and 152 / not converged for 1e6. Random 4 x 4-cell coefficients 10^U(-3, 3)
/// (spread 1.2e6) still took K: 115 / 55, so the rule is cautious. mfem beam o3 r3 (two
/// materials) spreads 151, L-shape o3 r7 6.
inline constexpr double kKCycleMaxSpread = 1e4;

/// The smallest nonzero and the largest |a_ii| of the rows of `a` (row i's diagonal in column
/// first_row + i: a process's block); +inf and 0 when there is no nonzero diagonal entry.
struct DiagonalExtremes {
    double smallest = std::numeric_limits<double>::infinity();
    double largest = 0.0;
    /// largest / smallest; 1 without a nonzero diagonal entry.
    double spread() const { return largest > 0.0 ? largest / smallest : 1.0; }
};
DiagonalExtremes diagonal_extremes(const CsrMatrix& a, std::int64_t first_row = 0);

/// The cycle `asked` runs as: auto is V on the structured path (`amg` false), and on the AMG
/// path K for A of at least kKCycleRows rows whose diagonal spreads at most kKCycleMaxSpread
/// (all processes' rows and diagonal under mpirun), else V.
CycleKind resolve_cycle(CycleKind asked, bool amg, std::int64_t rows = 0,
                        double diagonal_spread = 1.0);

/// Symmetric sweeps on the coarsest level of `rows` rows: 0 = solve it by LU (mg.coarse_solver;
/// auto: LU up to kAutoDirectRows rows). Throws InvalidInput when direct is asked for a level
/// larger than kMaxDirectRows.
inline constexpr std::int64_t kAutoDirectRows = 4096;
inline constexpr std::int64_t kMaxDirectRows = 20000;
int coarse_sweeps_for(const MultigridOptions& mg, std::int64_t rows);

/// Grid complexity (sum of rows / finest rows) and operator complexity (same for nnz).
double grid_complexity(const std::vector<LevelReport>& report);
double operator_complexity(const std::vector<LevelReport>& report);

}  // namespace mpmg
