#include "unstructured/drop_zeros.hpp"

#include <gtest/gtest.h>

#include "io/matrix_market.hpp"
#include "unstructured/csr_test_util.hpp"

namespace mpmg {
namespace {

TEST(CsrDropZeros, KeepsNonzerosAndTheDiagonal) {
    CsrMatrix a;  // [[0, 0, 1], [0, 2, 0], [3, 0, 0]] with every zero stored
    a.rows = a.cols = 3;
    a.row_ptr = {0, 3, 6, 9};
    a.col = {0, 1, 2, 0, 1, 2, 0, 1, 2};
    a.val = {0, 0, 1, 0, 2, 0, 3, 0, 0};
    EXPECT_TRUE(has_droppable_zeros(a));
    EXPECT_EQ(drop_zeros(a), 4);
    EXPECT_FALSE(has_droppable_zeros(a));  // zero diagonals are kept, and not droppable
    EXPECT_EQ(a.row_ptr, (std::vector<std::int64_t>{0, 2, 3, 5}));
    EXPECT_EQ(a.col, (std::vector<std::int64_t>{0, 2, 1, 0, 2}));  // zero diagonals 0, 2 kept
    EXPECT_EQ(a.val, (std::vector<double>{0, 1, 2, 3, 0}));
    EXPECT_EQ(drop_zeros(a), 0);
}

// Only a zero off the diagonal counts; row i is row first_row + i (a process's rows).
TEST(CsrDropZeros, HasDroppableZerosLooksOffTheDiagonalOnly) {
    CsrMatrix a;  // rows 5 and 6 of a larger matrix: (5, 5) = 0, (6, 5) = 4, (6, 6) = 1
    a.rows = 2;
    a.cols = 8;
    a.row_ptr = {0, 1, 3};
    a.col = {5, 5, 6};
    a.val = {0, 4, 1};
    EXPECT_FALSE(has_droppable_zeros(a, 5));
    EXPECT_TRUE(has_droppable_zeros(a, 0));  // (0, 5) = 0 is off the diagonal of row 0
    a.val[1] = 0;
    EXPECT_TRUE(has_droppable_zeros(a, 5));
}

// The mfem beam matrix stores 164,772 of its 231,601 entries as exact zeros (mfem/README.md);
// dropping them leaves the product with any vector unchanged.
TEST(CsrDropZeros, MfemBeamMatrix) {
    CsrMatrix a = read_matrix_market(csr_test::shared_matrix("mfem/mfem_beam_o3_r1"));
    ASSERT_EQ(a.nnz(), 231601);
    std::vector<double> x(static_cast<std::size_t>(a.rows)), y0(x.size()), y1(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = 1.0 + static_cast<double>(i % 13);
    a.multiply(x.data(), y0.data());
    const std::int64_t dropped = drop_zeros(a);
    EXPECT_GE(dropped, 164772 - a.rows);  // at most the zero diagonals stay (none here)
    EXPECT_LE(dropped, 164772);
    a.multiply(x.data(), y1.data());
    EXPECT_EQ(y0, y1);
}

}  // namespace
}  // namespace mpmg
