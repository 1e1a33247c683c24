#include "mpmg/precision.hpp"

#include <gtest/gtest.h>

#include "mpmg/errors.hpp"

namespace mpmg {
namespace {

TEST(Precision, ParsesKNotation) {
    const PrecisionPlan p = parse_precision("K64P32D16");
    EXPECT_EQ(p.krylov, Precision::fp64);
    EXPECT_EQ(p.level(0), (LevelPrecision{Precision::fp32, Precision::fp16}));
    EXPECT_EQ(p.level(7), (LevelPrecision{Precision::fp32, Precision::fp16}));
    EXPECT_EQ(p.notation(), "K64P32D16");
    EXPECT_EQ(parse_precision("K32P32Dbf16").level(0).storage, Precision::bf16);
    EXPECT_EQ(parse_precision("K64P64D64").notation(), "K64P64D64");
}

TEST(Precision, ShiftLevelStoresInComputePrecision) {
    PrecisionPlan p = parse_precision("K64P32D16");
    p.shift_level = 2;
    EXPECT_EQ(p.level(1).storage, Precision::fp16);
    EXPECT_EQ(p.level(2).storage, Precision::fp32);
    EXPECT_EQ(p.level(9).storage, Precision::fp32);
    EXPECT_EQ(p.notation(), "K64P32D16 shift=2");
}

TEST(Precision, ParsesGinkgoLists) {
    const PrecisionPlan p = parse_ginkgo_precision("DP-SP", "DP-SP-HP");
    EXPECT_EQ(p.level(0), (LevelPrecision{Precision::fp64, Precision::fp64}));
    EXPECT_EQ(p.level(1), (LevelPrecision{Precision::fp32, Precision::fp32}));
    EXPECT_EQ(p.level(2), (LevelPrecision{Precision::fp32, Precision::fp16}));
    EXPECT_EQ(p.level(5), (LevelPrecision{Precision::fp32, Precision::fp16}));
    EXPECT_EQ(p.notation(), "work=DP-SP-SP matrix=DP-SP-HP");
    EXPECT_EQ(parse_ginkgo_precision("DP", "").notation(), "K64P64D64");
}

TEST(Precision, RejectsMalformed) {
    for (const char* bad : {"", "K64", "K64P32", "K16P32D16", "K64P16D16", "K64P32D8", "K64P32D16x",
                            "K64P32D64", "fast"}) {
        EXPECT_THROW(parse_precision(bad), InvalidInput) << bad;
    }
    EXPECT_THROW(parse_ginkgo_precision("DP-XP", ""), InvalidInput);
    EXPECT_THROW(parse_ginkgo_precision("HP", ""), InvalidInput);
    EXPECT_THROW(parse_ginkgo_precision("SP", "DP"), InvalidInput);
    EXPECT_THROW(parse_ginkgo_precision("DP-", ""), InvalidInput);
}

TEST(Precision, AutoRoundTrips) {
    const PrecisionPlan p = parse_precision("auto");
    EXPECT_TRUE(p.automatic);
    EXPECT_EQ(p.notation(), "auto");
}

}  // namespace
}  // namespace mpmg

namespace mpmg {
namespace {

// A one-level hierarchy is its FP64 LU: with auto its vectors stay FP64; explicit plans and
// coarser direct levels keep their compute precision.
TEST(PrecisionPlan, DirectLevelVectors) {
    const PrecisionPlan a = parse_precision("auto");
    EXPECT_EQ(a.direct_compute(0), Precision::fp64);
    EXPECT_EQ(a.direct_compute(3), Precision::fp32);
    const PrecisionPlan k = parse_precision("K64P32D16");
    EXPECT_EQ(k.direct_compute(0), Precision::fp32);
    EXPECT_EQ(k.direct_compute(2), Precision::fp32);
}

}  // namespace
}  // namespace mpmg
