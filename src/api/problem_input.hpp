// What to solve, as each path needs it: a structured problem (built-in, or a Matrix Market file
// on --grid) or a CSR problem (a Matrix Market file, or a built-in one converted for AMG).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "io/problems.hpp"
#include "mpmg/communicator.hpp"
#include "mpmg/csr_matrix.hpp"
#include "mpmg/options.hpp"
#include "unstructured/saddle_point.hpp"

namespace mpmg {

struct CsrProblem {
    std::string name;
    CsrMatrix a;
    std::vector<double> b;
    std::vector<double> x_exact;  ///< empty when unknown (a --rhs was given)
    SolverKind solver = SolverKind::cg;
    /// A = A^T to the bit, known without measuring it: a file stored symmetric
    /// (io/matrix_market.hpp). False: not known (the hierarchy measures it
    /// where it needs to).
    bool exactly_symmetric = false;
};

/// --matrix A.mtx [--rhs b.mtx] --grid NX,NY,NZ[,R]: the file's matrix on the structured path.
StructuredProblem load_structured(const ProblemOptions& po);

/// --matrix A.mtx [--rhs b.mtx], or a built-in problem as CSR (for --method amg).
CsrProblem load_csr(const ProblemOptions& po);

/// True when every row's diagonal entry is negative (on a block problem, every scalar diagonal
/// entry of the r x r diagonal blocks): a negative (semi)definite operator such as the Laplacian
/// Δ assembled without the minus sign of -Δ. CG's (r, z) > 0, the diagonal scaling's square
/// roots and the AMG's strength measures all need -A instead. True for no rows.
bool diagonal_negative(const SgDiaMatrix<double>& a);
/// The same for CSR rows numbered first_row, first_row + 1, ... (columns global); a row without
/// a stored diagonal entry is not negative.
bool diagonal_negative(const CsrMatrix& a, std::int64_t first_row = 0);

/// A := -A and b := -b, exactly (zeros stay +0): -A x = -b has the solution of A x = b, and
/// the same relative residuals.
void negate(SgDiaMatrix<double>& a, std::vector<double>& b);
void negate(CsrMatrix& a, std::vector<double>& b);

/// How the solve takes A in place of the caller's (prepare_matrix).
struct PreparedMatrix {
    bool negated = false;  ///< -A: the diagonal was negative on every row
    int a_exponent = 0;    ///< A scaled by 2^a_exponent (0: not scaled)
    /// Every value of this process's scaled A is zero or a normal FP64 number
    /// (StructuredProblem::a_normal).
    bool a_normal = false;
    /// The scale turned some nonzero value of A into zero: A's magnitudes span more than FP64
    /// holds below the largest one brought to [1, 2) (any process's, on all of them).
    bool a_flushed = false;
};

/// The system the solve takes in place of A x = b (collective over `comm`, MPI_COMM_WORLD by
/// default, when it has several processes; x and the relative residuals are those of A x = b):
///  - -A x = -b when A's diagonal is negative on every process's rows (a negative definite
///    operator: Δ assembled for -Δ, or saylr3);
///  - A' = 2^ea A and b' = 2^eb b when the largest |a_ij| or |b_i| lies outside [2^-64, 2^64]
///    (normalising_exponent): the setup's products of entries and FP32's range stay finite and
///    ||b||^2 nonzero; then x = 2^(ea - eb) x'. Exact: powers of two.
/// prepare_matrix does A's part (CSR rows numbered from first_row), prepare_rhs b's, returning
/// eb; mpmg::solve calls both once, mpmg::Solver the first at setup and the second per solve.
PreparedMatrix prepare_matrix(SgDiaMatrix<double>& a, const Communicator& comm = {});
PreparedMatrix prepare_matrix(CsrMatrix& a, std::int64_t first_row = 0,
                              const Communicator& comm = {});
/// `flushed` (when given): the scale turned some nonzero b_i into zero (on any process).
int prepare_rhs(std::span<double> b, bool negated, const Communicator& comm = {},
                bool* flushed = nullptr);

/// How the diagonal entries of A's rows are signed (over all processes' rows).
struct DiagonalSigns {
    std::int64_t positive = 0, negative = 0;
    /// Rows whose diagonal entry is zero or not stored while some other entry is nonzero (a
    /// saddle point's constraint rows); -1 / 0 when none.
    std::int64_t zero = 0, first_zero = -1;
};
/// The signs of this process's rows `a` (row i's diagonal in column first_row + i), summed over
/// the processes of `comm` (collective when it has several). Rows without a nonzero entry
/// (A singular) count in none.
DiagonalSigns diagonal_signs(const CsrMatrix& a, std::int64_t first_row = 0,
                             const Communicator& comm = {});

/// The solver and smoother that `auto` picks on the AMG path for A with diagonal signs `s`,
/// `symmetric_solver` being the problem's (CG when A is symmetric); returns why, where the
/// diagonal changed the choice (empty otherwise):
///  - a zero diagonal entry (a saddle point) or diagonal entries of both signs prove that A is
///    not definite (a definite A has e_i^T A e_i of one sign), so CG gives way to GMRES;
///  - Gauss-Seidel divides by the diagonal: with a zero entry, l1-Jacobi (which divides by the
///    row's l1 norm) smooths instead of SymGS.
std::string resolve_amg_auto(SolverOptions& o, SolverKind symmetric_solver, const DiagonalSigns& s);

/// The AMG path's automatic choices for A, this process's rows `a` (row i's diagonal in column
/// first_row + i) of `rows` in all: the problem's solver (CG when A is symmetric) and SymGS as
/// What resolve_saddle_point decided: why (`auto`'s choices; "" when it made none) and, for
/// saddle_point block, A's split.
struct SaddleChoice {
    std::string why;
    std::optional<SaddleSplit> split;
};

/// --saddle-point on the AMG path: `auto` takes the block preconditioner for an A that
/// saddle_split accepts, on one process (not `distributed`), with SymGS in the blocks and GMRES
/// where those are `auto`; `block` insists (InvalidInput / Unsupported where it cannot be had,
/// and with CG); `none` keeps one AMG. Leaves saddle_point block or none. Before amg_defaults,
/// whose choices it takes over.
SaddleChoice resolve_saddle_point(SolverOptions& o, const CsrMatrix& a, bool distributed);

/// `first` and `then`, joined by "; " when both say something (auto reasons).
std::string joined_reasons(std::string first, const std::string& then);

/// resolve_amg_auto() adapts them, the cycle (resolve_cycle, from all processes' diagonals;
/// collective over `comm` when it has several processes). Returns resolve_amg_auto()'s reason.
std::string amg_defaults(SolverOptions& o, SolverKind problem_solver, const CsrMatrix& a,
                         std::int64_t first_row, std::int64_t rows, const Communicator& comm = {});

/// Input magnitudes the solve takes as they are: [2^-64, 2^64], about [5.4e-20, 1.8e19]. Beyond
/// them the FP64 setup and the FP32 preconditioner meet overflow (squares and products of
/// entries in the scaling and the Galerkin products, FP32's 3.4e38) or underflow (||b||^2 below
/// FP64's smallest number: b taken for zero).
inline constexpr int kSafeExponent = 64;

/// The largest |v| over finite values (0 when there are none).
double largest_abs(std::span<const double> v);

/// e with 2^e m in [1, 2) when m > 0 is finite and outside [2^-kSafeExponent, 2^kSafeExponent];
/// 0 otherwise (m inside, zero, Inf or NaN).
int normalising_exponent(double m);

/// v := 2^e v for every value, exactly (std::ldexp) unless a result leaves FP64's normal range.
void scale_by_power_of_two(std::span<double> v, int e);

}  // namespace mpmg
