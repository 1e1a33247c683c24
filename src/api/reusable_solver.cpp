// mpmg::Solver: setup once from a matrix in memory, then any number of solves on the same
// hierarchy. The paths, defaults and the guard are mpmg::solve's (api/solve.cpp); what differs
// is that the matrix, the operator, the hierarchy and the guard's state outlive one solve.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <utility>

#include "api/guarded_solve.hpp"
#include "api/operators.hpp"
#include "api/problem_input.hpp"
#include "api/thread_scope.hpp"
#include "distributed/dist_amg.hpp"
#include "distributed/dist_solve.hpp"
#include "distributed/mpi_env.hpp"
#include "mpmg/errors.hpp"
#include "mpmg/solver.hpp"
#include "multigrid/amg_hierarchy.hpp"
#include "multigrid/cycle.hpp"
#include "multigrid/hierarchy.hpp"
#include "structured/coarsen.hpp"
#include "structured/from_csr.hpp"
#include "unstructured/drop_zeros.hpp"
#include "unstructured/saddle_point.hpp"

namespace mpmg {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kSource = "the matrix given to Solver::setup";

/// Rows first_row, first_row + 1, ... of a matrix with a.cols columns: well-formed CSR with
/// finite values, or InvalidInput naming what is not (`who`: "" or "rank q: ").
void check_csr_rows(const CsrMatrix& a, std::int64_t first_row, const std::string& who) {
    const auto fail = [&](std::string what) {
        throw InvalidInput(fmt::format("Solver::setup: {}{}", who, what));
    };
    if (a.rows < 0 || a.cols < 1) {
        fail(fmt::format("A's rows are {} x {}; a linear solve needs columns", a.rows, a.cols));
    }
    if (a.row_ptr.size() != static_cast<std::size_t>(a.rows) + 1 || a.row_ptr.front() != 0) {
        fail(fmt::format("row_ptr has {} entries starting at {}; it needs rows + 1 = {} from 0",
                         a.row_ptr.size(), a.row_ptr.empty() ? 0 : a.row_ptr.front(), a.rows + 1));
    }
    if (a.col.size() != a.val.size() || a.row_ptr.back() != a.nnz()) {
        fail(fmt::format("row_ptr ends at {} with {} columns and {} values; all three must agree",
                         a.row_ptr.back(), a.col.size(), a.val.size()));
    }
    for (std::int64_t i = 0; i < a.rows; ++i) {
        const std::int64_t begin = a.row_ptr[i], end = a.row_ptr[i + 1];
        const std::int64_t row = first_row + i;
        if (end < begin) fail(fmt::format("row_ptr decreases at row {}", row));
        for (std::int64_t k = begin; k < end; ++k) {
            const auto uk = static_cast<std::size_t>(k);
            if (a.col[uk] < 0 || a.col[uk] >= a.cols) {
                fail(
                    fmt::format("row {} has column {}, outside 0..{}", row, a.col[uk], a.cols - 1));
            }
            if (k > begin && a.col[uk] <= a.col[uk - 1]) {
                fail(fmt::format("row {}: columns {} and {} are not strictly increasing", row,
                                 a.col[uk - 1], a.col[uk]));
            }
            if (!std::isfinite(a.val[uk])) {
                fail(fmt::format("A({}, {}) = {}: every value must be finite", row, a.col[uk],
                                 a.val[uk]));
            }
        }
    }
}

/// A well-formed square CSR matrix with finite values, or InvalidInput naming what is not.
void check_csr(const CsrMatrix& a) {
    if (a.rows < 1 || a.rows != a.cols) {
        throw InvalidInput(fmt::format(
            "Solver::setup: A is {} x {}; a linear solve needs a square matrix with rows", a.rows,
            a.cols));
    }
    check_csr_rows(a, 0, "");
}

/// InvalidInput naming the first non-finite value of an SG-DIA matrix (its offset and cell).
void check_finite(const SgDiaMatrix<double>& a, const std::string& where = "Solver::setup") {
    if (a.rows() < 1) throw InvalidInput(fmt::format("{}: A has no rows", where));
    const auto& v = a.values();
    const auto bad = std::find_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); });
    if (bad == v.end()) return;
    const std::int64_t at = bad - v.begin();
    const int d = static_cast<int>(at / a.diag_stride());
    const std::int64_t cell = (at % a.diag_stride()) / (std::int64_t{a.block()} * a.block());
    const Offset& o = a.stencil()[d];
    throw InvalidInput(fmt::format(
        "{}: A has the non-finite value {} at cell {} (offset {},{},{}): every value must be "
        "finite",
        where, *bad, cell, o.dx, o.dy, o.dz));
}

