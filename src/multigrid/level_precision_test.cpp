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

}  // namespace
}  // namespace mpmg
