#include "distributed/dist_amg.hpp"

#include "distributed/mpi_env.hpp"
#include "mpmg/errors.hpp"

#ifdef MPMG_HAVE_MPI

#include <fmt/format.h>
#include <mpi.h>
#include <omp.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <deque>
#include <functional>
#include <memory>
#include <optional>

#include "api/guarded_solve.hpp"
#include "api/operators.hpp"
#include "core/prefault.hpp"
#include "core/sum_rows.hpp"
#include "distributed/agree.hpp"
#include "distributed/by_owner.hpp"
#include "distributed/dist_csr.hpp"
#include "distributed/dist_ops.hpp"
#include "distributed/dist_smoothed.hpp"
#include "kernels/setup_simd.hpp"
#include "mpmg/errors.hpp"
#include "multigrid/amg_hierarchy.hpp"
#include "multigrid/amg_level.hpp"
#include "multigrid/amg_precision.hpp"
#include "multigrid/cycle.hpp"
#include "multigrid/k_steps.hpp"
#include "multigrid/level_vectors.hpp"
#include "unstructured/csr_typed.hpp"
#include "unstructured/drop_zeros.hpp"
#include "unstructured/nodes.hpp"
#include "unstructured/pgm.hpp"
#include "unstructured/rcm.hpp"
#include "unstructured/row_weights.hpp"

namespace mpmg::dist {
namespace {

using level_vectors::from_level;
using level_vectors::to_level;

constexpr double kRestrictionScale = 0.5;  // FGCS'23 §4.2.2, as the serial hierarchy
// A level stays distributed while every process has at least this many rows; below, the halo
// latency and the weaker hybrid smoothing outweigh the work, and the rest is gathered onto rank 0
// (1138_bus, 1138 rows, on 2 ranks with 256: 69 CG iterations against 13 serially; sherman3,
// 5005 rows, on 2 ranks with 2048: 47 GMRES iterations against 32).
constexpr std::int64_t kMinLocalRows = 4096;

/// A over the row blocks in iterative precision K: y = A_diag x + coupling, inner products
/// summed over all processes.
template <class K>
class RowBlockOperator final : public LinearOperator<K> {
public:
    RowBlockOperator(const DistCsr& a, TruncationCounts& counts)
        : a_(a), diag_(to_typed<K>(a.diag(), counts)) {}
    std::int64_t size() const override { return diag_.rows; }
    void apply(const K* x, K* y) const override {
        spmv(diag_, x, y);
        a_.add_coupling(x, y);
    }
    double global_sum(double local) const override { return allreduce_sum(local, a_.comm()); }
    void global_sums(double* values, int count) const override {
        allreduce_sums(values, count, a_.comm());
    }

private:
    const DistCsr& a_;
    TypedCsr<K> diag_;
};

/// A distributed AMG level's coupling to other processes' rows, in the level's variables:
/// Ĝ = D_r^{-1} G D_c^{-1} for an equilibrated level (r its row scale, c the owners' column
/// scales of the ghost columns), kept in FP64.
class CsrBoundary final : public LevelBoundary {
public:
    CsrBoundary(const DistCsr& a, const std::vector<double>& row_scale,
                const std::vector<double>& col_scale)
        : a_(a), val_(a.coupling().val) {
        const std::vector<double> ones(static_cast<std::size_t>(a.local_rows()), 1.0);
        const std::vector<double>& c =
            a.exchange(col_scale.empty() ? ones.data() : col_scale.data());
        const DistCsr::Coupling& g = a.coupling();
        for (std::size_t q = 0; q < g.rows.size(); ++q) {
            const double r =
                row_scale.empty() ? 1.0 : row_scale[static_cast<std::size_t>(g.rows[q])];
            for (std::int64_t e = g.ptr[q]; e < g.ptr[q + 1]; ++e) {
                const auto ue = static_cast<std::size_t>(e);
                val_[ue] /= r * c[static_cast<std::size_t>(g.slot[ue])];
            }
        }
    }
    void subtract(const double* u, double* y) override { apply(u, y); }
    void subtract(const float* u, float* y) override { apply(u, y); }
    const std::vector<std::int64_t>& rows() const override { return a_.coupling().rows; }
    /// sum_j |ĝ_ij| of every local row (0 for rows without coupling).
    std::vector<double> row_l1(std::int64_t n) const {
        std::vector<double> l1(static_cast<std::size_t>(n), 0.0);
        const DistCsr::Coupling& g = a_.coupling();
        const std::vector<std::int64_t>& rows = a_.coupling().rows;
        for (std::size_t q = 0; q < rows.size(); ++q) {
            for (std::int64_t e = g.ptr[q]; e < g.ptr[q + 1]; ++e) {
                l1[static_cast<std::size_t>(rows[q])] +=
                    std::abs(val_[static_cast<std::size_t>(e)]);
            }
        }
        return l1;
    }
    double global_max(double local) override {
        double out = local;
        MPI_Allreduce(&local, &out, 1, MPI_DOUBLE, MPI_MAX, a_.comm());
        return out;
    }

private:
    template <class T>
    void apply(const T* u, T* y) {
        a_.add_coupling(u, y, -1.0, val_);
    }

