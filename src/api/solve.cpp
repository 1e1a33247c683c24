#include <fmt/format.h>
#include <omp.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>

#include "io/matrix_market.hpp"
#include "io/problems.hpp"
#include "krylov/krylov.hpp"
#include "mpmg/errors.hpp"
#include "mpmg/solver.hpp"
#include "multigrid/hierarchy.hpp"
#include "multigrid/truncate.hpp"
#include "structured/from_csr.hpp"
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

// A built multigrid preconditioner of either path, as the guard needs it.
class BuiltPreconditioner {
public:
    virtual ~BuiltPreconditioner() = default;
    virtual void apply(const double* r, double* z) = 0;
    virtual void apply(const float* r, float* z) = 0;
    virtual const std::vector<LevelReport>& report() const = 0;
    virtual double grid_complexity() const = 0;
    virtual double operator_complexity() const = 0;
};

template <class H>
class Built final : public BuiltPreconditioner {
public:
    template <class... Args>
    explicit Built(Args&&... args) : h_(std::forward<Args>(args)...) {}
    void apply(const double* r, double* z) override { h_.apply(r, z); }
    void apply(const float* r, float* z) override { h_.apply(r, z); }
    const std::vector<LevelReport>& report() const override { return h_.report(); }
    double grid_complexity() const override { return h_.grid_complexity(); }
    double operator_complexity() const override { return h_.operator_complexity(); }

private:
    H h_;
};

using BuildFn = std::function<std::unique_ptr<BuiltPreconditioner>(const PrecisionPlan&)>;

template <class K>
class Adapter final : public Preconditioner<K> {
public:
    explicit Adapter(BuiltPreconditioner& m) : m_(m) {}
    void apply(const K* r, K* z) override { m_.apply(r, z); }

private:
    BuiltPreconditioner& m_;
};

/// The next safer plan for the runtime guard: first store every level in its compute
/// precision, then compute and store in FP64. Nothing when already Full64.
std::optional<PrecisionPlan> widen(const PrecisionPlan& p, int levels) {
    bool narrow_storage = p.automatic, narrow_compute = false;
    for (int l = 0; l < levels; ++l) {
        narrow_storage |= p.level(l).storage != p.level(l).compute;
        narrow_compute |= p.level(l).compute != Precision::fp64;
    }
    if (!narrow_storage && !narrow_compute) return std::nullopt;
    PrecisionPlan w;
    w.krylov = p.krylov;
    w.levels.clear();
    for (int l = 0; l < levels; ++l) {
        const Precision c = narrow_storage ? p.level(l).compute : Precision::fp64;
        w.levels.push_back(LevelPrecision{c, c});
    }
    return w;
}

KrylovResult run_solver(SolverKind kind, const auto& a, auto* m, const auto* b, auto* x,
                        const KrylovOptions& kopt) {
    switch (kind) {
        case SolverKind::gmres:
            return gmres(a, m, b, x, kopt);
        case SolverKind::richardson:
        case SolverKind::mg:
            return richardson(a, m, b, x, kopt);
        case SolverKind::cg:
        case SolverKind::automatic:  // resolved before; CG is the safe reading
            break;
    }
    return cg(a, m, b, x, kopt);
}

/// Builds the preconditioner, solves, and on non-finite values, breakdown or stagnation
/// rebuilds with a wider plan and continues from the last finite iterate (DESIGN.md Safety §5).
template <class K>
void run_guarded(const LinearOperator<K>& a, const std::vector<double>& b_in, const BuildFn& build,
                 const SolverOptions& o, SolveResult& out) {
    std::vector<K> b(b_in.begin(), b_in.end());
    std::vector<K> x(b.size(), K{0});
    PrecisionPlan plan = o.precision;
    int used = 0;
    for (bool first = true;; first = false) {
        const auto t_setup = Clock::now();
        const std::unique_ptr<BuiltPreconditioner> m = build(plan);
        out.setup_s += seconds_since(t_setup);
        out.levels.clear();
        for (const auto& r : m->report()) out.levels.push_back(to_info(r));
        out.grid_complexity = m->grid_complexity();
        out.operator_complexity = m->operator_complexity();

        Adapter<K> pre(*m);
        const KrylovOptions kopt{o.rtol, o.max_iter - used, o.restart, first};
        KrylovResult kr = run_solver(o.solver, a, &pre, b.data(), x.data(), kopt);
        out.preconditioner_s += kr.preconditioner_seconds;
        if (!first && !kr.history.empty()) kr.history.erase(kr.history.begin());
        out.residual_history.insert(out.residual_history.end(), kr.history.begin(),
                                    kr.history.end());
        used += kr.iterations;
        out.status = kr.status;
        out.iterations = used;
        out.final_relative_residual = kr.relative_residual;
        out.message = kr.message;
        const bool trouble = kr.status == SolveStatus::non_finite ||
                             kr.status == SolveStatus::breakdown ||
                             kr.status == SolveStatus::stagnated;
        const auto wider = widen(plan, static_cast<int>(m->report().size()));
        if (!trouble || !o.guard || !wider || used >= o.max_iter) break;
        out.guard_events.push_back(fmt::format(
            "iteration {}: {}; rebuilt the hierarchy as {} and continued from the last finite "
            "iterate",
            used, kr.message, wider->notation()));
        plan = *wider;
    }
    out.converged = out.status == SolveStatus::converged;
    out.x.assign(x.begin(), x.end());
}