/// Zeroes the entries of `a` (the box whose first cell is the global cell `first` of `grid`)
/// whose neighbour lies outside the grid; those towards other cells of the grid stay.
void zero_outside_grid(SgDiaMatrix<double>& a, const std::array<int, 3>& first, const Box& grid) {
    const Box& box = a.box();
    const std::int64_t block = std::int64_t{a.block()} * a.block();
    for (int d = 0; d < a.stencil().size(); ++d) {
        const Offset o = a.stencil()[d];
        double* values = a.diagonal(d);
        const auto outside = [](int g, int step, int n) { return g + step < 0 || g + step >= n; };
        for (int k = 0; k < box.nz; ++k) {
            const bool out_k = outside(first[2] + k, o.dz, grid.nz);
            for (int j = 0; j < box.ny; ++j) {
                const bool out_j = out_k || outside(first[1] + j, o.dy, grid.ny);
                for (int i = 0; i < box.nx; ++i) {
                    if (out_j || outside(first[0] + i, o.dx, grid.nx)) {
                        const std::int64_t c = i + box.nx * (j + std::int64_t{box.ny} * k);
                        std::fill_n(values + c * block, block, 0.0);
                    }
                }
            }
        }
    }
}

/// InvalidInput unless v has `rows` finite entries.
void check_vector(std::span<const double> v, std::int64_t rows, const char* name,
                  const std::string& where = "Solver::solve", const char* holder = "A has") {
    if (static_cast<std::int64_t>(v.size()) != rows) {
        throw InvalidInput(
            fmt::format("{}: {} has {} entries; {} {} rows", where, name, v.size(), holder, rows));
    }
    const auto bad = std::find_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); });
    if (bad != v.end()) {
        throw InvalidInput(fmt::format("{}: {}[{}] = {}: every entry must be finite", where, name,
                                       bad - v.begin(), *bad));
    }
}

}  // namespace

struct Solver::Impl {
    SolverOptions given;     // as the constructor took them
    Communicator comm;       // the processes of setup(rows, first_row); one process otherwise
    SolverOptions resolved;  // after setup's choices
    std::int64_t rows = 0, nnz = 0;
    PreparedMatrix prepared;  // -A and the power of two A was scaled by
    // The structured path's A, or the AMG path's (renumbered by perm when it is not empty).
    SgDiaMatrix<double> grid_a;
    CsrMatrix csr_a;
    std::vector<std::int64_t> perm;
    // A as the Krylov solver reads it, in K = FP64 or FP32 (one of the four).
    std::unique_ptr<SgDiaOperator<double>> grid64;
    std::unique_ptr<SgDiaOperator<float>> grid32;
    std::unique_ptr<CsrOperator<double>> csr64;
    std::unique_ptr<CsrOperator<float>> csr32;
    bool csr_operator_due = false;  ///< csr64 or csr32 to be made once the hierarchy is built
    BuildFn build;
    GuardFallbacks fallbacks;
    std::optional<GuardState> state;
    SetupResult setup_info;
    // The solve's b and x, kept between solves so their pages are touched once.
    std::vector<double> b_work, x_work;
    // AMG path: the aggregates of every level, kept for update_values (and the guard's
    // rebuilds, which would make the same ones); the caller's entry count, which of its
    // entries csr_a keeps, and where each of csr_a's values comes from among the caller's.
    std::vector<Aggregation> aggregates;
    std::int64_t user_nnz = 0;
    bool setup_symmetric = false;  // the caller's matrix at setup()
    std::vector<bool> kept_entry;
    std::vector<std::int64_t> value_source;
    // A setup on several processes: their rows (setup(rows, first_row), RowBlockSystem) or
    // their boxes of a grid (setup(block, first_cell, grid), GridBlockSystem, `boxes`), A's
    // operator and the hierarchy's builder (rows above: this process's).
    std::unique_ptr<dist::DistSystem> processes;
    bool boxes = false;
    std::int64_t first_row = 0;  // of this process's rows in A (setup(rows, first_row))
    // For update_values on the processes' rows: the caller's pattern (row_ptr and col, no
    // values) and the hierarchy's aggregates.
    CsrMatrix rows_pattern;
    dist::KeptAggregates rows_aggregates;

