// The runtime guard (DESIGN.md Safety §5): an FP16 level that overflows (setup fallback off, as
// in the no-scaling ablation) makes the preconditioner return Inf/NaN in the first iteration;
// the guard rebuilds the hierarchy with wider storage and the solve converges without NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "api/guarded_solve.hpp"
#include "mpmg/errors.hpp"
#include "mpmg/solver.hpp"
#include "unstructured/csr_test_util.hpp"

namespace mpmg {
namespace {

SolverOptions overflowing_fp16() {
    SolverOptions o;
    o.problem.name = "laplace27e8";
    o.problem.n = 16;
    o.precision = parse_precision("K64P32D16");
    o.multigrid.scaling = ScalingKind::none;
    o.multigrid.setup_fallback = false;
    return o;
}

TEST(Guard, RebuildsInWiderPrecisionAndConverges) {
    const SolveResult r = solve(overflowing_fp16());
    EXPECT_GT(r.levels.size(), 1u);
    ASSERT_TRUE(r.converged) << r.message;
    ASSERT_EQ(r.guard_events.size(), 1u);
    EXPECT_NE(r.guard_events[0].find("iteration 1"), std::string::npos) << r.guard_events[0];
    EXPECT_NE(r.guard_events[0].find("K64P32D32"), std::string::npos) << r.guard_events[0];
    EXPECT_EQ(r.levels.front().storage, Precision::fp32);  // the rebuilt hierarchy
    EXPECT_EQ(r.residual_history.size(), static_cast<std::size_t>(r.iterations) + 1);
    for (double v : r.x) ASSERT_TRUE(std::isfinite(v));
    for (double v : r.residual_history) ASSERT_TRUE(std::isfinite(v));
}

// scale-then-setup kept in FP16 (fallback off): the Galerkin operators grow past FP16's range on
// a coarse level, mostly on the diagonal. The residual restricted after the first sweep must
// still carry those Inf entries to the guard (the upper-half residual -U u would skip them).
TEST(Guard, OverflowedCoarseDiagonalStillReachesTheGuard) {
    SolverOptions o;
    o.problem.name = "laplace27";
    o.problem.n = 40;
    o.precision = parse_precision("K64P32D16");
    o.multigrid.scaling = ScalingKind::scale_then_setup;
    o.multigrid.setup_fallback = false;
    const SolveResult r = solve(o);
    ASSERT_TRUE(r.converged) << r.message;
    ASSERT_EQ(r.guard_events.size(), 1u);
    EXPECT_NE(r.guard_events[0].find("iteration 1"), std::string::npos) << r.guard_events[0];
}

// A = diag(1, ..., 100); a fake preconditioner, the identity, whose first build turns
// non-finite at its third application (CG stops in iteration 3, two done).
class Diagonal final : public LinearOperator<double> {
public:
    std::int64_t size() const override { return 100; }
    void apply(const double* x, double* y) const override {
        for (int i = 0; i < 100; ++i) y[i] = (i + 1) * x[i];
    }
};
class FakePreconditioner final : public BuiltPreconditioner {
public:
    /// z = r, except on call fail_at: NaN, or -r (an indefinite preconditioner) when `negate`.
    explicit FakePreconditioner(int fail_at, bool negate = false)
        : fail_at_(fail_at), negate_(negate) {}
    void apply(const double* r, double* z) override {
        const bool fail = ++calls_ == fail_at_;
        for (int i = 0; i < 100; ++i) z[i] = !fail ? r[i] : negate_ ? -r[i] : std::nan("");
    }
    void apply(const float* r, float* z) override {
        for (int i = 0; i < 100; ++i) z[i] = r[i];
    }
    const std::vector<LevelReport>& report() const override { return report_; }
    double grid_complexity() const override { return 1.0; }
    double operator_complexity() const override { return 1.0; }
    /// One level per entry, solved as it says.
    void set_report(const std::vector<std::string>& solves) {
        report_.assign(solves.size(), LevelReport{});
        for (std::size_t l = 0; l < solves.size(); ++l) report_[l].solve = solves[l];
    }

private:
    int fail_at_;
    bool negate_;
    int calls_ = 0;
    std::vector<LevelReport> report_;
};

// Out of iterations after a rebuild: the message names the user's max_iter, not what the
// rebuild left of it (it said "reached max_iter = 4" for max_iter 6).
TEST(Guard, OutOfIterationsAfterARebuildNamesTheWholeLimit) {
    const Diagonal a;
    const std::vector<double> b(100, 1.0);
    int builds = 0;
    const BuildFn build = [&](const PrecisionPlan&, const MultigridOptions&) {
        return std::unique_ptr<BuiltPreconditioner>(
            std::make_unique<FakePreconditioner>(builds++ == 0 ? 3 : -1));
    };
    SolverOptions o;
    o.solver = SolverKind::cg;
    o.max_iter = 6;
    o.multigrid.smoother = SmootherKind::symgs;
    SolveResult r;
    run_guarded<double>(a, b, build, o, GuardFallbacks{SmootherKind::jacobi, {}, {}}, r);
    EXPECT_EQ(builds, 2);
    ASSERT_EQ(r.guard_events.size(), 1u);
    EXPECT_NE(r.guard_events[0].find("cg: iteration 3"), std::string::npos) << r.guard_events[0];
    EXPECT_FALSE(r.converged);
    EXPECT_EQ(r.status, SolveStatus::max_iterations);
    EXPECT_EQ(r.iterations, 6);
    EXPECT_EQ(r.message.rfind("cg: reached max_iter = 6 with relative residual", 0), 0u)
        << r.message;
    EXPECT_NE(r.message.find("(the last 4 iterations after the guard's rebuild)"),
              std::string::npos)
        << r.message;
    for (double v : r.x) ASSERT_TRUE(std::isfinite(v));
}

// A rebuild whose setup fails (the robust smoother on a zero diagonal entry: a NumericalError
// from the build) no longer replaces the solve's result with that error. After a non-finite
// preconditioner output the solve stops with the last finite x, the run's status and a message
// that says which rebuild failed and why; after a CG breakdown the guard goes on with GMRES on
// the hierarchy as first built, as it would after the robust smoother.
TEST(Guard, ARebuildThatCannotBeSetUpEndsOrSkipsToGmres) {
    const Diagonal a;
    const std::vector<double> b(100, 1.0);
    SolverOptions o;
    o.solver = SolverKind::cg;
    o.precision = parse_precision("K64P64D64");  // nothing to widen
    o.multigrid.smoother = SmootherKind::symgs;
    for (const bool breakdown : {false, true}) {
        SCOPED_TRACE(breakdown);
        std::vector<SmootherKind> built;
        const BuildFn build = [&](const PrecisionPlan&, const MultigridOptions& mg) {
            const SmootherKind s = mg.smoother;
            built.push_back(s);
            if (s == SmootherKind::jacobi) throw NumericalError("level 0: diagonal 0 (test)");
            return std::unique_ptr<BuiltPreconditioner>(
                std::make_unique<FakePreconditioner>(built.size() == 1 ? 3 : -1, breakdown));
        };
        SolveResult r;
        run_guarded<double>(a, b, build, o, GuardFallbacks{SmootherKind::jacobi, {}, {}}, r);
        for (double v : r.x) ASSERT_TRUE(std::isfinite(v));
        ASSERT_EQ(r.guard_events.size(), 1u);
        const std::string& e = r.guard_events[0];
        EXPECT_NE(e.find("rebuilding the hierarchy with smoother jacobi failed (level 0: "
                         "diagonal 0 (test)); "),
                  std::string::npos)
            << e;
        if (!breakdown) {
            EXPECT_EQ(built, (std::vector{SmootherKind::symgs, SmootherKind::jacobi}));
            EXPECT_FALSE(r.converged);
            EXPECT_EQ(r.status, SolveStatus::non_finite);
            EXPECT_EQ(r.iterations, 2);
            EXPECT_NE(e.find("so the solve stops here"), std::string::npos) << e;
            EXPECT_NE(r.message.find("cg: iteration 3"), std::string::npos) << r.message;
            EXPECT_NE(r.message.find("the guard's rebuilding the hierarchy with smoother jacobi "
                                     "failed"),
                      std::string::npos)
                << r.message;
        } else {
            EXPECT_EQ(built, (std::vector{SmootherKind::symgs, SmootherKind::jacobi,
                                          SmootherKind::symgs}));
            EXPECT_TRUE(r.converged) << r.message;
            EXPECT_NE(e.find("switched to GMRES"), std::string::npos) << e;
        }
    }
}

// The exact inverse of Diagonal: GMRES converges in one iteration.
class InverseDiagonal final : public BuiltPreconditioner {
public:
    void apply(const double* r, double* z) override {
        for (int i = 0; i < 100; ++i) z[i] = r[i] / (i + 1);
    }
    void apply(const float* r, float* z) override {
        for (int i = 0; i < 100; ++i) z[i] = r[i] / static_cast<float>(i + 1);
    }
    const std::vector<LevelReport>& report() const override { return report_; }
    double grid_complexity() const override { return 1.0; }
    double operator_complexity() const override { return 1.0; }

private:
    std::vector<LevelReport> report_;
};

/// The solve's one guard event says it was too slow and contains `what`.
void expect_too_slow_event(const SolveResult& r, const std::string& what) {
    ASSERT_EQ(r.guard_events.size(), 1u);
    const std::string& e = r.guard_events[0];
    EXPECT_NE(e.find("too slow"), std::string::npos) << e;
    EXPECT_NE(e.find(what), std::string::npos) << e;
}

/// GMRES(2) on Diagonal with the identity for a preconditioner (FakePreconditioner(-1)): far
/// too slow to reach 1e-10 in max_iter, so the guard's slow rule fires after the second cycle.
SolverOptions too_slow_gmres(const char* precision, SmootherKind smoother) {
    SolverOptions o;
    o.solver = SolverKind::gmres;
    o.restart = 2;
    o.precision = parse_precision(precision);
    o.multigrid.smoother = smoother;
    return o;
}

// A solve too slow to reach rtol within max_iter (GMRES(2) preconditioned by the identity) is
// a smoother's problem, not range: the guard tries the path's stagnation smoothers in order
// before it widens anything, passes over one that cannot be set up (ILU(0) on a zero pivot),
// and goes on from the last iterate with the next.
TEST(Guard, TooSlowTriesTheStagnationSmoothersInOrder) {
    const Diagonal a;
    const std::vector<double> b(100, 1.0);
    std::vector<SmootherKind> built;
    std::vector<std::string> plans;
    const BuildFn build = [&](const PrecisionPlan& plan, const MultigridOptions& mg) {
        built.push_back(mg.smoother);
        plans.push_back(plan.notation());
        if (mg.smoother == SmootherKind::ilu0) {
            throw NumericalError("AMG level 0: ILU(0) pivot 0 at row 7 (test)");
        }
        if (mg.smoother == SmootherKind::l1_jacobi) {
            return std::unique_ptr<BuiltPreconditioner>(std::make_unique<InverseDiagonal>());
        }
        return std::unique_ptr<BuiltPreconditioner>(std::make_unique<FakePreconditioner>(-1));
    };
    SolverOptions o = too_slow_gmres("K64P32D16", SmootherKind::symgs);
    const GuardFallbacks fallbacks{
        SmootherKind::l1_jacobi, {}, {SmootherKind::ilu0, SmootherKind::l1_jacobi}};
    SolveResult r;
    run_guarded<double>(a, b, build, o, fallbacks, r);
    EXPECT_EQ(built,
              (std::vector{SmootherKind::symgs, SmootherKind::ilu0, SmootherKind::l1_jacobi}));
    EXPECT_EQ(plans, (std::vector<std::string>(3, "K64P32D16")));  // nothing widened
    ASSERT_TRUE(r.converged) << r.message;
    expect_too_slow_event(
        r,
        "rebuilding the hierarchy with smoother ilu0 failed (AMG level 0: ILU(0) "
        "pivot 0 at row 7 (test)); rebuilt the hierarchy with smoother l1-jacobi");
    EXPECT_LT(r.iterations, 100);

    // Without the guard the same solve spends all of max_iter.
    o.guard = false;
    built.clear();
    SolveResult off;
    run_guarded<double>(a, b, build, o, fallbacks, off);
    EXPECT_EQ(built, std::vector{SmootherKind::symgs});
    EXPECT_EQ(off.status, SolveStatus::max_iterations) << off.message;
    EXPECT_EQ(off.iterations, o.max_iter);
}

// sherman5 (oil reservoir, nonsymmetric, 3 unknowns per cell): the default AMG cycle (SymGS)
// gains about 1 % per GMRES restart cycle after the first, so the solve ran out of iterations
// at 0.2. The guard now sees after two cycles that it cannot get there and rebuilds with
// ILU(0), which converges.
TEST(Guard, SlowReservoirSolveConvergesWithIlu0ByDefault) {
    SolverOptions o;
    o.problem.matrix = csr_test::shared_matrix("sherman5");
    const SolveResult r = solve(o);
    ASSERT_TRUE(r.converged) << r.message;
    ASSERT_EQ(r.guard_events.size(), 1u);
    EXPECT_NE(r.guard_events[0].find("too slow"), std::string::npos) << r.guard_events[0];
    EXPECT_NE(r.guard_events[0].find("rebuilt the hierarchy with smoother ilu0"), std::string::npos)
        << r.guard_events[0];
    EXPECT_LE(r.iterations, 120);
    EXPECT_LE(r.final_relative_residual, o.rtol);

    o.guard = false;
    const SolveResult off = solve(o);
    EXPECT_FALSE(off.converged);
    EXPECT_EQ(off.status, SolveStatus::max_iterations) << off.message;
}

// When the guard has nothing left for a solve that is too slow, it spends the iterations left
// on the hierarchy it has: after a stagnation smoother that cannot be set up (back to the one
// that ran), and when nothing is left to widen or change (no rebuild at all).
TEST(Guard, TooSlowWithNothingLeftSpendsTheIterationsLeft) {
    const Diagonal a;
    const std::vector<double> b(100, 1.0);
    std::vector<SmootherKind> built;
    const BuildFn build = [&](const PrecisionPlan&, const MultigridOptions& mg) {
        built.push_back(mg.smoother);
        if (mg.smoother == SmootherKind::ilu0) throw NumericalError("ILU(0) pivot 0 (test)");
        return std::unique_ptr<BuiltPreconditioner>(std::make_unique<FakePreconditioner>(-1));
    };
    const SolverOptions o = too_slow_gmres("K64P64D64", SmootherKind::l1_jacobi);  // no widening
    for (const bool with_ilu : {true, false}) {
        SCOPED_TRACE(with_ilu);
        built.clear();
        GuardFallbacks fallbacks{SmootherKind::l1_jacobi, {}, {}};
        if (with_ilu) fallbacks.stagnation_smoothers = {SmootherKind::ilu0};
        SolveResult r;
        run_guarded<double>(a, b, build, o, fallbacks, r);
        EXPECT_EQ(r.status, SolveStatus::max_iterations) << r.message;
        EXPECT_EQ(r.iterations, o.max_iter);
        EXPECT_EQ(r.residual_history.size(), static_cast<std::size_t>(o.max_iter) + 1);
        if (with_ilu) {
            EXPECT_EQ(built, (std::vector{SmootherKind::l1_jacobi, SmootherKind::ilu0,
                                          SmootherKind::l1_jacobi}));
            expect_too_slow_event(
                r,
                "failed (ILU(0) pivot 0 (test)); rebuilt the hierarchy with the settings that ran");
        } else {
            EXPECT_EQ(built, std::vector{SmootherKind::l1_jacobi});
            expect_too_slow_event(r,
                                  "nothing left to try, so it went on with the hierarchy it has");
        }
    }
}

// The structured path's first step for a stagnating solve is the operator interpolation; when
// that cannot be set up for a solve that was only too slow (sherman3 on --grid 35,11,13: a
// singular coarsest LU), the guard rebuilds what ran and spends the iterations left instead of
// stopping the solve (it stopped at 150 iterations with 1.3e-5 instead of 8e-7 after 200).
TEST(Guard, TooSlowWithAFailedInterpolationGoesOnAsItWas) {
    const Diagonal a;
    const std::vector<double> b(100, 1.0);
    std::vector<InterpolationKind> built;
    const BuildFn build = [&](const PrecisionPlan&, const MultigridOptions& mg) {
        built.push_back(mg.interpolation);
        if (mg.interpolation == InterpolationKind::operator_dependent) {
            throw NumericalError("coarsest level is singular (test)");
        }
        return std::unique_ptr<BuiltPreconditioner>(std::make_unique<FakePreconditioner>(-1));
    };
    SolverOptions o = too_slow_gmres("K64P32D16", SmootherKind::symgs);
    o.multigrid.interpolation = InterpolationKind::linear;
    SolveResult r;
    run_guarded<double>(
        a, b, build, o,
        GuardFallbacks{SmootherKind::jacobi, InterpolationKind::operator_dependent, {}}, r);
    EXPECT_EQ(built, (std::vector{InterpolationKind::linear, InterpolationKind::operator_dependent,
                                  InterpolationKind::linear}));
    EXPECT_EQ(r.status, SolveStatus::max_iterations) << r.message;
    EXPECT_EQ(r.iterations, o.max_iter);
    expect_too_slow_event(r,
                          "failed (coarsest level is singular (test)); rebuilt the hierarchy with "
                          "the settings that ran");
    for (double v : r.x) ASSERT_TRUE(std::isfinite(v));
}

/// ||b - A x|| / ||b||, in FP64 from A as given.
double true_relative_residual(const CsrMatrix& a, const std::vector<double>& b,
                              const std::vector<double>& x) {
    std::vector<double> ax(b.size());
    a.multiply(x.data(), ax.data());
    double rr = 0.0, bb = 0.0;
    for (std::size_t i = 0; i < b.size(); ++i) {
        rr += (b[i] - ax[i]) * (b[i] - ax[i]);
        bb += b[i] * b[i];
    }
    return std::sqrt(rr / bb);
}

/// The 5-point Laplacian on n x n shifted by -0.5: symmetric and strongly indefinite (a
/// Helmholtz operator), which multigrid with SymGS does not precondition.
CsrMatrix helmholtz(int n) {
    CsrMatrix a = csr_test::poisson(n, 2);
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            if (a.col[k] == i) a.val[k] -= 0.5;
        }
    }
    return a;
}