    const DistCsr& a_;
    std::vector<double> val_;  // the coupling's values in the level's variables
};

/// l1-Jacobi on a distributed level divides by the whole row's l1 norm, the coupling to other
/// processes included (Baker, Falgout, Kolev, Yang, "Multigrid smoothers for ultraparallel
/// computing", SISC 2011): the guard's robust smoother stays convergent for any SPD matrix.
/// Gauss-Seidel and weighted Jacobi keep the plain diagonal, as BoomerAMG's default hybrid
/// Gauss-Seidel does: adding the l1 term to them (measured) slowed bcsstk15 on 2 ranks from 124
/// to 184 CG iterations, and did not make bcsstk13 converge.
void add_l1_coupling(SmootherData& sm, const std::vector<double>& l1) {
    if (sm.kind != SmootherKind::l1_jacobi || sm.inv_diag.size() != l1.size()) return;
    for (std::size_t i = 0; i < l1.size(); ++i) {
        if (l1[i] > 0.0) sm.inv_diag[i] = 1.0 / (1.0 / sm.inv_diag[i] + l1[i]);
    }
}

/// The whole level's report from every process's (collective): rows, nonzeros, bytes and
/// truncation counts summed; precisions, scaling, solve and note those of rank 0 (the note
/// says when the processes' storage differs).
LevelReport combined(const LevelReport& mine, MPI_Comm comm) {
    long long sums[7] = {mine.rows,
                         mine.nnz,
                         mine.matrix_bytes,
                         mine.counts.overflow,
                         mine.counts.underflow,
                         mine.counts.subnormal,
                         mine.counts.nonfinite_input};
    MPI_Allreduce(MPI_IN_PLACE, sums, 7, MPI_LONG_LONG, MPI_SUM, comm);
    int st[2] = {static_cast<int>(mine.storage), -static_cast<int>(mine.storage)};
    MPI_Allreduce(MPI_IN_PLACE, st, 2, MPI_INT, MPI_MIN, comm);
    LevelReport r = mine;  // rank 0's is what is printed
    r.rows = sums[0];
    r.nnz = sums[1];
    r.matrix_bytes = sums[2];
    r.counts = {sums[3], sums[4], sums[5], sums[6]};
    r.box = Box{static_cast<int>(std::min<long long>(sums[0], INT_MAX)), 1, 1};
    if (st[0] != -st[1]) {
        r.note += fmt::format("{}storage differs between the ranks ({} .. {})",
                              r.note.empty() ? "" : "; ", to_string(static_cast<Precision>(st[0])),
                              to_string(static_cast<Precision>(-st[1])));
    }
    return r;
}

/// The row weights of the distributed A (unstructured/row_weights.hpp; collective), `mine` its
/// rows with global columns: its transpose products through the rows of A^T each process
/// gathers for its rows.
RowWeights dist_row_weights(const DistCsr& a, const CsrMatrix& mine) {
    const MPI_Comm comm = a.comm();
    const RowPartition& p = a.partition();
    RowWeightsInput in;
    in.diag.assign(static_cast<std::size_t>(mine.rows), 0.0);
    in.row_max.assign(in.diag.size(), 0.0);
    std::vector<CooEntry> mirrored;
    mirrored.reserve(static_cast<std::size_t>(mine.nnz()));
    for (std::int64_t i = 0; i < mine.rows; ++i) {
        const auto u = static_cast<std::size_t>(i);
        for (std::int64_t k = mine.row_ptr[i]; k < mine.row_ptr[i + 1]; ++k) {
            if (mine.col[k] == a.first() + i) in.diag[u] = mine.val[k];
            in.row_max[u] = std::max(in.row_max[u], std::abs(mine.val[k]));
            mirrored.push_back(CooEntry{mine.col[k], a.first() + i, mine.val[k]});
        }
    }
    int zero = std::any_of(in.diag.begin(), in.diag.end(), [](double d) { return d == 0.0; });
    MPI_Allreduce(MPI_IN_PLACE, &zero, 1, MPI_INT, MPI_LOR, comm);
    in.zero_diagonal = zero != 0;
    std::vector<CooEntry> got = send_to_row_owners(mirrored, p, comm);
    const DistCsr at(csr_rows(got, a.first(), a.local_rows(), p.global_rows()), 0, p, comm);
    std::vector<double> abs_atw;
    in.transpose_product = [&](const std::vector<double>& w, std::vector<double>& atw,
                               double sums[2]) {
        const CsrMatrix& d = at.diag();
        atw.assign(w.size(), 0.0);
        abs_atw.assign(w.size(), 0.0);
        for (std::int64_t j = 0; j < d.rows; ++j) {
            const auto u = static_cast<std::size_t>(j);
            for (std::int64_t k = d.row_ptr[j]; k < d.row_ptr[j + 1]; ++k) {
                const double t = d.val[k] * w[static_cast<std::size_t>(d.col[k])];
                atw[u] += t;
                abs_atw[u] += std::abs(t);
            }
        }
        const std::vector<double>& ghost = at.exchange(w.data());
        const DistCsr::Coupling& c = at.coupling();
        for (std::size_t q = 0; q < c.rows.size(); ++q) {
            const auto u = static_cast<std::size_t>(c.rows[q]);
            for (std::int64_t e = c.ptr[q]; e < c.ptr[q + 1]; ++e) {
                const double t =
                    c.val[static_cast<std::size_t>(e)] *
                    ghost[static_cast<std::size_t>(c.slot[static_cast<std::size_t>(e)])];
                atw[u] += t;
                abs_atw[u] += std::abs(t);
            }
        }
        sums[0] = sums[1] = 0.0;
        for (std::size_t j = 0; j < w.size(); ++j) {
            sums[0] += atw[j] * atw[j];
            sums[1] += abs_atw[j] * abs_atw[j];
        }
        allreduce_sums(sums, 2, comm);
    };
    return row_weights(in);
}

/// The transfers between distributed levels l and l + 1: PGM's piecewise-constant ones inside
/// each process, or smoothed aggregation's distributed P and R.
struct LevelTransfer {
    AmgTransfer pgm;  ///< when `smoothed` is null
    std::unique_ptr<DistSmoothedLevel> smoothed;