    /// "Solver::<call>", and under mpirun ": rank q" (the messages every process throws).
    std::string where(const char* call) const {
        return several() ? fmt::format("Solver::{}: rank {}", call, dist::rank(comm))
                         : fmt::format("Solver::{}", call);
    }
    /// Who has the rows that vectors need.
    const char* holder() const { return several() ? "the process has" : "A has"; }

    /// Set up on several processes (each holding its rows or its box).
    bool several() const { return processes != nullptr; }
    bool structured() const { return grid64 || grid32 || boxes; }

    /// The caller's number of the solver's row i (renumbered on the AMG path by perm).
    std::size_t caller_row(std::size_t i) const {
        return perm.empty() ? i : static_cast<std::size_t>(perm[i]);
    }

    /// Forgets the last setup and starts this one's options.
    void restart() {
        state.reset();
        grid64.reset();
        grid32.reset();
        csr64.reset();
        csr32.reset();
        csr_operator_due = false;
        build = nullptr;
        processes.reset();
        boxes = false;
        first_row = 0;
        rows_pattern = CsrMatrix();
        rows_aggregates = dist::KeptAggregates{};
        grid_a = SgDiaMatrix<double>();
        csr_a = CsrMatrix();
        perm.clear();
        aggregates.clear();
        user_nnz = 0;
        kept_entry.clear();
        value_source.clear();
        resolved = given;
        setup_info = SetupResult{};
    }

    void setup_grid(bool symmetric) {
        SolverOptions& o = resolved;
        o.method = MethodKind::structured;
        prepared = prepare_matrix(grid_a, comm);
        if (o.solver == SolverKind::automatic) {
            o.solver = symmetric ? SolverKind::cg : SolverKind::gmres;
        }
        if (o.multigrid.smoother == SmootherKind::automatic) {
            o.multigrid.smoother = SmootherKind::symgs;
        }
        if (o.multigrid.interpolation == InterpolationKind::automatic) {
            o.multigrid.interpolation = InterpolationKind::linear;
        }
        o.multigrid.cycle = resolve_cycle(o.multigrid.cycle, false, 0);
        TruncationCounts counts;
        ExactHalfSource half;
        if (o.precision.krylov == Precision::fp64) {
            grid64 = std::make_unique<SgDiaOperator<double>>(grid_a, counts);
            half = [op = grid64.get()] { return op->exact_half(); };
        } else {
            grid32 = std::make_unique<SgDiaOperator<float>>(grid_a, counts);
            half = [op = grid32.get()] { return op->exact_half(); };
        }
        check_k(counts, o.precision.krylov);
        build = [this, half](const PrecisionPlan& plan, const MultigridOptions& mg) {
            return std::unique_ptr<BuiltPreconditioner>(std::make_unique<Built<Hierarchy>>(
                grid_a, mg, plan, half, not_owned(grid_a), prepared.a_normal));
        };
        rows = grid_a.rows();
        fallbacks = structured_fallbacks(rows);
        nnz = grid_a.nnz();
    }

    void setup_amg(bool symmetric) {
        SolverOptions& o = resolved;
        o.method = MethodKind::amg;
        setup_symmetric = symmetric;
        // Where each entry of csr_a comes from in the caller's values (update_values): the
        // entries drop_zeros keeps (nonzeros and the diagonal), then renumbered with A.
        user_nnz = csr_a.nnz();
        kept_entry.assign(static_cast<std::size_t>(user_nnz), false);
        value_source.clear();
        value_source.reserve(static_cast<std::size_t>(user_nnz));
        for (std::int64_t i = 0; i < csr_a.rows; ++i) {
            for (std::int64_t p = csr_a.row_ptr[i]; p < csr_a.row_ptr[i + 1]; ++p) {
                if (csr_a.val[p] != 0.0 || csr_a.col[p] == i) {
                    kept_entry[static_cast<std::size_t>(p)] = true;
                    value_source.push_back(p);
                }
            }
        }
        drop_zeros(csr_a);  // after the symmetry test, which compares stored patterns
        const BlockSizeChoice block = choose_block_size(csr_a, o.multigrid.block_size);
        o.multigrid.block_size = block.block;
        setup_info.block_size = block.block;
        setup_info.block_size_reason = block.why;
        perm = amg_order(csr_a, o.multigrid.reorder, block.block, symmetric);
        if (!perm.empty()) {
            // The sources go through the same renumbering as the values (exact in FP64).
            CsrMatrix sources = csr_a;
            for (std::size_t k = 0; k < sources.val.size(); ++k) {
                sources.val[k] = static_cast<double>(value_source[k]);
            }
            sources = permute(sources, perm);
            for (std::size_t k = 0; k < sources.val.size(); ++k) {
                value_source[k] = static_cast<std::int64_t>(sources.val[k]);
            }
            csr_a = permute(csr_a, perm);
            setup_info.reordered = "rcm";
        }
        rows = csr_a.rows;
        nnz = csr_a.nnz();
        resolve_amg(symmetric);
    }

