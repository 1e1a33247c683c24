#include "api/problem_input.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <span>

#include "core/power_of_two.hpp"
#include "distributed/mpi_env.hpp"
#include "io/matrix_market.hpp"
#include "kernels/setup_simd.hpp"
#include "mpmg/errors.hpp"
#include "multigrid/cycle.hpp"
#include "structured/coarsen.hpp"
#include "structured/from_csr.hpp"
#include "unstructured/drop_zeros.hpp"
#include "unstructured/saddle_point.hpp"

namespace mpmg {
namespace {

// b from --rhs (checked against the rows), else b = A * 1 with the exact solution known.
// When 1 is in A's null space (pure Neumann: rows summing to zero), A * 1 is rounding noise, not
// a right-hand side; then b = A x with x_i = 1 + (i mod 10) / 10, a consistent system whose
// solution is not unique (so no exact solution is reported).
void right_hand_side(const CsrMatrix& a, const ProblemOptions& po, std::vector<double>& b,
                     std::vector<double>& x_exact) {
    if (po.rhs.empty()) {
        x_exact.assign(static_cast<std::size_t>(a.rows), 1.0);
        b.resize(x_exact.size());
        a.multiply(x_exact.data(), b.data());
        // Both sums of squares times f^2 (a power of two: the same test at any scale of A).
        const double f = inverse_power_of_two(largest_abs(a.val));
        double b2 = 0.0, a2 = 0.0;
        for (double v : b) b2 += (f * v) * (f * v);
        for (double v : a.val) a2 += (f * v) * (f * v);
        if (b2 <= 1e-20 * a2) {  // |A 1| <= 1e-10 |A|_F
            for (std::size_t i = 0; i < x_exact.size(); ++i) {
                x_exact[i] = 1.0 + static_cast<double>(i % 10) / 10.0;
            }
            a.multiply(x_exact.data(), b.data());
            x_exact.clear();
        }
        return;
    }
    b = read_vector_market(po.rhs);
    if (static_cast<std::int64_t>(b.size()) != a.rows) {
        throw InvalidInput(fmt::format("{}: right-hand side has {} entries but {} has {} rows",
                                       po.rhs, b.size(), po.matrix, a.rows));
    }
}

}  // namespace

StructuredProblem load_structured(const ProblemOptions& po) {
    bool stored_symmetric = false;
    const CsrMatrix csr = read_matrix_market(po.matrix, 0, stored_symmetric);
    const int r = std::max(po.components, 1);
    StructuredProblem p;
    p.name = po.matrix;
    p.solver = stored_symmetric || is_symmetric(csr) ? SolverKind::cg : SolverKind::gmres;
    p.a = sgdia_from_csr(csr, Box{po.grid[0], po.grid[1], po.grid[2]}, r, po.matrix);
    right_hand_side(csr, po, p.b, p.x_exact);
    return p;
}

CsrProblem load_csr(const ProblemOptions& po) {
    CsrProblem p;
    if (po.matrix.empty()) {  // a built-in problem, converted for the AMG path
        StructuredProblem s = make_problem(po);
        p.name = s.name;
        p.a = to_csr(s.a);
        p.b = std::move(s.b);
        p.x_exact = std::move(s.x_exact);
        p.solver = s.solver;
        return p;
    }
    p.name = po.matrix;
    bool stored_symmetric = false;
    p.a = read_matrix_market(po.matrix, 0, stored_symmetric);
    if (p.a.rows != p.a.cols) {
        throw InvalidInput(
            fmt::format("{}: matrix is {} x {}; a linear solve needs a square matrix", po.matrix,
                        p.a.rows, p.a.cols));
    }
    // A file stored symmetric is exactly symmetric (its zeros dropped in mirrored pairs); any
    // other is measured (the stored patterns compared, so before its zeros are dropped).
    p.exactly_symmetric = stored_symmetric;
    p.solver = p.exactly_symmetric || is_symmetric(p.a) ? SolverKind::cg : SolverKind::gmres;
    drop_zeros(p.a);
    right_hand_side(p.a, po, p.b, p.x_exact);
    return p;
}

bool diagonal_negative(const SgDiaMatrix<double>& a) {
    const int c = a.stencil().center();
    if (c < 0) return a.rows() == 0;
    const int r = a.block();
    const std::int64_t cells = a.box().cells();
    for (std::int64_t cell = 0; cell < cells; ++cell) {
        for (int k = 0; k < r; ++k) {
            if (!(a.value(c, cell, k, k) < 0.0)) return false;
        }
    }
    return true;
}

bool diagonal_negative(const CsrMatrix& a, std::int64_t first_row) {
    for (std::int64_t i = 0; i < a.rows; ++i) {
        const auto begin = a.col.begin() + a.row_ptr[i];
        const auto end = a.col.begin() + a.row_ptr[i + 1];
        const auto p = std::lower_bound(begin, end, first_row + i);
        if (p == end || *p != first_row + i ||
            !(a.val[static_cast<std::size_t>(p - a.col.begin())] < 0.0)) {
            return false;
        }
    }
    return true;
}

namespace {
void negate_values(std::span<double> v) {
    for (double& x : v) x = 0.0 - x;  // not -x: a stored +0 stays +0
}
}  // namespace

void negate(SgDiaMatrix<double>& a, std::vector<double>& b) {
    negate_values(a.values());
    negate_values(b);
}

void negate(CsrMatrix& a, std::vector<double>& b) {
    negate_values(a.val);
    negate_values(b);
}

double largest_abs(std::span<const double> v) {
    return kernels::largest_finite_abs(v.data(), static_cast<std::int64_t>(v.size()));
}

int normalising_exponent(double m) {
    if (!(m > 0.0) || !std::isfinite(m)) return 0;
    const int e = std::ilogb(m);  // m in [2^e, 2^(e+1))
    if (e >= -kSafeExponent && e < kSafeExponent) return 0;
    return -e;
}

void scale_by_power_of_two(std::span<double> v, int e) {
    if (e == 0) return;
    for (double& x : v) x = std::ldexp(x, e);
}

namespace {

/// Whether 2^e turns the smallest nonzero magnitude (+Inf: none) of some process into zero.
bool flushed_any(double smallest, int e, const Communicator& comm) {
    const bool mine = e < 0 && std::isfinite(smallest) && std::ldexp(smallest, e) == 0.0;
    return dist::max_all_ranks(mine ? 1.0 : 0.0, comm) > 0.0;
}

/// prepare_matrix for A's values, once `negative` (this process's rows) is known.
PreparedMatrix prepare_values(std::span<double> values, bool negative, const Communicator& comm) {
    PreparedMatrix m;
    m.negated = dist::all_ranks(negative, comm);
    if (m.negated) negate_values(values);
    const kernels::FiniteRange range =
        kernels::finite_range(values.data(), static_cast<std::int64_t>(values.size()));
    m.a_exponent = normalising_exponent(dist::max_all_ranks(range.largest, comm));
    scale_by_power_of_two(values, m.a_exponent);
    // The smallest nonzero magnitude as the scaling left it (the same ldexp); +Inf when none.
    m.a_normal = !range.nonfinite &&
                 !(std::ldexp(range.smallest, m.a_exponent) < std::numeric_limits<double>::min());
    m.a_flushed = flushed_any(range.smallest, m.a_exponent, comm);
    return m;
}

}  // namespace

PreparedMatrix prepare_matrix(SgDiaMatrix<double>& a, const Communicator& comm) {
    return prepare_values(a.values(), diagonal_negative(a), comm);
}

PreparedMatrix prepare_matrix(CsrMatrix& a, std::int64_t first_row, const Communicator& comm) {
    return prepare_values(a.val, diagonal_negative(a, first_row), comm);
}

DiagonalSigns diagonal_signs(const CsrMatrix& a, std::int64_t first_row, const Communicator& comm) {
    DiagonalSigns s;
    for (std::int64_t i = 0; i < a.rows; ++i) {
        double d = 0.0;
        bool nonzero = false;
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            const double v = a.val[static_cast<std::size_t>(p)];
            nonzero = nonzero || v != 0.0;
            if (a.col[static_cast<std::size_t>(p)] == first_row + i) d = v;
        }
        if (d > 0.0) {
            ++s.positive;
        } else if (d < 0.0) {
            ++s.negative;
        } else if (nonzero) {
            if (s.zero++ == 0) s.first_zero = first_row + i;
        }
    }
    if (dist::distributed(comm)) {
        // Counts and rows far below 2^53: exact as doubles. The lowest row with a zero diagonal
        // is minus the largest of minus each process's first.
        double sums[3] = {static_cast<double>(s.positive), static_cast<double>(s.negative),
                          static_cast<double>(s.zero)};
        dist::sum_all_ranks(sums, comm);
        const double lowest =
            -dist::max_all_ranks(s.zero > 0 ? -static_cast<double>(s.first_zero)
                                            : -std::numeric_limits<double>::infinity(),
                                 comm);
        s.positive = static_cast<std::int64_t>(sums[0]);
        s.negative = static_cast<std::int64_t>(sums[1]);
        s.zero = static_cast<std::int64_t>(sums[2]);
        s.first_zero = s.zero > 0 ? static_cast<std::int64_t>(lowest) : -1;
    }
    return s;
}

