#include "kernels/convert.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

namespace mpmg {
namespace {

TEST(KernelConvert, HalfToFloatIsExactForAllBitPatterns) {
    for (std::uint32_t bits = 0; bits < 0x10000u; ++bits) {
        const half h{static_cast<std::uint16_t>(bits)};
        const double want = double_from_half(h);
        const float got = kernels::half_to_float(h);
        if (std::isnan(want)) {
            EXPECT_TRUE(std::isnan(got)) << bits;
        } else {
            ASSERT_EQ(static_cast<double>(got), want) << bits;
            ASSERT_EQ(std::signbit(got), std::signbit(want)) << bits;
        }
    }
}

TEST(KernelConvert, Bf16ToFloatIsExactForAllBitPatterns) {
    for (std::uint32_t bits = 0; bits < 0x10000u; ++bits) {
        const bfloat16 b{static_cast<std::uint16_t>(bits)};
        const double want = double_from_bf16(b);
        const float got = kernels::bf16_to_float(b);
        if (std::isnan(want)) {
            EXPECT_TRUE(std::isnan(got)) << bits;
        } else {
            ASSERT_EQ(static_cast<double>(got), want) << bits;
        }
    }
}

}  // namespace
}  // namespace mpmg