    /// The AMG path's choices that A's values decide (solver, smoother, cycle, negation and
    /// scale), its operator for the Krylov solver and the hierarchy's builder, on csr_a as
    /// setup_amg left it (zeros dropped, renumbered).
    void resolve_amg(bool symmetric) {
        SolverOptions& o = resolved;
        SaddleChoice saddle = resolve_saddle_point(o, csr_a, false);  // one process
        setup_info.auto_reason = joined_reasons(
            saddle.why, resolve_amg_auto(o, symmetric ? SolverKind::cg : SolverKind::gmres,
                                         diagonal_signs(csr_a, 0, Communicator::self())));
        o.multigrid.cycle =
            resolve_cycle(o.multigrid.cycle, true, csr_a.rows, diagonal_extremes(csr_a).spread());
        prepared = prepare_matrix(csr_a, 0, comm);
        csr64.reset();
        csr32.reset();
        // A that overflows K is refused here; the Krylov operator's copy of A is made after
        // the hierarchy (finish_setup), so that the setup does not hold it beside csr_a.
        check_k(csr_a, o.precision.krylov);
        csr_operator_due = true;
        fallbacks = amg_fallbacks(rows, saddle.split.has_value());
        // The saddle-point blocks, built anew by each setup (they keep no aggregates).
        build = [this, split = std::move(saddle.split)](const PrecisionPlan& plan,
                                                        const MultigridOptions& mg) {
            AmgSettings settings;
            settings.aggregates = &aggregates;
            return amg_preconditioner(csr_a, split, mg, plan, settings);
        };
    }

    /// The processes' rows (this one's from first_row) as A: the choices that setup_amg and
    /// resolve_amg make, made over all processes (RowBlockSystem), with the kept aggregates.
    void setup_rows(CsrMatrix mine, BlockSizeChoice& block) {
        resolved.method = MethodKind::amg;
        (void)resolve_saddle_point(resolved, mine, true);  // one AMG (block: an error)
        take(std::make_unique<dist::RowBlockSystem>(std::move(mine), first_row, comm, resolved,
                                                    prepared, block, setup_info.auto_reason,
                                                    &rows_aggregates));
    }

    /// The operator and builder of a setup on several processes.
    void take(std::unique_ptr<dist::DistSystem> system) {
        processes = std::move(system);
        rows = processes->local_rows();
        nnz = processes->global_nnz();
        build = processes->build();
        fallbacks = processes->fallbacks();
        processes->reset_comm();
    }

    /// update_values after setup(rows, first_row): the caller's pattern with the new values,
    /// set up again on the kept aggregates and block size (collective). Every choice the values
    /// make is made again; a value that is now zero, or no longer zero, changes nothing that
    /// the aggregates depend on (the rows).
    SetupResult update_rows(std::span<const double> values) {
        dist::agreed(
            [&] {
                if (values.size() != rows_pattern.col.size()) {
                    throw InvalidInput(fmt::format(
                        "{}: {} values; this process's rows of the last setup have {} entries",
                        where("update_values"), values.size(), rows_pattern.col.size()));
                }
                for (std::size_t k = 0; k < values.size(); ++k) {
                    if (!std::isfinite(values[k])) {
                        throw InvalidInput(
                            fmt::format("{}: values[{}] = {}: every entry must be finite",
                                        where("update_values"), k, values[k]));
                    }
                }
            },
            comm);
        const ThreadScope thread_scope(given.threads);
        const auto t0 = Clock::now();
        CsrMatrix mine = rows_pattern;
        mine.val.assign(values.begin(), values.end());
        state.reset();
        processes.reset();
        resolved = given;
        resolved.multigrid.block_size = setup_info.block_size;  // the setup's; its reason stays
        BlockSizeChoice asked;
        setup_rows(std::move(mine), asked);
        SetupResult out = finish_processes_setup(t0);
        out.reused_aggregates = true;
        return out;
    }

