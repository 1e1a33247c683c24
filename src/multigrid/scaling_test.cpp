#include "multigrid/scaling.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "core/float16.hpp"
#include "io/problems.hpp"
#include "multigrid/truncate.hpp"
#include "smoothers/ilu0.hpp"

namespace mpmg {
namespace {

// A random SPD-like 27-point matrix with entries spanning 10^lo .. 10^hi: diagonal dominant,
// symmetric (a_ij = a_ji), values varying over many orders of magnitude from cell to cell.
SgDiaMatrix<double> wide_range_matrix(Box box, double lo, double hi, unsigned seed) {
    SgDiaMatrix<double> a(box, Stencil::named("3d27"), 1);
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> expo(lo, hi);
    std::vector<double> cell_scale(static_cast<std::size_t>(box.cells()));
    for (double& s : cell_scale) s = std::pow(10.0, expo(gen));
    const int center = a.stencil().center();
    for (std::int64_t c = 0; c < box.cells(); ++c) {
        for (int d = 0; d < a.stencil().size(); ++d) {
            if (d == center || !a.neighbour_inside(c, d)) continue;
            const Offset& o = a.stencil()[d];
            const std::int64_t nb =
                c + o.dx + std::int64_t{box.nx} * (o.dy + std::int64_t{box.ny} * o.dz);
            // symmetric: geometric mean of the two cells' scales
            const double v = -std::sqrt(cell_scale[c] * cell_scale[nb]) * 0.5;
            a.value(d, c, 0, 0) = v;
            a.value(center, c, 0, 0) += -2.0 * v;
        }
        a.value(center, c, 0, 0) += cell_scale[c];
    }
    return a;
}

// y = A x in FP64 for any storage type, applying y_i = s_i sum_j â_ij s_j x_j when s is given.
template <class T>
std::vector<double> apply(const SgDiaMatrix<T>& a, const std::vector<double>& x,
                          const std::vector<double>* s) {
    const Box& box = a.box();
    std::vector<double> y(x.size(), 0.0);
    for (std::int64_t c = 0; c < box.cells(); ++c) {
        for (int d = 0; d < a.stencil().size(); ++d) {
            if (!a.neighbour_inside(c, d)) continue;
            const Offset& o = a.stencil()[d];
            const std::int64_t nb =
                c + o.dx + std::int64_t{box.nx} * (o.dy + std::int64_t{box.ny} * o.dz);
            const double xs = s ? (*s)[nb] * x[nb] : x[nb];
            y[c] += to_double(a.value(d, c, 0, 0)) * xs;
        }
        if (s) y[c] *= (*s)[c];
    }
    return y;
}

TEST(Scaling, NoOverflowUpTo1e30AndGBelowGmax) {
    const SgDiaMatrix<double> a = wide_range_matrix(Box{6, 5, 4}, -6.0, 30.0, 7);
    const LevelScaling sc = compute_scaling(a, kHalfMax);
    ASSERT_TRUE(sc.ok) << sc.problem;
    EXPECT_LT(sc.g, sc.g_max);
    EXPECT_GE(sc.g, sc.g_max / 4);  // largest power of two <= G_max/2
    const SgDiaMatrix<double> scaled = scale_matrix(a, sc.s);
    // The check that proves G < G_max is enough: every scaled entry is inside the FP16 range.
    double max_abs = 0.0;
    for (double v : scaled.values()) max_abs = std::max(max_abs, std::fabs(v));
    EXPECT_LT(max_abs, kHalfMax);
    EXPECT_DOUBLE_EQ(scaled.value(scaled.stencil().center(), 0, 0, 0), sc.g);
    TruncationCounts counts;
    const SgDiaMatrix<half> h = truncate<half>(scaled, counts);
    EXPECT_EQ(counts.overflow, 0);
    // Without scaling the same matrix overflows.
    TruncationCounts direct = count_truncation<half>(a);
    EXPECT_GT(direct.overflow, 0);
}

// Scaling inside the truncation (no FP64 Â) gives Â's truncation bit for bit, with its counts
// (also those of count_scaled_truncation), for scalar and block matrices.
template <class S>
void expect_scaled_truncation_equal(const SgDiaMatrix<double>& a, const std::vector<double>& s) {
    TruncationCounts via_matrix, inside;
    const SgDiaMatrix<S> want = truncate<S>(scale_matrix(a, s), via_matrix);
    const SgDiaMatrix<S> got = truncate_scaled<S>(a, s, inside);
    ASSERT_EQ(got.values().size(), want.values().size());
    for (std::size_t i = 0; i < got.values().size(); ++i) {
        ASSERT_EQ(got.values()[i].bits, want.values()[i].bits) << i;
    }
    const TruncationCounts counted = count_scaled_truncation(a, s, range_limits<S>());
    for (const TruncationCounts& c : {inside, counted}) {
        EXPECT_EQ(c.overflow, via_matrix.overflow);
        EXPECT_EQ(c.underflow, via_matrix.underflow);
        EXPECT_EQ(c.subnormal, via_matrix.subnormal);
        EXPECT_EQ(c.nonfinite_input, via_matrix.nonfinite_input);
    }
}

TEST(Scaling, ScalingInsideTheTruncationEqualsTruncatingTheScaledMatrix) {
    const SgDiaMatrix<double> a = wide_range_matrix(Box{7, 6, 5}, -8.0, 30.0, 11);
    const LevelScaling sc = compute_scaling(a, kHalfMax);
    ASSERT_TRUE(sc.ok);
    expect_scaled_truncation_equal<half>(a, sc.s);
    expect_scaled_truncation_equal<bfloat16>(a, sc.s);
    // A block matrix with entries far outside FP16's range; s need not come from its diagonal.
    SgDiaMatrix<double> b(Box{4, 3, 5}, Stencil::named("3d7"), 2);
    std::mt19937 gen(4);
    std::uniform_real_distribution<double> e(-40.0, 40.0);
    for (double& v : b.values()) v = std::ldexp(1.0, static_cast<int>(e(gen)));
    std::vector<double> s(static_cast<std::size_t>(b.rows()));
    for (double& v : s) v = std::ldexp(1.3, static_cast<int>(e(gen)) / 4);
    expect_scaled_truncation_equal<half>(b, s);
}

// Block matrices go through an entry-wise expansion of the row and column scales
// (for_each_inside_scaled_run): checked here against the definition, entry by entry, for the
// scaled values and for G_max = storage_max / max |a_ij| / sqrt(a_ii a_jj), the entries taken as
// |a_ij| (1 / sqrt(a_ii) 1 / sqrt(a_jj)).
TEST(Scaling, BlockEntriesScaleByTheirOwnRowAndColumn) {
    for (const int r : {2, 3, 4, 5}) {
        SCOPED_TRACE(r);
        SgDiaMatrix<double> b(Box{5, 4, 3}, Stencil::named("3d27"), r);
        std::mt19937 gen(static_cast<unsigned>(r));
        std::uniform_real_distribution<double> e(-20.0, 20.0);
        for (double& v : b.values()) v = -std::ldexp(1.1, static_cast<int>(e(gen)));
        const int center = b.stencil().center();
        for (std::int64_t c = 0; c < b.box().cells(); ++c) {
            for (int i = 0; i < r; ++i) b.value(center, c, i, i) = std::ldexp(1.7, 30 + 3 * i);
        }
        std::vector<double> s(static_cast<std::size_t>(b.rows()));
        for (double& v : s) v = std::ldexp(1.3, static_cast<int>(e(gen)) / 2);
        const SgDiaMatrix<double> scaled = scale_matrix(b, s);
        double largest = 0.0;  // the largest |a_ij| / sqrt(a_ii a_jj)
        for (std::int64_t c = 0; c < b.box().cells(); ++c) {
            for (int d = 0; d < b.stencil().size(); ++d) {
                if (!b.neighbour_inside(c, d)) continue;
                const Offset& o = b.stencil()[d];
                const std::int64_t nb =
                    c + o.dx + std::int64_t{b.box().nx} * (o.dy + std::int64_t{b.box().ny} * o.dz);
                for (int i = 0; i < r; ++i) {
                    for (int j = 0; j < r; ++j) {
                        const double v = b.value(d, c, i, j);
                        ASSERT_EQ(scaled.value(d, c, i, j), v / (s[c * r + i] * s[nb * r + j]))
                            << "cell " << c << " offset " << d << " entry " << i << "," << j;
                        const double inv_i = 1.0 / std::sqrt(b.value(center, c, i, i));
                        const double inv_j = 1.0 / std::sqrt(b.value(center, nb, j, j));
                        largest = std::max(largest, std::fabs(v) * (inv_i * inv_j));
                    }
                }
            }
        }
        const LevelScaling sc = compute_scaling(b, kHalfMax);
        ASSERT_TRUE(sc.ok) << sc.problem;
        EXPECT_EQ(sc.g_max, kHalfMax * (1.0 / largest));
    }
}

TEST(Scaling, RescaledProductMatchesWithinFp16Rounding) {
    const SgDiaMatrix<double> a = wide_range_matrix(Box{5, 6, 7}, 0.0, 12.0, 3);
    const LevelScaling sc = compute_scaling(a, kHalfMax);
    ASSERT_TRUE(sc.ok);
    TruncationCounts counts;
    const SgDiaMatrix<half> h = truncate<half>(scale_matrix(a, sc.s), counts);
    ASSERT_EQ(counts.overflow + counts.underflow, 0);
    std::mt19937 gen(1);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> x(static_cast<std::size_t>(a.rows()));
    for (double& v : x) v = u(gen);
    const std::vector<double> exact = apply(a, x, nullptr);
    const std::vector<double> approx = apply(h, x, &sc.s);
    // |y - ŷ|_i <= u_16 * sum_j |a_ij x_j| (relative rounding of every entry, u_16 = 2^-11).
    std::vector<double> ax(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) ax[i] = std::fabs(x[i]);
    SgDiaMatrix<double> abs_a = a;
    for (double& v : abs_a.values()) v = std::fabs(v);
    const std::vector<double> bound = apply(abs_a, ax, nullptr);
    for (std::size_t i = 0; i < x.size(); ++i) {
        EXPECT_LE(std::fabs(exact[i] - approx[i]), std::ldexp(1.0, -11) * bound[i] * 1.01) << i;
    }
}

TEST(Scaling, NonPositiveDiagonalCannotBeScaled) {
    SgDiaMatrix<double> a = wide_range_matrix(Box{3, 3, 3}, 0.0, 1.0, 5);
    a.value(a.stencil().center(), 13, 0, 0) = -1.0;
    const LevelScaling sc = compute_scaling(a, kHalfMax);
    EXPECT_FALSE(sc.ok);
    EXPECT_NE(sc.problem.find("row 13"), std::string::npos) << sc.problem;
}

// A scaled ILU(0) level factorises A and scales the factors inside their truncation
// (LevelImpl::truncate_factors_scaled): L-hat = S^{-1} L S with row scales s and column scales
// 1 / s, U-hat = S^{-1} U S^{-1}. They are the factors of the scaled matrix up to FP64
// rounding: within one FP16 step of truncate<half>(ilu0_factor(scale_matrix(a, s))), on the
// scalar weather operator and on rhd3t's 3 x 3 blocks, both far outside FP16's range.
TEST(Scaling, IluFactorsOfAScaleAsThoseOfTheScaledMatrix) {
    for (const StructuredProblem& p :
         {make_weather(Box{9, 8, 6}, 2), make_rhd3t(Box{7, 6, 5}, 3)}) {
        SCOPED_TRACE(p.name);
        const LevelScaling sc = compute_scaling(p.a, kHalfMax);
        ASSERT_TRUE(sc.ok) << sc.problem;
        std::vector<double> inv_s(sc.s.size());
        for (std::size_t i = 0; i < inv_s.size(); ++i) inv_s[i] = 1.0 / sc.s[i];
        const Ilu0Factors f = ilu0_factor(p.a);
        const Ilu0Factors want = ilu0_factor(scale_matrix(p.a, sc.s));
        TruncationCounts c;
        const SgDiaMatrix<half> l = truncate_scaled<half>(f.l, sc.s, c, {.s_col = &inv_s});
        const SgDiaMatrix<half> u = truncate_scaled<half>(f.u, sc.s, c);
        EXPECT_EQ(c.overflow, 0);
        const auto expect_close = [](const SgDiaMatrix<half>& got, const SgDiaMatrix<double>& ref,
                                     const char* what) {
            TruncationCounts unused;
            const SgDiaMatrix<half> r = truncate<half>(ref, unused);
            ASSERT_EQ(got.values().size(), r.values().size()) << what;
            int differ = 0;
            for (std::size_t k = 0; k < r.values().size(); ++k) {
                const double x = to_double(got.values()[k]), y = to_double(r.values()[k]);
                differ += x != y;
                ASSERT_LE(std::fabs(x - y), 0x1p-10 * std::fabs(y) + 0x1p-24) << what << " " << k;
            }
            EXPECT_LT(differ, static_cast<int>(r.values().size() / 100)) << what;
        };
        expect_close(l, want.l, "L");
        expect_close(u, want.u, "U");
    }
}

template <class S>
void expect_same_bits(const SgDiaMatrix<S>& got, const SgDiaMatrix<S>& want, const char* what) {
    ASSERT_EQ(got.stencil().offsets(), want.stencil().offsets()) << what;
    ASSERT_EQ(got.values().size(), want.values().size()) << what;
    EXPECT_EQ(
        std::memcmp(got.values().data(), want.values().data(), got.values().size() * sizeof(S)), 0)
        << what;
}

void expect_same_counts(const TruncationCounts& got, const TruncationCounts& want) {
    EXPECT_EQ(got.overflow, want.overflow);
    EXPECT_EQ(got.underflow, want.underflow);
    EXPECT_EQ(got.subnormal, want.subnormal);
    EXPECT_EQ(got.nonfinite_input, want.nonfinite_input);
}

// FactorNarrowing<S> without scaling gives truncate<S> of the FP64 factors `whole` of a.
template <class S>
void expect_plain_narrowing(const SgDiaMatrix<double>& a, const Ilu0Factors& whole,
                            const char* what) {
    SCOPED_TRACE(what);
    TruncationCounts want;
    const SgDiaMatrix<S> l = truncate<S>(whole.l, want);
    const SgDiaMatrix<S> u = truncate<S>(whole.u, want);
    FactorNarrowing<S> sink(a);
    (void)ilu0_factor(a, &sink);
    expect_same_bits(sink.take_l(), l, "L");
    expect_same_bits(sink.take_u(), u, "U");
    expect_same_counts(sink.counts, want);
}

// An FP16 ILU level narrows the factors line by line as the factorisation makes them
// (FactorNarrowing, U kept in FP64 only in a ring of lines): they must be what truncating the
// whole FP64 factors gives, bit for bit, with the same counts, scaled (weather's operator, far
// outside FP16's range; a 27-point matrix, whose corner offsets read the oldest line of the
// ring; laplace27 on boxes one cell across) and plain (FP32, BF16).
TEST(Scaling, FactorsNarrowedLineByLineEqualTruncatingTheWholeOnes) {
    for (const SgDiaMatrix<double>& a :
         {make_weather(Box{9, 8, 6}, 2).a, make_weather(Box{7, 2, 5}, 3).a,
          wide_range_matrix(Box{5, 4, 4}, -3.0, 3.0, 7), laplace27(Box{6, 1, 5}, 1e6),
          laplace27(Box{1, 4, 3})}) {
        SCOPED_TRACE(a.box().ny);
        const LevelScaling sc = compute_scaling(a, kHalfMax);
        ASSERT_TRUE(sc.ok) << sc.problem;
        std::vector<double> inv_s(sc.s.size());
        for (std::size_t i = 0; i < inv_s.size(); ++i) inv_s[i] = 1.0 / sc.s[i];
        const Ilu0Factors whole = ilu0_factor(a);
        {
            TruncationCounts want;
            const SgDiaMatrix<half> l =
                truncate_scaled<half>(whole.l, sc.s, want, {.s_col = &inv_s});
            const SgDiaMatrix<half> u = truncate_scaled<half>(whole.u, sc.s, want);
            FactorNarrowing<half> sink(a, &sc.s);
            const Ilu0Factors f = ilu0_factor(a, &sink);
            EXPECT_TRUE(f.l.values().empty());
            EXPECT_TRUE(f.u.values().empty());
            expect_same_bits(sink.take_l(), l, "L scaled");
            expect_same_bits(sink.take_u(), u, "U scaled");
            expect_same_counts(sink.counts, want);
            if (a.stencil().name() == "3d19") {  // weather: FP16's small end is reached
                EXPECT_GT(want.subnormal + want.underflow, 0);
            }
        }
        expect_plain_narrowing<float>(a, whole, "fp32");
        expect_plain_narrowing<bfloat16>(a, whole, "bf16");
    }
    // Only the 16-bit formats are scaled.
    const SgDiaMatrix<double> w = make_weather(Box{3, 3, 3}, 1).a;
    const std::vector<double> ones(static_cast<std::size_t>(w.rows()), 1.0);
    EXPECT_THROW(FactorNarrowing<float>(w, &ones), std::logic_error);
    // Block matrices keep their FP64 factors: a sink is refused.
    const SgDiaMatrix<double> b = make_rhd3t(Box{3, 3, 3}, 1).a;
    FactorNarrowing<half> sink(w);
    EXPECT_THROW((void)ilu0_factor(b, &sink), std::invalid_argument);
}

}  // namespace
}  // namespace mpmg
