#ifdef MPMG_HAVE_MPI

#include "distributed/dist_hierarchy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "mpmg/errors.hpp"
#include "multigrid/cycle.hpp"
#include "multigrid/hierarchy.hpp"
#include "multigrid/level_vectors.hpp"
#include "multigrid/truncate.hpp"
#include "smoothers/ilu0.hpp"
#include "structured/sgdia_ops.hpp"

namespace mpmg::dist {
namespace {

// A level stays distributed while every process block has at least this many cells and at
// least two cells per direction; below, halo latency outweighs the work and the rest of the
// hierarchy is agglomerated onto rank 0.
constexpr std::int64_t kMinLocalCells = 512;

template <class S, class C>
class DistLevelImpl final : public DistLevel {
public:
    DistLevelImpl(const LevelSetup& setup, const Partition& p, std::unique_ptr<DistTransfer> t,
                  MPI_Comm comm, LevelReport& report)
        : to_coarse_(std::move(t)),
          halo_(p, setup.matrix().block(), setup.matrix().stencil().offsets(), comm),
          smoother_(setup.smoother),
          omega_(static_cast<C>(setup.jacobi_weight)),
          scale_transfers_(setup.scale_transfers && !setup.s.empty()) {
        TruncationCounts local;
        const SgDiaMatrix<double> block = extract_local(setup.matrix(), p);
        a_ = truncate<S>(block, local);
        coupling_ = GhostCoupling::build<S>(setup.matrix(), p, halo_, local);
        if (setup.smoother == SmootherKind::ilu0) {
            const Ilu0Factors f = ilu0_factor(block);  // block-Jacobi ILU(0) across processes
            l_ = truncate<S>(f.l, local);
            u_factor_ = truncate<S>(f.u, local);
        }
        report.counts = allreduce(local, comm);
        const auto n = static_cast<std::size_t>(a_.rows());
        f_.assign(n, C{0});
        u_.assign(n, C{0});
        r_.assign(n, C{0});
        if (!setup.s.empty()) {
            const std::vector<double> s = extract_local(setup.s, p, a_.block());
            s_.assign(s.begin(), s.end());
            inv_s_.resize(n);
            for (std::size_t i = 0; i < n; ++i) inv_s_[i] = static_cast<C>(1.0 / s[i]);
        }
    }

    void set_rhs(const double* r) override { load(r); }
    void set_rhs(const float* r) override { load(r); }
    void get_solution(double* z) const override { level_vectors::store_unscaled(u_, inv_s_, z); }
    void get_solution(float* z) const override { level_vectors::store_unscaled(u_, inv_s_, z); }

    void smooth(int sweeps, bool pre) override {
        for (int s = 0; s < sweeps; ++s) {
            if (smoother_ == SmootherKind::ilu0) {
                ilu_step();
                continue;
            }
            // Hybrid: the neighbours' values from before the sweep enter as f - G u_ghost.
            halo_.exchange(u_.data());
            save_ghost_rows();
            coupling_.add(halo_.values(), f_.data(), -1.0);
            if (smoother_ == SmootherKind::jacobi) {
                jacobi(a_, f_.data(), u_.data(), r_.data(), omega_);
                u_.swap(r_);
            } else {
                gs_sweep(a_, f_.data(), u_.data(), pre);
            }
            restore_ghost_rows();
        }
    }

    void restrict_residual(std::vector<double>& coarse) override {
        full_residual();
        if (scale_transfers_) level_vectors::multiply(r_, s_);
        rd_.assign(r_.begin(), r_.end());
        to_coarse_->restrict_to(rd_, coarse);
    }

    void set_rhs_unscaled(const std::vector<double>& f) override {
        for (std::size_t i = 0; i < f_.size(); ++i) f_[i] = static_cast<C>(f[i]);
        if (scale_transfers_) level_vectors::multiply(f_, inv_s_);
        std::fill(u_.begin(), u_.end(), C{0});
    }

    void take_solution_unscaled(std::vector<double>& u) override {
        if (scale_transfers_) level_vectors::multiply(u_, inv_s_);
        u.assign(u_.begin(), u_.end());
    }

