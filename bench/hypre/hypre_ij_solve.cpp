// ParCSR PCG / GMRES preconditioned by one BoomerAMG V-cycle, timed as setup (Krylov + AMG
// setup) and solve; assembling the IJ matrix is timed apart.
#include <HYPRE_parcsr_ls.h>
#include <mpi.h>

#include "hypre/hypre_common.hpp"
#include "hypre/hypre_ij.hpp"

namespace mpmg::bench::hypre {

using detail::check;
using detail::Clock;
using detail::seconds_since;

namespace {

/// Owns a hypre solver handle and its destroy function.
struct SolverHandle {
    HYPRE_Solver h = nullptr;
    HYPRE_Int (*destroy)(HYPRE_Solver) = nullptr;
    ~SolverHandle() {
        if (h != nullptr && destroy != nullptr) destroy(h);
    }
};

void configure_amg(HYPRE_Solver amg, Preconditioner pre) {
    HYPRE_Int e = 0;
    e |= HYPRE_BoomerAMGSetMaxIter(amg, 1);  // one V-cycle per Krylov iteration
    e |= HYPRE_BoomerAMGSetTol(amg, 0.0);
    e |= HYPRE_BoomerAMGSetPrintLevel(amg, 0);
    if (pre == Preconditioner::boomeramg) {           // the usual 3D settings
        e |= HYPRE_BoomerAMGSetCoarsenType(amg, 10);  // HMIS
        e |= HYPRE_BoomerAMGSetInterpType(amg, 6);    // extended+i
        e |= HYPRE_BoomerAMGSetPMaxElmts(amg, 4);
        e |= HYPRE_BoomerAMGSetStrongThreshold(amg, 0.5);
        e |= HYPRE_BoomerAMGSetRelaxType(amg, 6);  // hybrid symmetric GS
        e |= HYPRE_BoomerAMGSetNumSweeps(amg, 1);
    }
    check(e, "BoomerAMG settings");
}

}  // namespace

Result solve_ij(const StructuredProblem& p, Preconditioner pre, const Settings& s) {
    Result r;
    auto t0 = Clock::now();
    IjSystem sys(p.a);
    sys.set(sys.ij_b(), p.b);
    r.assembly_s = seconds_since(t0);

    SolverHandle amg{nullptr, HYPRE_BoomerAMGDestroy};
    check(HYPRE_BoomerAMGCreate(&amg.h), "BoomerAMGCreate");
    configure_amg(amg.h, pre);

    const bool gmres = s.krylov == SolverKind::gmres;
    SolverHandle k{nullptr, gmres ? HYPRE_ParCSRGMRESDestroy : HYPRE_ParCSRPCGDestroy};
    HYPRE_Int e = 0, its = 0;
    if (gmres) {
        check(HYPRE_ParCSRGMRESCreate(MPI_COMM_WORLD, &k.h), "ParCSRGMRESCreate");
        e |= HYPRE_ParCSRGMRESSetKDim(k.h, s.restart);
        e |= HYPRE_ParCSRGMRESSetTol(k.h, s.rtol);
        e |= HYPRE_ParCSRGMRESSetMaxIter(k.h, s.max_iter);
        e |= HYPRE_ParCSRGMRESSetLogging(k.h, 1);
        e |= HYPRE_ParCSRGMRESSetPrecond(k.h, HYPRE_BoomerAMGSolve, HYPRE_BoomerAMGSetup, amg.h);
    } else {
        check(HYPRE_ParCSRPCGCreate(MPI_COMM_WORLD, &k.h), "ParCSRPCGCreate");
        e |= HYPRE_ParCSRPCGSetTol(k.h, s.rtol);
        e |= HYPRE_ParCSRPCGSetMaxIter(k.h, s.max_iter);
        e |= HYPRE_ParCSRPCGSetTwoNorm(k.h, 1);  // ||r||_2 / ||b||_2, as mpmg
        e |= HYPRE_ParCSRPCGSetRelChange(k.h, 0);
        e |= HYPRE_ParCSRPCGSetLogging(k.h, 1);
        e |= HYPRE_ParCSRPCGSetPrecond(k.h, HYPRE_BoomerAMGSolve, HYPRE_BoomerAMGSetup, amg.h);
    }
    check(e, gmres ? "ParCSRGMRES settings" : "ParCSRPCG settings");

    t0 = Clock::now();
    check(gmres ? HYPRE_ParCSRGMRESSetup(k.h, sys.matrix(), sys.b(), sys.x())
                : HYPRE_ParCSRPCGSetup(k.h, sys.matrix(), sys.b(), sys.x()),
          "Krylov + BoomerAMG setup");
    r.setup_s = seconds_since(t0);
    t0 = Clock::now();
    check(gmres ? HYPRE_ParCSRGMRESSolve(k.h, sys.matrix(), sys.b(), sys.x())
                : HYPRE_ParCSRPCGSolve(k.h, sys.matrix(), sys.b(), sys.x()),
          "Krylov solve");
    r.solve_s = seconds_since(t0);
    if (gmres) {
        e = HYPRE_ParCSRGMRESGetNumIterations(k.h, &its);
        e |= HYPRE_ParCSRGMRESGetFinalRelativeResidualNorm(k.h, &r.relres);
    } else {
        e = HYPRE_ParCSRPCGGetNumIterations(k.h, &its);
        e |= HYPRE_ParCSRPCGGetFinalRelativeResidualNorm(k.h, &r.relres);
    }
    check(e, "Krylov statistics");
    r.iterations = its;
    r.x = sys.get(sys.ij_x());
    return r;
}

}  // namespace mpmg::bench::hypre
