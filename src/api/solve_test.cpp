// End-to-end convergence of the structured path (issue 2's required tests).
#include <gtest/gtest.h>

#include <cmath>

#include "mpmg/errors.hpp"
#include "mpmg/solver.hpp"

namespace mpmg {
namespace {

SolverOptions laplace(const char* name, int n, const char* precision) {
    SolverOptions o;
    o.problem.name = name;
    o.problem.n = n;
    o.precision = parse_precision(precision);
    o.rtol = 1e-10;
    o.max_iter = 100;
    return o;
}

void expect_finite(const SolveResult& r) {
    for (double v : r.x) ASSERT_TRUE(std::isfinite(v));
    for (double v : r.residual_history) ASSERT_TRUE(std::isfinite(v));
}

class Laplace27 : public ::testing::TestWithParam<int> {};

TEST_P(Laplace27, Fp16StorageConvergesLikeFull64) {
    const int n = GetParam();
    const SolveResult full = solve(laplace("laplace27", n, "K64P64D64"));
    const SolveResult half = solve(laplace("laplace27", n, "K64P32D16"));
    ASSERT_TRUE(full.converged) << full.message;
    ASSERT_TRUE(half.converged) << half.message;
    EXPECT_LE(half.iterations, full.iterations + 1);
    EXPECT_LE(half.final_relative_residual, 1e-10);
    EXPECT_LT(*half.error_vs_exact, 1e-7);
    EXPECT_EQ(half.levels.front().storage, Precision::fp16);
    EXPECT_EQ(half.levels.front().overflow_count, 0);
    EXPECT_GE(half.levels.size(), 3u);
    expect_finite(half);
}

INSTANTIATE_TEST_SUITE_P(Sizes, Laplace27, ::testing::Values(32, 48, 64));

TEST(Laplace27e8, SetupThenScaleConvergesLikeFull64) {
    const SolveResult full = solve(laplace("laplace27e8", 40, "K64P64D64"));
    SolverOptions o = laplace("laplace27e8", 40, "K64P32D16");
    o.multigrid.scaling = ScalingKind::setup_then_scale;
    const SolveResult half = solve(o);
    ASSERT_TRUE(full.converged);
    ASSERT_TRUE(half.converged) << half.message;
    EXPECT_LE(half.iterations, full.iterations + 1);
    // A is 1e8 times Laplace's stencil: level 0 stores A / 1e8 exactly (scaled by that scalar)
    // and the Krylov products read the same FP16 matrix; the coarse levels are scaled by G.
    EXPECT_TRUE(half.levels.front().scaled);
    EXPECT_EQ(half.levels.front().storage, Precision::fp16);
    EXPECT_NE(half.levels.front().note.find("exact in FP16"), std::string::npos)
        << half.levels.front().note;
    EXPECT_EQ(half.operator_storage, Precision::fp16);
    ASSERT_GE(half.levels.size(), 2u);
    EXPECT_TRUE(half.levels[1].scaled);
    EXPECT_LT(half.levels[1].scale_g, half.levels[1].scale_g_max);
    expect_finite(half);
}

// --smoother auto (the default) takes the problem's own: ILU(0) for weather, SymGS for the
// others; an explicit choice is kept.
TEST(SmootherAuto, ResolvesPerProblemAndKeepsAnExplicitChoice) {
    SolverOptions o = laplace("weather", 12, "K64P32D16");
    EXPECT_EQ(o.multigrid.smoother, SmootherKind::automatic);
    const SolveResult weather = solve(o);
    ASSERT_TRUE(weather.converged) << weather.message;
    EXPECT_EQ(weather.options.multigrid.smoother, SmootherKind::ilu0);
    o.multigrid.smoother = SmootherKind::symgs;
    EXPECT_EQ(solve(o).options.multigrid.smoother, SmootherKind::symgs);
    const SolveResult lap = solve(laplace("laplace27", 12, "K64P32D16"));
    EXPECT_EQ(lap.options.multigrid.smoother, SmootherKind::symgs);
}

// --interpolation auto takes the problem's own: operator-dependent weights for jump7, whose
// 8-decade coefficient jumps the 1/2 weights smear (n = 40: 39 CG iterations linear, 14 with
// the operator's weights); linear for the others.
TEST(InterpolationAuto, Jump7TakesOperatorDependentWeightsAndConvergesFaster) {
    SolverOptions o = laplace("jump7", 40, "K64P32D16");
    EXPECT_EQ(o.multigrid.interpolation, InterpolationKind::automatic);
    const SolveResult own = solve(o);
    ASSERT_TRUE(own.converged) << own.message;
    EXPECT_EQ(own.options.multigrid.interpolation, InterpolationKind::operator_dependent);
    o.multigrid.interpolation = InterpolationKind::linear;
    const SolveResult linear = solve(o);
    ASSERT_TRUE(linear.converged) << linear.message;
    EXPECT_LT(2 * own.iterations, linear.iterations)
        << own.iterations << " vs " << linear.iterations;
    const SolveResult lap = solve(laplace("laplace27", 12, "K64P32D16"));
    EXPECT_EQ(lap.options.multigrid.interpolation, InterpolationKind::linear);
}

// The AMG path's own options through the API: smoothed aggregation and block Jacobi, in FP16,
// with the choice echoed in the resolved options and the levels' notes.
TEST(AmgOptions, SmoothedAggregationWithBlockJacobiSolvesInHalf) {
    SolverOptions o = laplace("laplace27", 20, "K64P32D16");
    o.method = MethodKind::amg;
    o.multigrid.aggregation = AggregationKind::smoothed;
    o.multigrid.smoother = SmootherKind::block_jacobi;
    const SolveResult r = solve(o);
    ASSERT_TRUE(r.converged) << r.message;
    EXPECT_TRUE(r.guard_events.empty());
    EXPECT_EQ(r.options.multigrid.aggregation, AggregationKind::smoothed);
    EXPECT_EQ(r.options.multigrid.smoother, SmootherKind::block_jacobi);
    ASSERT_GE(r.levels.size(), 2u);
    EXPECT_NE(r.levels[0].note.find("smoothed P"), std::string::npos) << r.levels[0].note;
    EXPECT_NE(r.levels[0].note.find("block Jacobi"), std::string::npos) << r.levels[0].note;
    EXPECT_EQ(r.levels[0].storage, Precision::fp16);
}

TEST(Laplace27e8, NoScalingNeverReturnsNaN) {
    SolverOptions o = laplace("laplace27e8", 24, "K64P32D16");
    o.multigrid.scaling = ScalingKind::none;
    const SolveResult r = solve(o);
    expect_finite(r);
    // Unscaled 2.6e9 cannot be stored in FP16: the level falls back, visibly.
    EXPECT_EQ(r.levels.front().storage, Precision::fp32);
    EXPECT_NE(r.levels.front().note.find("overflow"), std::string::npos);
    EXPECT_TRUE(r.converged);
}

TEST(Solve, CyclesSolversAndSmoothersConverge) {
    struct Case {
        CycleKind cycle;
        SolverKind solver;
        SmootherKind smoother;
        const char* precision;
    };
    for (const Case& c :
         {Case{CycleKind::w, SolverKind::cg, SmootherKind::symgs, "K64P32D16"},
          Case{CycleKind::f, SolverKind::gmres, SmootherKind::symgs, "K64P32D16"},
          Case{CycleKind::v, SolverKind::mg, SmootherKind::symgs, "K64P32D32"},
          Case{CycleKind::v, SolverKind::richardson, SmootherKind::symgs, "K64P64D64"},
          Case{CycleKind::v, SolverKind::cg, SmootherKind::jacobi, "K64P32Dbf16"},
          Case{CycleKind::v, SolverKind::gmres, SmootherKind::ilu0, "K64P32D16"},
          Case{CycleKind::v, SolverKind::cg, SmootherKind::symgs, "K32P32D16"}}) {
        SolverOptions o = laplace("laplace27", 24, c.precision);
        o.multigrid.cycle = c.cycle;
        o.solver = c.solver;
        o.multigrid.smoother = c.smoother;
        if (o.precision.krylov == Precision::fp32) o.rtol = 1e-5;
        const SolveResult r = solve(o);
        EXPECT_TRUE(r.converged) << to_string(c.cycle) << " " << to_string(c.solver) << " "
                                 << c.precision << ": " << r.message;
        EXPECT_LT(r.iterations, 60);
        expect_finite(r);
    }
}

TEST(Solve, GridComplexityAndNonCubicGrids) {
    SolverOptions o = laplace("laplace27", 0, "K64P32D16");
    o.problem.grid = {40, 17, 9};
    const SolveResult r = solve(o);
    EXPECT_TRUE(r.converged) << r.message;
    EXPECT_GT(r.grid_complexity, 1.0);
    EXPECT_LT(r.grid_complexity, 1.5);
    EXPECT_GT(r.operator_complexity, 1.0);
}

TEST(Solve, ShiftLevelStoresCoarseLevelsInComputePrecision) {
    SolverOptions o = laplace("laplace27", 32, "K64P32D16");
    o.precision.shift_level = 1;
    const SolveResult r = solve(o);
    ASSERT_TRUE(r.converged);
    EXPECT_EQ(r.levels[0].storage, Precision::fp16);
    EXPECT_EQ(r.levels[1].storage, Precision::fp32);
}

TEST(Solve, NotConvergedIsReportedNotThrown) {
    SolverOptions o = laplace("laplace27", 16, "K64P32D16");
    o.max_iter = 2;
    const SolveResult r = solve(o);
    EXPECT_FALSE(r.converged);
    EXPECT_EQ(r.status, SolveStatus::max_iterations);
    EXPECT_EQ(r.residual_history.size(), 3u);
    expect_finite(r);
}

TEST(Solve, BadInputThrowsInvalidInput) {
    SolverOptions o = laplace("laplace99", 16, "K64P32D16");
    EXPECT_THROW(solve(o), InvalidInput);
    o = laplace("laplace27", 16, "K64P32D16");
    o.problem.n = 0;
    EXPECT_THROW(solve(o), InvalidInput);
}

}  // namespace
}  // namespace mpmg
