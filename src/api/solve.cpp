// solve(): resolves the method, builds the problem, and runs the guarded Krylov solve on the
// structured (SG-DIA multigrid) or the unstructured (CSR AMG) path.
#include <fmt/format.h>
#include <omp.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <type_traits>

#include "api/guarded_solve.hpp"
#include "api/problem_input.hpp"
#include "distributed/dist_amg.hpp"
#include "distributed/dist_read.hpp"
#include "distributed/dist_solve.hpp"
#include "distributed/mpi_env.hpp"
#include "kernels/setup_simd.hpp"
#include "krylov/vector_ops.hpp"
#include "mpmg/errors.hpp"
#include "mpmg/solver.hpp"
#include "multigrid/amg_hierarchy.hpp"
#include "multigrid/hierarchy.hpp"
#include "multigrid/truncate.hpp"
#include "structured/sgdia_ops.hpp"
#include "unstructured/csr_typed.hpp"
#include "unstructured/nodes.hpp"
#include "unstructured/rcm.hpp"

namespace mpmg {
namespace {

using Clock = std::chrono::steady_clock;

/// Krylov products before the operator makes an exact FP32 copy (FP64 iterations) that level 0
/// does not share (ski rental, as products_before_half_copy in api/guarded_solve.hpp). Measured
/// on laplace27 n = 128, one thread: an FP64-compute 3d27 product costs 47 ms from FP64 values
/// and ~30 ms from FP32; the FP32 copy ~270 ms: about 16 products' savings.
constexpr int kProductsBeforeSingleCopy = 16;

/// A on the structured path in iterative precision K: the problem's own FP64 matrix when K is
/// FP64 (no copy), else a truncated copy. When a narrower storage holds every value of A
/// exactly (FP16, or FP32 under FP64; constant-coefficient stencils such as Laplace's 26 and
/// -1), the products run on a copy in that storage, computing in K: the same products from a
/// quarter (half) of the matrix bytes of FP64, which dominate the memory-bound SpMV. FP16 also
/// takes A = c M with M exact in FP16 (the same stencil times 1/h^2 or a material constant):
/// the products read M and multiply by c, one more pass over y (exact_multiple). The FP16
/// copy is made when the hierarchy's level 0 asks for it (exact_half(): it then stores that
/// same matrix instead of truncating its own, so the copy costs nothing extra); otherwise the
/// copies are tried only once a solve has run long enough to pay for them. When A is exactly
/// symmetric (CG's problems; checked once, after the first product, unless the products read
/// the FP16 copy), the products read only the centre and the offsets after it, the lower ones
/// from their mirrors (spmv_mirrored): bit for bit the same products.
template <class K>
class SgDiaOperator final : public LinearOperator<K> {
public:
    SgDiaOperator(const SgDiaMatrix<double>& a, TruncationCounts& counts) : a_(a) {
        if constexpr (!std::is_same_v<K, double>) single_ = truncate<float>(a, counts);
    }
    std::int64_t size() const override { return a_.rows(); }
    void apply(const K* x, K* y) const override { multiply(x, y, nullptr); }
    bool apply_dot(const K* x, K* y, double* local_dot) const override {
        multiply(x, y, local_dot);
        return true;
    }
    /// The exact FP16 copy of A, or of A / c (exact_multiple), made on the first call; null
    /// when FP16 holds neither (or there is no memory for it). The products read it from then
    /// on, times c.
    ExactHalf exact_half() const {
        if (!tried_half_) {
            tried_half_ = true;
            if (std::optional<ExactHalfMultiple> h = exact_multiple_if_memory(a_)) {
                half_ = std::make_shared<const SgDiaMatrix<half>>(std::move(h->m));
                half_scale_ = h->scale;
                half_facts_ = h->facts;
                half_from_ = products_ + 1;
            }
        }
        return {half_, half_scale_, half_facts_};
    }
    /// The storage of the matrix the last products read (K's own unless an exact copy is
    /// narrower).
    Precision storage() const {
        return half_ ? Precision::fp16 : single_ ? Precision::fp32 : Precision::fp64;
    }
    /// The scale of that storage's copy (A = scale x copy; 1 for FP64, FP32 and A's own FP16).
    double storage_scale() const { return half_ ? half_scale_ : 1.0; }
    /// The first product that read that storage (1: every product).
    int storage_from_product() const { return half_ ? half_from_ : single_ ? single_from_ : 1; }
    /// The first product that read only the upper half of the offsets (A exactly symmetric),
    /// or 0 when none did.
    int mirrored_from_product() const { return mirrored_from_; }

private:
    /// y = A x, and *dot = (x, y) when dot is not null, from the matrix the products read now:
    /// first the copies and the symmetry check that this product's number asks for.
    void multiply(const K* x, K* y, double* dot) const {
        const int product = products_ + 1;
        if (!tried_half_ &&
            product > products_before_half_copy(single_ ? Precision::fp32 : Precision::fp64,
                                                mirrored_from_ > 0)) {
            (void)exact_half();
        }
        if constexpr (std::is_same_v<K, double>) {
            if (!half_ && !tried_single_ && product > kProductsBeforeSingleCopy) {
                tried_single_ = true;
                if ((single_ = exact_copy_if_memory<float>(a_))) single_from_ = product;
            }
        }
        if (!tried_symmetry_ && product > kProductsBeforeSymmetryCheck) {
            // On the matrix the products read: an exact copy is symmetric exactly when A is, a
            // truncated one (K = FP32) whenever it is itself, and a later exact copy holds A's
            // values. Not for the FP16 copy: its products convert every value and take as long
            // mirrored (laplace27 n = 128: 21.9 and 21.4 ms), so the check would not pay.
            tried_symmetry_ = true;
            if (!half_ && (single_ ? exactly_symmetric(*single_) : exactly_symmetric(a_))) {
                mirrored_from_ = product;
            }
        }
        products_ = product;
        // scale: A x = c (M x) for the FP16 multiple.
        const auto product_of = [&](const auto& m, double scale) {
            const bool mirrored = mirrored_from_ > 0;
            if (dot != nullptr) {
                *dot = spmv_dot(m, x, y, mirrored, scale);
                return;
            }
            if (mirrored) {
                spmv_mirrored(m, x, y);
            } else {
                spmv(m, x, y);
            }
            if (scale != 1.0) krylov_ops::scale_copy(a_.rows(), scale, y, y);
        };
        if (half_) {
            product_of(*half_, half_scale_);
        } else if (single_) {
            product_of(*single_, 1.0);
        } else if constexpr (std::is_same_v<K, double>) {
            product_of(a_, 1.0);
        }
    }