// A matrix of at most kAutoDirectRows rows on which every other remedy fails is solved by its LU
// as the guard's last rebuild, with the iterations it kept for that; a larger one is not, and
// without the guard neither is.
TEST(Guard, SmallMatrixSolvedByItsLuWhenNothingElseConverges) {
    for (const int n : {40, 66}) {  // 1600 and 4356 rows
        SCOPED_TRACE(n);
        const CsrMatrix a = helmholtz(n);
        std::vector<double> b(static_cast<std::size_t>(a.rows));
        for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::sin(0.1 * static_cast<double>(i));
        for (const bool guard : {true, false}) {
            SCOPED_TRACE(guard);
            SolverOptions o;
            o.guard = guard;
            Solver solver(o);
            solver.setup(a);
            std::vector<double> x(b.size(), 0.0);
            const SolveResult r = solver.solve(b, x);
            const bool small = a.rows <= 4096;
            ASSERT_EQ(r.converged, guard && small) << r.message;
            if (!r.converged) {
                if (guard) {  // without it: a CG breakdown
                    EXPECT_EQ(r.iterations, o.max_iter);
                }
                for (const auto& e : r.guard_events) {
                    EXPECT_EQ(e.find("factorised by LU"), std::string::npos) << e;
                }
                continue;
            }
            EXPECT_LE(true_relative_residual(a, b, x), 1e-9);
            ASSERT_FALSE(r.guard_events.empty());
            const std::string& last = r.guard_events.back();
            EXPECT_NE(last.find("5 kept for a direct solve; rebuilt the hierarchy with one level, "
                                "A itself factorised by LU in FP64"),
                      std::string::npos)
                << last;
            EXPECT_GT(r.iterations, o.max_iter - kDirectIterations);
            EXPECT_LE(r.iterations, o.max_iter);
            ASSERT_EQ(r.levels.size(), 1u);
            EXPECT_EQ(r.levels[0].solve, "direct (LU, fp64)");
        }
    }
}

