#include "unstructured/csr_typed.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <type_traits>

#include "mpmg/errors.hpp"
#include "unstructured/csr_test_util.hpp"

namespace mpmg {
namespace {

template <class S_, class C_>
struct Pair {
    using S = S_;
    using C = C_;
};

template <class P>
class CsrTypedTest : public ::testing::Test {};

using Pairs = ::testing::Types<Pair<double, double>, Pair<float, double>, Pair<half, double>,
                               Pair<bfloat16, double>, Pair<float, float>, Pair<half, float>,
                               Pair<bfloat16, float>>;
TYPED_TEST_SUITE(CsrTypedTest, Pairs);

// Compares spmv and residual with an FP64 scalar reference on the truncated values; the bound
// is a few ulps of C times sum_j |a_ij x_j| per row.
template <class S, class C>
void check(std::int64_t n, std::uint64_t seed, IndexEncoding enc) {
    const CsrMatrix a = csr_test::random_csr(n, 6, seed, false);
    TruncationCounts counts;
    const TypedCsr<S> t = to_typed<S>(a, counts, enc);
    EXPECT_EQ(counts.overflow, 0);
    EXPECT_EQ(t.encoding(), enc);  // n < 65536: every row fits the compact encoding
    std::vector<S> inv_d(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            if (a.col[p] == i) inv_d[static_cast<std::size_t>(i)] = from_double<S>(1.0 / a.val[p]);
        }
    }
    std::mt19937_64 gen(seed + 1);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<C> x(static_cast<std::size_t>(n)), b(x.size()), y(x.size()), r(x.size()),
        xn(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = static_cast<C>(u(gen));
        b[i] = static_cast<C>(u(gen));
    }
    spmv(t, x.data(), y.data());
    residual(t, b.data(), x.data(), r.data());
    const C omega = static_cast<C>(0.7);
    jacobi(t, inv_d.data(), omega, b.data(), x.data(), xn.data());
    const double eps = std::numeric_limits<C>::epsilon();
    for (std::int64_t i = 0; i < n; ++i) {
        double ref = 0.0, mag = 0.0;
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            const double v = to_double(t.val[p]) * static_cast<double>(x[a.col[p]]);
            ref += v;
            mag += std::fabs(v);
        }
        const double tol =
            4.0 * eps * (mag + 1.0) * static_cast<double>(t.row_ptr[i + 1] - t.row_ptr[i]);
        ASSERT_NEAR(static_cast<double>(y[i]), ref, tol) << "row " << i;
        ASSERT_NEAR(static_cast<double>(r[i]), static_cast<double>(b[i]) - ref, tol + eps)
            << "row " << i;
        const double w = static_cast<double>(omega) * to_double(inv_d[static_cast<std::size_t>(i)]);
        ASSERT_NEAR(static_cast<double>(xn[i]),
                    static_cast<double>(x[i]) + w * (static_cast<double>(b[i]) - ref),
                    std::fabs(w) * (tol + 2 * eps) + 2 * eps)
            << "row " << i;
    }
}

TYPED_TEST(CsrTypedTest, SpmvResidualJacobiMatchReferenceSerial) {
    check<typename TypeParam::S, typename TypeParam::C>(300, 7, IndexEncoding::int32);
    check<typename TypeParam::S, typename TypeParam::C>(300, 8, IndexEncoding::compact);
    check<typename TypeParam::S, typename TypeParam::C>(300, 9, IndexEncoding::int64);
}

// 9000 rows x 7 entries: above kParallelNnz, so the rows are split over the threads.
TYPED_TEST(CsrTypedTest, SpmvResidualJacobiMatchReferenceParallel) {
    check<typename TypeParam::S, typename TypeParam::C>(9000, 11, IndexEncoding::int32);
    check<typename TypeParam::S, typename TypeParam::C>(9000, 12, IndexEncoding::compact);
    check<typename TypeParam::S, typename TypeParam::C>(9000, 13, IndexEncoding::int64);
}

// Columns beyond int32 (a rectangular block of a matrix with 2^31 + 9 columns): int64 columns
// whatever encoding was asked, the indices kept exactly. (An x of 2^31 entries is 16 GiB: the
// kernels' int64 path is checked on small matrices above and in kernels/csr_simd_test.cpp.)
TEST(CsrTyped, MoreThanInt32ColumnsTakeInt64Indices) {
    const std::int64_t cols = (std::int64_t{1} << 31) + 9;
    CsrMatrix a;
    a.rows = 2;
    a.cols = cols;
    a.col = {0, cols - 1, 5, (std::int64_t{1} << 31) + 3};
    a.val = {1, 2, 3, 4};
    a.row_ptr = {0, 2, 4};
    for (const IndexEncoding asked : {IndexEncoding::int32, IndexEncoding::compact}) {
        TruncationCounts c;
        const TypedCsr<half> t = to_typed<half>(a, c, asked);
        EXPECT_EQ(t.encoding(), IndexEncoding::int64);
        EXPECT_EQ(t.col64, a.col);
        EXPECT_TRUE(t.col.empty());
        EXPECT_EQ(t.bytes(), 4 * 2 + 4 * 8 + 3 * 8);  // FP16 values, int64 columns, row pointers
        EXPECT_EQ(t.view().col64, t.col64.data());
        EXPECT_EQ(t.view().col32, nullptr);
    }
}

