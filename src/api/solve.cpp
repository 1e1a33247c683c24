// solve(): resolves the method, builds the problem, and runs the guarded Krylov solve on the
// structured (SG-DIA multigrid) or the unstructured (CSR AMG) path.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "api/guarded_solve.hpp"
#include "api/operators.hpp"
#include "api/problem_input.hpp"
#include "api/thread_scope.hpp"
#include "distributed/dist_amg.hpp"
#include "distributed/dist_read.hpp"
#include "distributed/dist_solve.hpp"
#include "distributed/mpi_env.hpp"
#include "krylov/vector_ops.hpp"
#include "mpmg/errors.hpp"
#include "mpmg/solver.hpp"
#include "multigrid/amg_hierarchy.hpp"
#include "multigrid/cycle.hpp"
#include "multigrid/hierarchy.hpp"
#include "multigrid/truncate.hpp"
#include "structured/sgdia_ops.hpp"
#include "unstructured/csr_typed.hpp"
#include "unstructured/nodes.hpp"
#include "unstructured/rcm.hpp"
#include "unstructured/saddle_point.hpp"

namespace mpmg {
namespace {

using Clock = std::chrono::steady_clock;

template <class K>
void solve_structured(const StructuredProblem& p, const SolverOptions& o, SolveResult& out) {
    TruncationCounts counts;
    const SgDiaOperator<K> a(p.a, counts);
    check_k(counts, o.precision.krylov);
    const BuildFn build = [&](const PrecisionPlan& plan, const MultigridOptions& mg) {
        return std::unique_ptr<BuiltPreconditioner>(std::make_unique<Built<Hierarchy>>(
            p.a, mg, plan, [&a] { return a.exact_half(); }, not_owned(p.a), p.a_normal));
    };
    run_guarded<K>(a, p.b, build, o, structured_fallbacks(a.size()), out);
    a.report(out);
}

template <class K>
void solve_amg_ordered(CsrProblem& p, const SolverOptions& o, SolveResult& out);

/// Reads the block size from A (when auto), renumbers (when the options ask), solves, and hands
/// x back in the caller's order. p.a and p.b are used up: renumbered in place, and A released
/// once the Krylov operator holds it (solve_amg_ordered).
template <class K>
void solve_amg(CsrProblem& p, const SolverOptions& options, SolveResult& out) {
    const Clock::time_point t0 = Clock::now();
    SolverOptions o = options;
    const BlockSizeChoice block = choose_block_size(p.a, o.multigrid.block_size);
    o.multigrid.block_size = block.block;
    out.block_size = block.block;
    out.block_size_reason = block.why;
    const std::vector<std::int64_t> perm =
        amg_order(p.a, o.multigrid.reorder, o.multigrid.block_size, p.solver == SolverKind::cg);
    if (perm.empty()) {
        const double detect_s = std::chrono::duration<double>(Clock::now() - t0).count();
        solve_amg_ordered<K>(p, o, out);
        out.setup_s += detect_s;
        return;
    }
    // P A P^T in place of A (the same values, mirrored alike: exactly_symmetric stays), so that
    // the given order is not held beside it through the solve.
    p.a = permute(p.a, perm);
    std::vector<double> b(p.b.size());
    for (std::size_t i = 0; i < perm.size(); ++i) b[i] = p.b[static_cast<std::size_t>(perm[i])];
    p.b = std::move(b);
    const double reorder_s = std::chrono::duration<double>(Clock::now() - t0).count();
    solve_amg_ordered<K>(p, o, out);
    std::vector<double> x(out.x.size());
    for (std::size_t i = 0; i < perm.size(); ++i) x[static_cast<std::size_t>(perm[i])] = out.x[i];
    out.x = std::move(x);
    out.setup_s += reorder_s;
    out.reordered = "rcm";
}

template <class K>
void solve_amg_ordered(CsrProblem& p, const SolverOptions& o, SolveResult& out) {
    // A that overflows K is refused before the setup; the Krylov operator's copy of A is made
    // after it, so that the hierarchy's setup does not hold it too (131 MB of the 790 MB setup
    // peak of mfem_lshape_o3_r7).
    check_k(p.a, o.precision.krylov);
    AmgSettings settings;
    settings.exactly_symmetric = p.exactly_symmetric;
    std::unique_ptr<const CsrOperator<K>> a;
    // With K = double the operator takes A over (its values moved, its columns narrowed to
    // int32) and p.a is released for the solve (177 MB of mfem_lshape_o3_r7's beside the
    // operator's 131): a rebuild by the guard takes A back from the operator.
    // A saddle point (resolve_saddle_point decided on A before any renumbering): its split
    // in A's order as it is now.
    const std::optional<SaddleSplit> split =
        o.multigrid.saddle_point == SaddlePointKind::block ? saddle_split(p.a) : std::nullopt;
    const BuildFn build = [&](const PrecisionPlan& plan, const MultigridOptions& mg) {
        if constexpr (std::is_same_v<K, double>) {
            if (a) {  // p.a was released into it
                return amg_preconditioner(to_csr(a->matrix()), split, mg, plan, settings);
            }
        }
        return amg_preconditioner(p.a, split, mg, plan, settings);
    };
    GuardState state = guarded_setup(build, o, out);
    if constexpr (std::is_same_v<K, double>) {
        a = std::make_unique<const CsrOperator<K>>(to_typed(std::move(p.a)));  // values moved
    } else {
        TruncationCounts counts;
        a = std::make_unique<const CsrOperator<K>>(to_typed<K>(p.a, counts));
    }
    guarded_solve<K>(*a, p.b, build, o, amg_fallbacks(a->size(), split.has_value()), state, false,
                     out);
}

void check_smoother(const SolverOptions& o) {
    if (o.method == MethodKind::amg && o.multigrid.interpolation != InterpolationKind::automatic) {
        throw Unsupported(fmt::format(
            "--interpolation {}: the AMG path builds its own transfers (PGM aggregation); "
            "interpolation applies to the structured path",
            to_string(o.multigrid.interpolation)));
    }
    if (o.method == MethodKind::structured &&
        o.multigrid.aggregation != AggregationKind::automatic) {
        throw Unsupported(fmt::format(
            "--aggregation {}: aggregation applies to the AMG path (--matrix without --grid, or "
            "--method amg); the structured path coarsens geometrically",
            to_string(o.multigrid.aggregation)));
    }
    if (o.method == MethodKind::structured && o.multigrid.reorder != ReorderKind::automatic) {
        throw Unsupported(fmt::format(
            "--reorder {}: reordering applies to the AMG path; the structured path keeps the "
            "grid's lexicographic order",
            to_string(o.multigrid.reorder)));
    }
    if (o.method == MethodKind::structured &&
        o.multigrid.row_weights != RowWeightsKind::automatic) {
        throw Unsupported(fmt::format(
            "--row-weights {}: row weights apply to the AMG path; the structured path's Galerkin "
            "products keep A's rows as they are",
            to_string(o.multigrid.row_weights)));
    }
    if (o.method == MethodKind::structured && o.multigrid.saddle_point == SaddlePointKind::block) {
        throw Unsupported(
            "--saddle-point block: the saddle-point block preconditioner applies to the AMG path "
            "(--matrix without --grid, or --method amg)");
    }
    if (o.method == MethodKind::structured && o.multigrid.block_size != 0) {
        throw Unsupported(fmt::format(
            "--block-size {}: the block size applies to the AMG path; the structured path takes "
            "the unknowns per cell from --grid NX,NY,NZ,R or the built-in problem",
            o.multigrid.block_size));
    }
    if (o.method == MethodKind::structured && o.multigrid.cycle == CycleKind::k) {
        throw Unsupported(
            "--cycle K: the K-cycle's Krylov steps are the AMG path's (--matrix without --grid, "
            "or --method amg); the structured path takes V, W or F");
    }
    const SmootherKind s = o.multigrid.smoother;
    if (s == SmootherKind::automatic) return;  // resolved per problem below
    if (o.method == MethodKind::structured && s != SmootherKind::symgs &&
        s != SmootherKind::jacobi && s != SmootherKind::ilu0) {
        throw Unsupported(fmt::format(
            "--smoother {}: the structured path offers symgs, ilu0, jacobi", to_string(s)));
    }
}

// auto: built-in problems and files with --grid are structured, other files go to AMG.
MethodKind resolve_method(const SolverOptions& o) {
    const bool has_grid = o.problem.grid[0] != 0;
    const bool file = !o.problem.matrix.empty();
    if (o.method == MethodKind::structured && file && !has_grid) {
        throw InvalidInput(fmt::format(
            "--method structured with --matrix '{}' needs --grid NX,NY,NZ[,R] (the grid the "
            "matrix lives on)",
            o.problem.matrix));
    }
    if (o.method != MethodKind::automatic) return o.method;
    return file && !has_grid ? MethodKind::amg : MethodKind::structured;
}

std::optional<double> relative_error(const std::vector<double>& x,
                                     const std::vector<double>& exact) {
    if (exact.empty()) return std::nullopt;
    double num = 0.0, den = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        num += (x[i] - exact[i]) * (x[i] - exact[i]);
        den += exact[i] * exact[i];
    }
    return std::sqrt(num / den);
}

/// prepare_matrix and prepare_rhs (api/problem_input.hpp), their facts into `out`; returns
/// whether A's values are normal.
template <class M>
bool prepare_input(M& a, std::vector<double>& b, SolveResult& out, std::int64_t first_row = 0) {
    PreparedMatrix m;
    if constexpr (std::is_same_v<M, CsrMatrix>) {
        m = prepare_matrix(a, first_row);
    } else {
        m = prepare_matrix(a);
    }
    out.negated = m.negated;
    out.a_exponent = m.a_exponent;
    out.a_flushed = m.a_flushed;
    out.b_exponent = prepare_rhs(b, m.negated, {}, &out.b_flushed);
    return m.a_normal;
}

/// x = 2^(ea - eb) x' (prepare_input).
void finish_input(SolveResult& out) {
    scale_by_power_of_two(out.x, out.a_exponent - out.b_exponent);
}

}  // namespace

