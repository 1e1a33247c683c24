#include "core/float16.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace mpmg {
namespace {

TEST(Float16, ExactValuesRoundTrip) {
    for (double v : {0.0, 1.0, -2.0, 0.5, 65504.0, -65504.0, kHalfMinNormal, kHalfMinSubnormal,
                     1.0009765625 /* 1 + 2^-10 */, 3.140625}) {
        EXPECT_EQ(double_from_half(half_from_double(v)), v) << v;
    }
    EXPECT_EQ(half_from_double(1.0).bits, 0x3C00);
    EXPECT_EQ(half_from_double(-2.0).bits, 0xC000);
    EXPECT_EQ(half_from_double(65504.0).bits, 0x7BFF);
    EXPECT_EQ(half_from_double(kHalfMinSubnormal).bits, 0x0001);
}

TEST(Float16, EveryHalfRoundTripsAndMidpointsTieToEven) {
    for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
        const half h{static_cast<std::uint16_t>(bits)};
        const double v = double_from_half(h);
        if (std::isnan(v)) continue;
        EXPECT_EQ(half_from_double(v).bits, h.bits) << bits;
        // The midpoint to the next larger magnitude rounds to whichever of the two is even.
        const half next{static_cast<std::uint16_t>(bits + 1)};
        const double w = double_from_half(next);
        if ((bits & 0x7FFF) >= 0x7C00 || !std::isfinite(w)) continue;
        const std::uint16_t even = (h.bits & 1) == 0 ? h.bits : next.bits;
        EXPECT_EQ(half_from_double(0.5 * (v + w)).bits, even) << bits;
    }
}

TEST(Float16, RoundsToNearestEvenAndOverflows) {
    // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even -> 1.
    EXPECT_EQ(double_from_half(half_from_double(1.0 + std::ldexp(1.0, -11))), 1.0);
    // 1 + 3*2^-11 is halfway between 1+2^-10 and 1+2^-9: ties to even -> 1 + 2^-9.
    EXPECT_EQ(double_from_half(half_from_double(1.0 + 3 * std::ldexp(1.0, -11))),
              1.0 + std::ldexp(1.0, -9));
    EXPECT_EQ(double_from_half(half_from_double(65519.0)), 65504.0);
    EXPECT_TRUE(std::isinf(double_from_half(half_from_double(65520.0))));
    EXPECT_EQ(double_from_half(half_from_double(std::ldexp(1.0, -26))), 0.0);
    EXPECT_EQ(double_from_half(half_from_double(std::ldexp(3.0, -26))), kHalfMinSubnormal);
    EXPECT_TRUE(std::isnan(double_from_half(half_from_double(std::nan("")))));
}

TEST(Float16, MatchesFloatRoundingOnRandomValues) {
    // A value exactly representable in float rounds the same from double and from float; compare
    // against the correctly rounded neighbour search.
    std::mt19937 gen(42);
    std::uniform_real_distribution<double> mant(-1.0, 1.0);
    std::uniform_int_distribution<int> ex(-30, 17);
    for (int t = 0; t < 20000; ++t) {
        const double x = std::ldexp(mant(gen), ex(gen));
        const double y = double_from_half(half_from_double(x));
        if (std::isinf(y)) {
            EXPECT_GE(std::fabs(x), 65520.0);
            continue;
        }
        // No representable half is strictly closer than y.
        const half h = half_from_double(x);
        for (int delta : {-1, 1}) {
            const half nb{static_cast<std::uint16_t>(h.bits + delta)};
            const double z = double_from_half(nb);
            if (std::isfinite(z) && ((nb.bits ^ h.bits) & 0x8000) == 0) {
                EXPECT_GE(std::fabs(z - x), std::fabs(y - x)) << x;
            }
        }
    }
}

TEST(Bfloat16, RoundsToNearestEven) {
    EXPECT_EQ(bf16_from_double(1.0).bits, 0x3F80);
    EXPECT_EQ(double_from_bf16(bf16_from_double(1.0 + std::ldexp(1.0, -8))), 1.0);
    EXPECT_EQ(double_from_bf16(bf16_from_double(1.0 + 3 * std::ldexp(1.0, -8))),
              1.0 + std::ldexp(1.0, -6));
    EXPECT_TRUE(std::isinf(double_from_bf16(bf16_from_double(1e39))));
    EXPECT_LE(std::fabs(double_from_bf16(bf16_from_double(1e30)) - 1e30),
              1e30 * std::ldexp(1.0, -8));
}

TEST(Truncation, CountsOverflowUnderflowSubnormal) {
    TruncationCounts c;
    truncate_counted<half>(1e6, c);
    truncate_counted<half>(1e-9, c);
    truncate_counted<half>(1e-6, c);
    truncate_counted<half>(1.0, c);
    truncate_counted<half>(0.0, c);
    EXPECT_EQ(c.overflow, 1);
    EXPECT_EQ(c.underflow, 1);
    EXPECT_EQ(c.subnormal, 1);
    TruncationCounts f;
    truncate_counted<float>(1e30, f);
    EXPECT_EQ(f.overflow, 0);
}

}  // namespace
}  // namespace mpmg