/// The 5-point Laplacian on n x n with Neumann boundaries: singular (constants in its null
/// space).
CsrMatrix neumann(int n) {
    CsrMatrix a = csr_test::poisson(n, 2);
    for (std::int64_t i = 0; i < a.rows; ++i) {
        double off = 0.0;
        for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            if (a.col[k] != i) off += a.val[k];
        }
        for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            if (a.col[k] == i) a.val[k] = -off;
        }
    }
    return a;
}

// A singular A with an inconsistent b (no solution): CG diverged, the guard's rebuilds went on
// from the diverged iterates, and the solve returned an x with ||b - A x|| = 7.9 ||b||, worse
// than x = 0. A run that ends unconverged above where it started now hands back its starting
// iterate, so the x returned is never worse than the initial guess.
TEST(Guard, AnUnconvergedRunHandsBackTheIterateItStartedFrom) {
    const CsrMatrix a = neumann(40);
    std::vector<double> b(static_cast<std::size_t>(a.rows), 0.0);
    b[0] = 1.0;  // not orthogonal to the constants: no solution
    Solver solver{SolverOptions{}};
    solver.setup(a);
    std::vector<double> x(b.size(), 0.0);
    const SolveResult r = solver.solve(b, x);
    EXPECT_FALSE(r.converged);
    for (double v : x) ASSERT_TRUE(std::isfinite(v));
    const double rel = true_relative_residual(a, b, x);
    EXPECT_LE(rel, 1.0 + 1e-12);
    EXPECT_NEAR(rel, r.final_relative_residual, 1e-6 * rel);
    bool went_back = false;
    for (const auto& e : r.guard_events) {
        went_back |= e.find("x is the iterate this run started from") != std::string::npos;
    }
    EXPECT_TRUE(went_back);
    // From an initial guess (copied, where a run from zero needs no copy): never above it.
    std::vector<double> x0(b.size());
    for (std::size_t i = 0; i < x0.size(); ++i) x0[i] = 1e-3 * static_cast<double>(i % 7);
    x = x0;
    const SolveResult warm = solver.solve(b, x);
    EXPECT_FALSE(warm.converged);
    EXPECT_LE(true_relative_residual(a, b, x), true_relative_residual(a, b, x0) * (1 + 1e-12));
}

