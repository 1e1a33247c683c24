// Lazy MPI and hypre start-up, hypre error checks, names of the measured preconditioners.
#include "hypre/hypre_common.hpp"

#include <HYPRE_config.h>
#include <fmt/format.h>
#include <mpi.h>

#include <cstdlib>
#include <limits>
#include <mutex>
#include <string>

#include "hypre/hypre_ij.hpp"
#include "hypre/hypre_solvers.hpp"
#include "hypre/hypre_struct.hpp"
#include "mpmg/errors.hpp"

namespace mpmg::bench::hypre {
namespace detail {

void ensure_started() {
    static std::once_flag once;
    std::call_once(once, [] {
        int initialised = 0;
        MPI_Initialized(&initialised);
        if (initialised == 0) {
            MPI_Init(nullptr, nullptr);
            // Registered first, so it runs after HYPRE_Finalize (atexit is last-in first-out).
            std::atexit([] {
                int finalised = 0;
                MPI_Finalized(&finalised);
                if (finalised == 0) MPI_Finalize();
            });
        }
        HYPRE_Init();
        std::atexit([] { HYPRE_Finalize(); });
    });
}

void check(HYPRE_Int err, const char* what) {
    const HYPRE_Int serious = err & ~HYPRE_Int{HYPRE_ERROR_CONV};
    HYPRE_ClearAllErrors();
    if (serious != 0) {
        char text[256] = {0};
        HYPRE_DescribeError(serious, text);
        throw NumericalError(fmt::format("hypre: {} failed: {} (error {})", what, text, serious));
    }
}

void check_supported(const SgDiaMatrix<double>& a) {
    if (a.block() != 1) {
        throw Unsupported(fmt::format(
            "bench vs-hypre: only scalar problems are compared with hypre (this one has {} "
            "components per cell)",
            a.block()));
    }
    const std::int64_t nnz_bound = a.rows() * a.stencil().size();
    if (nnz_bound > std::numeric_limits<int>::max()) {
        throw Unsupported(fmt::format(
            "bench vs-hypre: {} rows x {} offsets exceed the 32-bit indices of Debian's hypre",
            a.rows(), a.stencil().size()));
    }
}

}  // namespace detail

std::string name(Preconditioner p) {
    switch (p) {
        case Preconditioner::pfmg:
            return "PFMG";
        case Preconditioner::smg:
            return "SMG";
        case Preconditioner::boomeramg:
            return "BoomerAMG";
        case Preconditioner::boomeramg_default:
            return "BoomerAMG-default";
    }
    return "?";
}

bool pfmg_red_black(int stencil_size, SolverKind krylov) {
    return stencil_size == 7 && krylov == SolverKind::cg;
}

std::string settings(Preconditioner p, int stencil_size, SolverKind krylov) {
    switch (p) {
        case Preconditioner::pfmg:
            return pfmg_red_black(stencil_size, krylov)
                       ? "Galerkin RAP, 1+1 sweeps of symmetric red-black GS (relax 2), skip relax"
                       : "Galerkin RAP, 1+1 sweeps of weighted Jacobi (relax 1), skip relax";
        case Preconditioner::smg:
            return "hypre's defaults: 1+1 plane-relaxation sweeps";
        case Preconditioner::boomeramg:
            return "HMIS (10), ext+i interpolation (6, <= 4 per row), strong threshold 0.5, "
                   "hybrid symmetric GS (6), 1 sweep, V-cycle";
        case Preconditioner::boomeramg_default:
            return "hypre 2.26 defaults: HMIS, ext+i (<= 4 per row), strong threshold 0.25, "
                   "l1-GS forward (13) down / backward (14) up, V-cycle";
    }
    return "";
}

Result solve(const StructuredProblem& p, Preconditioner pre, const Settings& s) {
    return pre == Preconditioner::pfmg || pre == Preconditioner::smg ? solve_struct(p, pre, s)
                                                                     : solve_ij(p, pre, s);
}

std::string version() { return HYPRE_RELEASE_VERSION; }

bool uses_openmp() {
#ifdef HYPRE_USING_OPENMP
    return true;
#else
    return false;
#endif
}

}  // namespace mpmg::bench::hypre
