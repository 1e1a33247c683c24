// count_truncation (threshold comparisons, no conversion) must give exactly the counts of the
// real rounding in truncate<S>, including values on the rounding ties; exact_copy<S> exists
// exactly when S holds every value, and its FP64 products equal the FP64 matrix's bit for bit.
#include "multigrid/truncate.hpp"

#include "structured/sgdia_ops.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace mpmg {
namespace {

template <class S>
void expect_same_counts(double exp_lo, double exp_hi) {
    const RangeLimits lim = range_limits<S>();
    std::vector<double> values;
    for (double t : {lim.underflow, lim.subnormal, lim.overflow}) {
        for (double f : {1.0, 1.0 - 0x1p-40, 1.0 + 0x1p-40, 0.5, 2.0}) {
            values.push_back(t * f);
            values.push_back(-t * f);
        }
    }
    values.push_back(0.0);
    values.push_back(HUGE_VAL);
    values.push_back(std::nan(""));
    std::mt19937_64 gen(7);
    std::uniform_real_distribution<double> e(exp_lo, exp_hi), m(1.0, 2.0);
    SgDiaMatrix<double> a(Box{9, 8, 7}, Stencil::named("3d7"), 1);
    std::size_t next = 0;
    for (int d = 0; d < a.stencil().size(); ++d) {
        double* v = a.diagonal(d);
        a.for_each_inside(d, [&](std::int64_t c) {
            v[c] =
                next < values.size() ? values[next] : std::ldexp(m(gen), static_cast<int>(e(gen)));
            if (next % 3 == 1) v[c] = -v[c];
            ++next;
        });
    }
    TruncationCounts rounded;
    (void)truncate<S>(a, rounded);
    const TruncationCounts compared = count_truncation<S>(a);
    EXPECT_EQ(compared.overflow, rounded.overflow);
    EXPECT_EQ(compared.underflow, rounded.underflow);
    EXPECT_EQ(compared.subnormal, rounded.subnormal);
    EXPECT_EQ(compared.nonfinite_input, rounded.nonfinite_input);
    // The corpus reaches every verdict, so the comparison above is not vacuous.
    EXPECT_GT(rounded.overflow, 0);
    EXPECT_GT(rounded.underflow, 0);
    EXPECT_GT(rounded.subnormal, 0);
}

TEST(Truncate, CountsByThresholdEqualRoundingCountsFp16) { expect_same_counts<half>(-30, 20); }

TEST(Truncate, CountsByThresholdEqualRoundingCountsBf16) {
    expect_same_counts<bfloat16>(-140, 130);
}

/// A matrix whose in-box values are value(d, c) (every entry of the cell's r x r block).
template <class F>
SgDiaMatrix<double> filled(Box box, const char* stencil, int r, F value) {
    SgDiaMatrix<double> a(box, Stencil::named(stencil), r);
    const std::int64_t rr = std::int64_t{r} * r;
    for (int d = 0; d < a.stencil().size(); ++d) {
        double* v = a.diagonal(d);
        a.for_each_inside(d, [&](std::int64_t c) {
            for (std::int64_t e = 0; e < rr; ++e) v[c * rr + e] = value(d, c, e);
        });
    }
    return a;
}

template <class S>
void expect_same_products(const SgDiaMatrix<double>& a, const SgDiaMatrix<S>& copy) {
    std::mt19937_64 gen(3);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> x(static_cast<std::size_t>(a.rows()));
    for (double& v : x) v = u(gen);
    std::vector<double> want(x.size()), got(x.size());
    spmv(a, x.data(), want.data());
    spmv(copy, x.data(), got.data());
    for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(got[i], want[i]) << i;
}

TEST(Truncate, ExactCopyInFp16OfAConstantStencil) {
    // Laplace's 26 / -1 (lines of 37 cells: full vectors, a tail and the boundary cells).
    const auto lap = filled(Box{37, 6, 5}, "3d27", 1, [](int d, std::int64_t, std::int64_t) {
        return d == 13 ? 26.0 : -1.0;
    });
    ASSERT_EQ(lap.stencil().center(), 13);
    const auto h = exact_copy<half>(lap);
    ASSERT_TRUE(h.has_value());
    expect_same_products(lap, *h);
    // 3 x 3 blocks of small integers and binary fractions, including FP16 subnormals.
    const auto blk = filled(Box{11, 4, 3}, "3d7", 3, [](int d, std::int64_t c, std::int64_t e) {
        if (c % 5 == 0) return static_cast<double>(d * 9 + e + 1) * 0x1p-24;  // subnormal
        return std::ldexp(static_cast<double>((d * 7 + c + e) % 23) - 11.0, -int(c % 12));
    });
    const auto hb = exact_copy<half>(blk);
    ASSERT_TRUE(hb.has_value());
    expect_same_products(blk, *hb);
}

TEST(Truncate, ExactCopyInFp32WhenFp16DoesNotHoldTheValues) {
    // Laplace times 1e8 (laplace27e8): beyond FP16's range, exact in FP32.
    const auto big = filled(Box{21, 5, 4}, "3d27", 1, [](int d, std::int64_t, std::int64_t) {
        return d == 13 ? 26e8 : -1e8;
    });
    EXPECT_FALSE(exact_copy<half>(big).has_value());
    const auto f = exact_copy<float>(big);
    ASSERT_TRUE(f.has_value());
    expect_same_products(big, *f);
}

TEST(Truncate, NoExactCopyWhenOneValueIsNotHeld) {
    for (const double odd : {0.1, 1.0 + 0x1p-30, std::nan(""), HUGE_VAL}) {
        SCOPED_TRACE(odd);
        // One entry anywhere (here the last in-box entry of the last offset) decides.
        auto a = filled(Box{19, 6, 5}, "3d7", 1,
                        [](int d, std::int64_t, std::int64_t) { return d == 3 ? 6.0 : -1.0; });
        std::int64_t last = -1;
        const int dl = a.stencil().size() - 1;
        a.for_each_inside(dl, [&](std::int64_t c) { last = c; });
        a.diagonal(dl)[last] = odd;
        EXPECT_FALSE(exact_copy<half>(a).has_value());
        EXPECT_FALSE(exact_copy<float>(a).has_value());
    }
}

}  // namespace
}  // namespace mpmg
