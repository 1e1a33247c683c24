#include <fmt/format.h>
#include <omp.h>

#include <chrono>
#include <cmath>

#include "io/problems.hpp"
#include "krylov/krylov.hpp"
#include "mpmg/errors.hpp"
#include "mpmg/solver.hpp"
#include "multigrid/hierarchy.hpp"
#include "multigrid/truncate.hpp"
#include "structured/sgdia_ops.hpp"

namespace mpmg {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// A in iterative precision K.
template <class K>
class SgDiaOperator final : public LinearOperator<K> {
public:
    explicit SgDiaOperator(SgDiaMatrix<K> a) : a_(std::move(a)) {}
    std::int64_t size() const override { return a_.rows(); }
    void apply(const K* x, K* y) const override { spmv(a_, x, y); }

private:
    SgDiaMatrix<K> a_;
};

/// The multigrid hierarchy as a Krylov preconditioner.
template <class K>
class MultigridPreconditioner final : public Preconditioner<K> {
public:
    explicit MultigridPreconditioner(Hierarchy& h) : h_(h) {}
    void apply(const K* r, K* z) override { h_.apply(r, z); }

private:
    Hierarchy& h_;
};

LevelInfo to_info(const LevelReport& r) {
    LevelInfo i;
    i.grid = {r.box.nx, r.box.ny, r.box.nz};
    i.block = r.block;
    i.stencil = r.stencil;
    i.rows = r.rows;
    i.nnz = r.nnz;
    i.storage = r.storage;
    i.compute = r.compute;
    i.scaled = r.scaled;
    i.scale_g = r.scale_g;
    i.scale_g_max = r.scale_g_max;
    i.overflow_count = r.counts.overflow;
    i.underflow_count = r.counts.underflow;
    i.subnormal_count = r.counts.subnormal;
    i.matrix_bytes = r.matrix_bytes;
    i.solve = r.solve;
    i.note = r.note;
    return i;
}

template <class K>
void run_krylov(const StructuredProblem& p, const SolverOptions& o, Hierarchy& h,
                SolveResult& out) {
    TruncationCounts counts;
    const SgDiaOperator<K> a(truncate<K>(p.a, counts));
    if (counts.overflow > 0) {
        throw NumericalError(fmt::format("{} entries of A overflow the iterative precision K = {}",
                                         counts.overflow, to_string(o.precision.krylov)));
    }
    std::vector<K> b(p.b.begin(), p.b.end());
    std::vector<K> x(b.size(), K{0});
    MultigridPreconditioner<K> m(h);
    const KrylovOptions kopt{o.rtol, o.max_iter, o.restart, true};
    KrylovResult kr;
    switch (o.solver) {
        case SolverKind::cg:
            kr = cg<K>(a, &m, b.data(), x.data(), kopt);
            break;
        case SolverKind::gmres:
            kr = gmres<K>(a, &m, b.data(), x.data(), kopt);
            break;
        case SolverKind::richardson:
        case SolverKind::mg:
            kr = richardson<K>(a, &m, b.data(), x.data(), kopt);
            break;
    }
    out.status = kr.status;
    out.converged = kr.status == SolveStatus::converged;
    out.iterations = kr.iterations;
    out.final_relative_residual = kr.relative_residual;
    out.residual_history = std::move(kr.history);
    out.message = std::move(kr.message);
    out.preconditioner_s = kr.preconditioner_seconds;
    out.x.assign(x.begin(), x.end());
}

}  // namespace

SolveResult solve(const SolverOptions& options) {
    validate(options);
    SolverOptions o = options;
    if (o.threads > 0) omp_set_num_threads(o.threads);
    if (!o.problem.matrix.empty()) {
        throw Unsupported(fmt::format(
            "--matrix '{}': solving Matrix Market input is not available yet in this build; use "
            "--problem, or 'mpmg info' to inspect the matrix",
            o.problem.matrix));
    }
    if (o.method == MethodKind::amg) {
        throw Unsupported(
            "--method amg: the unstructured AMG path is not available yet; use "
            "--method structured");
    }
    o.method = MethodKind::structured;
    if (o.multigrid.smoother != SmootherKind::symgs &&
        o.multigrid.smoother != SmootherKind::jacobi) {
        throw Unsupported(fmt::format("--smoother {}: the structured path offers symgs and jacobi",
                                      to_string(o.multigrid.smoother)));
    }
    const StructuredProblem p = make_problem(o.problem);
    const auto t_start = Clock::now();  // setup + solve; building the problem is not timed

    SolveResult out;
    out.problem = p.name;
    out.rows = p.a.rows();
    out.nnz = p.a.nnz();
    Hierarchy h(p.a, o.multigrid, o.precision);
    for (const auto& r : h.report()) out.levels.push_back(to_info(r));
    out.grid_complexity = h.grid_complexity();
    out.operator_complexity = h.operator_complexity();
    out.setup_s = seconds_since(t_start);

    const auto t_solve = Clock::now();
    if (o.precision.krylov == Precision::fp64) {
        run_krylov<double>(p, o, h, out);
    } else {
        run_krylov<float>(p, o, h, out);
    }
    const double solve_s = seconds_since(t_solve);
    out.other_s = std::max(0.0, solve_s - out.preconditioner_s);
    out.total_s = seconds_since(t_start);
    if (!p.x_exact.empty()) {
        double num = 0.0, den = 0.0;
        for (std::size_t i = 0; i < out.x.size(); ++i) {
            num += (out.x[i] - p.x_exact[i]) * (out.x[i] - p.x_exact[i]);
            den += p.x_exact[i] * p.x_exact[i];
        }
        out.error_vs_exact = std::sqrt(num / den);
    }
    out.options = o;
    return out;
}

}  // namespace mpmg
