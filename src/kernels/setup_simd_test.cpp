// The SIMD setup passes (kernels/setup_simd.hpp) against their scalar loops on every Highway
// target this CPU supports and the build generated: exact results for the range check, the
// counts, the minimum ratio and the scaling; sum_abs to rounding.
#include "kernels/setup_simd.hpp"

#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/every_target_test_util.hpp"

namespace mpmg {
namespace {

/// Values from 2^lo to 2^hi in magnitude, both signs, some zeros, in random order.
std::vector<double> random_values(std::size_t n, int lo, int hi, unsigned seed) {
    std::mt19937_64 gen(seed);
    std::uniform_int_distribution<int> e(lo, hi);
    std::uniform_real_distribution<double> m(1.0, 2.0);
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        v[i] = i % 7 == 3 ? 0.0 : std::ldexp(m(gen), e(gen));
        if (i % 3 == 1) v[i] = -v[i];
    }
    return v;
}

void expect_counts_eq(const TruncationCounts& a, const TruncationCounts& b) {
    EXPECT_EQ(a.overflow, b.overflow);
    EXPECT_EQ(a.underflow, b.underflow);
    EXPECT_EQ(a.subnormal, b.subnormal);
    EXPECT_EQ(a.nonfinite_input, b.nonfinite_input);
}

bool outside_reference(const std::vector<double>& v, std::size_t b, std::size_t e, double lo,
                       double hi) {
    bool out = false;
    for (std::size_t i = b; i < e; ++i) {
        const double x = std::fabs(v[i]);
        out |= !(x <= hi) || (x != 0.0 && x < lo);
    }
    return out;
}

void check_target() {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    const RangeLimits lim = range_limits<half>();
    // Range check: every single offending value, at every position of a short array.
    for (double bad : {nan, inf, 1e6, 32753.0, 1e-9, -1e-9, 6e-5}) {
        for (std::size_t at = 0; at < 19; ++at) {
            std::vector<double> v(19, 1.0);
            v[at] = bad;
            for (std::size_t len : {std::size_t{1}, std::size_t{4}, std::size_t{19}}) {
                ASSERT_EQ(kernels::any_outside(v.data(), static_cast<std::int64_t>(len),
                                               kHalfMinNormal, kHalfMax / 2),
                          outside_reference(v, 0, len, kHalfMinNormal, kHalfMax / 2))
                    << bad << " at " << at << " len " << len;
            }
        }
    }
    std::vector<double> in(1000, -3.0);
    in[500] = 0.0;
    EXPECT_FALSE(kernels::any_outside(in.data(), 1000, kHalfMinNormal, kHalfMax / 2));

    // Counts, min ratio and scaling over random values spanning FP16's range and beyond.
    std::vector<double> a = random_values(2051, -40, 20, 5);
    a[17] = nan;
    a[1000] = inf;
    a[1001] = -lim.underflow;
    a[1002] = lim.subnormal;
    a[1003] = lim.overflow;
    const std::vector<double> si = random_values(a.size(), -3, 3, 6);
    std::vector<double> s1(si.size()), s2(si.size()), dd(si.size());
    for (std::size_t i = 0; i < si.size(); ++i) {
        s1[i] = std::fabs(si[i]) + 0.5;
        s2[i] = std::fabs(si[(i * 7) % si.size()]) + 0.25;
    }
    for (std::size_t b : {std::size_t{0}, std::size_t{3}}) {
        for (std::size_t e : {a.size(), a.size() - 2, std::size_t{300}, std::size_t{5}}) {
            SCOPED_TRACE("range " + std::to_string(b) + ".." + std::to_string(e));
            const auto n = static_cast<std::int64_t>(e - b);
            TruncationCounts want;
            for (std::size_t i = b; i < e; ++i) count_by_limits(a[i], lim, want);
            expect_counts_eq(kernels::count_range(a.data() + b, n, lim), want);

            double largest = 0.0;
            for (std::size_t i = b; i < e; ++i) {
                const double x = std::fabs(a[i]) * s1[i] * s2[i];
                if (x > largest) largest = x;  // NaN skipped
            }
            EXPECT_EQ(kernels::max_scaled_abs(a.data() + b, s1.data() + b, s2.data() + b, n),
                      largest);

            TruncationCounts scaled_want;
            std::vector<double> out_want(a.size()), out(a.size());
            for (std::size_t i = b; i < e; ++i) {
                out_want[i] = a[i] / (s1[i] * s2[i]);
                count_by_limits(out_want[i], lim, scaled_want);
            }
            expect_counts_eq(kernels::scale_counted(a.data() + b, s1.data() + b, s2.data() + b,
                                                    out.data() + b, n, lim),
                             scaled_want);
            for (std::size_t i = b; i < e; ++i) {
                ASSERT_EQ(std::bit_cast<std::uint64_t>(out[i]),
                          std::bit_cast<std::uint64_t>(out_want[i]))
                    << i;
            }
            expect_counts_eq(
                kernels::count_scaled(a.data() + b, s1.data() + b, s2.data() + b, n, lim),
                scaled_want);
        }
    }
    EXPECT_EQ(kernels::max_scaled_abs(in.data(), s1.data(), s2.data(), 0), 0.0);

    const std::vector<double> v = random_values(1003, -5, 5, 8);
    double sum = 0.0;
    for (double x : v) sum += std::fabs(x);
    EXPECT_NEAR(kernels::sum_abs(v.data(), static_cast<std::int64_t>(v.size())), sum, 1e-13 * sum);
    EXPECT_EQ(kernels::sum_abs(v.data(), 0), 0.0);

    // largest_finite_abs: Inf and NaN (either sign) skipped wherever they sit, the largest value
    // at every position of short arrays, subnormals and an all-non-finite array (0).
    std::vector<double> w = random_values(1003, -1074, 1023, 9);
    for (std::size_t i = 5; i < w.size(); i += 37) w[i] = i % 2 ? nan : -inf;
    for (std::size_t b = 0; b < 40; b += 3) {
        for (std::size_t e = b; e <= w.size(); e += 1 + e / 5) {
            double want = 0.0;
            for (std::size_t i = b; i < e; ++i) {
                if (std::isfinite(w[i])) want = std::max(want, std::fabs(w[i]));
            }
            ASSERT_EQ(kernels::largest_finite_abs(w.data() + b, static_cast<std::int64_t>(e - b)),
                      want)
                << b << " " << e;
        }
    }
    for (std::size_t at = 0; at < 19; ++at) {
        std::vector<double> u(19, -0.5);
        u[(at + 7) % 19] = inf;
        u[at] = -3.0;
        EXPECT_EQ(kernels::largest_finite_abs(u.data(), 19), 3.0) << at;
    }
    // finite_range: the same largest, the smallest nonzero finite magnitude and whether a
    // non-finite value is present, against the scalar loop on the same slices (zeros too).
    for (std::size_t i = 3; i < w.size(); i += 41) w[i] = i % 3 ? 0.0 : -0.0;
    for (std::size_t b = 0; b < 40; b += 7) {
        for (std::size_t e = b; e <= w.size(); e += 1 + e / 4) {
            double hi = 0.0, lo = inf;
            bool bad = false;
            for (std::size_t i = b; i < e; ++i) {
                const double m = std::fabs(w[i]);
                if (!std::isfinite(m)) {
                    bad = true;
                    continue;
                }
                hi = std::max(hi, m);
                if (m > 0.0) lo = std::min(lo, m);
            }
            const kernels::FiniteRange r =
                kernels::finite_range(w.data() + b, static_cast<std::int64_t>(e - b));
            ASSERT_EQ(r.largest, hi) << b << " " << e;
            ASSERT_EQ(r.smallest, lo) << b << " " << e;
            ASSERT_EQ(r.nonfinite, bad) << b << " " << e;
        }
    }
    const std::vector<double> none = {nan, inf, -inf};
    EXPECT_EQ(kernels::largest_finite_abs(none.data(), 3), 0.0);
    EXPECT_EQ(kernels::finite_range(none.data(), 3).smallest, inf);
    EXPECT_TRUE(kernels::finite_range(none.data(), 3).nonfinite);
    const std::vector<double> clean(17, -2.0);
    EXPECT_FALSE(kernels::finite_range(clean.data(), 17).nonfinite);
    EXPECT_EQ(kernels::finite_range(clean.data(), 17).smallest, 2.0);
    const double tiny = std::numeric_limits<double>::denorm_min();
    const std::vector<double> sub = {0.0, -tiny, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    EXPECT_EQ(kernels::largest_finite_abs(sub.data(), 9), tiny);
    EXPECT_EQ(kernels::finite_range(sub.data(), 9).smallest, tiny);
}

// sqrt_over: the scalar loop's bits for s = sqrt(v / g), in place too; false exactly when some
// value (vector part or tail) is zero, negative, NaN or infinite.
void check_sqrt_over() {
    const std::vector<double> mags = random_values(203, -300, 300, 5);
    std::vector<double> v(mags.size());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::fabs(mags[i]) + 0x1p-1000;
    const auto n = static_cast<std::int64_t>(v.size());
    for (const double g : {16384.0, 1.0, 0x1p-7}) {
        std::vector<double> s(v.size(), -1.0);
        ASSERT_TRUE(kernels::sqrt_over(v.data(), n, g, s.data()));
        for (std::size_t i = 0; i < v.size(); ++i) {
            ASSERT_EQ(std::bit_cast<std::uint64_t>(s[i]),
                      std::bit_cast<std::uint64_t>(std::sqrt(v[i] / g)))
                << i;
        }
        std::vector<double> in_place = v;
        ASSERT_TRUE(kernels::sqrt_over(in_place.data(), n, g, in_place.data()));
        EXPECT_EQ(in_place, s);
    }
    // inverse_sqrt: the scalar loop's bits for 1 / sqrt(v).
    std::vector<double> inv(v.size(), -1.0);
    kernels::inverse_sqrt(v.data(), n, inv.data());
    for (std::size_t i = 0; i < v.size(); ++i) {
        ASSERT_EQ(std::bit_cast<std::uint64_t>(inv[i]),
                  std::bit_cast<std::uint64_t>(1.0 / std::sqrt(v[i])))
            << i;
    }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    for (const double bad : {0.0, -1.0, nan, inf, -0.0}) {
        for (std::size_t at : {std::size_t{0}, std::size_t{9}, v.size() - 1}) {
            std::vector<double> w = v, s(v.size());
            w[at] = bad;
            EXPECT_FALSE(kernels::sqrt_over(w.data(), n, 2.0, s.data())) << bad << " at " << at;
        }
    }
}

// The scalar reference of pivot_ratios: one r x r block, row-major, eliminated in place.
double reference_pivot_ratio(std::vector<double> m, int r) {
    double big = 0.0, smallest = std::numeric_limits<double>::infinity();
    for (const double v : m) big = std::max(big, std::fabs(v));
    for (int c = 0; c < r; ++c) {
        int piv = c;
        for (int i = c + 1; i < r; ++i) {
            if (std::fabs(m[i * r + c]) > std::fabs(m[piv * r + c])) piv = i;
        }
        for (int j = 0; j < r; ++j) std::swap(m[c * r + j], m[piv * r + j]);
        const double p = m[c * r + c];
        smallest = std::min(smallest, std::fabs(p));
        if (p == 0.0) return 0.0;
        for (int i = c + 1; i < r; ++i) {
            const double f = m[i * r + c] / p;
            for (int j = c; j < r; ++j) m[i * r + j] -= f * m[c * r + j];
        }
    }
    return big > 0.0 ? smallest / big : 0.0;
}

// pivot_ratios: the scalar elimination's bits for every block, across the lanes and in the
// tail: random blocks, ties in a pivot column (the first largest wins), a zero pivot at the
// start and in the middle of the elimination (0), a zero block (0), nearly singular blocks.
void check_pivot_ratios() {
    std::mt19937 gen(11);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (const int r : {1, 2, 3, 4, 5}) {
        SCOPED_TRACE(r);
        const int rr = r * r;
        std::vector<std::vector<double>> blocks;
        for (int b = 0; b < 37; ++b) {
            std::vector<double> m(static_cast<std::size_t>(rr));
            for (double& v : m) v = u(gen) * std::ldexp(1.0, static_cast<int>(8 * u(gen)));
            switch (b % 6) {
                case 1:  // ties: every entry of the first column alike in magnitude
                    for (int i = 0; i < r; ++i) m[i * r] = (i % 2 ? -1.5 : 1.5);
                    break;
                case 2:  // zero pivot at once
                    for (int i = 0; i < r; ++i) m[i * r] = 0.0;
                    break;
                case 3:  // two equal rows: a zero pivot later (r > 1)
                    if (r > 1) {
                        for (int j = 0; j < r; ++j) m[r + j] = m[j];
                    }
                    break;
                case 4:  // nearly singular
                    if (r > 1) {
                        for (int j = 0; j < r; ++j) m[r + j] = m[j] * (1.0 + 1e-12);
                    }
                    break;
                case 5:
                    if (b == 5) std::fill(m.begin(), m.end(), 0.0);
                    break;
                default:
                    break;
            }
            blocks.push_back(m);
        }
        const auto n = static_cast<std::int64_t>(blocks.size());
        std::vector<double> side(static_cast<std::size_t>(n * rr)), out(blocks.size());
        for (std::int64_t b = 0; b < n; ++b) {
            for (int k = 0; k < rr; ++k) {
                side[static_cast<std::size_t>(k * n + b)] =
                    blocks[static_cast<std::size_t>(b)][static_cast<std::size_t>(k)];
            }
        }
        kernels::pivot_ratios(side.data(), n, r, out.data());
        for (std::int64_t b = 0; b < n; ++b) {
            const double want = reference_pivot_ratio(blocks[static_cast<std::size_t>(b)], r);
            ASSERT_EQ(std::bit_cast<std::uint64_t>(out[static_cast<std::size_t>(b)]),
                      std::bit_cast<std::uint64_t>(want))
                << "block " << b << ": " << out[static_cast<std::size_t>(b)] << " vs " << want;
            if (b % 6 == 2 || (b % 6 == 3 && r > 1) || b == 5) {
                EXPECT_EQ(want, 0.0) << b;
            }
        }
    }
}

TEST(SetupSimd, EveryTargetMatchesScalarLoops) {
    testing::on_every_target([&](std::int64_t t) {
        ASSERT_STREQ(kernels::setup_target_name(), hwy::TargetName(t));
        check_target();
        check_sqrt_over();
        check_pivot_ratios();
    });
}

}  // namespace
}  // namespace mpmg