template <class K>
void solve_structured(const StructuredProblem& p, const SolverOptions& o, SolveResult& out) {
    TruncationCounts counts;
    const SgDiaOperator<K> a(truncate<K>(p.a, counts));
    if (counts.overflow > 0) {
        throw NumericalError(fmt::format("{} entries of A overflow the iterative precision K = {}",
                                         counts.overflow, to_string(o.precision.krylov)));
    }
    const BuildFn build = [&](const PrecisionPlan& plan) -> std::unique_ptr<BuiltPreconditioner> {
        return std::make_unique<Built<Hierarchy>>(p.a, o.multigrid, plan);
    };
    run_guarded<K>(a, p.b, build, o, out);
}

bool is_symmetric(const CsrMatrix& a) {
    const CsrMatrix t = a.transpose();
    if (t.col != a.col) return false;
    double scale = 0.0;
    for (double v : a.val) scale = std::max(scale, std::fabs(v));
    for (std::size_t i = 0; i < a.val.size(); ++i) {
        if (std::fabs(a.val[i] - t.val[i]) > 1e-12 * scale) return false;
    }
    return true;
}

/// --matrix A.mtx [--rhs b.mtx] --grid NX,NY,NZ[,R]: the file's matrix on the structured path.
StructuredProblem load_structured(const ProblemOptions& po) {
    const CsrMatrix csr = read_matrix_market(po.matrix);
    const int r = std::max(po.components, 1);
    StructuredProblem p;
    p.name = po.matrix;
    p.solver = is_symmetric(csr) ? SolverKind::cg : SolverKind::gmres;
    p.a = sgdia_from_csr(csr, Box{po.grid[0], po.grid[1], po.grid[2]}, r, po.matrix);
    if (po.rhs.empty()) {  // b = A * 1, so the error against the exact solution is known
        p.x_exact.assign(static_cast<std::size_t>(csr.rows), 1.0);
        p.b.resize(p.x_exact.size());
        csr.multiply(p.x_exact.data(), p.b.data());
    } else {
        p.b = read_vector_market(po.rhs);
        if (static_cast<std::int64_t>(p.b.size()) != csr.rows) {
            throw InvalidInput(fmt::format("{}: right-hand side has {} entries but {} has {} rows",
                                           po.rhs, p.b.size(), po.matrix, csr.rows));
        }
    }
    return p;
}

}  // namespace

SolveResult solve(const SolverOptions& options) {
    validate(options);
    SolverOptions o = options;
    if (o.threads > 0) omp_set_num_threads(o.threads);
    const bool has_grid = o.problem.grid[0] != 0;
    if (!o.problem.matrix.empty() && !has_grid) {
        throw Unsupported(fmt::format(
            "--matrix '{}' without --grid needs the unstructured AMG path, which is not available "
            "yet; give --grid NX,NY,NZ[,R] if the matrix lives on a structured grid",
            o.problem.matrix));
    }
    if (o.method == MethodKind::amg) {
        throw Unsupported(
            "--method amg: the unstructured AMG path is not available yet; use "
            "--method structured");
    }
    o.method = MethodKind::structured;
    if (o.multigrid.smoother != SmootherKind::symgs &&
        o.multigrid.smoother != SmootherKind::jacobi &&
        o.multigrid.smoother != SmootherKind::ilu0) {
        throw Unsupported(
            fmt::format("--smoother {}: the structured path offers symgs, ilu0, jacobi",
                        to_string(o.multigrid.smoother)));
    }
    const StructuredProblem p =
        o.problem.matrix.empty() ? make_problem(o.problem) : load_structured(o.problem);
    if (o.solver == SolverKind::automatic) o.solver = p.solver;
    SolveResult out;
    out.problem = p.name;
    out.rows = p.a.rows();
    out.nnz = p.a.nnz();
    const auto t_start = Clock::now();  // setup + solve; building the problem is not timed
    if (o.precision.krylov == Precision::fp64) {
        solve_structured<double>(p, o, out);
    } else {
        solve_structured<float>(p, o, out);
    }
    out.total_s = seconds_since(t_start);
    out.other_s = std::max(0.0, out.total_s - out.setup_s - out.preconditioner_s);
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