    std::int64_t coarse_rows() const {
        return smoothed ? smoothed->r->local_rows() : pgm.coarse_rows();
    }
    /// c = R fine (collective when smoothed).
    void restrict_to(const std::vector<double>& fine, std::vector<double>& c) const {
        if (smoothed) {
            smoothed->r->multiply(fine.data(), c.data());
        } else {
            pgm.restrict_to(fine.data(), c.data());
        }
    }
    /// fine = P c (this level's rows; collective when smoothed).
    void interpolate(const std::vector<double>& c, std::vector<double>& fine) const {
        if (smoothed) {
            fine.resize(static_cast<std::size_t>(smoothed->p->local_rows()));
            smoothed->p->multiply(c.data(), fine.data());
        } else {
            fine.assign(pgm.agg.size(), 0.0);
            pgm.interpolate_add(c.data(), fine.data(), static_cast<const double*>(nullptr));
        }
    }
};

/// The distributed AMG preconditioner (the header's description).
class DistAmg final : public BuiltPreconditioner {
public:
    /// `rows0`: the user's number of each of this process's rows of a0 (for messages);
    /// `distributed_levels` receives the number of levels that stay distributed.
    /// `symmetric`: the K-cycle's Krylov steps are flexible CG (the solve is CG), else GCR.
    /// `symmetric_a`: A is symmetric (is_symmetric()), so its rows are not weighted.
    /// `kept`: aggregates of an earlier setup of the same pattern, used instead of new PGM
    /// passes where there are some and extended by this setup's (null: none kept).
    DistAmg(const DistCsr& a0, const std::vector<std::int64_t>& rows0, const MultigridOptions& mg,
            const PrecisionPlan& plan, const AmgSettings& settings, bool symmetric,
            bool symmetric_a, int* distributed_levels, KeptAggregates* kept = nullptr)
        : mg_(mg), comm_(a0.comm()), rank_(a0.rank()), k_symmetric_(symmetric) {
        // solve() resolves `auto` from the whole A (amg_defaults); V if it reaches here.
        mg_.cycle = resolve_cycle(mg.cycle, false);
        const bool smoothed = mg.aggregation == AggregationKind::smoothed;
        const int passes = smoothed ? settings.sa_pgm_passes : settings.pgm_passes;
        k_every_ = settings.k_cycle_every;
        const int max_levels = std::max(1, std::min(mg.max_levels, settings.max_levels));
        const auto distributed_level = [&](const DistCsr& m, int l) {
            const RowPartition& p = m.partition();
            std::int64_t min_local = p.global_rows();
            for (int q = 0; q < p.size(); ++q) min_local = std::min(min_local, p.rows(q));
            return l + 1 < max_levels && p.global_rows() > mg.max_coarse_rows &&
                   min_local >= kMinLocalRows;
        };
        const DistCsr* cur = &a0;  // level l's rows
        // Row weights as the serial hierarchy's (multigrid/amg_hierarchy.cpp), when level 0
        // stays distributed; otherwise the gathered hierarchy weighs its rows itself.
        MultigridOptions tail_mg = mg_;  // the cycle resolved
        std::string weights_note;
        if (mg.row_weights == RowWeightsKind::automatic && !symmetric_a &&
            distributed_level(a0, 0)) {
            CsrMatrix rows = a0.rows_with_global_columns();
            RowWeights rw = dist_row_weights(a0, rows);
            if (!rw.w.empty()) {
                weight_rows(rows, rw.w);
                weighted0_ = std::make_unique<DistCsr>(rows, 0, a0.partition(), comm_);
                cur = weighted0_.get();
                weights_note = describe(rw);
                row_weighting_ = RowWeighting(std::move(rw.w));
                tail_mg.row_weights = RowWeightsKind::none;  // W A is balanced already
            }
        }
        std::vector<LevelReport> reps;
        int l = 0;
        for (;; ++l) {
            const DistCsr& m = *cur;
            const RowPartition& p = m.partition();
            if (!distributed_level(m, l)) break;
            Aggregation fresh;
            const bool reuse = kept != nullptr && static_cast<std::size_t>(l) < kept->levels.size();
            // Rows coupled only to other processes' rows have no neighbour in the diagonal
            // block, but are not decoupled: they stay singletons, not left out as the serial
            // isolated rows are (the coarse levels would lose them).
            // Level 0's diagonal block, a principal submatrix of an A known to be exactly
            // symmetric, is too: PGM need not measure it. The coarse levels' sums are not
            // mirrored, so they are measured.
            if (!reuse) {
                fresh = pgm_aggregate(
                    m.diag(), passes, std::max(1, mg.block_size),
                    l == 0 && settings.exactly_symmetric ? std::optional<bool>(true) : std::nullopt,
                    m.coupled_rows());
            }
            if (!reuse && kept != nullptr) kept->levels.push_back(std::move(fresh));
            const Aggregation& g =
                kept != nullptr ? kept->levels[static_cast<std::size_t>(l)] : fresh;
            if (static_cast<std::int64_t>(g.agg.size()) != m.local_rows()) {
                throw std::logic_error(
                    fmt::format("distributed AMG level {}: {} kept aggregates "
                                "for {} rows",
                                l, g.agg.size(), m.local_rows()));
            }
            std::vector<std::int64_t> counts(static_cast<std::size_t>(p.size()));
            MPI_Allgather(&g.coarse_rows, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, comm_);
            const RowPartition cp = RowPartition::from_counts(counts);
            const std::int64_t min_coarse = *std::min_element(counts.begin(), counts.end());
            if (min_coarse == 0 ||
                static_cast<double>(cp.global_rows()) * settings.min_coarsening_ratio >
                    static_cast<double>(p.global_rows())) {
                break;  // stagnating coarsening, or a process without aggregates
            }
            // Level l on this process's block, set up collectively (an error anywhere stops all).
            std::string note = fmt::format(
                "PGM x{} in each rank's block (rank 0: {} matched, {} attached, {} alone", passes,
                g.matched, g.attached, g.singles);
            if (g.isolated > 0) note += fmt::format(", {} isolated (left out)", g.isolated);
            note += ")";
            // Smoothed: P, R and the coarse rows, distributed (dist_smoothed.hpp).
            std::unique_ptr<DistSmoothedLevel> sl;
            if (smoothed) {
                sl = std::make_unique<DistSmoothedLevel>(smoothed_level(
                    m, g, cp, settings.sa_theta, std::max(1, mg.block_size), symmetric_a));
                note +=
                    fmt::format("; smoothed P: omega {:.3g} (rho {:.3g}), {:.1f} entries per row",
                                sl->omega, sl->rho, sl->entries_per_row);
                if (!symmetric_a) note += "; R = tentative P^T (nonsymmetric)";
            }
            // The storage decision may fail on one process only (a zero diagonal in its
            // block): agreed before the collective steps below.
            const AmgStorageDecision dec = run_agreed(
                [&] {
                    return decide_amg_storage(m.diag(), plan.level(l), mg, plan.automatic, l,
                                              l == 0 ? rows0.data() : nullptr);
                },
                comm_);
            AmgLevelSetup setup;
            setup.compact_index_max_bytes = settings.compact_index_max_bytes;
            setup.precision = dec.precision;
            setup.matrix = &dec.matrix();
            setup.row_scale = dec.row_scale;
            setup.col_scale = dec.col_scale;
            setup.smoother = dec.smoother;
            auto boundary = std::make_shared<CsrBoundary>(m, dec.row_scale, dec.col_scale);
            add_l1_coupling(setup.smoother, boundary->row_l1(m.local_rows()));
            setup.boundary = std::move(boundary);
            LevelReport rep;
            rep.stencil = "csr";
            rep.rows = m.local_rows();
            rep.nnz =
                m.diag().nnz() + std::count_if(m.coupling().val.begin(), m.coupling().val.end(),
                                               [](double v) { return v != 0.0; });
            rep.scaled = dec.scaled;
            rep.note = dec.note.empty() ? note : fmt::format("{}; {}", dec.note, note);
            if (l == 0 && !weights_note.empty()) {
                rep.note = fmt::format("{}; {}", weights_note, rep.note);
            }
            rep.solve = "smoother";
            rep.storage = dec.precision.storage;
            rep.compute = dec.precision.compute;
            levels_.push_back(run_agreed([&] { return make_amg_level(l, setup, rep); }, comm_));
            reps.push_back(combined(rep, comm_));
            if (sl) {
                owned_.emplace_back(sl->coarse, 0, cp, comm_);
                sl->coarse = CsrMatrix();
                transfers_.push_back(LevelTransfer{{}, std::move(sl)});
            } else {
                transfers_.push_back(LevelTransfer{AmgTransfer::from(g, kRestrictionScale), {}});
                CsrMatrix coarse = galerkin_rows(m, g.agg, kRestrictionScale, cp);
                owned_.emplace_back(coarse, 0, cp, comm_);
            }
            cur = &owned_.back();
        }
        // The rest, gathered onto rank 0 and coarsened on there.
        const DistCsr& last = *cur;
        tail_rows_ = last.partition();
        CsrMatrix whole = gather_rows(last.rows_with_global_columns(), tail_rows_, comm_);
        AmgSettings tail_settings = settings;
        tail_settings.first_level = l;
        tail_settings.exactly_symmetric = settings.exactly_symmetric && l == 0;  // A itself
        tail_settings.aggregates = kept != nullptr ? &kept->tail : settings.aggregates;
        tail_ = run_agreed(
            [&] {
                return rank_ == 0
                           ? std::make_unique<AmgHierarchy>(whole, tail_mg, plan, tail_settings)
                           : std::unique_ptr<AmgHierarchy>();
            },
            comm_);
        std::vector<LevelReport> tail_reps;
        if (rank_ == 0) tail_reps = tail_->report();
        broadcast_reports(tail_reps, comm_);
        if (reps.empty() && !tail_reps.empty() && !weights_note.empty()) {
            tail_reps.front().note = fmt::format("{}; {}", weights_note, tail_reps.front().note);
        }
        report_ = std::move(reps);
        report_.insert(report_.end(), tail_reps.begin(), tail_reps.end());
        coarse_.resize(levels_.size());
        if (mg_.cycle == CycleKind::k) k_work_.resize(levels_.size());
        *distributed_levels = static_cast<int>(levels_.size());
    }

    void apply(const double* r, double* z) override { apply_as(r, z); }
    void apply(const float* r, float* z) override { apply_as(r, z); }
    const std::vector<LevelReport>& report() const override { return report_; }
    double grid_complexity() const override { return mpmg::grid_complexity(report_); }
    double operator_complexity() const override { return mpmg::operator_complexity(report_); }

private:
    template <class K>
    void apply_as(const K* r_in, K* z) {
        const K* r = row_weighting_.apply(r_in);  // W r for W A
        if (!levels_.empty()) {
            levels_.front()->set_rhs(r);
            cycle(0, mg_.cycle);
            levels_.front()->get_solution(z);
            return;
        }
        // Everything gathered: one serial cycle on rank 0.
        std::vector<double> v(r, r + tail_rows_.rows(rank_));
        tail_solve(v);
        std::transform(v.begin(), v.end(), z, [](double x) { return static_cast<K>(x); });
    }

