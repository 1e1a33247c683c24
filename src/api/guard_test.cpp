// The runtime guard (DESIGN.md Safety §5): an FP16 level that overflows (setup fallback off, as
// in the no-scaling ablation) makes the preconditioner return Inf/NaN in the first iteration;
// the guard rebuilds the hierarchy with wider storage and the solve converges without NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "mpmg/solver.hpp"

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
