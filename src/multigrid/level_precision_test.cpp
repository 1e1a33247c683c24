#include "multigrid/level_precision.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "io/problems.hpp"
#include "multigrid/scaling.hpp"
#include "multigrid/truncate.hpp"

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
constexpr double kHalfMaxOver2 = 32752.0;           // kHalfMax / 2, FP16 0x77FF
constexpr double kSubnormal = 1023.0 / 16777216.0;  // FP16's largest subnormal, 1023 x 2^-24

TEST(LevelPrecision, NearlySingularBlocksStayInComputePrecision) {
    const StorageDecision bad = decide_storage(coupled_blocks(1e-5), kP32D16, true, false);
    EXPECT_EQ(bad.precision.storage, Precision::fp32);
    EXPECT_NE(bad.note.find("too close to singular"), std::string::npos) << bad.note;
    const StorageDecision good = decide_storage(coupled_blocks(0.3), kP32D16, true, false);
    EXPECT_EQ(good.precision.storage, Precision::fp16) << good.note;
}

// The block check runs cells in parallel parts of a few thousand: the note names the first
// nearly singular block wherever it lies, for the unrolled r = 3 and the generic r = 5.
TEST(LevelPrecision, NearlySingularBlockIsFoundWhereverItLies) {
    for (const int r : {3, 5}) {
        for (const std::int64_t bad_cell :
             {std::int64_t{0}, std::int64_t{4500}, std::int64_t{9599}}) {
            SCOPED_TRACE(testing::Message() << "r " << r << " cell " << bad_cell);
            SgDiaMatrix<double> a(Box{20, 24, 20}, Stencil::named("3d7"), r);
            const int centre = a.stencil().center();
            for (std::int64_t c = 0; c < a.box().cells(); ++c) {
                for (int d = 0; d < a.stencil().size(); ++d) {
                    if (!a.neighbour_inside(c, d)) continue;
                    for (int i = 0; i < r; ++i) a.value(d, c, i, i) = d == centre ? 8.0 : -1.0;
                }
            }
            // Rows 0 and 1 of the bad block nearly equal, (8, 8) and (8, 8 (1 + 1e-6)): its
            // second pivot is 1e-6 of its largest entry, and 0 once rounded to FP16.
            a.value(centre, bad_cell, 0, 1) = 8.0;
            a.value(centre, bad_cell, 1, 0) = 8.0;
            a.value(centre, bad_cell, 1, 1) = 8.0 * (1.0 + 1e-6);
            const StorageDecision dec = decide_storage(a, kP32D16, true, false);
            EXPECT_EQ(dec.precision.storage, Precision::fp32);
            EXPECT_NE(dec.note.find(fmt::format("block of cell {} is too close", bad_cell)),
                      std::string::npos)
                << dec.note;
        }
    }
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

// The serial hierarchy's one-pass scaled FP16 decision (pretruncate: G tried from the top and
// checked on the largest scaled value) chooses the G of the min-ratio rule (compute_scaling,
// what the decision without pretruncate uses) and truncates bit for bit what truncate_scaled
// makes with that rule's s: on levels whose G is the largest (laplace27e8, rhd3t), one whose
// 4x4 blocks have couplings above their diagonals (oil4c, G = 8192 there: tried first from
// the centre blocks' ratio), one whose G is 16x lower (|a_ij| = 20 sqrt(a_ii a_jj)), and oil4c
// with a coupling to a neighbour 40 times above its rows' diagonals (the centre blocks' G
// tried and given up: G = 512).
TEST(LevelPrecision, OnePassScaledFp16ChoosesTheMinRatioG) {
    SgDiaMatrix<double> steep = laplace27(Box{6, 5, 4}, 1e7);
    steep.value(steep.stencil().find(Offset{1, 0, 0}), 7, 0, 0) = -20 * 26e7;  // ratio 1/20
    SgDiaMatrix<double> far = make_oil4c(Box{6, 6, 6}, 5).a;
    {
        const int centre = far.stencil().center();
        const int east = far.stencil().find(Offset{1, 0, 0});
        const double d1 = far.value(centre, 50, 1, 1), d2 = far.value(centre, 51, 2, 2);
        far.value(east, 50, 1, 2) = -40.0 * std::sqrt(d1 * d2);
    }
    const SgDiaMatrix<double> cases[] = {laplace27(Box{7, 6, 5}, 1e8),
                                         make_rhd3t(Box{6, 6, 6}, 3).a,
                                         make_oil4c(Box{6, 6, 6}, 5).a, steep, far};
    std::vector<double> gs;
    for (const SgDiaMatrix<double>& a : cases) {
        const StorageDecision one = decide_storage(a, kP32D16, true, false, true, true);
        const StorageDecision two = decide_storage(a, kP32D16, true, false, true, false);
        ASSERT_TRUE(one.scaled) << one.note;
        ASSERT_TRUE(two.scaled) << two.note;
        ASSERT_NE(one.truncated, nullptr);
        EXPECT_EQ(one.precision.storage, Precision::fp16);
        EXPECT_EQ(one.g, two.g);
        EXPECT_NEAR(one.g_max, two.g_max, 1e-12 * two.g_max);
        EXPECT_EQ(one.s, two.s);
        TruncationCounts want_counts;
        const SgDiaMatrix<half> want = truncate_scaled<half>(a, two.s, want_counts);
        ASSERT_EQ(one.truncated->values().size(), want.values().size());
        for (std::size_t k = 0; k < want.values().size(); ++k) {
            ASSERT_EQ(one.truncated->values()[k].bits, want.values()[k].bits) << k;
        }
        EXPECT_EQ(one.truncated_counts.overflow, 0);
        EXPECT_EQ(one.truncated_counts.underflow, want_counts.underflow);
        EXPECT_EQ(one.truncated_counts.subnormal, want_counts.subnormal);
        gs.push_back(one.g);
    }
    EXPECT_EQ(gs[0], 16384);
    EXPECT_EQ(gs[2], 8192);
    EXPECT_EQ(gs[3], 1024);
    EXPECT_EQ(gs[4], 512);
    // The centre blocks' ratios: 1 for scalar matrices, oil4c's above 2 (the G above), and 0
    // for a diagonal entry that is not positive.
    EXPECT_EQ(centre_ratio(cases[0]), 1.0);
    EXPECT_GT(centre_ratio(cases[2]), 2.0);
    EXPECT_LT(centre_ratio(cases[2]), 4.0);
    SgDiaMatrix<double> negative = make_oil4c(Box{4, 4, 4}, 5).a;
    negative.value(negative.stencil().center(), 9, 2, 2) = -1.0;
    EXPECT_EQ(centre_ratio(negative), 0.0);
}

// What cannot be scaled widens with the reason, in one pass as with the min-ratio rule.
TEST(LevelPrecision, OnePassScaledFp16WidensWhatCannotBeScaled) {
    SgDiaMatrix<double> negative = laplace27(Box{5, 5, 5}, 1e8);
    negative.value(negative.stencil().center(), 9, 0, 0) = -1.0;
    SgDiaMatrix<double> infinite = laplace27(Box{5, 5, 5}, 1e8);
    infinite.value(0, 62, 0, 0) = std::numeric_limits<double>::infinity();  // cell (2, 2, 2)
    for (const SgDiaMatrix<double>* a : {&negative, &infinite}) {
        const StorageDecision one = decide_storage(*a, kP32D16, true, false, true, true);
        const StorageDecision two = decide_storage(*a, kP32D16, true, false, true, false);
        EXPECT_EQ(one.precision.storage, Precision::fp32);
        EXPECT_EQ(one.truncated, nullptr);
        EXPECT_EQ(one.note, two.note);
        EXPECT_NE(one.note.find("cannot scale"), std::string::npos) << one.note;
    }
}

// The FP16 range check found while the exact FP16 copy is made (HalfFacts, from the kernel's
// pass over the bits it wrote) gives what the FP64 check gives on the same values (the scalar
// reference: |v| against FP16's smallest normal and max / 2), at every edge of the range, with
// the subnormal count truncate<half> makes; decide_storage takes the same decision with the
// facts as without. Values FP16 does not hold (NaN, Inf, 2e-5) give no copy.
TEST(LevelPrecision, RangeCheckOfTheExactFp16CopyIsTheFp64Ones) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    const double values[] = {
        0.0,        -0.0,  kHalfMinNormal, -kHalfMinNormal, kHalfMaxOver2, -32752.0, 1.0,  -26.0,
        kSubnormal, -2e-5, 32768.0,        kHalfMax,        -kHalfMax,     inf,      -inf, nan};
    for (const double v : values) {
        SCOPED_TRACE(v);
        // Large enough for full vector chunks on every target; the value sits in the middle.
        SgDiaMatrix<double> a = laplace27(Box{24, 20, 16});
        const int d = 5;
        const std::int64_t cell = a.box().cells() / 2 + 3;
        ASSERT_TRUE(a.neighbour_inside(cell, d));
        a.value(d, cell, 0, 0) = v;
        SgDiaMatrix<half> h(a.box(), a.stencil(), 1);
        HalfFacts facts;
        const bool exact = holds_multiple(a, 1.0, h, &facts);
        EXPECT_EQ(exact, std::isfinite(v) && to_double(half_from_double(v)) == v);
        if (!exact) continue;
        const double m = std::fabs(v);
        const bool subnormal = m != 0.0 && m < kHalfMinNormal;
        EXPECT_EQ(facts.outside, m > kHalfMaxOver2 || subnormal);
        TruncationCounts counts;
        (void)truncate<half>(a, counts);
        EXPECT_EQ(facts.subnormal, counts.subnormal);
        EXPECT_EQ(facts.subnormal, subnormal ? 1 : 0);
        const StorageDecision from_a = decide_storage(a, kP32D16, true, false);
        const StorageDecision from_h =
            decide_storage(a, kP32D16, true, false, true, false, nullptr, &facts);
        EXPECT_EQ(from_h.scaled, from_a.scaled);
        EXPECT_EQ(from_h.precision.storage, from_a.precision.storage);
        EXPECT_EQ(from_h.note, from_a.note);
    }
}

}  // namespace
}  // namespace mpmg