    // v (this process's rows of the first gathered level) <- one cycle of the tail on rank 0.
    void tail_solve(std::vector<double>& v) {
        const double t0 = MPI_Wtime();
        const int size = tail_rows_.size();
        std::vector<int> counts(static_cast<std::size_t>(size)), at(counts.size());
        for (int q = 0; q < size; ++q) {
            counts[static_cast<std::size_t>(q)] = static_cast<int>(tail_rows_.rows(q));
            at[static_cast<std::size_t>(q)] = static_cast<int>(tail_rows_.first(q));
        }
        if (rank_ == 0) {
            global_r_.resize(static_cast<std::size_t>(tail_rows_.global_rows()));
            global_e_.resize(global_r_.size());
        }
        MPI_Gatherv(v.data(), static_cast<int>(v.size()), MPI_DOUBLE, global_r_.data(),
                    counts.data(), at.data(), MPI_DOUBLE, 0, comm_);
        if (rank_ == 0) {
            const double t1 = MPI_Wtime();
            tail_->apply(global_r_.data(), global_e_.data());
            comm_stats().tail_s += MPI_Wtime() - t1;
        }
        MPI_Scatterv(global_e_.data(), counts.data(), at.data(), MPI_DOUBLE, v.data(),
                     static_cast<int>(v.size()), MPI_DOUBLE, 0, comm_);
        comm_stats().agglomerate_s += MPI_Wtime() - t0;
        comm_stats().agglomerations += 2;
    }

    void cycle(int l, CycleKind kind) {
        const auto ul = static_cast<std::size_t>(l);
        Level& lev = *levels_[ul];
        const LevelTransfer& t = transfers_[ul];
        lev.smooth(mg_.pre_sweeps, true);
        lev.residual_unscaled(fine_);
        std::vector<double>& c = coarse_[ul];  // kept: no page faults
        c.resize(static_cast<std::size_t>(t.coarse_rows()));
        t.restrict_to(fine_, c);
        // v <- the coarse correction for the right-hand side v, from zero.
        const auto coarse_solve = [&](std::vector<double>& v) {
            if (l + 1 < static_cast<int>(levels_.size())) {
                Level& next = *levels_[ul + 1];
                to_level(v, next);
                next.finish_rhs();
                visit_coarser(kind, [&](CycleKind k) { cycle(l + 1, k); });
                next.unscale_solution();
                from_level(next, v);
            } else {
                tail_solve(v);  // the tail's own cycle (of kind mg.cycle) from zero, once
            }
        };
        if (kind == CycleKind::k && (l + 1) % k_every_ == 0) {
            k_steps(owned_[ul], c, k_work_[ul], coarse_solve);
        } else {
            coarse_solve(c);
        }
        t.interpolate(c, fine_);
        lev.add_correction(fine_);
        lev.smooth(mg_.post_sweeps, false);
    }

    /// The K-cycle's coarse correction on the next level, whose rows of the matrix are `m`: its
    /// steps (multigrid/k_steps.hpp) on m e = c preconditioned by `solve`, in FP64 on the
    /// unscaled vectors, the inner products summed over the ranks (so every rank takes the same
    /// branches). c <- e.
    struct KWork {
        std::vector<double> r, c1, v1, v2;
    };
    template <class Solve>
    void k_steps(const DistCsr& m, std::vector<double>& c, KWork& w, const Solve& solve) {
        const auto n = static_cast<std::int64_t>(c.size());
        w.r = c;
        solve(c);  // c1
        w.c1 = c;
        w.v1.resize(c.size());
        w.v2.resize(c.size());
        m.multiply(w.c1.data(), w.v1.data());
        double s1[3];
        k_steps::first_sums(k_symmetric_, n, w.c1.data(), w.v1.data(), w.r.data(), s1);
        allreduce_sums(s1, 3, comm_);
        const std::optional<double> alpha1 = k_steps::first_step(s1);
        if (!alpha1) return;  // c = c1: the plain cycle
        double tt = k_steps::first_residual(n, *alpha1, w.v1.data(), w.r.data(), w.r.data());
        allreduce_sums(&tt, 1, comm_);
        if (k_steps::first_enough(tt, s1[2])) {
            k_steps::combine(n, *alpha1, w.c1.data(), 0.0, w.c1.data(), c.data());
            return;
        }
        c = w.r;
        solve(c);  // c2
        m.multiply(c.data(), w.v2.data());
        double s2[3];
        k_steps::second_sums(k_symmetric_, n, c.data(), w.v1.data(), w.v2.data(), w.r.data(), s2);
        allreduce_sums(s2, 3, comm_);
        const auto beta = k_steps::second_step(s1[0], *alpha1, s2);
        if (beta) {
            k_steps::combine(n, (*beta)[0], w.c1.data(), (*beta)[1], c.data(), c.data());
        } else {
            k_steps::combine(n, *alpha1, w.c1.data(), 0.0, w.c1.data(), c.data());
        }
    }