TEST(CsrTyped, CompactEncodingFallsBackWhenARowSpansTooManyColumns) {
    CsrMatrix a;
    a.rows = 2;
    a.cols = 70000;
    a.col = {0, 65535, 3, 65539};  // row 0 spans 65535: fits; row 1 spans 65536: does not
    a.val = {1, 2, 3, 4};
    a.row_ptr = {0, 2, 4};
    TruncationCounts c;
    EXPECT_FALSE(to_typed<double>(a, c, IndexEncoding::compact).compact());
    a.col[3] = 65538;
    const TypedCsr<double> t = to_typed<double>(a, c, IndexEncoding::compact);
    ASSERT_TRUE(t.compact());
    EXPECT_EQ(t.base, (std::vector<std::int32_t>{0, 3}));
    EXPECT_EQ(t.col16, (std::vector<std::uint16_t>{0, 65535, 0, 65535}));
    std::vector<double> x(70000, 0.0), y(2);
    x[65535] = 1.0;
    x[65538] = 10.0;
    spmv(t, x.data(), y.data());
    EXPECT_EQ(y[0], 2.0);
    EXPECT_EQ(y[1], 40.0);
}

// to_csr gives back the matrix to_typed<double> was given, whatever the column encoding: the
// AMG solve hands A over to the Krylov operator (the consuming to_typed), and rebuilds take it
// back from there.
TEST(CsrTyped, ToCsrGivesBackTheMatrixInEveryEncoding) {
    CsrMatrix a;
    a.rows = 3;
    a.cols = 70000;
    a.col = {0, 65535, 3, 69999, 7};  // row 1 spans 69996 columns: compact falls back
    a.val = {1.5, -2e300, 3e-310, 4, 0.1};
    a.row_ptr = {0, 2, 4, 5};
    CsrMatrix fits = a;
    fits.col[3] = 65538;
    CsrMatrix wide = a;
    wide.cols = (std::int64_t{1} << 31) + 9;
    wide.col[3] = (std::int64_t{1} << 31) + 3;
    for (const CsrMatrix* m : {&a, &fits, &wide}) {
        for (const IndexEncoding asked : {IndexEncoding::int32, IndexEncoding::compact}) {
            TruncationCounts c;
            const TypedCsr<double> t = to_typed<double>(*m, c, asked);
            const CsrMatrix back = to_csr(t);
            EXPECT_EQ(back.rows, m->rows);
            EXPECT_EQ(back.cols, m->cols);
            EXPECT_EQ(back.row_ptr, m->row_ptr);
            EXPECT_EQ(back.col, m->col) << static_cast<int>(t.encoding());
            EXPECT_EQ(back.val, m->val);
            // The consuming to_typed makes the same copy, and leaves its argument empty.
            CsrMatrix used = *m;
            const TypedCsr<double> moved = to_typed(std::move(used), asked);
            EXPECT_EQ(moved.encoding(), t.encoding());
            EXPECT_EQ(to_csr(moved).col, m->col);
            EXPECT_EQ(moved.val, t.val);
            EXPECT_EQ(moved.row_ptr, t.row_ptr);
            EXPECT_EQ(used.nnz(), 0);
        }
    }
    TruncationCounts c;
    EXPECT_TRUE(to_typed<double>(fits, c, IndexEncoding::compact).compact());  // all three seen
    EXPECT_EQ(to_typed<double>(wide, c).encoding(), IndexEncoding::int64);
}

TEST(CsrTyped, RejectsUnsortedColumns) {
    CsrMatrix a;
    a.rows = 1;
    a.cols = 3;
    a.col = {2, 1};
    a.val = {1, 2};
    a.row_ptr = {0, 2};
    TruncationCounts c;
    EXPECT_THROW(to_typed<double>(a, c), InvalidInput);
}

TEST(CsrTyped, TruncationCountsOverflowAndUnderflow) {
    CsrMatrix a;
    a.rows = 1;
    a.cols = 3;
    a.col = {0, 1, 2};
    a.val = {1e6, 1e-9, 1.0};
    a.row_ptr = {0, 3};
    TruncationCounts c;
    const TypedCsr<half> t = to_typed<half>(a, c);
    EXPECT_EQ(c.overflow, 1);
    EXPECT_EQ(c.underflow, 1);
    EXPECT_EQ(t.nnz(), 3);
}

}  // namespace
}  // namespace mpmg