    /// finish_setup on several processes: A's rows and the partition in the report.
    SetupResult finish_processes_setup(Clock::time_point t0) {
        finish_setup(t0);
        setup_info.rows = processes->global_rows();
        setup_info.partition = processes->partition(setup_info.levels.size());
        return setup_info;
    }

    /// Builds the hierarchy (setup_grid or setup_amg ran, having started at t0) and fills
    /// setup_info; its setup time counts from t0.
    SetupResult finish_setup(Clock::time_point t0) {
        SolveResult built;
        state = guarded_setup(build, resolved, built);
        if (csr_operator_due) {  // resolve_amg's
            TruncationCounts counts;
            if (resolved.precision.krylov == Precision::fp64) {
                csr64 = std::make_unique<CsrOperator<double>>(to_typed<double>(csr_a, counts));
            } else {
                csr32 = std::make_unique<CsrOperator<float>>(to_typed<float>(csr_a, counts));
            }
            csr_operator_due = false;
        }
        SetupResult& s = setup_info;
        s.rows = rows;
        s.nnz = nnz;
        s.options = resolved;
        s.negated = prepared.negated;
        s.a_exponent = prepared.a_exponent;
        s.a_flushed = prepared.a_flushed;
        s.setup_s = std::chrono::duration<double>(Clock::now() - t0).count();
        s.levels = std::move(built.levels);
        s.grid_complexity = built.grid_complexity;
        s.operator_complexity = built.operator_complexity;
        return s;
    }

    template <class K>
    void run(const LinearOperator<K>& a, bool x_given, SolveResult& out) {
        guarded_solve<K>(a, b_work, build, resolved, fallbacks, *state, x_given, out);
    }
};

Solver::Solver(const SolverOptions& options) : Solver(options, Communicator{}) {}

Solver::Solver(const SolverOptions& options, Communicator comm) : impl_(std::make_unique<Impl>()) {
    const ProblemOptions& p = options.problem;
    if (!p.name.empty() || !p.matrix.empty() || !p.rhs.empty()) {
        throw InvalidInput(fmt::format(
            "Solver: options.problem names {}; a Solver takes its matrix from setup() (mpmg::solve "
            "solves built-in problems and files)",
            !p.name.empty()     ? fmt::format("the built-in problem '{}'", p.name)
            : !p.matrix.empty() ? fmt::format("the file '{}'", p.matrix)
                                : fmt::format("the file '{}'", p.rhs)));
    }
    validate_settings(options);
    dist::check_communicator(comm, "Solver");
    impl_->given = options;
    impl_->comm = comm;
}

Solver::~Solver() = default;
Solver::Solver(Solver&&) noexcept = default;
Solver& Solver::operator=(Solver&&) noexcept = default;

bool Solver::ready() const { return impl_ && impl_->state.has_value(); }

std::int64_t Solver::rows() const { return ready() ? impl_->rows : 0; }

namespace {
/// What either setup needs first: a Solver not moved from.
void check_can_set_up(const void* impl) {
    if (impl == nullptr) throw InvalidInput("Solver::setup: this Solver was moved from");
}

/// A whole matrix or grid: a Solver of one process.
void check_one_process(const Communicator& comm) {
    if (dist::distributed(comm)) {
        throw Unsupported(fmt::format(
            "Solver::setup: the Solver's communicator has {} processes, each of which gives its "
            "rows of A (setup(rows, first_row)); a whole matrix or grid is set up by a Solver "
            "of one process (mpmg::Communicator::self() under mpirun)",
            dist::size(comm)));
    }
}
}  // namespace

SetupResult Solver::setup(SgDiaMatrix<double> a) {
    check_can_set_up(impl_.get());
    check_one_process(impl_->comm);
    zero_outside_box(a);  // whatever the caller left there is not A's (SG-DIA's convention)
    check_finite(a);
    Impl& s = *impl_;
    s.restart();
    const ThreadScope thread_scope(s.given.threads);
    const auto t0 = Clock::now();
    if (s.given.method == MethodKind::amg) {
        s.csr_a = to_csr(a);
        a = SgDiaMatrix<double>();
        s.setup_amg(is_symmetric(s.csr_a));
        s.user_nnz = -1;  // no CSR order the caller knows: update_values refuses
    } else {
        s.grid_a = std::move(a);
        s.setup_grid(exactly_symmetric(s.grid_a));
    }
    return s.finish_setup(t0);
}