    MultigridOptions mg_;
    MPI_Comm comm_;
    int rank_ = 0;
    bool k_symmetric_ = false;
    int k_every_ = 2;  // AmgSettings::k_cycle_every
    std::vector<KWork> k_work_;
    std::deque<DistCsr> owned_;                   // coarse levels' rows (stable addresses)
    std::unique_ptr<DistCsr> weighted0_;          // W A's rows (row weights; else null)
    RowWeighting row_weighting_;                  // W of W A (none: empty)
    std::vector<LevelTransfer> transfers_;        // transfers_[l]: level l -> l + 1
    std::vector<std::unique_ptr<Level>> levels_;  // the distributed levels
    std::unique_ptr<AmgHierarchy> tail_;          // rank 0: the gathered levels
    RowPartition tail_rows_;
    std::vector<LevelReport> report_;
    std::vector<double> fine_, global_r_, global_e_;
    std::vector<std::vector<double>> coarse_;
};

template <class K>
void run(const DistCsr& a0, const std::vector<std::int64_t>& rows0, const std::vector<double>& b,
         const SolverOptions& o, bool symmetric_a, bool exact_a, SolveResult& out,
         int* distributed_levels) {
    TruncationCounts local;
    const RowBlockOperator<K> a(a0, local);
    check_k(allreduce(local, a0.comm()), o.precision.krylov);
    AmgSettings settings;
    settings.exactly_symmetric = exact_a;  // of level 0 as it stands (not weighted: symmetric)
    const BuildFn build = [&](const PrecisionPlan& plan, const MultigridOptions& mg) {
        return std::unique_ptr<BuiltPreconditioner>(
            std::make_unique<DistAmg>(a0, rows0, mg, plan, settings, o.solver == SolverKind::cg,
                                      symmetric_a, distributed_levels));
    };
    // A small A is gathered onto rank 0 (no distributed levels), where the direct solve runs.
    run_guarded<K>(a, b, build, o, amg_fallbacks(a0.partition().global_rows()), out);
    // The solution, whole, on every process.
    const RowPartition& rp = a0.partition();
    std::vector<int> counts_of(static_cast<std::size_t>(rp.size())), at(counts_of.size());
    for (int q = 0; q < rp.size(); ++q) {
        counts_of[static_cast<std::size_t>(q)] = static_cast<int>(rp.rows(q));
        at[static_cast<std::size_t>(q)] = static_cast<int>(rp.first(q));
    }
    std::vector<double> all(static_cast<std::size_t>(rp.global_rows()));
    MPI_Allgatherv(out.x.data(), static_cast<int>(out.x.size()), MPI_DOUBLE, all.data(),
                   counts_of.data(), at.data(), MPI_DOUBLE, a0.comm());
    out.x = std::move(all);
}

/// RowPartition(row_ptr, size) of whole nodes of `block` rows (every block boundary a node
/// boundary).
RowPartition node_partition(const std::vector<std::int64_t>& row_ptr, int size, int block) {
    if (block == 1) return RowPartition(row_ptr, size);
    std::vector<std::int64_t> node_ptr;
    for (std::size_t i = 0; i < row_ptr.size(); i += static_cast<std::size_t>(block)) {
        node_ptr.push_back(row_ptr[i]);
    }
    const RowPartition nodes(node_ptr, size);
    std::vector<std::int64_t> counts(static_cast<std::size_t>(size));
    for (int q = 0; q < size; ++q) counts[static_cast<std::size_t>(q)] = nodes.rows(q) * block;
    return RowPartition::from_counts(counts);
}

/// The row pointers of `a` renumbered by `perm` (new row i is old row perm[i]; empty: as is).
std::vector<std::int64_t> row_ptr_of(const CsrMatrix& a, const std::vector<std::int64_t>& perm) {
    if (perm.empty()) return a.row_ptr;
    std::vector<std::int64_t> ptr(a.row_ptr.size(), 0);
    for (std::size_t i = 0; i < perm.size(); ++i) {
        const auto r = static_cast<std::size_t>(perm[i]);
        ptr[i + 1] = ptr[i] + a.row_ptr[r + 1] - a.row_ptr[r];
    }
    return ptr;
}

/// Entries of rows `begin` .. `end` - 1 of `m` (row k of m is the matrix's row `first` + k;
/// global columns) that couple different blocks of partition `p` of the matrix renumbered by
/// `inv` (inv[old] = new; empty: as is). Each process counts rows of its own; the sum over the
/// processes is the whole matrix's count.
std::int64_t coupling_entries(const CsrMatrix& m, std::int64_t first, std::int64_t begin,
                              std::int64_t end, const std::vector<std::int64_t>& inv,
                              const RowPartition& p) {
    const auto renumbered = [&](std::int64_t j) {
        return inv.empty() ? j : inv[static_cast<std::size_t>(j)];
    };
    std::int64_t n = 0;
    for (std::int64_t i = begin; i < end; ++i) {
        const int q = p.owner(renumbered(first + i));
        const std::int64_t lo = p.first(q), hi = p.first(q + 1);
        for (std::int64_t k = m.row_ptr[static_cast<std::size_t>(i)];
             k < m.row_ptr[static_cast<std::size_t>(i) + 1]; ++k) {
            const std::int64_t j = renumbered(m.col[static_cast<std::size_t>(k)]);
            n += j < lo || j >= hi;
        }
    }
    return n;
}

/// The error of sizes that the distributed AMG path does not take.
void check_supported(std::int64_t rows, std::int64_t nnz) {
    if (rows > INT_MAX || nnz > INT_MAX) {
        throw Unsupported(fmt::format(
            "--method amg under mpirun: {} rows / {} nonzeros exceed MPI's int counts", rows, nnz));
    }
}

/// The rows of `in` moved to partition `rp` of the matrix renumbered by `perm` (new row i is
/// row perm[i] of `in`'s numbering; empty: as is), columns renumbered too and sorted, b with
/// them (collective). Whole rows travel: a head per row (its new number, length and b) and its
/// entries (column, value), each laid out by process at once.
void redistribute(CsrRows& in, const std::vector<std::int64_t>& perm, const RowPartition& rp,
                  MPI_Comm comm) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    const int size = rp.size();
    const std::int64_t n = rp.global_rows(), first = in.rows.first(rank);
    std::vector<std::int64_t> inv;
    if (!perm.empty()) {
        inv.resize(perm.size());
        for (std::size_t i = 0; i < perm.size(); ++i) {
            inv[static_cast<std::size_t>(perm[i])] = static_cast<std::int64_t>(i);
        }
    }
    const auto renumbered = [&](std::int64_t j) {
        return inv.empty() ? j : inv[static_cast<std::size_t>(j)];
    };
    struct Head {
        std::int64_t row, length;
        double b;
    };
    struct Entry {
        std::int64_t col;
        double val;
    };
    const CsrMatrix& m = in.mine;
    const auto rows_here = static_cast<std::size_t>(m.rows);
    // Each row's process, and how many rows and entries go to each process.
    std::vector<int> to(rows_here), row_count(static_cast<std::size_t>(size), 0),
        entry_count(row_count.size(), 0);
    for (std::size_t i = 0; i < rows_here; ++i) {
        to[i] = rp.owner(renumbered(first + static_cast<std::int64_t>(i)));
        ++row_count[static_cast<std::size_t>(to[i])];
        entry_count[static_cast<std::size_t>(to[i])] +=
            static_cast<int>(m.row_ptr[i + 1] - m.row_ptr[i]);
    }
    std::vector<Head> heads(rows_here);
    std::vector<Entry> entries = prefaulted<Entry>(static_cast<std::size_t>(m.nnz()));
    {
        std::vector<std::size_t> next_row(row_count.size(), 0), next_entry(row_count.size(), 0);
        for (std::size_t q = 1; q < next_row.size(); ++q) {
            next_row[q] = next_row[q - 1] + static_cast<std::size_t>(row_count[q - 1]);
            next_entry[q] = next_entry[q - 1] + static_cast<std::size_t>(entry_count[q - 1]);
        }
        for (std::size_t i = 0; i < rows_here; ++i) {
            const auto q = static_cast<std::size_t>(to[i]);
            const std::int64_t begin = m.row_ptr[i], end = m.row_ptr[i + 1];
            heads[next_row[q]++] = {renumbered(first + static_cast<std::int64_t>(i)), end - begin,
                                    in.b[i]};
            for (std::int64_t k = begin; k < end; ++k) {
                const auto uk = static_cast<std::size_t>(k);
                entries[next_entry[q]++] = {renumbered(m.col[uk]), m.val[uk]};
            }
        }
    }
    in.mine = CsrMatrix();
    in.b = std::vector<double>();
    to = std::vector<int>();
    const std::vector<Head> got_heads = send_grouped(heads, row_count, comm);
    heads = std::vector<Head>();
    const std::vector<Entry> got = send_grouped(entries, entry_count, comm);
    entries = std::vector<Entry>();
    // This process's rows: each row's entries follow the ones of the heads before it.
    const std::int64_t new_first = rp.first(rank), rows = rp.rows(rank);
    CsrMatrix a;
    a.rows = rows;
    a.cols = n;
    a.row_ptr.assign(static_cast<std::size_t>(rows) + 1, 0);
    in.b.assign(static_cast<std::size_t>(rows), 0.0);
    for (const Head& h : got_heads) {
        a.row_ptr[static_cast<std::size_t>(h.row - new_first) + 1] = h.length;
        in.b[static_cast<std::size_t>(h.row - new_first)] = h.b;
    }
    for (std::size_t i = 0; i < static_cast<std::size_t>(rows); ++i) {
        a.row_ptr[i + 1] += a.row_ptr[i];
    }
    assign_prefaulted(a.col, got.size(), std::int64_t{0});
    assign_prefaulted(a.val, got.size(), 0.0);
    std::size_t from = 0;
    for (const Head& h : got_heads) {
        auto at = static_cast<std::size_t>(a.row_ptr[static_cast<std::size_t>(h.row - new_first)]);
        for (std::int64_t k = 0; k < h.length; ++k, ++from, ++at) {
            a.col[at] = got[from].col;
            a.val[at] = got[from].val;
        }
    }
    sort_and_sum_rows(a);  // the renumbered columns in order (no column repeats)
    in.mine = std::move(a);
    in.rows = rp;
}

/// The row pointers, in the order `perm` (empty: as is), of the matrix whose rows the
/// processes hold in `parts` (collective: every process's row lengths are gathered).
std::vector<std::int64_t> row_ptr_of(const CsrRows& parts, const std::vector<std::int64_t>& perm,
                                     MPI_Comm comm) {
    const RowPartition& rp = parts.rows;
    std::vector<std::int64_t> mine(static_cast<std::size_t>(parts.mine.rows));
    for (std::size_t i = 0; i < mine.size(); ++i) {
        mine[i] = parts.mine.row_ptr[i + 1] - parts.mine.row_ptr[i];
    }
    std::vector<int> counts(static_cast<std::size_t>(rp.size())), at(counts.size());
    for (int q = 0; q < rp.size(); ++q) {
        counts[static_cast<std::size_t>(q)] = static_cast<int>(rp.rows(q));
        at[static_cast<std::size_t>(q)] = static_cast<int>(rp.first(q));
    }
    std::vector<std::int64_t> lengths(static_cast<std::size_t>(rp.global_rows()));
    MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_INT64_T, lengths.data(),
                   counts.data(), at.data(), MPI_INT64_T, comm);
    std::vector<std::int64_t> ptr(lengths.size() + 1, 0);
    for (std::size_t i = 0; i < lengths.size(); ++i) {
        ptr[i + 1] = ptr[i] + lengths[perm.empty() ? i : static_cast<std::size_t>(perm[i])];
    }
    return ptr;
}

