#include "unstructured/csr_typed.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <type_traits>

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
void check(std::int64_t n, std::uint64_t seed) {
    const CsrMatrix a = csr_test::random_csr(n, 6, seed, false);
    TruncationCounts counts;
    const TypedCsr<S> t = to_typed<S>(a, counts);
    EXPECT_EQ(counts.overflow, 0);
    std::mt19937_64 gen(seed + 1);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<C> x(static_cast<std::size_t>(n)), b(x.size()), y(x.size()), r(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = static_cast<C>(u(gen));
        b[i] = static_cast<C>(u(gen));
    }
    spmv(t, x.data(), y.data());
    residual(t, b.data(), x.data(), r.data());
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
    }
}

TYPED_TEST(CsrTypedTest, SpmvAndResidualMatchReferenceSerial) {
    check<typename TypeParam::S, typename TypeParam::C>(300, 7);
}

TYPED_TEST(CsrTypedTest, SpmvAndResidualMatchReferenceParallel) {
    check<typename TypeParam::S, typename TypeParam::C>(9000, 11);
}

TEST(CsrTyped, TruncationCountsOverflowAndUnderflow) {
    CsrMatrix a;
    a.rows = a.cols = 1;
    a.col = {0, 0, 0};  // not a valid matrix, only values matter here
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