std::string resolve_amg_auto(SolverOptions& o, SolverKind symmetric_solver,
                             const DiagonalSigns& s) {
    const bool mixed = s.positive > 0 && s.negative > 0;
    std::vector<std::string> changed;
    if (o.solver == SolverKind::automatic) {
        o.solver = symmetric_solver;
        if (symmetric_solver == SolverKind::cg && (s.zero > 0 || mixed)) {
            o.solver = SolverKind::gmres;
            changed.emplace_back("solver gmres (A is symmetric but not definite)");
        }
    }
    if (o.multigrid.smoother == SmootherKind::automatic) {
        o.multigrid.smoother = SmootherKind::symgs;
        if (s.zero > 0) {
            o.multigrid.smoother = SmootherKind::l1_jacobi;
            changed.emplace_back("smoother l1-jacobi (Gauss-Seidel divides by the diagonal)");
        }
    }
    if (changed.empty()) return {};
    const std::string why =
        s.zero > 0
            ? fmt::format("A's diagonal entry is zero on {} row{} (first: row {}, zero-based)",
                          s.zero, s.zero == 1 ? "" : "s", s.first_zero)
            : fmt::format("A's diagonal has {} positive and {} negative entries", s.positive,
                          s.negative);
    return fmt::format("{}: {}", why, fmt::join(changed, ", "));
}