/// The partition report of a row-block AMG run (both entry points): the blocks, the levels that
/// ran on every rank (the first `distributed_levels` of `levels`), rank 0's communication.
PartitionInfo row_blocks_info(const RowPartition& rp, int distributed_levels, std::size_t levels) {
    PartitionInfo info;
    info.ranks = rp.size();
    info.threads_per_rank = omp_get_max_threads();
    info.dims = {rp.size(), 1, 1};
    for (int q = 0; q < rp.size(); ++q) {
        info.boxes.push_back(
            {static_cast<int>(rp.first(q)), 0, 0, static_cast<int>(rp.rows(q)), 1, 1});
    }
    info.distributed_levels = distributed_levels;
    info.level_ranks.assign(levels, 1);  // the distributed levels, then rank 0's
    for (int l = 0; l < distributed_levels && l < static_cast<int>(levels); ++l) {
        info.level_ranks[static_cast<std::size_t>(l)] = rp.size();
    }
    report_comm(info);
    info.smoother =
        "hybrid: the smoother runs inside each rank's diagonal block; across ranks it uses the "
        "neighbours' values from before the sweep (Jacobi-like); residuals are exact";
    return info;
}

/// The distributed AMG solve (collective) of the matrix that every process holds whole in
/// `whole` (a built-in problem or a file read whole; released once each process has its rows),
/// or, when `whole` is null, whose rows the processes hold in `parts` (a file read in parts).
void solve_rows(CsrProblem* whole, CsrRows* parts, const SolverOptions& given, SolveResult& out,
                const char* input) {
    const MPI_Comm comm = MPI_COMM_WORLD;
    const int rank = world_rank(), size = world_size();
    const std::int64_t n = whole != nullptr ? whole->a.rows : parts->rows.global_rows();
    // Read with the matrix: CG is its solver exactly when it is symmetric (is_symmetric()).
    const bool symmetric_a = (whole != nullptr ? whole->solver : parts->solver) == SolverKind::cg;
    // A = A^T to the bit, known from the file's storage (the renumbering keeps it).
    const bool exact_a = whole != nullptr ? whole->exactly_symmetric : parts->exactly_symmetric;
    const auto t0 = std::chrono::steady_clock::now();
    SolverOptions o = given;
    // Rank 0 needs the whole matrix to choose the block size (its values only when its pattern
    // has nodes); a file read in parts is gathered for it, and for the renumbering below.
    const bool renumber =
        o.multigrid.reorder == ReorderKind::rcm ||
        (o.multigrid.reorder == ReorderKind::automatic && n / size >= kMinLocalRows);
    const bool choose_block = o.multigrid.block_size != 1;
    CsrMatrix gathered;
    if (whole == nullptr && (renumber || choose_block)) {
        // The pattern first: the values only when `auto` finds nodes in it, whose components'
        // coupling (cross_component_share) decides the block size.
        gathered = gather_rows(parts->mine, parts->rows, comm, false);
        if (choose_block && o.multigrid.block_size == 0) {
            int nodes = rank == 0 ? detect_block_size(gathered) : 1;
            MPI_Bcast(&nodes, 1, MPI_INT, 0, comm);
            if (nodes > 1) gathered = gather_rows(parts->mine, parts->rows, comm, true);
        }
    }
    const CsrMatrix& a_all = whole != nullptr ? whole->a : gathered;  // rank 0, or every rank
    // The block size as serially (api/solve.cpp), chosen on rank 0 and broadcast; nodes stay
    // whole through the renumbering and on one rank.
    BlockSizeChoice block;
    if (choose_block) {
        block = run_agreed(
            [&] {
                return rank == 0 || whole != nullptr
                           ? choose_block_size(a_all, o.multigrid.block_size)
                           : BlockSizeChoice{};
            },
            comm);
        MPI_Bcast(&block.block, 1, MPI_INT, 0, comm);
    }
    o.multigrid.block_size = block.block;
    out.block_size = block.block;
    out.block_size_reason = block.why;
    // Renumbering first. Contiguous row blocks need an order with locality; `auto` renumbers by
    // RCM when that at least halves the entries that couple the blocks (on 2 ranks:
    // mfem_lshape_o3_r5 265,754 in the file's order against 4,934 after RCM, mfem_beam_o3_r2
    // 466,368 against 14,704; laplace27 n = 24, lexicographic, 9,800 against 17,766 keeps its
    // order). Not when every level would be gathered onto rank 0 anyway: then the file's order
    // gives the serial hierarchy itself (RCM made watt_2 stall: 200 GMRES iterations against 9).
    // Rank 0 computes the order, from the whole matrix or the pattern gathered from every
    // process's rows, and broadcasts it; every process counts the coupling of its own rows in
    // both orders for the decision (rank 0 counted the whole matrix twice, about 0.06 s of
    // mfem_lshape_o3_r7's setup while the others waited).
    // The whole matrix's row pointers in an order (collective for a file read in parts): what
    // the row blocks are cut from.
    const auto row_ptr_in = [&](const std::vector<std::int64_t>& order) {
        return whole != nullptr ? row_ptr_of(whole->a, order) : row_ptr_of(*parts, order, comm);
    };
    std::vector<std::int64_t> perm, ptr;  // ptr: row pointers in the final order, once known
    if (renumber) {
        if (rank == 0) {
            const CsrMatrix& a = a_all;
            perm = block.block == 1
                       ? rcm_order(a, symmetric_a)
                       : expand_to_unknowns(rcm_order(node_matrix(a, block.block), symmetric_a),
                                            block.block);
        }
        perm.resize(static_cast<std::size_t>(n));
        MPI_Bcast(perm.data(), static_cast<int>(perm.size()), MPI_INT64_T, 0, comm);
        ptr = row_ptr_in(perm);
        if (o.multigrid.reorder != ReorderKind::rcm) {  // `auto`
            std::vector<std::int64_t> inv(perm.size());
            for (std::size_t i = 0; i < perm.size(); ++i) {
                inv[static_cast<std::size_t>(perm[i])] = static_cast<std::int64_t>(i);
            }
            // The rows each process counts: its block of a file read in parts, or an equal
            // share of a matrix every process holds whole.
            const CsrMatrix& m = whole != nullptr ? whole->a : parts->mine;
            const RowPartition share = RowPartition::equal(n, size);
            const std::int64_t first = whole != nullptr ? 0 : parts->rows.first(rank);
            const std::int64_t begin = whole != nullptr ? share.first(rank) : 0;
            const std::int64_t end = whole != nullptr ? share.first(rank + 1) : m.rows;
            std::vector<std::int64_t> as_is = row_ptr_in({});
            std::int64_t counts[2] = {
                coupling_entries(m, first, begin, end, {}, RowPartition(as_is, size)),
                coupling_entries(m, first, begin, end, inv, RowPartition(ptr, size))};
            MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INT64_T, MPI_SUM, comm);
            if (2 * counts[1] > counts[0]) {  // RCM does not halve it: the given order stays
                perm.clear();
                ptr = std::move(as_is);
            }
        }
    }
    gathered = CsrMatrix();
    if (!renumber) ptr = row_ptr_in({});
    // Blocks about equal in nonzeros + rows of the renumbered matrix, of whole nodes.
    const RowPartition rp = node_partition(ptr, size, block.block);
    const std::int64_t first = rp.first(rank), end = rp.first(rank + 1);
    // Level 0: this process's rows, explicit zeros dropped as the serial hierarchy drops them
    // (a file's were dropped when it was read; a built-in problem's CSR form keeps its blocks'
    // zeros). A process takes its rows of the renumbered matrix straight from the whole one, or
    // the rows move to their processes in the new order.
    std::vector<double> b;
    const auto level0 = [&] {
        if (whole == nullptr) {
            if (!perm.empty() || !(rp == parts->rows)) redistribute(*parts, perm, rp, comm);
            b = std::move(parts->b);
            return DistCsr(parts->mine, 0, rp, comm);
        }
        b.resize(static_cast<std::size_t>(end - first));
        for (std::size_t i = 0; i < b.size(); ++i) {
            const auto row = static_cast<std::size_t>(first) + i;
            b[i] = whole->b[perm.empty() ? row : static_cast<std::size_t>(perm[row])];
        }
        return perm.empty() ? DistCsr(whole->a, first, rp, comm)
                            : DistCsr(permute_rows(whole->a, perm, first, end), 0, rp, comm);
    };
    DistCsr a0 = level0();
    drop_zeros(a0.diag());
    // Every process has its rows: the whole matrix (or this process's part) and b go, for the
    // setup and the solve.
    if (whole != nullptr) {
        whole->a = CsrMatrix();
        whole->b = std::vector<double>();
    } else {
        parts->mine = CsrMatrix();
    }
    const double reorder_s =
        perm.empty() ? 0.0
                     : std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::vector<std::int64_t> rows0(static_cast<std::size_t>(rp.rows(rank)));  // in the file
    for (std::size_t i = 0; i < rows0.size(); ++i) {
        const auto row = static_cast<std::size_t>(first) + i;
        rows0[i] = perm.empty() ? static_cast<std::int64_t>(row) : perm[row];
    }
    comm_stats() = CommStats{};
    int distributed_levels = 0;
    if (o.precision.krylov == Precision::fp64) {
        run<double>(a0, rows0, b, o, symmetric_a, exact_a, out, &distributed_levels);
    } else {
        run<float>(a0, rows0, b, o, symmetric_a, exact_a, out, &distributed_levels);
    }
    if (!perm.empty()) {
        std::vector<double> x(out.x.size());
        for (std::size_t i = 0; i < perm.size(); ++i)
            x[static_cast<std::size_t>(perm[i])] = out.x[i];
        out.x = std::move(x);
        out.setup_s += reorder_s;
        out.reordered = "rcm";
    }
    PartitionInfo info = row_blocks_info(rp, distributed_levels, out.levels.size());
    info.setup =
        "distributed AMG (rows in contiguous blocks): PGM aggregates inside each rank's block, "
        "Galerkin coarse rows with the coupling to the neighbours' aggregates; small levels "
        "gathered and coarsened on rank 0";
    info.input = input;
    out.partition = info;
}

}  // namespace