/// `fallbacks` with the direct solve; the fakes below take max_levels == 1 for it.
GuardFallbacks with_direct(GuardFallbacks fallbacks) {
    fallbacks.direct = true;
    return fallbacks;
}

// The direct solve comes after every other remedy of a solve that is too slow (none here but
// the robust smoother, which is the smoother already); when it cannot be set up (A has no LU),
// the solve goes on with the hierarchy that ran, not rebuilt, and spends the iterations left.
TEST(Guard, DirectSolveComesLastAndFallsBackToTheHierarchyThatRan) {
    const Diagonal a;
    const std::vector<double> b(100, 1.0);
    for (const bool lu_fails : {false, true}) {
        SCOPED_TRACE(lu_fails);
        std::vector<int> levels;
        const BuildFn build = [&](const PrecisionPlan&, const MultigridOptions& mg) {
            levels.push_back(mg.max_levels);
            if (mg.max_levels != 1) {
                return std::unique_ptr<BuiltPreconditioner>(
                    std::make_unique<FakePreconditioner>(-1));
            }
            EXPECT_EQ(mg.coarse_solver, CoarseSolverKind::direct);
            if (lu_fails) throw NumericalError("coarsest level is singular (test)");
            return std::unique_ptr<BuiltPreconditioner>(std::make_unique<InverseDiagonal>());
        };
        SolverOptions o = too_slow_gmres("K64P64D64", SmootherKind::l1_jacobi);
        SolveResult r;
        run_guarded<double>(a, b, build, o, with_direct({SmootherKind::l1_jacobi, {}, {}}), r);
        EXPECT_EQ(levels, (std::vector{o.multigrid.max_levels, 1}));
        if (!lu_fails) {
            ASSERT_TRUE(r.converged) << r.message;
            EXPECT_LT(r.iterations, o.max_iter - kDirectIterations);  // not out of iterations
            expect_too_slow_event(r, "rebuilt the hierarchy with one level, A itself factorised");
        } else {
            EXPECT_EQ(r.status, SolveStatus::max_iterations) << r.message;
            EXPECT_EQ(r.iterations, o.max_iter);  // the kept iterations too
            expect_too_slow_event(r,
                                  "failed (coarsest level is singular (test)); went on with the "
                                  "hierarchy that ran");
        }
    }
}