/// --saddle-point on the AMG path: `auto` takes the block preconditioner for an A that
/// saddle_split accepts, on one process, with SymGS in the blocks and GMRES where those are
/// `auto` (the blocks have nonzero diagonals; the preconditioner is not symmetric); `block`
/// insists (an error where it cannot be had); `none` keeps one AMG on all of A. Returns why
/// `auto` chose what it chose ("" when nothing).
std::string joined_reasons(std::string first, const std::string& then) {
    if (then.empty()) return first;
    return first.empty() ? then : fmt::format("{}; {}", first, then);
}

SaddleChoice resolve_saddle_point(SolverOptions& o, const CsrMatrix& a, bool distributed) {
    SaddlePointKind& kind = o.multigrid.saddle_point;
    if (kind == SaddlePointKind::none) return {};
    if (distributed) {
        if (kind == SaddlePointKind::block) {
            throw Unsupported(
                "--saddle-point block: the saddle-point block preconditioner takes the whole "
                "matrix on one process; for rows distributed over processes (mpirun, "
                "Solver::setup(rows, first_row)) use --saddle-point none (one AMG on all of A)");
        }
        kind = SaddlePointKind::none;
        return {};
    }
    std::optional<SaddleSplit> split = saddle_split(a);
    // Constraints that each pin one unknown (B's rows one entry each): S = B diag(A)^-1 B^T is
    // diagonal where the true Schur complement, A^-1 at the pinned unknowns, is dense, and one
    // AMG solves them (a 1D Laplacian of 1000 points pinned at every other: 34 GMRES
    // iterations, with the blocks not converged in 200).
    if (split && kind == SaddlePointKind::automatic &&
        split->pins == static_cast<std::int64_t>(split->p.size())) {
        split.reset();
    }
    if (!split) {
        if (kind == SaddlePointKind::block) {
            throw InvalidInput(fmt::format(
                "--saddle-point block: A ({} rows) is not a saddle point the block "
                "preconditioner takes: it needs rows whose diagonal entry is zero, at most as "
                "many as the others, each coupled to a row with a nonzero diagonal",
                a.rows));
        }
        kind = SaddlePointKind::none;
        return {};
    }
    if (o.solver == SolverKind::cg) {
        throw InvalidInput(
            "--solver cg: the saddle-point block preconditioner is not symmetric; use --solver "
            "gmres (or auto), or --saddle-point none");
    }
    std::vector<std::string> changed;
    if (kind == SaddlePointKind::automatic) changed.emplace_back("the block preconditioner");
    kind = SaddlePointKind::block;
    if (o.solver == SolverKind::automatic) {
        o.solver = SolverKind::gmres;
        changed.emplace_back("solver gmres");
    }
    if (o.multigrid.smoother == SmootherKind::automatic) {
        o.multigrid.smoother = SmootherKind::symgs;
        changed.emplace_back("smoother symgs in its blocks");
    }
    SaddleChoice out;
    if (!changed.empty()) {
        out.why = fmt::format(
            "A's diagonal is zero on {} of {} rows, each coupled to a row with a nonzero "
            "diagonal: a saddle point [[A, E], [B, C]] (AMG on A and on B diag(A)^-1 E - C): {}",
            split->p.size(), a.rows, fmt::join(changed, ", "));
    }
    out.split = std::move(split);
    return out;
}