namespace {

/// The row partition of the blocks the processes were given (RowBlockSystem's checks; the same
/// InvalidInput on every process).
RowPartition given_blocks(const CsrMatrix& mine, std::int64_t first_row, MPI_Comm comm) {
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const std::int64_t head[3] = {first_row, mine.rows, mine.cols};
    std::vector<std::int64_t> all(3 * static_cast<std::size_t>(size));
    MPI_Allgather(head, 3, MPI_INT64_T, all.data(), 3, MPI_INT64_T, comm);
    std::vector<std::int64_t> counts(static_cast<std::size_t>(size));
    std::int64_t next = 0;
    const std::int64_t n = all[2];
    for (int q = 0; q < size; ++q) {
        const std::int64_t first = all[3 * static_cast<std::size_t>(q)];
        const std::int64_t rows = all[3 * static_cast<std::size_t>(q) + 1];
        const std::int64_t cols = all[3 * static_cast<std::size_t>(q) + 2];
        if (cols != n) {
            throw InvalidInput(fmt::format(
                "Solver::setup: rank {} gave A {} columns and rank 0 {}; every process gives the "
                "same number, A's rows",
                q, cols, n));
        }
        if (first != next) {
            throw InvalidInput(fmt::format(
                "Solver::setup: rank {} gave rows from {}; the blocks must follow each other in "
                "rank order, so its first row is {} (the rows of ranks 0..{})",
                q, first, next, q - 1));
        }
        next += rows;
        counts[static_cast<std::size_t>(q)] = rows;
    }
    if (next != n) {
        throw InvalidInput(fmt::format(
            "Solver::setup: the processes gave {} rows of A in all, and A has {} columns; A must "
            "be square, every row given by one process",
            next, n));
    }
    return RowPartition::from_counts(counts);
}

/// The block size of the row blocks: `requested` (> 0; every block boundary a node boundary),
/// or, for 0, choose_block_size on each process's diagonal block, kept when every process with
/// rows found the same and its boundaries fit; 1 otherwise (collective).
BlockSizeChoice block_size_of(const DistCsr& a, int requested) {
    const RowPartition& rp = a.partition();
    const MPI_Comm comm = a.comm();
    const auto fits = [&](int b) {
        for (int q = 0; q < rp.size(); ++q) {
            if (rp.first(q) % b != 0 || rp.rows(q) % b != 0) return q;
        }
        return -1;
    };
    if (requested > 0) {
        const int q = fits(requested);
        if (q >= 0) {
            throw InvalidInput(fmt::format(
                "multigrid.block_size {}: rank {} holds rows {} .. {}; with nodes of {} unknowns "
                "every process's rows must start and end at a node boundary",
                requested, q, rp.first(q), rp.first(q + 1) - 1, requested));
        }
        return {requested, "requested (multigrid.block_size)"};
    }
    BlockSizeChoice mine;
    if (a.local_rows() > 0) mine = choose_block_size(a.diag(), 0);
    int lo = a.local_rows() > 0 ? mine.block : INT_MAX;
    int hi = a.local_rows() > 0 ? mine.block : 0;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, comm);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, comm);
    if (lo != hi) {
        return {1, fmt::format("scalar: the processes' blocks show block sizes {} to {}", lo, hi)};
    }
    if (lo > 1 && fits(lo) >= 0) {
        return {1, fmt::format("scalar: block size {} found, but rank {}'s rows do not start and "
                               "end at node boundaries",
                               lo, fits(lo))};
    }
    // Rank 0's reason, on every process (the first process with rows found the same size).
    int length = static_cast<int>(mine.why.size());
    MPI_Bcast(&length, 1, MPI_INT, 0, comm);
    mine.why.resize(static_cast<std::size_t>(length));
    MPI_Bcast(mine.why.data(), length, MPI_CHAR, 0, comm);
    if (mine.why.empty()) {  // rank 0 has no rows
        mine.why = fmt::format("{} unknowns a node, found in every process's block", lo);
    }
    mine.block = lo;
    return mine;
}

}  // namespace

