#include "multigrid/cycle.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "mpmg/errors.hpp"

namespace mpmg {

int coarse_sweeps_for(const MultigridOptions& mg, std::int64_t rows) {
    switch (mg.coarse_solver) {
        case CoarseSolverKind::smoother:
            return mg.coarse_sweeps;
        case CoarseSolverKind::direct:
            if (rows > kMaxDirectRows) {
                throw InvalidInput(fmt::format(
                    "multigrid.coarse_solver direct: the coarsest level has {} rows, more than "
                    "the {} a dense LU takes; raise multigrid.max_levels or use the smoother",
                    rows, kMaxDirectRows));
            }
            return 0;
        case CoarseSolverKind::automatic:
            break;
    }
    return rows <= kAutoDirectRows ? 0 : mg.coarse_sweeps;
}

DiagonalExtremes diagonal_extremes(const CsrMatrix& a, std::int64_t first_row) {
    DiagonalExtremes e;
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            if (a.col[p] != first_row + i) continue;
            const double d = std::abs(a.val[p]);
            if (d > 0.0) {
                e.smallest = std::min(e.smallest, d);
                e.largest = std::max(e.largest, d);
            }
            break;
        }
    }
    return e;
}

CycleKind resolve_cycle(CycleKind asked, bool amg, std::int64_t rows, double diagonal_spread) {
    if (asked != CycleKind::automatic) return asked;
    return amg && rows >= kKCycleRows && diagonal_spread <= kKCycleMaxSpread ? CycleKind::k
                                                                             : CycleKind::v;
}

void run_cycle(std::vector<std::unique_ptr<Level>>& levels, int l, CycleKind kind,
               const MultigridOptions& mg, int coarse_sweeps) {
    Level& lev = *levels[static_cast<std::size_t>(l)];
    if (l == static_cast<int>(levels.size()) - 1) {
        if (coarse_sweeps == 0) {
            lev.direct_solve();
        } else {
            for (int s = 0; s < coarse_sweeps; ++s) {
                lev.smooth(1, true);
                lev.smooth(1, false);
            }
        }
        return;
    }
    Level& coarse = *levels[static_cast<std::size_t>(l + 1)];
    lev.smooth(mg.pre_sweeps, true);
    lev.restrict_residual(coarse);
    const bool coarse_direct = l + 1 == static_cast<int>(levels.size()) - 1 && coarse_sweeps == 0;
    if (kind == CycleKind::k && !coarse_direct) {
        coarse.k_correction([&] { run_cycle(levels, l + 1, CycleKind::k, mg, coarse_sweeps); });
    } else {
        visit_coarser(kind, [&](CycleKind k) { run_cycle(levels, l + 1, k, mg, coarse_sweeps); });
    }
    lev.correct_and_smooth(coarse, mg.post_sweeps);
}

double grid_complexity(const std::vector<LevelReport>& report) {
    double sum = 0.0;
    for (const auto& r : report) sum += static_cast<double>(r.rows);
    return sum / static_cast<double>(report.front().rows);
}

double operator_complexity(const std::vector<LevelReport>& report) {
    double sum = 0.0;
    for (const auto& r : report) sum += static_cast<double>(r.nnz);
    return sum / static_cast<double>(report.front().nnz);
}

}  // namespace mpmg
