#include "multigrid/level_precision.hpp"

#include <gtest/gtest.h>

namespace mpmg {
namespace {

// r = 2 blocks [[1, -(1-eps)], [-(1-eps), 1]] on the centre and weak -0.01 couplings outside.
SgDiaMatrix<double> coupled_blocks(double eps) {
    SgDiaMatrix<double> a(Box{3, 3, 3}, Stencil::named("3d7"), 2);
    for (std::int64_t c = 0; c < a.box().cells(); ++c) {
        for (int d = 0; d < a.stencil().size(); ++d) {
            if (!a.neighbour_inside(c, d)) continue;
            for (int i = 0; i < 2; ++i) {
                for (int j = 0; j < 2; ++j) {
                    const bool centre = d == a.stencil().center();
                    a.value(d, c, i, j) =
                        centre ? (i == j ? 1.0 : -(1.0 - eps)) : (i == j ? -0.01 : 0.0);
                }
            }
        }
    }
    return a;
}

const LevelPrecision kP32D16{Precision::fp32, Precision::fp16};

TEST(LevelPrecision, NearlySingularBlocksStayInComputePrecision) {
    const StorageDecision bad = decide_storage(coupled_blocks(1e-5), kP32D16, true, false);
    EXPECT_EQ(bad.precision.storage, Precision::fp32);
    EXPECT_NE(bad.note.find("too close to singular"), std::string::npos) << bad.note;
    const StorageDecision good = decide_storage(coupled_blocks(0.3), kP32D16, true, false);
    EXPECT_EQ(good.precision.storage, Precision::fp16) << good.note;
}

TEST(LevelPrecision, OverflowWidensUnlessFallbackIsOff) {
    SgDiaMatrix<double> a = coupled_blocks(0.3);
    for (double& v : a.values()) v *= 1e9;
    const StorageDecision widened = decide_storage(a, kP32D16, false, false);
    EXPECT_EQ(widened.precision.storage, Precision::fp32);
    EXPECT_NE(widened.note.find("overflow"), std::string::npos);
    const StorageDecision kept = decide_storage(a, kP32D16, false, false, false);
    EXPECT_EQ(kept.precision.storage, Precision::fp16);
    const StorageDecision scaled = decide_storage(a, kP32D16, true, false);
    EXPECT_EQ(scaled.precision.storage, Precision::fp16);
    EXPECT_TRUE(scaled.scaled);
}

// A scaled level's diagonal is G: entries that underflow are below its rounding and do not make
// auto widen the storage; without scaling, the same entries do.
TEST(LevelPrecision, AutoKeepsFp16WhenUnderflowIsBelowTheScaledDiagonalsRounding) {
    // A tenth of the off-centre couplings -1e-6, tiny against the diagonal (FP16 subnormal).
    const auto with_tiny = [](double scale) {
        SgDiaMatrix<double> a = coupled_blocks(0.3);
        for (double& v : a.values()) v *= scale;
        int k = 0;
        for (int d = 0; d < a.stencil().size(); ++d) {
            if (d == a.stencil().center()) continue;
            for (std::int64_t c = 0; c < a.box().cells(); ++c) {
                if (a.neighbour_inside(c, d) && ++k % 10 == 0) a.value(d, c, 0, 0) = -1e-6;
            }
        }
        return a;
    };
    const StorageDecision unscaled = decide_storage(with_tiny(1.0), kP32D16, false, true);
    EXPECT_EQ(unscaled.precision.storage, Precision::fp32) << unscaled.note;
    EXPECT_NE(unscaled.note.find("underflow"), std::string::npos) << unscaled.note;
    // Diagonal 1e6, outside FP16: scaled to G, the tiny entries underflow to zero.
    const StorageDecision scaled = decide_storage(with_tiny(1e6), kP32D16, true, true);
    ASSERT_TRUE(scaled.scaled) << scaled.note;
    EXPECT_GE(scaled.g, 0.125);
    EXPECT_EQ(scaled.precision.storage, Precision::fp16) << scaled.note;
    EXPECT_EQ(scaled.note.find(" 0 of "), std::string::npos)
        << "nothing underflowed: " << scaled.note;
}

}  // namespace
}  // namespace mpmg