void check_same_options(SolverOptions o, MPI_Comm comm) {
    o.threads = 0;  // each process may run its own number of threads
    const std::string text = to_json(o).dump();
    const std::uint64_t mine = std::hash<std::string>{}(text);
    int size = 1;
    MPI_Comm_size(comm, &size);
    std::vector<std::uint64_t> all(static_cast<std::size_t>(size));
    MPI_Allgather(&mine, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, comm);
    for (int q = 1; q < size; ++q) {
        if (all[static_cast<std::size_t>(q)] != all[0]) {
            throw InvalidInput(fmt::format(
                "Solver::setup: rank {}'s options differ from rank 0's; every process gives the "
                "Solver the same options",
                q));
        }
    }
}

struct RowBlockSystem::Impl {
    explicit Impl(DistCsr a) : a0(std::move(a)) {}
    DistCsr a0;
    std::vector<std::int64_t> rows0;  // each local row's global number
    std::unique_ptr<RowBlockOperator<double>> op64;
    std::unique_ptr<RowBlockOperator<float>> op32;
    BuildFn build;
    GuardFallbacks fallbacks;
    std::int64_t nnz = 0;
    int distributed_levels = 0;
};

RowBlockSystem::RowBlockSystem(CsrMatrix mine, std::int64_t first_row, const Communicator& c,
                               SolverOptions& o, PreparedMatrix& prepared, BlockSizeChoice& block,
                               std::string& auto_reason, KeptAggregates* kept) {
    const MPI_Comm comm = mpi_comm(c);
    check_same_options(o, comm);
    const RowPartition rp = given_blocks(mine, first_row, comm);
    const std::int64_t n = rp.global_rows();
    check_supported(n, reduce(mine.nnz(), MPI_SUM, comm));
    if (o.multigrid.reorder == ReorderKind::rcm) {
        throw Unsupported(
            "multigrid.reorder rcm: a Solver set up on the processes' rows keeps the caller's "
            "numbering and partition (give rows with locality, as a mesh partitioner's)");
    }
    double largest = kernels::largest_finite_abs(mine.val.data(), mine.nnz());
    MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_DOUBLE, MPI_MAX, comm);
    const bool symmetric_a = rows_symmetric(mine, rp, largest, comm);
    drop_zeros(mine, first_row);  // after the symmetry test, which compares stored patterns
    auto_reason =
        amg_defaults(o, symmetric_a ? SolverKind::cg : SolverKind::gmres, mine, first_row, n, c);
    prepared = prepare_matrix(mine, first_row, c);
    impl_ = std::make_unique<Impl>(DistCsr(mine, 0, rp, comm));
    mine = CsrMatrix();
    Impl& s = *impl_;
    block = block_size_of(s.a0, o.multigrid.block_size);
    o.multigrid.block_size = block.block;
    s.nnz = reduce(s.a0.diag().nnz() + static_cast<std::int64_t>(s.a0.coupling().val.size()),
                   MPI_SUM, comm);
    s.rows0.resize(static_cast<std::size_t>(s.a0.local_rows()));
    for (std::size_t i = 0; i < s.rows0.size(); ++i) {
        s.rows0[i] = first_row + static_cast<std::int64_t>(i);
    }
    TruncationCounts local;
    if (o.precision.krylov == Precision::fp64) {
        s.op64 = std::make_unique<RowBlockOperator<double>>(s.a0, local);
    } else {
        s.op32 = std::make_unique<RowBlockOperator<float>>(s.a0, local);
    }
    check_k(allreduce(local, comm), o.precision.krylov);
    const bool cg = o.solver == SolverKind::cg;
    s.build = [&s, cg, symmetric_a, kept](const PrecisionPlan& plan, const MultigridOptions& mg) {
        return std::unique_ptr<BuiltPreconditioner>(std::make_unique<DistAmg>(
            s.a0, s.rows0, mg, plan, AmgSettings{}, cg, symmetric_a, &s.distributed_levels, kept));
    };
    s.fallbacks = amg_fallbacks(n);
}

RowBlockSystem::~RowBlockSystem() = default;

std::int64_t RowBlockSystem::local_rows() const { return impl_->a0.local_rows(); }
std::int64_t RowBlockSystem::global_rows() const { return impl_->a0.partition().global_rows(); }
std::int64_t RowBlockSystem::global_nnz() const { return impl_->nnz; }
const LinearOperator<double>* RowBlockSystem::op64() const { return impl_->op64.get(); }
const LinearOperator<float>* RowBlockSystem::op32() const { return impl_->op32.get(); }
const BuildFn& RowBlockSystem::build() const { return impl_->build; }
const GuardFallbacks& RowBlockSystem::fallbacks() const { return impl_->fallbacks; }
void RowBlockSystem::reset_comm() const { comm_stats() = CommStats{}; }

PartitionInfo RowBlockSystem::partition(std::size_t levels) const {
    PartitionInfo info = row_blocks_info(impl_->a0.partition(), impl_->distributed_levels, levels);
    info.setup =
        "distributed AMG on the caller's row blocks (its numbering and partition kept): PGM "
        "aggregates inside each rank's block, Galerkin coarse rows with the coupling to the "
        "neighbours' aggregates; small levels gathered and coarsened on rank 0";
    info.input = "rows given by each process (Solver::setup with a first row)";
    return info;
}

bool solve_amg(CsrProblem& p, const SolverOptions& o, SolveResult& out) {
    if (!distributed()) return false;
    check_supported(p.a.rows, p.a.nnz());
    solve_rows(&p, nullptr, o, out,
               o.problem.matrix.empty()
                   ? "problem generated whole by every rank, which keeps its rows"
                   : "file read whole by every rank (array format), which keeps its rows");
    return true;
}

bool solve_amg(CsrRows& rows, const SolverOptions& o, SolveResult& out) {
    if (!distributed()) return false;
    check_supported(rows.rows.global_rows(), rows.nnz);
    solve_rows(nullptr, &rows, o, out,
               "file read in parts: every rank read only its share of the lines and kept its "
               "rows (rank 0 gathers the matrix to renumber the rows and choose the block size)");
    return true;
}

}  // namespace mpmg::dist

#else

namespace mpmg::dist {

bool solve_amg(CsrProblem&, const SolverOptions&, SolveResult&) { return false; }
bool solve_amg(CsrRows&, const SolverOptions&, SolveResult&) { return false; }

struct RowBlockSystem::Impl {};

RowBlockSystem::RowBlockSystem(CsrMatrix, std::int64_t, const Communicator&, SolverOptions&,
                               PreparedMatrix&, BlockSizeChoice&, std::string&, KeptAggregates*) {
    throw Unsupported("Solver::setup with a first row: this build of mpmg has no MPI");
}
RowBlockSystem::~RowBlockSystem() = default;
std::int64_t RowBlockSystem::local_rows() const { return 0; }
std::int64_t RowBlockSystem::global_rows() const { return 0; }
std::int64_t RowBlockSystem::global_nnz() const { return 0; }
const LinearOperator<double>* RowBlockSystem::op64() const { return nullptr; }
const LinearOperator<float>* RowBlockSystem::op32() const { return nullptr; }
const BuildFn& RowBlockSystem::build() const { throw Unsupported("no MPI"); }
const GuardFallbacks& RowBlockSystem::fallbacks() const { throw Unsupported("no MPI"); }
PartitionInfo RowBlockSystem::partition(std::size_t) const { return {}; }
void RowBlockSystem::reset_comm() const {}

}  // namespace mpmg::dist

#endif
