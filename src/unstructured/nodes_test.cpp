#include "unstructured/nodes.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "mpmg/errors.hpp"
#include "unstructured/csr_test_util.hpp"
#include "unstructured/pgm.hpp"

namespace mpmg {
namespace {

// A with its rows and columns renumbered: new index i is old index perm[i].
CsrMatrix renumbered(const CsrMatrix& a, const std::vector<std::int64_t>& perm) {
    std::vector<std::int64_t> inv(perm.size());
    for (std::size_t i = 0; i < perm.size(); ++i) inv[static_cast<std::size_t>(perm[i])] = i;
    std::vector<std::map<std::int64_t, double>> rows(perm.size());
    for (std::size_t i = 0; i < perm.size(); ++i) {
        const std::int64_t old = perm[i];
        for (std::int64_t p = a.row_ptr[old]; p < a.row_ptr[old + 1]; ++p) {
            rows[i][inv[static_cast<std::size_t>(a.col[p])]] = a.val[p];
        }
    }
    return csr_test::from_rows(a.rows, rows);
}

TEST(Nodes, NodeMatrixHoldsBlockNormsOfTheScaledMatrix) {
    const int r = 3;
    CsrMatrix a = csr_test::random_csr(3 * 50, 4, 11, false);
    for (std::int64_t i = 0; i < a.rows; ++i) {  // rows and columns in different units
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            a.val[p] *= std::pow(10.0, i % r) * std::pow(10.0, a.col[p] % r);
        }
    }
    const CsrMatrix m = node_matrix(a, r);
    ASSERT_EQ(m.rows, 50);
    // Scalar FP64 reference: the sum of squares of a_ij / sqrt(a_ii a_jj) in every block.
    const std::vector<double> d = diagonal_of(a);
    std::map<std::pair<std::int64_t, std::int64_t>, double> ref;
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            const double v = a.val[p] / std::sqrt(d[i] * d[a.col[p]]);
            ref[{i / r, a.col[p] / r}] += v * v;
        }
    }
    std::int64_t entries = 0;
    for (std::int64_t node = 0; node < m.rows; ++node) {
        for (std::int64_t p = m.row_ptr[node]; p < m.row_ptr[node + 1]; ++p) {
            if (p > m.row_ptr[node]) {
                EXPECT_LT(m.col[p - 1], m.col[p]);
            }
            const auto it = ref.find({node, m.col[p]});
            ASSERT_NE(it, ref.end());
            EXPECT_NEAR(m.val[p], std::sqrt(it->second), 1e-14 * std::sqrt(it->second));
            ++entries;
        }
    }
    EXPECT_EQ(entries, static_cast<std::int64_t>(ref.size()));
}

TEST(Nodes, DetectsTheBlockSizeOfASystemNumberedNodeByNode) {
    EXPECT_EQ(detect_block_size(csr_test::elasticity2d(12, 8, 0.3)), 2);
    // Scalar problems: neighbouring rows reach different nodes.
    EXPECT_EQ(detect_block_size(csr_test::poisson(16, 2)), 1);
    EXPECT_EQ(detect_block_size(csr_test::poisson(12, 3)), 1);
    EXPECT_EQ(detect_block_size(csr_test::convection_diffusion(20, 1.0)), 1);
    EXPECT_EQ(detect_block_size(csr_test::random_csr(840, 5, 3, true)), 1);
    // The same elasticity matrix with all x displacements first: not node by node.
    EXPECT_EQ(detect_block_size(csr_test::elasticity2d(12, 8, 0.3, true)), 1);
    // Three decoupled Laplacians interleaved: a system (of uncoupled components).
    const CsrMatrix p = csr_test::poisson(10, 2);
    std::vector<std::int64_t> perm;
    for (std::int64_t i = 0; i < p.rows; ++i) {
        for (int k = 0; k < 3; ++k) perm.push_back(k * p.rows + i);
    }
    CsrMatrix three;  // blockdiag(P, P, P), then interleaved
    three.rows = three.cols = 3 * p.rows;
    for (int k = 0; k < 3; ++k) {
        for (std::int64_t i = 0; i < p.rows; ++i) {
            for (std::int64_t q = p.row_ptr[i]; q < p.row_ptr[i + 1]; ++q) {
                three.col.push_back(k * p.rows + p.col[q]);
                three.val.push_back(p.val[q]);
            }
            three.row_ptr.push_back(three.nnz());
        }
    }
    EXPECT_EQ(detect_block_size(renumbered(three, perm)), 3);
    EXPECT_EQ(detect_block_size(three), 1);
    // A block diagonal matrix couples no node to another: nothing to aggregate by.
    CsrMatrix diag;
    diag.rows = diag.cols = 8;
    for (std::int64_t i = 0; i < 8; ++i) {
        for (std::int64_t j = i / 2 * 2; j < i / 2 * 2 + 2; ++j) {
            diag.col.push_back(j);
            diag.val.push_back(j == i ? 2.0 : -1.0);
        }
        diag.row_ptr.push_back(diag.nnz());
    }
    EXPECT_EQ(detect_block_size(diag), 1);
}

