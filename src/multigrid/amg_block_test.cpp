// Systems of PDEs on the AMG path (unstructured/nodes.hpp): plane elasticity numbered node by
// node is aggregated by nodes, with its block size read from the pattern, and converges in far
// fewer iterations than scalar aggregation of the same matrix; every level keeps the nodes.
#include <gtest/gtest.h>

#include <string>

#include "multigrid/amg_hierarchy.hpp"
#include "multigrid/amg_test_util.hpp"
#include "unstructured/csr_test_util.hpp"

namespace mpmg {
namespace {

MultigridOptions options(int block_size, AggregationKind agg = AggregationKind::pgm) {
    MultigridOptions mg;
    mg.smoother = SmootherKind::symgs;
    mg.aggregation = agg;
    mg.block_size = block_size;
    return mg;
}

TEST(AmgBlock, ElasticityAggregatedByNodesConvergesFaster) {
    const CsrMatrix a = csr_test::elasticity2d(64, 32, 0.3);
    const PrecisionPlan plan = parse_precision("K64P32D16");
    for (AggregationKind agg : {AggregationKind::pgm, AggregationKind::smoothed}) {
        SCOPED_TRACE(to_string(agg));
        const auto nodal = amg_test::solve(a, plan, options(0, agg), false, 1e-8, 500);
        const auto scalar = amg_test::solve(a, plan, options(1, agg), false, 1e-8, 500);
        ASSERT_EQ(nodal.result.status, SolveStatus::converged) << nodal.notes;
        EXPECT_TRUE(nodal.finite);
        EXPECT_NE(nodal.notes.find("on nodes of 2 unknowns"), std::string::npos) << nodal.notes;
        EXPECT_EQ(scalar.notes.find("on nodes of"), std::string::npos) << scalar.notes;
        // Symmetric, though dropping its exact zeros leaves a few 1e-17 entries unmirrored.
        EXPECT_EQ(nodal.notes.find("rows weighted"), std::string::npos) << nodal.notes;
        EXPECT_LT(nodal.result.iterations * 3, scalar.result.iterations * 2)
            << "nodal " << nodal.result.iterations << ", scalar " << scalar.result.iterations;
    }
}

TEST(AmgBlock, EveryLevelKeepsTheNodes) {
    const CsrMatrix a = csr_test::elasticity2d(40, 20, 0.3);
    MultigridOptions mg = options(0);
    mg.max_coarse_rows = 50;
    const AmgHierarchy h(a, mg, parse_precision("K64P64D64"));
    ASSERT_GE(h.num_levels(), 4);
    for (const auto& r : h.report()) EXPECT_EQ(r.rows % 2, 0) << r.rows;
}

}  // namespace
}  // namespace mpmg
