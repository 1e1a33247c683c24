// Struct PCG / GMRES preconditioned by one PFMG or SMG cycle (hypre's Struct solvers), timed as
// setup (Krylov + multigrid setup) and solve; assembling hypre's matrix is timed apart.
#include <HYPRE_struct_ls.h>
#include <mpi.h>

#include <functional>

#include "hypre/hypre_common.hpp"
#include "hypre/hypre_struct.hpp"

namespace mpmg::bench::hypre {

using detail::check;
using detail::Clock;
using detail::seconds_since;

namespace {

/// Calls `destroy` when it goes out of scope (hypre objects are plain handles).
struct Finally {
    std::function<void()> destroy;
    ~Finally() {
        if (destroy) destroy();
    }
};

HYPRE_StructSolver make_preconditioner(Preconditioner pre, bool red_black) {
    HYPRE_StructSolver m = nullptr;
    HYPRE_Int e = 0;
    if (pre == Preconditioner::pfmg) {
        check(HYPRE_StructPFMGCreate(MPI_COMM_WORLD, &m), "StructPFMGCreate");
        e |= HYPRE_StructPFMGSetMaxIter(m, 1);
        e |= HYPRE_StructPFMGSetTol(m, 0.0);
        e |= HYPRE_StructPFMGSetZeroGuess(m);
        e |= HYPRE_StructPFMGSetRAPType(m, 0);  // Galerkin
        e |= HYPRE_StructPFMGSetRelaxType(m, red_black ? 2 : 1);
        e |= HYPRE_StructPFMGSetNumPreRelax(m, 1);
        e |= HYPRE_StructPFMGSetNumPostRelax(m, 1);
        e |= HYPRE_StructPFMGSetSkipRelax(m, 1);
        check(e, "StructPFMG settings");
    } else {
        check(HYPRE_StructSMGCreate(MPI_COMM_WORLD, &m), "StructSMGCreate");
        e |= HYPRE_StructSMGSetMemoryUse(m, 0);
        e |= HYPRE_StructSMGSetMaxIter(m, 1);
        e |= HYPRE_StructSMGSetTol(m, 0.0);
        e |= HYPRE_StructSMGSetZeroGuess(m);
        e |= HYPRE_StructSMGSetNumPreRelax(m, 1);
        e |= HYPRE_StructSMGSetNumPostRelax(m, 1);
        check(e, "StructSMG settings");
    }
    return m;
}

}  // namespace

Result solve_struct(const StructuredProblem& p, Preconditioner pre, const Settings& s) {
    Result r;
    auto t0 = Clock::now();
    StructSystem sys(p.a);
    sys.set(sys.b(), p.b);
    r.assembly_s = seconds_since(t0);

    HYPRE_StructSolver m = make_preconditioner(pre, pfmg_red_black(p.a.stencil().size(), s.krylov));
    const bool pfmg = pre == Preconditioner::pfmg;
    Finally free_m{[&] { pfmg ? HYPRE_StructPFMGDestroy(m) : HYPRE_StructSMGDestroy(m); }};
    const HYPRE_PtrToStructSolverFcn m_solve = pfmg ? HYPRE_StructPFMGSolve : HYPRE_StructSMGSolve;
    const HYPRE_PtrToStructSolverFcn m_setup = pfmg ? HYPRE_StructPFMGSetup : HYPRE_StructSMGSetup;

    HYPRE_StructSolver k = nullptr;
    HYPRE_Int its = 0, e = 0;
    if (s.krylov == SolverKind::gmres) {
        check(HYPRE_StructGMRESCreate(MPI_COMM_WORLD, &k), "StructGMRESCreate");
        Finally free_k{[&] { HYPRE_StructGMRESDestroy(k); }};
        e |= HYPRE_StructGMRESSetKDim(k, s.restart);
        e |= HYPRE_StructGMRESSetTol(k, s.rtol);
        e |= HYPRE_StructGMRESSetMaxIter(k, s.max_iter);
        e |= HYPRE_StructGMRESSetLogging(k, 1);
        e |= HYPRE_StructGMRESSetPrecond(k, m_solve, m_setup, m);
        check(e, "StructGMRES settings");
        t0 = Clock::now();
        check(HYPRE_StructGMRESSetup(k, sys.matrix(), sys.b(), sys.x()), "StructGMRESSetup");
        r.setup_s = seconds_since(t0);
        t0 = Clock::now();
        check(HYPRE_StructGMRESSolve(k, sys.matrix(), sys.b(), sys.x()), "StructGMRESSolve");
        r.solve_s = seconds_since(t0);
        e |= HYPRE_StructGMRESGetNumIterations(k, &its);
        e |= HYPRE_StructGMRESGetFinalRelativeResidualNorm(k, &r.relres);
        check(e, "StructGMRES statistics");
    } else {
        check(HYPRE_StructPCGCreate(MPI_COMM_WORLD, &k), "StructPCGCreate");
        Finally free_k{[&] { HYPRE_StructPCGDestroy(k); }};
        e |= HYPRE_StructPCGSetTol(k, s.rtol);
        e |= HYPRE_StructPCGSetMaxIter(k, s.max_iter);
        e |= HYPRE_StructPCGSetTwoNorm(k, 1);  // ||r||_2 / ||b||_2, as mpmg
        e |= HYPRE_StructPCGSetRelChange(k, 0);
        e |= HYPRE_StructPCGSetLogging(k, 1);
        e |= HYPRE_StructPCGSetPrecond(k, m_solve, m_setup, m);
        check(e, "StructPCG settings");
        t0 = Clock::now();
        check(HYPRE_StructPCGSetup(k, sys.matrix(), sys.b(), sys.x()), "StructPCGSetup");
        r.setup_s = seconds_since(t0);
        t0 = Clock::now();
        check(HYPRE_StructPCGSolve(k, sys.matrix(), sys.b(), sys.x()), "StructPCGSolve");
        r.solve_s = seconds_since(t0);
        e |= HYPRE_StructPCGGetNumIterations(k, &its);
        e |= HYPRE_StructPCGGetFinalRelativeResidualNorm(k, &r.relres);
        check(e, "StructPCG statistics");
    }
    r.iterations = its;
    r.x = sys.get(sys.x(), p.a.box().cells());
    return r;
}

}  // namespace mpmg::bench::hypre
