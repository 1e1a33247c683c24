// count_truncation (threshold comparisons, no conversion) must give exactly the counts of the
// real rounding in truncate<S>, including values on the rounding ties.
#include "multigrid/truncate.hpp"

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

}  // namespace
}  // namespace mpmg