TEST(Nodes, AutoAggregatesVectorFieldsByNodes) {
    // Elasticity couples x and y displacements of neighbouring nodes: nodes.
    const CsrMatrix el = csr_test::elasticity2d(12, 8, 0.3);
    EXPECT_GT(cross_component_share(el, 2), 0.1);
    const BlockSizeChoice c = choose_block_size(el, 0);
    EXPECT_EQ(c.block, 2);
    EXPECT_NE(c.why.find("read from A's pattern"), std::string::npos) << c.why;
    // Components that couple only inside their node (each diffusing on its own: three
    // Laplacians interleaved, plus a coupling in the centre block): scalar, and the reason
    // names the option that asks for nodes.
    const CsrMatrix p = csr_test::poisson(10, 2);
    CsrMatrix sys;
    sys.rows = sys.cols = 3 * p.rows;
    for (std::int64_t i = 0; i < p.rows; ++i) {
        for (int k = 0; k < 3; ++k) {
            for (std::int64_t q = p.row_ptr[i]; q < p.row_ptr[i + 1]; ++q) {
                const std::int64_t j = p.col[q];
                if (j == i) {  // the centre block: exchange with the other components
                    for (int l = 0; l < 3; ++l) {
                        sys.col.push_back(3 * i + l);
                        sys.val.push_back(l == k ? p.val[q] + 2.0 : -1.0);
                    }
                } else {
                    sys.col.push_back(3 * j + k);
                    sys.val.push_back(p.val[q]);
                }
            }
            sys.row_ptr.push_back(sys.nnz());
        }
    }
    ASSERT_EQ(detect_block_size(sys), 3);
    EXPECT_EQ(cross_component_share(sys, 3), 0.0);
    const BlockSizeChoice s = choose_block_size(sys, 0);
    EXPECT_EQ(s.block, 1);
    EXPECT_NE(s.why.find("--block-size 3"), std::string::npos) << s.why;
    EXPECT_EQ(choose_block_size(sys, 3).block, 3);
    EXPECT_EQ(choose_block_size(csr_test::poisson(16, 2), 0).block, 1);
}

TEST(Nodes, AGivenBlockSizeMustDivideTheRows) {
    const CsrMatrix a = csr_test::elasticity2d(6, 5, 0.3);  // 2 * 6 * 6 = 72 rows
    EXPECT_EQ(choose_block_size(a, 1).block, 1);
    EXPECT_EQ(choose_block_size(a, 4).block, 4);
    try {
        choose_block_size(a, 5);
        ADD_FAILURE() << "no error";
    } catch (const InvalidInput& e) {
        EXPECT_NE(std::string(e.what()).find("--block-size 5"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("72 rows"), std::string::npos) << e.what();
    }
}

TEST(Nodes, NodalAggregationKeepsEveryComponentApart) {
    const CsrMatrix a = csr_test::elasticity2d(20, 10, 0.3);
    for (int passes : {1, 2}) {
        SCOPED_TRACE(passes);
        const Aggregation g = pgm_aggregate(a, passes, 2);
        EXPECT_EQ(g.block, 2);
        ASSERT_EQ(g.coarse_rows % 2, 0);
        EXPECT_LT(g.coarse_rows, a.rows * (passes == 1 ? 6 : 3) / 10);
        for (std::int64_t node = 0; node < a.rows / 2; ++node) {
            const std::int64_t cx = g.agg[2 * node], cy = g.agg[2 * node + 1];
            ASSERT_GE(cx, 0);
            EXPECT_EQ(cx % 2, 0) << node;   // x goes to a coarse x ...
            EXPECT_EQ(cy, cx + 1) << node;  // ... and y to the same node's y
        }
        // Scalar aggregation of the same matrix puts x and y of one node together somewhere.
        const Aggregation s = pgm_aggregate(a, passes, 1);
        std::int64_t mixed = 0;
        for (std::int64_t node = 0; node < a.rows / 2; ++node) {
            mixed += s.agg[2 * node] == s.agg[2 * node + 1];
        }
        EXPECT_GT(mixed, 0);
    }
}

TEST(Nodes, ExpandsANodePermutationToItsUnknowns) {
    const std::vector<std::int64_t> perm = expand_to_unknowns({2, 0, 1}, 3);
    const std::vector<std::int64_t> want = {6, 7, 8, 0, 1, 2, 3, 4, 5};
    EXPECT_EQ(perm, want);
}

}  // namespace
}  // namespace mpmg