SetupResult Solver::setup(CsrMatrix a) {
    check_can_set_up(impl_.get());
    check_one_process(impl_->comm);
    check_csr(a);
    Impl& s = *impl_;
    const ProblemOptions& p = s.given.problem;
    const bool has_grid = p.grid[0] != 0;
    if (s.given.method == MethodKind::structured && !has_grid) {
        throw InvalidInput(
            "Solver::setup: method structured with a CsrMatrix needs options.problem.grid (the "
            "grid the matrix lives on)");
    }
    s.restart();
    const ThreadScope thread_scope(s.given.threads);
    const auto t0 = Clock::now();
    const bool symmetric = is_symmetric(a);
    if (has_grid && s.given.method != MethodKind::amg) {
        s.grid_a = sgdia_from_csr(a, Box{p.grid[0], p.grid[1], p.grid[2]},
                                  std::max(p.components, 1), kSource);
        a = CsrMatrix();
        s.setup_grid(symmetric);
    } else {
        s.csr_a = std::move(a);
        s.setup_amg(symmetric);
    }
    return s.finish_setup(t0);
}

SetupResult Solver::setup(CsrMatrix rows, std::int64_t first_row) {
    if (impl_ == nullptr) throw InvalidInput("Solver::setup: this Solver was moved from");
    if (!dist::distributed(impl_->comm)) {
        if (first_row != 0 || rows.rows != rows.cols) {
            throw InvalidInput(fmt::format(
                "Solver::setup: rows {} .. {} of a matrix with {} columns, on one process: "
                "without mpirun the process gives all of A (first_row 0, as many rows as "
                "columns)",
                first_row, first_row + rows.rows - 1, rows.cols));
        }
        return setup(std::move(rows));
    }
    Impl& s = *impl_;
    if (s.given.method == MethodKind::structured || s.given.problem.grid[0] != 0) {
        throw Unsupported(
            "Solver::setup: the processes' rows take the AMG path; for the structured path each "
            "process gives its box of the grid (setup(block, first_cell, grid))");
    }
    dist::agreed(
        [&] { check_csr_rows(rows, first_row, fmt::format("rank {}: ", dist::rank(s.comm))); },
        s.comm);
    s.restart();
    const ThreadScope thread_scope(s.given.threads);
    const auto t0 = Clock::now();
    s.rows_pattern.rows = rows.rows;
    s.rows_pattern.cols = rows.cols;
    s.rows_pattern.row_ptr = rows.row_ptr;
    s.rows_pattern.col = rows.col;
    s.first_row = first_row;
    BlockSizeChoice block;
    s.setup_rows(std::move(rows), block);
    s.setup_info.block_size = block.block;
    s.setup_info.block_size_reason = block.why;
    return s.finish_processes_setup(t0);
}

SetupResult Solver::setup(SgDiaMatrix<double> block, std::array<int, 3> first_cell, Box grid) {
    check_can_set_up(impl_.get());
    Impl& s = *impl_;
    const Box box = block.box();
    const auto cells = [&] {
        return fmt::format("cells ({},{},{}) .. ({},{},{}) of a {}x{}x{} grid", first_cell[0],
                           first_cell[1], first_cell[2], first_cell[0] + box.nx - 1,
                           first_cell[1] + box.ny - 1, first_cell[2] + box.nz - 1, grid.nx, grid.ny,
                           grid.nz);
    };
    if (!dist::distributed(s.comm)) {
        if (first_cell != std::array<int, 3>{0, 0, 0} || !(box == grid)) {
            throw InvalidInput(fmt::format(
                "Solver::setup: {}, on one process: without mpirun the process gives the whole "
                "grid (first cell 0,0,0)",
                cells()));
        }
        return setup(std::move(block));
    }
    if (s.given.method == MethodKind::amg) {
        throw Unsupported(
            "Solver::setup: method amg with the processes' boxes; the AMG path takes each "
            "process's CSR rows (setup(rows, first_row))");
    }
    dist::agreed(
        [&] {
            const std::string where = fmt::format("Solver::setup: rank {}", dist::rank(s.comm));
            bool inside = grid.nx >= 1 && grid.ny >= 1 && grid.nz >= 1;
            for (int d = 0; d < 3; ++d) {
                const int lo = first_cell[static_cast<std::size_t>(d)];
                inside = inside && lo >= 0 && box.extent(d) >= 1 &&
                         std::int64_t{lo} + box.extent(d) <= grid.extent(d);
            }
            if (!inside) {
                throw InvalidInput(fmt::format(
                    "{}: its block holds {}: every process gives a box of at least one cell "
                    "inside the grid",
                    where, cells()));
            }
            zero_outside_grid(block, first_cell, grid);  // the neighbours' cells stay
            check_finite(block, where);
        },
        s.comm);
    s.restart();
    const ThreadScope thread_scope(s.given.threads);
    const auto t0 = Clock::now();
    s.take(std::make_unique<dist::GridBlockSystem>(std::move(block), first_cell, grid, s.comm,
                                                   s.resolved, s.prepared));
    s.boxes = true;
    return s.finish_processes_setup(t0);
}

