// multigrid.coarse_solver / coarse_sweeps on both hierarchies: LU or smoothing sweeps on the
// coarsest level, and the error for an LU that is too large.
#include <gtest/gtest.h>

#include "io/problems.hpp"
#include "mpmg/errors.hpp"
#include "multigrid/amg_hierarchy.hpp"
#include "multigrid/cycle.hpp"
#include "multigrid/hierarchy.hpp"
#include "unstructured/csr_test_util.hpp"

namespace mpmg {
namespace {

TEST(CoarseSolver, ChoiceBySizeAndOption) {
    MultigridOptions mg;
    EXPECT_EQ(coarse_sweeps_for(mg, 4096), 0);
    EXPECT_EQ(coarse_sweeps_for(mg, 4097), 20);
    mg.coarse_sweeps = 3;
    mg.coarse_solver = CoarseSolverKind::smoother;
    EXPECT_EQ(coarse_sweeps_for(mg, 10), 3);
    mg.coarse_solver = CoarseSolverKind::direct;
    EXPECT_EQ(coarse_sweeps_for(mg, 20000), 0);
    EXPECT_THROW(coarse_sweeps_for(mg, 20001), InvalidInput);
}

TEST(CoarseSolver, StructuredHierarchySmoothsTheCoarsestWhenAsked) {
    ProblemOptions po;
    po.name = "laplace27";
    po.n = 16;
    const StructuredProblem p = make_problem(po);
    MultigridOptions mg;
    mg.coarse_solver = CoarseSolverKind::smoother;
    mg.coarse_sweeps = 2;
    const Hierarchy h(p.a, mg, parse_precision("K64P64D64"));
    EXPECT_EQ(h.report().back().solve, "4 smoother sweeps");
    mg.coarse_solver = CoarseSolverKind::automatic;
    EXPECT_EQ(Hierarchy(p.a, mg, parse_precision("K64P64D64")).report().back().solve,
              "direct (LU, fp64)");
    // One level of 32^3 = 32768 rows asked to be solved by LU: too large.
    po.n = 32;
    const StructuredProblem big = make_problem(po);
    mg.coarse_solver = CoarseSolverKind::direct;
    mg.max_levels = 1;
    EXPECT_THROW(Hierarchy(big.a, mg, parse_precision("K64P64D64")), InvalidInput);
}

TEST(CoarseSolver, AmgHierarchySmoothsTheCoarsestWhenAsked) {
    const CsrMatrix a = csr_test::poisson(24, 2);
    MultigridOptions mg;
    mg.coarse_solver = CoarseSolverKind::smoother;
    mg.coarse_sweeps = 5;
    const AmgHierarchy h(a, mg, parse_precision("K64P64D64"));
    EXPECT_EQ(h.report().back().solve, "10 smoother sweeps");
}

}  // namespace
}  // namespace mpmg