// A solve that does not stagnate but runs out of max_iter gets the direct solve with the
// iterations kept for it, unless max_iter is too small to keep them or the preconditioner is
// one LU level already.
TEST(Guard, OutOfIterationsTakesTheKeptOnesForTheDirectSolve) {
    const Diagonal a;
    const std::vector<double> b(100, 1.0);
    for (const int max_iter : {60, 19}) {
        for (const bool one_lu_level : {false, true}) {
            SCOPED_TRACE(testing::Message() << max_iter << " " << one_lu_level);
            int builds = 0;
            const BuildFn build = [&](const PrecisionPlan&, const MultigridOptions& mg) {
                ++builds;
                if (mg.max_levels == 1) {
                    return std::unique_ptr<BuiltPreconditioner>(
                        std::make_unique<InverseDiagonal>());
                }
                auto m = std::make_unique<FakePreconditioner>(-1);
                if (one_lu_level) m->set_report({"direct (LU, fp64)"});
                return std::unique_ptr<BuiltPreconditioner>(std::move(m));
            };
            SolverOptions o;
            o.solver = SolverKind::gmres;
            o.restart = 100;  // no restart, so nothing is too slow: GMRES needs 100 iterations
            o.max_iter = max_iter;
            SolveResult r;
            run_guarded<double>(a, b, build, o, with_direct({SmootherKind::l1_jacobi, {}, {}}), r);
            if (max_iter == 60 && !one_lu_level) {
                ASSERT_TRUE(r.converged) << r.message;
                EXPECT_EQ(builds, 2);
                EXPECT_GT(r.iterations, max_iter - kDirectIterations);
                ASSERT_EQ(r.guard_events.size(), 1u);
                EXPECT_NE(r.guard_events[0].find(
                              "after iteration 55, the last of max_iter = 60 but 5 kept for a "
                              "direct solve; rebuilt the hierarchy with one level"),
                          std::string::npos)
                    << r.guard_events[0];
            } else {
                EXPECT_EQ(r.status, SolveStatus::max_iterations) << r.message;
                EXPECT_EQ(r.iterations, max_iter);
                EXPECT_EQ(builds, 1);
                EXPECT_TRUE(r.guard_events.empty());
            }
        }
    }
}

TEST(Guard, OffStopsWithTheReasonAndNoNaN) {
    SolverOptions o = overflowing_fp16();
    o.guard = false;
    const SolveResult r = solve(o);
    EXPECT_FALSE(r.converged);
    EXPECT_EQ(r.status, SolveStatus::non_finite);
    EXPECT_NE(r.message.find("not finite"), std::string::npos) << r.message;
    for (double v : r.x) ASSERT_TRUE(std::isfinite(v));
}

TEST(Guard, DefaultConfigurationNeverNeedsIt) {
    SolverOptions o = overflowing_fp16();
    o.multigrid.scaling = ScalingKind::automatic;
    o.multigrid.setup_fallback = true;
    const SolveResult r = solve(o);
    EXPECT_TRUE(r.converged);
    EXPECT_TRUE(r.guard_events.empty());
    EXPECT_TRUE(r.levels.front().scaled);
}

}  // namespace
}  // namespace mpmg
