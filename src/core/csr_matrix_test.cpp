#include "mpmg/csr_matrix.hpp"

#include <gtest/gtest.h>

namespace mpmg {
namespace {

// A from (row, column, value) triplets in row order, columns sorted.
CsrMatrix from_triplets(std::int64_t n, const std::vector<std::tuple<int, int, double>>& t) {
    CsrMatrix a;
    a.rows = a.cols = n;
    a.row_ptr.assign(static_cast<std::size_t>(n) + 1, 0);
    for (const auto& [i, j, v] : t) {
        a.col.push_back(j);
        a.val.push_back(v);
        ++a.row_ptr[static_cast<std::size_t>(i) + 1];
    }
    for (std::int64_t i = 0; i < n; ++i) a.row_ptr[i + 1] += a.row_ptr[i];
    return a;
}

TEST(CsrMatrix, SymmetryComparesValuesWithinRounding) {
    EXPECT_TRUE(is_symmetric(from_triplets(2, {{0, 0, 2}, {0, 1, -1}, {1, 0, -1}, {1, 1, 2}})));
    EXPECT_TRUE(
        is_symmetric(from_triplets(2, {{0, 0, 2}, {0, 1, -1}, {1, 0, -1 + 1e-15}, {1, 1, 2}})));
    EXPECT_FALSE(
        is_symmetric(from_triplets(2, {{0, 0, 2}, {0, 1, -1}, {1, 0, -1.001}, {1, 1, 2}})));
    CsrMatrix rect = from_triplets(2, {{0, 0, 1}, {1, 1, 1}});
    rect.cols = 3;
    EXPECT_FALSE(is_symmetric(rect));
}

TEST(CsrMatrix, SymmetryOfAnEntryWithoutMirror) {
    // An assembled finite-element matrix can hold a_01 = 1e-17 where a_10 came out exactly 0
    // and was dropped: symmetric within rounding once unmirrored entries count as against 0,
    // not by the stored pattern (which decides a file's solver).
    const CsrMatrix tiny =
        from_triplets(3, {{0, 0, 2}, {0, 1, 1e-17}, {1, 1, 2}, {1, 2, -1}, {2, 1, -1}, {2, 2, 2}});
    EXPECT_TRUE(is_symmetric(tiny, true));
    EXPECT_FALSE(is_symmetric(tiny));
    // A real one-sided coupling is not, either way.
    for (bool as_zero : {false, true}) {
        EXPECT_FALSE(is_symmetric(
            from_triplets(3,
                          {{0, 0, 2}, {0, 1, -0.5}, {1, 1, 2}, {1, 2, -1}, {2, 1, -1}, {2, 2, 2}}),
            as_zero));
        EXPECT_FALSE(
            is_symmetric(from_triplets(3, {{0, 0, 2}, {1, 1, 2}, {2, 0, -1}, {2, 2, 2}}), as_zero));
    }
}

}  // namespace
}  // namespace mpmg