std::string amg_defaults(SolverOptions& o, SolverKind problem_solver, const CsrMatrix& a,
                         std::int64_t first_row, std::int64_t rows, const Communicator& comm) {
    std::string why;
    if (o.solver == SolverKind::automatic || o.multigrid.smoother == SmootherKind::automatic) {
        // A process holding every row (a matrix read whole by each) counts them alone.
        why = resolve_amg_auto(
            o, problem_solver,
            diagonal_signs(a, first_row, a.rows == rows ? Communicator::self() : comm));
    }
    if (o.multigrid.cycle == CycleKind::automatic) {
        DiagonalExtremes e = diagonal_extremes(a, first_row);
        e.largest = dist::max_all_ranks(e.largest, comm);
        e.smallest = 1.0 / dist::max_all_ranks(1.0 / e.smallest, comm);
        o.multigrid.cycle = resolve_cycle(o.multigrid.cycle, true, rows, e.spread());
    }
    return why;
}

int prepare_rhs(std::span<double> b, bool negated, const Communicator& comm, bool* flushed) {
    if (negated) negate_values(b);
    const kernels::FiniteRange range =
        kernels::finite_range(b.data(), static_cast<std::int64_t>(b.size()));
    const int e = normalising_exponent(dist::max_all_ranks(range.largest, comm));
    scale_by_power_of_two(b, e);
    if (flushed != nullptr) *flushed = flushed_any(range.smallest, e, comm);
    return e;
}

}  // namespace mpmg