    void correct(const std::vector<double>& e) override {
        to_coarse_->interpolate(e, rd_);
        for (std::size_t i = 0; i < r_.size(); ++i) r_[i] = static_cast<C>(rd_[i]);
        if (scale_transfers_) level_vectors::multiply(r_, s_);
        const std::size_t n = u_.size();
#pragma omp parallel for schedule(static) if (n > 32768)
        for (std::size_t i = 0; i < n; ++i) u_[i] += r_[i];
    }

private:
    template <class T>
    void load(const T* r) {
        level_vectors::load_scaled(r, inv_s_, f_);
        std::fill(u_.begin(), u_.end(), C{0});
    }
    // r = f - A u over the whole grid: the local product plus the neighbours' coupling.
    void full_residual() {
        halo_.exchange(u_.data());
        residual(a_, f_.data(), u_.data(), r_.data());
        coupling_.add(halo_.values(), r_.data(), -1.0);
    }
    void ilu_step() {
        full_residual();
        if (t_.size() != r_.size()) t_.assign(r_.size(), C{0});
        gs_sweep(l_, r_.data(), t_.data(), true);
        gs_sweep(u_factor_, t_.data(), r_.data(), false);
        const std::size_t n = u_.size();
#pragma omp parallel for schedule(static) if (n > 32768)
        for (std::size_t i = 0; i < n; ++i) u_[i] += r_[i];
    }
    void save_ghost_rows() {
        const std::size_t r = static_cast<std::size_t>(a_.block());
        saved_.resize(coupling_.rows().size() * r);
        for (std::size_t q = 0; q < coupling_.rows().size(); ++q) {
            const auto c = static_cast<std::size_t>(coupling_.rows()[q]);
            for (std::size_t a = 0; a < r; ++a) saved_[q * r + a] = f_[c * r + a];
        }
    }
    void restore_ghost_rows() {
        const std::size_t r = static_cast<std::size_t>(a_.block());
        for (std::size_t q = 0; q < coupling_.rows().size(); ++q) {
            const auto c = static_cast<std::size_t>(coupling_.rows()[q]);
            for (std::size_t a = 0; a < r; ++a) f_[c * r + a] = saved_[q * r + a];
        }
    }