SolveResult Solver::solve(std::span<const double> b, std::span<double> x) {
    if (!ready()) throw InvalidInput("Solver::solve: no matrix yet; call setup() first");
    Impl& s = *impl_;
    dist::agreed(
        [&] {  // under mpirun: every process throws what one process found
            check_vector(b, s.rows, "b", s.where("solve"), s.holder());
            check_vector(x, s.rows, "x", s.where("solve"), s.holder());
        },
        s.comm);
    const ThreadScope thread_scope(s.given.threads);
    const auto t0 = Clock::now();
    if (s.processes) s.processes->reset_comm();
    SolveResult out;
    // A hierarchy that the guard could not rebuild in the last solve is built again as first.
    if (!s.state->m) s.state = guarded_setup(s.build, s.resolved, out);
    // b and x in the solver's order (renumbered on the AMG path); b' = 2^eb (+-b) as setup took
    // A (prepare_rhs), x' = 2^(eb - ea) x, and x = 2^(ea - eb) x' afterwards.
    const auto n = static_cast<std::size_t>(s.rows);
    s.b_work.resize(n);
    s.x_work.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        s.b_work[i] = b[s.caller_row(i)];
        s.x_work[i] = x[s.caller_row(i)];
    }
    const int ea = s.prepared.a_exponent;
    out.b_exponent = prepare_rhs(s.b_work, s.prepared.negated, s.comm, &out.b_flushed);
    scale_by_power_of_two(s.x_work, out.b_exponent - ea);
    const bool x_given = !dist::all_ranks(
        std::none_of(s.x_work.begin(), s.x_work.end(), [](double v) { return v != 0.0; }), s.comm);
    out.x.swap(s.x_work);
    try {
        if (s.grid64) s.run(*s.grid64, x_given, out);
        if (s.grid32) s.run(*s.grid32, x_given, out);
        if (s.csr64) s.run(*s.csr64, x_given, out);
        if (s.csr32) s.run(*s.csr32, x_given, out);
        if (s.processes && s.processes->op64()) s.run(*s.processes->op64(), x_given, out);
        if (s.processes && s.processes->op32()) s.run(*s.processes->op32(), x_given, out);
    } catch (...) {
        out.x.swap(s.x_work);
        throw;
    }
    for (std::size_t i = 0; i < n; ++i)
        x[s.caller_row(i)] = std::ldexp(out.x[i], ea - out.b_exponent);
    out.x.swap(s.x_work);
    out.x.clear();
    out.total_s = std::chrono::duration<double>(Clock::now() - t0).count();
    out.other_s = std::max(0.0, out.total_s - out.setup_s - out.preconditioner_s);
    out.problem = s.boxes          ? "structured boxes (Solver)"
                  : s.structured() ? "structured (Solver)"
                  : s.processes    ? "csr rows (Solver)"
                                   : "csr (Solver)";
    out.rows = s.processes ? s.processes->global_rows() : s.rows;
    out.nnz = s.nnz;
    out.options = s.resolved;
    out.negated = s.prepared.negated;
    out.a_exponent = ea;
    out.a_flushed = s.prepared.a_flushed;
    out.reordered = s.setup_info.reordered;
    out.block_size = s.setup_info.block_size;
    out.block_size_reason = s.setup_info.block_size_reason;
    out.auto_reason = s.setup_info.auto_reason;
    out.operator_storage = s.resolved.precision.krylov;  // the AMG path's; the structured below
    if (s.grid64) s.grid64->report(out);
    if (s.grid32) s.grid32->report(out);
    if (s.processes) {
        s.processes->report(out);
        out.partition = s.processes->partition(out.levels.size());
    }
    return out;
}

}  // namespace mpmg