SolveResult solve(const SolverOptions& options) {
    validate(options);
    SolverOptions o = options;
    const ThreadScope thread_scope(o.threads);
    o.method = resolve_method(o);
    check_smoother(o);
    SolveResult out;
    const bool k64 = o.precision.krylov == Precision::fp64;
    out.operator_storage = o.precision.krylov;  // the serial structured path may narrow it
    Clock::time_point t_start;  // setup + solve; reading or building the problem is not timed
    bool timed = false;         // total_s already set (the distributed structured solve)
    std::vector<double> exact;
    // A failure of a system whose input scale flushed values of A or b to zero says so: the
    // zeros it made may be what failed (diag(1e300, 1e-300, 1) ends with a singular pivot).
    try {
        if (o.method == MethodKind::structured) {
            // Under mpirun, each process generates only its rows of a built-in problem, or reads
            // only its part of a file.
            std::optional<dist::Partition> part;
            std::optional<StructuredProblem> mine = o.problem.matrix.empty()
                                                        ? dist::generate(o.problem, part)
                                                        : dist::load_structured(o.problem, part);
            StructuredProblem p = mine                       ? std::move(*mine)
                                  : o.problem.matrix.empty() ? make_problem(o.problem)
                                                             : load_structured(o.problem);
            p.a_normal = prepare_input(p.a, p.b, out);
            if (o.solver == SolverKind::automatic) o.solver = p.solver;
            if (o.multigrid.smoother == SmootherKind::automatic) o.multigrid.smoother = p.smoother;
            if (o.multigrid.interpolation == InterpolationKind::automatic) {
                o.multigrid.interpolation = p.interpolation;
            }
            o.multigrid.cycle = resolve_cycle(o.multigrid.cycle, false, 0);
            out.problem = p.name;
            out.rows = p.a.rows();  // the distributed solve sets the whole operator's
            out.nnz = p.a.nnz();
            t_start = Clock::now();
            // mpirun -np N > 1 (issue #8): the distributed solve sets total_s itself.
            timed = dist::solve_structured(p, part, o, out, t_start);
            if (!timed)
                k64 ? solve_structured<double>(p, o, out) : solve_structured<float>(p, o, out);
            exact = p.x_exact;
        } else if (std::optional<dist::CsrRows> rows = dist::load_csr(o.problem)) {
            // Under mpirun, each process reads only its part of a coordinate file (plain or gzip).
            (void)resolve_saddle_point(o, rows->mine, true);
            out.auto_reason =
                amg_defaults(o, rows->solver, rows->mine, rows->rows.first(dist::world_rank()),
                             rows->rows.global_rows());
            (void)prepare_input(rows->mine, rows->b, out, rows->rows.first(dist::world_rank()));
            out.problem = rows->name;
            out.rows = rows->rows.global_rows();
            out.nnz = rows->nnz;
            exact = std::move(rows->x_exact);
            t_start = Clock::now();
            dist::solve_amg(*rows, o, out);
        } else {
            CsrProblem p = load_csr(o.problem);
            const std::string saddle = resolve_saddle_point(o, p.a, dist::world_size() > 1).why;
            out.auto_reason = joined_reasons(saddle, amg_defaults(o, p.solver, p.a, 0, p.a.rows));
            (void)prepare_input(p.a, p.b, out);
            out.problem = p.name;
            out.rows = p.a.rows;
            out.nnz = p.a.nnz();
            t_start = Clock::now();
            if (!dist::solve_amg(p, o, out)) {  // mpirun -np N > 1: rows in blocks over the ranks
                k64 ? solve_amg<double>(p, o, out) : solve_amg<float>(p, o, out);
            }
            exact = p.x_exact;
        }
    } catch (const NumericalError& e) {
        if (!out.a_flushed && !out.b_flushed) throw;
        throw NumericalError(fmt::format(
            "{} (the input scale turned some nonzero values of {} into zero: their magnitudes "
            "span more than FP64 holds, so the system solved was not quite the one given)",
            e.what(),
            out.a_flushed && out.b_flushed ? "A and b"
            : out.a_flushed                ? "A"
                                           : "b"));
    }
    if (!timed) out.total_s = std::chrono::duration<double>(Clock::now() - t_start).count();
    finish_input(out);
    out.other_s = std::max(0.0, out.total_s - out.setup_s - out.preconditioner_s);
    out.error_vs_exact = relative_error(out.x, exact);
    out.options = o;
    return out;
}

}  // namespace mpmg
