#include "multigrid/amg_hierarchy.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "mpmg/errors.hpp"
#include "multigrid/amg_level.hpp"
#include "multigrid/amg_precision.hpp"
#include "multigrid/cycle.hpp"
#include "unstructured/pgm.hpp"
#include "unstructured/spgemm.hpp"

namespace mpmg {
namespace {

// Largest coarsest level solved by dense LU; a larger one (when max_levels or stagnating
// coarsening stops early) is smoothed with kCoarseSweeps symmetric sweeps instead.
constexpr std::int64_t kMaxDirectRows = 4096;
constexpr int kCoarseSweeps = 20;
constexpr double kRestrictionScale = 0.5;  // FGCS'23 §4.2.2

}  // namespace

AmgHierarchy::AmgHierarchy(const CsrMatrix& a, const MultigridOptions& mg,
                           const PrecisionPlan& plan, const AmgSettings& settings)
    : mg_(mg) {
    if (a.rows != a.cols || a.rows == 0) {
        throw InvalidInput(
            fmt::format("AMG needs a nonempty square matrix, got {} x {}", a.rows, a.cols));
    }
    const int max_levels = std::max(1, std::min(mg.max_levels, settings.max_levels));
    std::vector<CsrMatrix> mats;
    mats.push_back(a);
    std::vector<std::string> coarsening_notes;
    while (static_cast<int>(mats.size()) < max_levels && mats.back().rows > mg.max_coarse_rows) {
        const CsrMatrix& fine = mats.back();
        const Aggregation g = pgm_aggregate(fine, settings.pgm_passes);
        if (static_cast<double>(g.coarse_rows) * settings.min_coarsening_ratio >
            static_cast<double>(fine.rows)) {
            break;
        }
        coarsening_notes.push_back(fmt::format("PGM x{}: {} matched, {} attached, {} alone",
                                               settings.pgm_passes, g.matched, g.attached,
                                               g.singles));
        const CsrMatrix p = prolongation(g);
        CsrMatrix next = galerkin_product(restriction(g, kRestrictionScale), fine, p);
        transfers_.push_back(AmgTransfer::from(g, kRestrictionScale));
        mats.push_back(std::move(next));
    }
    const int nl = static_cast<int>(mats.size());
    const bool direct = mats.back().rows <= kMaxDirectRows;
    if (!direct) coarse_sweeps_ = kCoarseSweeps;

    for (int l = 0; l < nl; ++l) {
        const bool last = l == nl - 1;
        const CsrMatrix& m = mats[static_cast<std::size_t>(l)];
        LevelReport rep;
        rep.box = Box{static_cast<int>(m.rows), 1, 1};
        rep.stencil = "csr";
        rep.rows = m.rows;
        rep.nnz = m.nnz();
        AmgLevelSetup setup;
        setup.to_coarse = last ? nullptr : &transfers_[static_cast<std::size_t>(l)];
        AmgStorageDecision dec;
        if (last && direct) {  // solved in FP64 by LU; the level's vectors in compute precision
            const LevelPrecision lp = plan.level(l);
            setup.precision = LevelPrecision{lp.compute, lp.compute};
            setup.matrix = &m;
            setup.direct = true;
            rep.solve = "direct (LU, fp64)";
        } else {
            dec = decide_amg_storage(m, plan.level(l), mg, plan.automatic, l);
            setup.precision = dec.precision;
            setup.matrix = &dec.matrix;
            setup.row_scale = std::move(dec.row_scale);
            setup.col_scale = std::move(dec.col_scale);
            setup.smoother = std::move(dec.smoother);
            rep.scaled = dec.scaled;
            rep.note = std::move(dec.note);
            rep.solve = last ? fmt::format("{} smoother sweeps", 2 * kCoarseSweeps) : "smoother";
        }
        if (!last) {
            const std::string& cn = coarsening_notes[static_cast<std::size_t>(l)];
            rep.note = rep.note.empty() ? cn : fmt::format("{}; {}", rep.note, cn);
        }
        rep.storage = last && direct ? Precision::fp64 : setup.precision.storage;
        rep.compute = setup.precision.compute;
        levels_.push_back(make_amg_level(l, setup, rep));
        rep.matrix_bytes = m.nnz() * (bytes_of(rep.storage) + 4) + (m.rows + 1) * 8;
        if (rep.counts.overflow > 0) {
            throw NumericalError(fmt::format("AMG level {}: {} entries overflow {} storage", l,
                                             rep.counts.overflow, to_string(rep.storage)));
        }
        report_.push_back(std::move(rep));
    }
}

}  // namespace mpmg
