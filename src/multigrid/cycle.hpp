// The multigrid cycles (ICPP'24 Algorithm 3; W and F cycles as usual), shared by the structured
// and the AMG hierarchy: both are a vector of type-erased Levels.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "mpmg/options.hpp"
#include "multigrid/level.hpp"

namespace mpmg {

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
