// The multigrid cycles (ICPP'24 Algorithm 3; W and F cycles as usual), shared by the structured
// and the AMG hierarchy: both are a vector of type-erased Levels.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "mpmg/options.hpp"
#include "multigrid/level.hpp"

namespace mpmg {

/// The visits of the next coarser level in one cycle of `kind`: a V-cycle visits it once with a
/// V-cycle, a W-cycle twice with W-cycles, an F-cycle with an F-cycle and then a V-cycle.
/// visit(kind) runs one visit.
template <class F>
void visit_coarser(CycleKind kind, F&& visit) {
    switch (kind) {
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