namespace mpmg {

void Solver::apply(std::span<const double> r, std::span<double> z) {
    if (!ready()) throw InvalidInput("Solver::apply: no matrix yet; call setup() first");
    Impl& s = *impl_;
    dist::agreed(
        [&] {
            check_vector(r, s.rows, "r", s.where("apply"), s.holder());
            if (static_cast<std::int64_t>(z.size()) != s.rows) {
                throw InvalidInput(fmt::format("{}: z has {} entries; {} {} rows", s.where("apply"),
                                               z.size(), s.holder(), s.rows));
            }
        },
        s.comm);
    const ThreadScope thread_scope(s.given.threads);
    if (!s.state->m) {
        SolveResult ignored;
        s.state = guarded_setup(s.build, s.resolved, ignored);
    }
    // As solve's b and x: setup took A' = 2^ea (+-A) (renumbered), the hierarchy approximates
    // A'^{-1}, so z = 2^(ea - eb) M (2^eb (+-r)) approximates A^{-1} r.
    const auto n = static_cast<std::size_t>(s.rows);
    s.b_work.resize(n);
    s.x_work.resize(n);
    for (std::size_t i = 0; i < n; ++i) s.b_work[i] = r[s.caller_row(i)];
    const int eb = prepare_rhs(s.b_work, s.prepared.negated, s.comm);
    s.state->m->apply(s.b_work.data(), s.x_work.data());
    dist::agreed(
        [&] {
            const auto bad = std::find_if(s.x_work.begin(), s.x_work.end(),
                                          [](double v) { return !std::isfinite(v); });
            if (bad != s.x_work.end()) {
                throw NumericalError(fmt::format(
                    "Solver::apply: one cycle of the hierarchy gave a non-finite value at row {}; "
                    "its "
                    "solve would have rebuilt it (Solver::solve)",
                    s.first_row + static_cast<std::int64_t>(s.caller_row(
                                      static_cast<std::size_t>(bad - s.x_work.begin())))));
            }
        },
        s.comm);
    const int shift = s.prepared.a_exponent - eb;
    for (std::size_t i = 0; i < n; ++i) z[s.caller_row(i)] = std::ldexp(s.x_work[i], shift);
}

}  // namespace mpmg

namespace mpmg {

SetupResult Solver::update_values(std::span<const double> values) {
    if (!ready()) throw InvalidInput("Solver::update_values: no matrix yet; call setup() first");
    Impl& s = *impl_;
    if (s.structured()) {
        throw InvalidInput(
            "Solver::update_values: the last setup took the structured path, which has no "
            "aggregates to keep; call setup() with the new matrix");
    }
    if (s.processes) return s.update_rows(values);
    if (s.user_nnz < 0) {
        throw InvalidInput(
            "Solver::update_values: the last setup took an SgDiaMatrix, whose entries have no "
            "CSR order of the caller's; call setup() with the new matrix");
    }
    if (static_cast<std::int64_t>(values.size()) != s.user_nnz) {
        throw InvalidInput(fmt::format(
            "Solver::update_values: {} values; the matrix of the last setup has {} entries",
            values.size(), s.user_nnz));
    }
    for (std::size_t k = 0; k < values.size(); ++k) {
        if (!std::isfinite(values[k])) {
            throw InvalidInput(
                fmt::format("Solver::update_values: values[{}] = {}: every entry must be finite", k,
                            values[k]));
        }
        if (!s.kept_entry[k] && values[k] != 0.0) {
            throw InvalidInput(fmt::format(
                "Solver::update_values: values[{}] = {} where the last setup had a stored zero "
                "(left out of the hierarchy's pattern); call setup() with the new matrix",
                k, values[k]));
        }
    }
    const ThreadScope thread_scope(s.given.threads);
    const auto t0 = Clock::now();
    for (std::size_t k = 0; k < s.value_source.size(); ++k) {
        s.csr_a.val[k] = values[static_cast<std::size_t>(s.value_source[k])];
    }
    // The choices the values make are made again (a symmetric pattern may now hold
    // nonsymmetric values); the pattern's (zeros left out, renumbering, block size) and the
    // aggregates stay.
    s.state.reset();
    const MultigridOptions pattern_mg = s.resolved.multigrid;
    s.resolved = s.given;
    s.resolved.method = MethodKind::amg;
    s.resolved.multigrid.block_size = pattern_mg.block_size;
    s.resolved.multigrid.reorder = pattern_mg.reorder;
    // Symmetric as setup() judged the caller's matrix (where a stored zero without a mirror
    // already made it nonsymmetric, GMRES stays), and the new values still so.
    s.resolve_amg(s.setup_symmetric && is_symmetric(s.csr_a, true));
    SetupResult out = s.finish_setup(t0);
    out.reused_aggregates = true;
    return out;
}

}  // namespace mpmg
