#include "multigrid/amg_hierarchy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "mpmg/errors.hpp"
#include "multigrid/amg_level.hpp"
#include "multigrid/amg_precision.hpp"
#include "multigrid/cycle.hpp"
#include "unstructured/drop_zeros.hpp"
#include "unstructured/nodes.hpp"
#include "unstructured/pgm.hpp"
#include "unstructured/row_weights.hpp"
#include "unstructured/smoothed_aggregation.hpp"
#include "unstructured/spgemm.hpp"

namespace mpmg {
namespace {

constexpr double kRestrictionScale = 0.5;  // FGCS'23 §4.2.2

}  // namespace

AmgHierarchy::AmgHierarchy(const CsrMatrix& a, const MultigridOptions& mg,
                           const PrecisionPlan& plan, const AmgSettings& settings)
    : mg_(mg) {
    if (a.rows != a.cols || a.rows == 0) {
        throw InvalidInput(
            fmt::format("AMG needs a nonempty square matrix, got {} x {}", a.rows, a.cols));
    }
    // The gathered levels of the distributed AMG (first_level > 0) get the cycle resolved there
    // from the whole A's rows.
    mg_.cycle = resolve_cycle(mg.cycle, true, a.rows, diagonal_extremes(a).spread());
    const int first = settings.first_level;  // the whole hierarchy's index of level 0
    const int max_levels = std::max(1, std::min(mg.max_levels, settings.max_levels) - first);
    // The levels' matrices. Level 0 is the caller's `a` itself (mats[0] empty) unless it needs
    // a change: explicit zeros to drop, or row weights. A copy of it beside the caller's and the
    // Krylov operator's was 179 MB of the setup's 790 MB peak on mfem_lshape_o3_r7.
    std::vector<CsrMatrix> mats(1);
    bool own0 = false;
    const auto mat = [&](std::size_t l) -> const CsrMatrix& {
        return l == 0 && !own0 ? a : mats[l];
    };
    const auto owned0 = [&]() -> CsrMatrix& {
        if (!own0) mats[0] = a;
        own0 = true;
        return mats[0];
    };
    if (has_droppable_zeros(a)) drop_zeros(owned0());
    std::vector<std::string> coarsening_notes;
    const bool smoothed = mg.aggregation == AggregationKind::smoothed;
    const int passes = smoothed ? settings.sa_pgm_passes : settings.pgm_passes;
    // Nodes of `block` unknowns (a system of PDEs): kept through the Galerkin products.
    const int block = choose_block_size(mat(0), mg.block_size).block;
    // Row weights for a nonsymmetric A that will be coarsened (not on the gathered levels of
    // the distributed AMG, which weighs its own level 0).
    const bool weigh = first == 0 && mg.row_weights == RowWeightsKind::automatic &&
                       a.rows > mg.max_coarse_rows && max_levels > 1;
    // The aggregates of every level: settings.aggregates' (kept for later setups, and used
    // where they exist), or this setup's own.
    std::vector<Aggregation> own;
    std::vector<Aggregation>& kept = settings.aggregates != nullptr ? *settings.aggregates : own;
    // Galerkin products with R = P^T keep a symmetric A symmetric, so the finest level decides
    // (only for smoothed aggregation and the row weights). Measured once: exactly (A = A^T to
    // the bit, which spares PGM's |A| + |A^T| on level 0's rows its transpose) first, which
    // implies symmetric within the tolerance; the tolerant pass only when that fails. Level 0
    // of laplace27 n = 96 (23.4M entries) was passed over twice, 0.13 s each on one thread.
    const bool pgm_on_rows0 =
        block == 1 && kept.empty() && max_levels > 1 && mat(0).rows > mg.max_coarse_rows;
    std::optional<bool> exact0;
    if (smoothed || weigh || pgm_on_rows0) {
        exact0 = settings.exactly_symmetric || is_symmetric(mat(0), false, 0.0);
    }
    const bool symmetric = (smoothed || weigh) && (*exact0 || is_symmetric(mat(0), true));
    std::string weights_note;
    if (weigh && !symmetric) {
        RowWeights rw = mpmg::row_weights(mat(0));
        if (!rw.w.empty()) {
            weight_rows(owned0(), rw.w);
            weights_note = describe(rw);
            row_weighting_ = RowWeighting(std::move(rw.w));
        }
    }
    while (static_cast<int>(mats.size()) < max_levels &&
           mat(mats.size() - 1).rows > mg.max_coarse_rows) {
        const CsrMatrix& fine = mat(mats.size() - 1);
        const std::size_t level = mats.size() - 1;
        if (level < kept.size() && static_cast<std::int64_t>(kept[level].agg.size()) != fine.rows) {
            throw std::logic_error(fmt::format("AMG level {}: {} kept aggregates for {} rows",
                                               level, kept[level].agg.size(), fine.rows));
        }
        if (level >= kept.size()) {
            // Level 0 as measured above (rows weighted only when it was not symmetric, and
            // then not exactly: false stays true of it); the coarse levels measure their own.
            kept.push_back(pgm_aggregate(fine, passes, block, level == 0 ? exact0 : std::nullopt));
        }
        const Aggregation& g = kept[level];
        if (g.coarse_rows == 0 ||
            static_cast<double>(g.coarse_rows) * settings.min_coarsening_ratio >
                static_cast<double>(fine.rows)) {
            break;  // nothing coupled left (a diagonal matrix), or stagnating coarsening
        }
        std::string note =
            fmt::format("PGM x{}{}: {} matched, {} attached, {} alone", passes,
                        block > 1 ? fmt::format(" on nodes of {} unknowns", block) : "", g.matched,
                        g.attached, g.singles);
        if (g.isolated > 0) note += fmt::format(", {} isolated (left out)", g.isolated);
        CsrMatrix next;
        if (smoothed) {
            const CsrMatrix pt = prolongation(g);
            SmoothedProlongation sp = smoothed_prolongation(fine, pt, settings.sa_theta, block);
            drop_zeros(sp.p);
            note += fmt::format("; smoothed P: omega {:.3g} (rho {:.3g}), {:.1f} entries per row",
                                sp.omega, sp.rho,
                                static_cast<double>(sp.p.nnz()) / static_cast<double>(fine.rows));
            if (!symmetric) {
                // Nonsymmetric: R = P_t^T (Petrov-Galerkin with the tentative restriction).
                // R = P^T made V-cycles diverge on BentPipe2D100 (convection-diffusion: the
                // coarse operator P^T A P nearly singular), and R from the smoothed prolongation
                // of A^T did not converge in 200 GMRES iterations; with P_t^T it converges
                // (54 GMRES iterations with l1-Jacobi against PGM's 35; with SymGS it stalls and
                // the guard rebuilds with l1-Jacobi).
                note += "; R = tentative P^T (nonsymmetric)";
                transfers_.push_back(AmgTransfer::from(std::move(sp.p), pt.transpose()));
            } else {
                transfers_.push_back(AmgTransfer::from(std::move(sp.p)));
            }
            const AmgTransfer& t = transfers_.back();
            next = galerkin_product(t.r, fine, t.p);
        } else {
            next = aggregate_galerkin(fine, g, kRestrictionScale);
            transfers_.push_back(AmgTransfer::from(g, kRestrictionScale));
        }
        coarsening_notes.push_back(std::move(note));
        drop_zeros(next);
        mats.push_back(std::move(next));
    }
    const int nl = static_cast<int>(mats.size());
    coarse_sweeps_ = coarse_sweeps_for(mg, mat(mats.size() - 1).rows);
    const bool direct = coarse_sweeps_ == 0;

    for (int l = 0; l < nl; ++l) {
        const bool last = l == nl - 1;
        const CsrMatrix& m = mat(static_cast<std::size_t>(l));
        LevelReport rep;
        rep.box = Box{static_cast<int>(m.rows), 1, 1};
        rep.stencil = "csr";
        rep.rows = m.rows;
        rep.nnz = m.nnz();
        AmgLevelSetup setup;
        setup.compact_index_max_bytes = settings.compact_index_max_bytes;
        setup.to_coarse = last ? nullptr : &transfers_[static_cast<std::size_t>(l)];
        setup.k_cycle =
            mg_.cycle == CycleKind::k && first + l > 0 && (first + l) % settings.k_cycle_every == 0;
        AmgStorageDecision dec;
        if (last && direct) {  // solved in FP64 by LU; the level's vectors in compute precision
            const Precision c = plan.direct_compute(first + l);
            setup.precision = LevelPrecision{c, c};
            setup.matrix = &m;
            setup.direct = true;
            rep.solve = "direct (LU, fp64)";
        } else {
            dec = decide_amg_storage(m, plan.level(first + l), mg, plan.automatic, first + l);
            setup.precision = dec.precision;
            setup.matrix = &dec.matrix();
            setup.row_scale = std::move(dec.row_scale);
            setup.col_scale = std::move(dec.col_scale);
            setup.smoother = std::move(dec.smoother);
            rep.scaled = dec.scaled;
            rep.note = std::move(dec.note);
            rep.solve = last ? fmt::format("{} smoother sweeps", 2 * coarse_sweeps_) : "smoother";
        }
        if (!last) {
            const std::string& cn = coarsening_notes[static_cast<std::size_t>(l)];
            rep.note = rep.note.empty() ? cn : fmt::format("{}; {}", rep.note, cn);
        }
        if (l == 0 && !weights_note.empty()) {
            rep.note =
                rep.note.empty() ? weights_note : fmt::format("{}; {}", weights_note, rep.note);
        }
        rep.storage = last && direct ? Precision::fp64 : setup.precision.storage;
        rep.compute = setup.precision.compute;
        levels_.push_back(make_amg_level(first + l, setup, rep));
        // Nothing reads the FP64 level after its typed copy: freed for the next level's (level
        // 0's mats[0] is empty unless owned0() made it).
        mats[static_cast<std::size_t>(l)] = CsrMatrix{};
        if (rep.counts.overflow > 0) {
            throw NumericalError(fmt::format("AMG level {}: {} entries overflow {} storage", l,
                                             rep.counts.overflow, to_string(rep.storage)));
        }
        report_.push_back(std::move(rep));
    }
}

}  // namespace mpmg