    const SgDiaMatrix<double>& a_;
    mutable int products_ = 0;
    mutable bool tried_half_ = false, tried_single_ = false, tried_symmetry_ = false;
    mutable std::shared_ptr<const SgDiaMatrix<half>> half_;  ///< A / half_scale_, exact
    mutable double half_scale_ = 1.0;
    mutable HalfFacts half_facts_;
    /// Exact FP32 copy (K = FP64), or A truncated to K = FP32.
    mutable std::optional<SgDiaMatrix<float>> single_;
    mutable int half_from_ = 1, single_from_ = 1, mirrored_from_ = 0;
};

/// A on the AMG path in iterative precision K.
template <class K>
class CsrOperator final : public LinearOperator<K> {
public:
    explicit CsrOperator(TypedCsr<K> a) : a_(std::move(a)) {}
    std::int64_t size() const override { return a_.rows; }
    void apply(const K* x, K* y) const override { spmv(a_, x, y); }

private:
    TypedCsr<K> a_;
};

void check_k(const TruncationCounts& counts, Precision k) {
    if (counts.overflow > 0) {
        throw NumericalError(fmt::format("{} entries of A overflow the iterative precision K = {}",
                                         counts.overflow, to_string(k)));
    }
}

template <class K>
void solve_structured(const StructuredProblem& p, const SolverOptions& o, SolveResult& out) {
    TruncationCounts counts;
    const SgDiaOperator<K> a(p.a, counts);
    check_k(counts, o.precision.krylov);
    const BuildFn build = [&](const PrecisionPlan& plan, const MultigridOptions& mg) {
        return std::unique_ptr<BuiltPreconditioner>(std::make_unique<Built<Hierarchy>>(
            p.a, mg, plan, [&a] { return a.exact_half(); }, not_owned(p.a), p.a_normal));
    };
    run_guarded<K>(a, p.b, build, o,
                   GuardFallbacks{SmootherKind::jacobi, InterpolationKind::operator_dependent, {}},
                   out);
    out.operator_storage = a.storage();
    out.operator_storage_from = a.storage_from_product();
    out.operator_scale = a.storage_scale();
    out.operator_mirrored_from = a.mirrored_from_product();
}

// The AMG path's renumbering (options.hpp ReorderKind): the permutation, or empty to keep the
// given order (auto). A system's nodes are renumbered whole, so its unknowns stay node by node.
std::vector<std::int64_t> amg_order(const CsrMatrix& a, ReorderKind k, int block) {
    if (k != ReorderKind::rcm) return {};
    if (block == 1) return rcm_order(a);
    return expand_to_unknowns(rcm_order(node_matrix(a, block)), block);
}

template <class K>
void solve_amg_ordered(const CsrProblem& p, const SolverOptions& o, SolveResult& out);

/// Reads the block size from A (when auto), renumbers (when the options ask), solves, and hands
/// x back in the caller's order.
template <class K>
void solve_amg(const CsrProblem& p, const SolverOptions& options, SolveResult& out) {
    const Clock::time_point t0 = Clock::now();
    SolverOptions o = options;
    const BlockSizeChoice block = choose_block_size(p.a, o.multigrid.block_size);
    o.multigrid.block_size = block.block;
    out.block_size = block.block;
    out.block_size_reason = block.why;
    const std::vector<std::int64_t> perm =
        amg_order(p.a, o.multigrid.reorder, o.multigrid.block_size);
    if (perm.empty()) {
        const double detect_s = std::chrono::duration<double>(Clock::now() - t0).count();
        solve_amg_ordered<K>(p, o, out);
        out.setup_s += detect_s;
        return;
    }
    CsrProblem q;
    q.a = permute(p.a, perm);
    q.b.resize(p.b.size());
    for (std::size_t i = 0; i < perm.size(); ++i) q.b[i] = p.b[static_cast<std::size_t>(perm[i])];
    const double reorder_s = std::chrono::duration<double>(Clock::now() - t0).count();
    solve_amg_ordered<K>(q, o, out);
    std::vector<double> x(out.x.size());
    for (std::size_t i = 0; i < perm.size(); ++i) x[static_cast<std::size_t>(perm[i])] = out.x[i];
    out.x = std::move(x);
    out.setup_s += reorder_s;
    out.reordered = "rcm";
}

template <class K>
void solve_amg_ordered(const CsrProblem& p, const SolverOptions& o, SolveResult& out) {
    TruncationCounts counts;
    const CsrOperator<K> a(to_typed<K>(p.a, counts));
    check_k(counts, o.precision.krylov);
    const BuildFn build = [&](const PrecisionPlan& plan, const MultigridOptions& mg) {
        return std::unique_ptr<BuiltPreconditioner>(
            std::make_unique<Built<AmgHierarchy>>(p.a, mg, plan));
    };
    run_guarded<K>(
        a, p.b, build, o,
        GuardFallbacks{SmootherKind::l1_jacobi, {}, {SmootherKind::ilu0, SmootherKind::l1_jacobi}},
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

std::span<double> values_of(CsrMatrix& a) { return a.val; }
std::span<double> values_of(SgDiaMatrix<double>& a) { return a.values(); }

/// The system the solve takes in place of A x = b (collective under mpirun; x and the relative
/// residuals are those of A x = b):
///  - -A x = -b when A's diagonal is negative on every process's rows (a negative definite
///    operator: Δ assembled for -Δ, or saylr3);
///  - A' = 2^ea A and b' = 2^eb b when the largest |a_ij| or |b_i| lies outside [2^-64, 2^64]
///    (normalising_exponent): the setup's products of entries and FP32's range stay finite and
///    ||b||^2 nonzero; then x = 2^(ea - eb) x' (finish_input). Exact: powers of two.
/// Returns whether every value of this process's A' is zero or a normal FP64 number (found in
/// the same pass as the largest: StructuredProblem::a_normal).
template <class M>
bool prepare_input(M& a, std::vector<double>& b, SolveResult& out, std::int64_t first_row = 0) {
    bool negative = false;
    if constexpr (std::is_same_v<M, CsrMatrix>) {
        negative = diagonal_negative(a, first_row);
    } else {
        negative = diagonal_negative(a);
    }
    out.negated = dist::all_ranks(negative);
    if (out.negated) negate(a, b);
    const std::span<double> values = values_of(a);
    const kernels::FiniteRange range =
        kernels::finite_range(values.data(), static_cast<std::int64_t>(values.size()));
    out.a_exponent = normalising_exponent(dist::max_all_ranks(range.largest));
    out.b_exponent = normalising_exponent(dist::max_all_ranks(largest_abs(b)));
    scale_by_power_of_two(values, out.a_exponent);
    scale_by_power_of_two(b, out.b_exponent);
    // The smallest nonzero magnitude as the scaling left it (the same ldexp); +Inf when none.
    return !range.nonfinite &&
           !(std::ldexp(range.smallest, out.a_exponent) < std::numeric_limits<double>::min());
}

/// x = 2^(ea - eb) x' (prepare_input).
void finish_input(SolveResult& out) {
    scale_by_power_of_two(out.x, out.a_exponent - out.b_exponent);
}

/// The AMG path's automatic choices: the problem's solver (CG when A is symmetric), SymGS.
void amg_defaults(SolverOptions& o, SolverKind problem_solver) {
    if (o.solver == SolverKind::automatic) o.solver = problem_solver;
    if (o.multigrid.smoother == SmootherKind::automatic) o.multigrid.smoother = SmootherKind::symgs;
}

}  // namespace

SolveResult solve(const SolverOptions& options) {
    validate(options);
    SolverOptions o = options;
    if (o.threads > 0) omp_set_num_threads(o.threads);
    o.method = resolve_method(o);
    check_smoother(o);
    SolveResult out;
    const bool k64 = o.precision.krylov == Precision::fp64;
    out.operator_storage = o.precision.krylov;  // the serial structured path may narrow it
    Clock::time_point t_start;  // setup + solve; reading or building the problem is not timed
    bool timed = false;         // total_s already set (the distributed structured solve)
    std::vector<double> exact;
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
        out.problem = p.name;
        out.rows = p.a.rows();  // the distributed solve sets the whole operator's
        out.nnz = p.a.nnz();
        t_start = Clock::now();
        // mpirun -np N > 1 (issue #8): the distributed solve sets total_s itself.
        timed = dist::solve_structured(p, part, o, out, t_start);
        if (!timed) k64 ? solve_structured<double>(p, o, out) : solve_structured<float>(p, o, out);
        exact = p.x_exact;
    } else if (std::optional<dist::CsrRows> rows = dist::load_csr(o.problem)) {
        // Under mpirun, each process reads only its part of a coordinate file (plain or gzip).
        amg_defaults(o, rows->solver);
        (void)prepare_input(rows->mine, rows->b, out, rows->rows.first(dist::world_rank()));
        out.problem = rows->name;
        out.rows = rows->rows.global_rows();
        out.nnz = rows->nnz;
        exact = std::move(rows->x_exact);
        t_start = Clock::now();
        dist::solve_amg(*rows, o, out);
    } else {
        CsrProblem p = load_csr(o.problem);
        amg_defaults(o, p.solver);
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
    if (!timed) out.total_s = std::chrono::duration<double>(Clock::now() - t_start).count();
    finish_input(out);
    out.other_s = std::max(0.0, out.total_s - out.setup_s - out.preconditioner_s);
    out.error_vs_exact = relative_error(out.x, exact);
    out.options = o;
    return out;
}

}  // namespace mpmg
