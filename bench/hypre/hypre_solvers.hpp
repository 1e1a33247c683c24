// The hypre side of `mpmg bench vs-hypre` (compiled only when CMake finds hypre and MPI; it
// defines MPMG_HAVE_HYPRE). mpmg's SG-DIA FP64 matrix of a built-in problem is handed to hypre
// through its Struct interface (PFMG, SMG: one HYPRE_StructStencil entry per SG-DIA offset,
// nonsymmetric storage, the same coefficients) and its IJ interface (BoomerAMG: the same
// coefficients row by row), and solved with hypre's PCG or GMRES from a zero initial guess.
// MPI is initialised lazily (one rank) and finalised once at exit; nothing else in mpmg uses it.
#pragma once

#include <string>
#include <vector>

#include "io/problems.hpp"
#include "mpmg/options.hpp"
#include "mpmg/sgdia_matrix.hpp"

namespace mpmg::bench::hypre {

/// hypre's preconditioners measured against mpmg.
enum class Preconditioner {
    pfmg,       ///< Struct PFMG: Galerkin coarse operators, 1+1 sweeps (see pfmg_red_black)
    smg,        ///< Struct SMG with hypre's defaults (1+1 plane-relaxation sweeps)
    boomeramg,  ///< BoomerAMG tuned for 3D: HMIS, ext+i (<= 4 per row), threshold 0.5, hybrid SymGS
    boomeramg_default,  ///< BoomerAMG with hypre 2.26's defaults (HMIS, ext+i, 0.25, l1-GS 13/14)
};

/// "PFMG", "SMG", "BoomerAMG", "BoomerAMG-default".
std::string name(Preconditioner p);
/// PFMG's smoother: symmetric red-black GS (hypre's relax 2) for symmetric 7-point problems
/// (solved with CG), else weighted Jacobi (relax 1): hypre's red-black GS assumes a 7-point
/// stencil, and on the nonsymmetric oil it stagnated (GMRES at 4e-5 after 200 iterations, 12^3).
bool pfmg_red_black(int stencil_size, SolverKind krylov);
/// The settings in words (for the report).
std::string settings(Preconditioner p, int stencil_size, SolverKind krylov);

struct Settings {
    SolverKind krylov = SolverKind::cg;  ///< cg (hypre PCG) or gmres (hypre GMRES)
    double rtol = 1e-8;                  ///< ||r||_2 / ||b||_2 (PCG with two-norm criterion)
    int max_iter = 500;
    int restart = 30;  ///< GMRES k_dim (mpmg's SolverOptions::restart)
};

struct Result {
    int iterations = 0;
    double assembly_s = 0.0;  ///< building hypre's matrix and vectors (not in total_s)
    double setup_s = 0.0;     ///< Krylov + preconditioner setup
    double solve_s = 0.0;
    double relres = 0.0;    ///< hypre's own final relative residual norm
    std::vector<double> x;  ///< the solution, in mpmg's cell order
};

/// Solves p.a x = p.b with hypre. Throws mpmg::Unsupported for block problems (r > 1) and
/// mpmg::NumericalError when hypre reports an error other than non-convergence.
Result solve(const StructuredProblem& p, Preconditioner pre, const Settings& s);

/// y = A x with hypre's Struct assembly of `a` (HYPRE_StructMatrixMatvec); for the tests.
std::vector<double> struct_matvec(const SgDiaMatrix<double>& a, const std::vector<double>& x);
/// y = A x with hypre's IJ / ParCSR assembly of `a` (HYPRE_ParCSRMatrixMatvec); for the tests.
std::vector<double> ij_matvec(const SgDiaMatrix<double>& a, const std::vector<double>& x);

/// HYPRE_RELEASE_VERSION, and whether this hypre was built with OpenMP (Debian's is not).
std::string version();
bool uses_openmp();

}  // namespace mpmg::bench::hypre