    std::unique_ptr<DistTransfer> to_coarse_;
    Halo halo_;
    SgDiaMatrix<S> a_, l_, u_factor_;
    GhostCoupling coupling_;
    SmootherKind smoother_;
    C omega_;
    bool scale_transfers_;
    std::vector<C> f_, u_, r_, t_, saved_, s_, inv_s_;
    std::vector<double> rd_;
};

template <class S, class C>
std::unique_ptr<DistLevel> build(const LevelSetup& setup, const Partition& p,
                                 std::unique_ptr<DistTransfer> t, MPI_Comm comm,
                                 LevelReport& report) {
    return std::make_unique<DistLevelImpl<S, C>>(setup, p, std::move(t), comm, report);
}

std::unique_ptr<DistLevel> make_dist_level(int index, const LevelSetup& setup, const Partition& p,
                                           std::unique_ptr<DistTransfer> t, MPI_Comm comm,
                                           LevelReport& report) {
    using P = Precision;
    const LevelPrecision lp = setup.precision;
    if (lp.compute == P::fp64) {
        switch (lp.storage) {
            case P::fp64:
                return build<double, double>(setup, p, std::move(t), comm, report);
            case P::fp32:
                return build<float, double>(setup, p, std::move(t), comm, report);
            case P::fp16:
                return build<half, double>(setup, p, std::move(t), comm, report);
            case P::bf16:
                return build<bfloat16, double>(setup, p, std::move(t), comm, report);
        }
    } else if (lp.compute == P::fp32) {
        switch (lp.storage) {
            case P::fp32:
                return build<float, float>(setup, p, std::move(t), comm, report);
            case P::fp16:
                return build<half, float>(setup, p, std::move(t), comm, report);
            case P::bf16:
                return build<bfloat16, float>(setup, p, std::move(t), comm, report);
            case P::fp64:
                break;
        }
    }
    throw Unsupported(fmt::format(
        "level {}: compute {} with storage {} is not supported; compute must be fp64 or fp32 and "
        "storage no wider than compute",
        index, to_string(lp.compute), to_string(lp.storage)));
}

std::int64_t min_local_cells(const Partition& p) {
    std::int64_t m = std::numeric_limits<std::int64_t>::max();
    for (int r = 0; r < p.size(); ++r) m = std::min(m, p.box(r).cells());
    return m;
}

// Copies between the C-typed data of a serial level and FP64 vectors.
void to_level(const std::vector<double>& v, Level& lev) {
    if (lev.compute() == Precision::fp64) {
        std::copy(v.begin(), v.end(), static_cast<double*>(lev.rhs_data()));
    } else {
        std::transform(v.begin(), v.end(), static_cast<float*>(lev.rhs_data()),
                       [](double x) { return static_cast<float>(x); });
    }
}
void from_level(Level& lev, std::vector<double>& v) {
    const auto n = static_cast<std::size_t>(lev.rows());
    if (lev.compute() == Precision::fp64) {
        const auto* u = static_cast<const double*>(lev.solution_data());
        v.assign(u, u + n);
    } else {
        const auto* u = static_cast<const float*>(lev.solution_data());
        v.assign(u, u + n);
    }
}

}  // namespace

DistHierarchy::DistHierarchy(const SgDiaMatrix<double>& a, const Partition& p,
                             const MultigridOptions& mg, const PrecisionPlan& plan, MPI_Comm comm)
    : comm_(comm), mg_(mg), block_(a.block()) {
    GalerkinLevels g = galerkin_levels(a, mg);
    coarse_sweeps_ = g.coarse_sweeps;
    transfers_ = std::move(g.transfers);
    const int nl = static_cast<int>(g.mats.size());
    parts_.push_back(p);
    int l = 0;
    for (; l < nl; ++l) {
        const Partition& pl = parts_.back();
        if (l == nl - 1 || pl.min_extent() < 2 || min_local_cells(pl) < kMinLocalCells) break;
        auto t = std::make_unique<DistTransfer>(transfers_[static_cast<std::size_t>(l)], pl, comm);
        if (!t->valid()) break;
        const Partition next = t->coarse();
        LevelReport rep;
        const LevelSetup setup = level_setup(g, l, mg, plan, rep);
        dist_.push_back(make_dist_level(l, setup, pl, std::move(t), comm, rep));
        rep.matrix_bytes = g.mats[static_cast<std::size_t>(l)]->nnz() * bytes_of(rep.storage);
        report_.push_back(std::move(rep));
        parts_.push_back(next);
    }
    // The tail: every process builds it (so the reports and the overflow checks agree), only
    // rank 0 runs it.
    for (; l < nl; ++l) {
        const bool last = l == nl - 1;
        LevelReport rep;
        LevelSetup setup = level_setup(g, l, mg, plan, rep);
        setup.to_coarse = last ? nullptr : &transfers_[static_cast<std::size_t>(l)];
        tail_.push_back(make_level(l, setup, last && g.direct, rep));
        rep.matrix_bytes = g.mats[static_cast<std::size_t>(l)]->nnz() * bytes_of(rep.storage);
        report_.push_back(std::move(rep));
    }
    for (std::size_t i = 0; i < report_.size(); ++i) {
        const LevelReport& rep = report_[i];
        if (rep.counts.overflow > 0 && mg.setup_fallback) {
            throw NumericalError(fmt::format("level {}: {} entries overflow {} storage", i,
                                             rep.counts.overflow, to_string(rep.storage)));
        }
    }
}

DistHierarchy::~DistHierarchy() = default;

double DistHierarchy::grid_complexity() const { return mpmg::grid_complexity(report_); }
double DistHierarchy::operator_complexity() const { return mpmg::operator_complexity(report_); }

void DistHierarchy::gather_to_root(const std::vector<double>& local, std::vector<double>& global) {
    gather(local, parts_[dist_.size()], block_, comm_, global, buf_);
}

void DistHierarchy::scatter_from_root(const std::vector<double>& global,
                                      std::vector<double>& local) {
    scatter(global, parts_[dist_.size()], block_, comm_, local, buf_);
}

void DistHierarchy::cycle(int l, CycleKind kind) {
    const int nd = distributed_levels();
    if (l == nd) {  // agglomerated: the rhs is on rank 0's first tail level
        if (parts_.front().rank() == 0) {
            const double t0 = MPI_Wtime();
            run_cycle(tail_, 0, kind, mg_, coarse_sweeps_);
            comm_stats().tail_s += MPI_Wtime() - t0;
        }
        return;
    }
    DistLevel& lev = *dist_[static_cast<std::size_t>(l)];
    lev.smooth(mg_.pre_sweeps, true);
    std::vector<double> coarse;
    lev.restrict_residual(coarse);
    if (l + 1 < nd) {
        dist_[static_cast<std::size_t>(l + 1)]->set_rhs_unscaled(coarse);
    } else {
        gather_to_root(coarse, global_);
        if (parts_.front().rank() == 0) {
            to_level(global_, *tail_.front());
            tail_.front()->finish_rhs();
        }
    }
    switch (kind) {
        case CycleKind::v:
            cycle(l + 1, CycleKind::v);
            break;
        case CycleKind::w:
            cycle(l + 1, CycleKind::w);
            cycle(l + 1, CycleKind::w);
            break;
        case CycleKind::f:
            cycle(l + 1, CycleKind::f);
            cycle(l + 1, CycleKind::v);
            break;
    }
    if (l + 1 < nd) {
        dist_[static_cast<std::size_t>(l + 1)]->take_solution_unscaled(coarse);
    } else {
        if (parts_.front().rank() == 0) {
            tail_.front()->unscale_solution();
            from_level(*tail_.front(), global_);
        }
        scatter_from_root(global_, coarse);
    }
    lev.correct(coarse);
    lev.smooth(mg_.post_sweeps, false);
}

template <class K>
void DistHierarchy::apply(const K* r, K* z) {
    if (!dist_.empty()) {
        dist_.front()->set_rhs(r);
        cycle(0, mg_.cycle);
        dist_.front()->get_solution(z);
        return;
    }
    // Everything agglomerated: gather r, one serial cycle on rank 0, scatter z.
    const Partition& p = parts_.front();
    std::vector<double> local(r, r + p.local().cells() * block_);
    gather_to_root(local, global_);
    if (p.rank() == 0) {
        const double t0 = MPI_Wtime();
        tail_.front()->set_rhs(global_.data());
        run_cycle(tail_, 0, mg_.cycle, mg_, coarse_sweeps_);
        comm_stats().tail_s += MPI_Wtime() - t0;
        tail_.front()->get_solution(global_.data());
    }
    scatter_from_root(global_, local);
    std::transform(local.begin(), local.end(), z, [](double v) { return static_cast<K>(v); });
}

template void DistHierarchy::apply<double>(const double*, double*);
template void DistHierarchy::apply<float>(const float*, float*);

}  // namespace mpmg::dist

#endif  // MPMG_HAVE_MPI
