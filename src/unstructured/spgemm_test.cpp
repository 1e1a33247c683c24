#include "unstructured/spgemm.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "unstructured/csr_test_util.hpp"
#include "unstructured/pgm.hpp"

namespace mpmg {
namespace {

void expect_equal(const CsrMatrix& c, const CsrMatrix& ref) {
    ASSERT_EQ(c.rows, ref.rows);
    ASSERT_EQ(c.cols, ref.cols);
    ASSERT_EQ(c.row_ptr, ref.row_ptr);
    ASSERT_EQ(c.col, ref.col);
    for (std::size_t p = 0; p < c.val.size(); ++p) {
        ASSERT_NEAR(c.val[p], ref.val[p], 1e-13 * (1.0 + std::fabs(ref.val[p])));
    }
}

TEST(CsrSpgemm, MatchesReferenceProductOnRandomMatrices) {
    const CsrMatrix a = csr_test::random_csr(3000, 5, 21, false);
    const CsrMatrix b = csr_test::random_csr(3000, 4, 22, false);
    expect_equal(spgemm(a, b), multiply(a, b));
}

TEST(CsrSpgemm, GalerkinEqualsTripleProduct) {
    const CsrMatrix a = csr_test::poisson(30, 2);
    const Aggregation g = pgm_aggregate(a);
    const CsrMatrix p = prolongation(g);
    const CsrMatrix r = restriction(g, 0.5);
    const CsrMatrix c = galerkin_product(r, a, p);
    expect_equal(c, multiply(multiply(r, a), p));
    // Row sums of A are zero in the interior, so those of R A P are too.
    EXPECT_EQ(c.rows, g.coarse_rows);
}

TEST(CsrSpgemm, RejectsMismatchedShapes) {
    const CsrMatrix a = csr_test::random_csr(10, 2, 1, false);
    const CsrMatrix b = csr_test::random_csr(11, 2, 1, false);
    EXPECT_ANY_THROW(spgemm(a, b));
}

}  // namespace
}  // namespace mpmg
