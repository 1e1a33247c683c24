// The SIMD narrowing (kernels::narrow) against the scalar reference truncate_counted<S>
// (core/float16.hpp), bit for bit and count for count, on every Highway target this CPU supports
// and the build generated: round-to-nearest-even ties in the normal and subnormal range, the
// double-rounding traps of a conversion through float, the range thresholds, zeros, double
// subnormals, Inf, NaN (signalling, quiet, with payloads), and lengths that are not multiples
// of the vector or chunk size.
#include "kernels/convert_simd.hpp"

#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/every_target_test_util.hpp"

namespace mpmg {
namespace {

template <class S>
std::uint64_t bits_of(S v) {
    if constexpr (sizeof(S) == 8) {
        return std::bit_cast<std::uint64_t>(v);
    } else if constexpr (sizeof(S) == 4) {
        return std::bit_cast<std::uint32_t>(v);
    } else {
        return v.bits;
    }
}

/// Values of S as doubles: every finite value near the range's edges and in the middle, the
/// midpoints between neighbours (ties) and the double-rounding traps around them.
template <class S>
std::vector<double> edge_values() {
    using F = BinaryFormat<S>;
    std::vector<double> v;
    const RangeLimits lim = range_limits<S>();
    for (double t : {lim.underflow, lim.subnormal, lim.overflow}) {
        for (double f : {1.0, 1.0 - 0x1p-52, 1.0 + 0x1p-52, 1.0 - 0x1p-30, 1.0 + 0x1p-30, 0.5, 2.0})
            v.push_back(t * f);
    }
    // Representable values y at exponents across the range, and the ties between y and its
    // upper neighbour: exactly the midpoint, and the midpoint moved by a quarter and a half of
    // a binary32 ulp (a double -> float -> S conversion rounds these onto the midpoint).
    for (int e = F::emin - F::mant - 2; e <= F::emax + 1; ++e) {
        const double spacing = std::ldexp(1.0, std::max(e, F::emin) - F::mant);
        for (int m : {0, 1, 2, 3, (1 << F::mant) - 1, (1 << F::mant) - 2}) {
            const double y = e < F::emin ? m * std::ldexp(1.0, F::emin - F::mant)
                                         : std::ldexp(1.0, e) + m * spacing;
            const double mid = y + spacing / 2;
            const double fulp = std::ldexp(1.0, std::ilogb(mid) - 23);
            for (double delta :
                 {0.0, fulp / 4, -fulp / 4, fulp / 2, -fulp / 2, 0x1p-60 * mid, -0x1p-60 * mid}) {
                v.push_back(y);
                v.push_back(mid + delta);
            }
        }
    }
    return v;
}

/// The corpus for S: the edge values, special values and random values over a wide exponent
/// range, each with both signs, shuffled.
template <class S>
std::vector<double> corpus(unsigned seed) {
    std::vector<double> v = edge_values<S>();
    const double inf = std::numeric_limits<double>::infinity();
    for (double x : {0.0, inf, std::numeric_limits<double>::denorm_min(), 0x1p-1030,
                     std::numeric_limits<double>::min(), std::numeric_limits<double>::max(), 1e300,
                     1e-300, 0x1p-126, 0x1p-127, 0x1p-149, 0x1p-150, 0x1p-151, 65504.0, 65519.99,
                     65520.0, 3.4028234663852886e38, 3.4028235677973366e38}) {
        v.push_back(x);
    }
    for (std::uint64_t nan : {0x7FF8000000000000ull, 0x7FF0000000000001ull, 0x7FF0000020000000ull,
                              0x7FFFFFFFFFFFFFFFull, 0x7FF4000000000000ull}) {
        v.push_back(std::bit_cast<double>(nan));
    }
    std::mt19937_64 gen(seed);
    std::uniform_int_distribution<int> e(BinaryFormat<S>::emin - 30, BinaryFormat<S>::emax + 4);
    std::uniform_real_distribution<double> m(1.0, 2.0);
    for (int i = 0; i < 4000; ++i) v.push_back(std::ldexp(m(gen), e(gen)));
    const std::size_t n = v.size();
    for (std::size_t i = 0; i < n; ++i) v.push_back(-v[i]);
    std::shuffle(v.begin(), v.end(), gen);
    return v;
}

template <class S>
void expect_matches_reference(const std::vector<double>& src) {
    TruncationCounts want;
    std::vector<S> ref(src.size());
    for (std::size_t i = 0; i < src.size(); ++i) ref[i] = truncate_counted<S>(src[i], want);
    std::vector<S> got(src.size());
    const TruncationCounts have =
        kernels::narrow(src.data(), got.data(), static_cast<std::int64_t>(src.size()));
    for (std::size_t i = 0; i < src.size(); ++i) {
        ASSERT_EQ(bits_of(got[i]), bits_of(ref[i]))
            << "x = " << src[i] << " (bits " << std::hex << std::bit_cast<std::uint64_t>(src[i])
            << ") at " << std::dec << i;
    }
    EXPECT_EQ(have.overflow, want.overflow);
    EXPECT_EQ(have.underflow, want.underflow);
    EXPECT_EQ(have.subnormal, want.subnormal);
    EXPECT_EQ(have.nonfinite_input, want.nonfinite_input);
}

template <class S>
void check_format(unsigned seed) {
    const std::vector<double> all = corpus<S>(seed);
    expect_matches_reference<S>(all);
    // Lengths around the vector and chunk sizes, and starting offsets that misalign the loads.
    for (std::size_t len : {0, 1, 3, 7, 8, 9, 255, 256, 257, 513}) {
        for (std::size_t off : {0, 1, 5}) {
            if (off + len > all.size()) continue;
            SCOPED_TRACE("len " + std::to_string(len) + " off " + std::to_string(off));
            expect_matches_reference<S>(
                std::vector<double>(all.begin() + off, all.begin() + off + len));
        }
    }
    // A long run of ordinary values: the fast path without any recount.
    std::vector<double> plain(1000);
    for (std::size_t i = 0; i < plain.size(); ++i) plain[i] = 0.37 * static_cast<double>(i) - 189.0;
    expect_matches_reference<S>(plain);
}

TEST(ConvertSimd, EveryTargetMatchesScalarRounding) {
    testing::on_every_target([&](std::int64_t t) {
        ASSERT_STREQ(kernels::convert_target_name(), hwy::TargetName(t));
        check_format<half>(1);
        check_format<bfloat16>(2);
        check_format<float>(3);
    });
}

// narrow_scaled(src, si, sj) is narrow() of src / (si sj), bit for bit and count for count.
template <class S>
void expect_scaled_matches(const std::vector<double>& src, unsigned seed) {
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> u(0.25, 4.0);
    std::vector<double> si(src.size()), sj(src.size()), scaled(src.size());
    for (std::size_t i = 0; i < src.size(); ++i) {
        si[i] = u(gen);
        sj[i] = u(gen);
        scaled[i] = src[i] / (si[i] * sj[i]);
    }
    std::vector<S> want(src.size()), got(src.size());
    const auto n = static_cast<std::int64_t>(src.size());
    const TruncationCounts cw = kernels::narrow(scaled.data(), want.data(), n);
    double largest = -1.0;  // raised to the largest |scaled| (NaN ignored), from the same pass
    const TruncationCounts cg =
        kernels::narrow_scaled(src.data(), si.data(), sj.data(), got.data(), n, &largest);
    for (std::size_t i = 0; i < src.size(); ++i) ASSERT_EQ(bits_of(got[i]), bits_of(want[i])) << i;
    double want_largest = -1.0;
    for (double x : scaled) {
        if (std::fabs(x) > want_largest) want_largest = std::fabs(x);
    }
    EXPECT_EQ(largest, want_largest);
    for (const std::int64_t part : {std::int64_t{0}, std::int64_t{3}, n / 2 + 1}) {
        double top = -1.0, want_top = -1.0;  // a prefix: the tail loop and partial chunks
        kernels::narrow_scaled(src.data(), si.data(), sj.data(), got.data(), part, &top);
        for (std::int64_t i = 0; i < part; ++i) {
            if (std::fabs(scaled[static_cast<std::size_t>(i)]) > want_top) {
                want_top = std::fabs(scaled[static_cast<std::size_t>(i)]);
            }
        }
        EXPECT_EQ(top, part == 0 ? -1.0 : want_top) << part;
    }
    EXPECT_EQ(cg.overflow, cw.overflow);
    EXPECT_EQ(cg.underflow, cw.underflow);
    EXPECT_EQ(cg.subnormal, cw.subnormal);
    EXPECT_EQ(cg.nonfinite_input, cw.nonfinite_input);
}

TEST(ConvertSimd, ScaledNarrowingEqualsNarrowingTheScaledValues) {
    testing::on_every_target([&](std::int64_t /*t*/) {
        expect_scaled_matches<half>(corpus<half>(5), 6);
        expect_scaled_matches<bfloat16>(corpus<bfloat16>(7), 8);
    });
}

TEST(ConvertSimd, DoubleIsACopyCountingSubnormals) {
    testing::on_every_target(
        [&](std::int64_t /*t*/) { expect_matches_reference<double>(corpus<half>(4)); });
}

// Every binary16 value and every midpoint between neighbours (both signs): the ties of the
// whole format, each with its neighbours one double ulp away.
TEST(ConvertSimd, EveryHalfTieOnEveryTarget) {
    std::vector<double> v;
    for (std::uint32_t b = 0; b < 0x7C00u; ++b) {
        const double y = double_from_half(half{static_cast<std::uint16_t>(b)});
        const double next = double_from_half(half{static_cast<std::uint16_t>(b + 1)});
        const double mid = b + 1 < 0x7C00u ? (y + next) / 2 : 65520.0;
        for (double x : {y, mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e9)}) {
            v.push_back(x);
            v.push_back(-x);
        }
    }
    testing::on_every_target([&](std::int64_t /*t*/) { expect_matches_reference<half>(v); });
}

// narrow_exact: true exactly when every value is finite and the scalar round trip
// to_double(from_double<S>(x)) == x holds, then the values of from_double<S>; one value S does not
// hold anywhere in the array (vector part, chunk boundary, scalar tail) makes it false.
template <class S>
void check_exact_narrowing(unsigned seed) {
    const std::vector<double> values = corpus<S>(seed);
    std::mt19937_64 gen(seed);
    // Exact values around the tested one: integers and binary fractions S holds.
    std::vector<double> base(600);
    for (std::size_t i = 0; i < base.size(); ++i) {
        base[i] = std::ldexp(static_cast<double>(static_cast<int>(i % 97) - 48), -(int(i) % 5));
    }
    std::vector<S> out(base.size());
    const auto run = [&](std::size_t len) {
        return kernels::narrow_exact(base.data(), out.data(), static_cast<std::int64_t>(len));
    };
    ASSERT_TRUE(run(base.size()));
    for (std::size_t i = 0; i < base.size(); ++i) {
        ASSERT_EQ(bits_of(out[i]), bits_of(from_double<S>(base[i]))) << i;
    }
    for (std::size_t k = 0; k < values.size(); ++k) {
        const double x = values[k];
        const bool want = std::isfinite(x) && to_double(from_double<S>(x)) == x;
        const std::size_t len = 1 + gen() % base.size();
        const std::size_t at = gen() % len;
        const double keep = base[at];
        base[at] = x;
        const bool got = run(len);
        base[at] = keep;
        ASSERT_EQ(got, want) << "x = " << x << " at " << at << " of " << len;
        if (got) {
            ASSERT_EQ(bits_of(out[at]), bits_of(from_double<S>(x))) << x;
        }
    }
}

TEST(ConvertSimd, ExactNarrowingOnEveryTarget) {
    testing::on_every_target([&](std::int64_t /*t*/) {
        check_exact_narrowing<half>(9);
        check_exact_narrowing<float>(10);
    });
}

// narrow_exact_multiple: true exactly when every q = src / c is finite, held by FP16 and gives
// src back as q c (the scalar definition, value by value), then the FP16 values of q; one value
// anywhere (vector part, chunk boundary, scalar tail) that breaks it makes it false.
TEST(ConvertSimd, ExactMultipleNarrowingOnEveryTarget) {
    std::mt19937_64 gen(21);
    const std::vector<double> odd = corpus<half>(22);
    for (const double c : {1e8, 3.0, 1.0 / 3.0, 0x1p-30, 6.02e23}) {
        std::vector<double> base(600);
        for (std::size_t i = 0; i < base.size(); ++i) {
            const double q = std::ldexp(static_cast<double>(static_cast<int>(i % 97) - 48),
                                        -(static_cast<int>(i) % 5));
            base[i] = q * c;
        }
        const auto holds = [&](double x) {
            const double q = x / c;
            return std::isfinite(q) && to_double(from_double<half>(q)) == q && q * c == x;
        };
        std::vector<half> out(base.size());
        testing::on_every_target([&](std::int64_t /*t*/) {
            const auto run = [&](std::size_t len) {
                return kernels::narrow_exact_multiple(base.data(), c, out.data(),
                                                      static_cast<std::int64_t>(len));
            };
            bool all = true;
            for (double x : base) all = all && holds(x);
            ASSERT_EQ(run(base.size()), all) << c;
            if (all) {
                for (std::size_t i = 0; i < base.size(); ++i) {
                    ASSERT_EQ(bits_of(out[i]), bits_of(from_double<half>(base[i] / c))) << i;
                }
            }
            for (std::size_t k = 0; k < 200; ++k) {
                // A value of the corpus times c, or one ulp off such a product.
                double x = odd[gen() % odd.size()] * c;
                if (k % 3 == 0) x = std::nextafter(x, 0.0);
                const std::size_t len = 1 + gen() % base.size();
                const std::size_t at = gen() % len;
                const double keep = base[at];
                base[at] = x;
                bool want = true;
                for (std::size_t i = 0; i < len; ++i) want = want && holds(base[i]);
                const bool got = run(len);
                base[at] = keep;
                ASSERT_EQ(got, want) << "c = " << c << ", x = " << x << " at " << at;
            }
        });
    }
}

// Every finite binary16 value is held exactly, in one long array (many chunks).
TEST(ConvertSimd, ExactNarrowingHoldsEveryHalf) {
    std::vector<double> v;
    for (std::uint32_t b = 0; b < 0x7C00u; ++b) {
        const double y = double_from_half(half{static_cast<std::uint16_t>(b)});
        v.push_back(y);
        v.push_back(-y);
    }
    std::vector<half> out(v.size());
    testing::on_every_target([&](std::int64_t /*t*/) {
        HalfFacts facts;
        ASSERT_TRUE(kernels::narrow_exact(v.data(), out.data(), static_cast<std::int64_t>(v.size()),
                                          &facts));
        for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(to_double(out[i]), v[i]) << i;
        EXPECT_EQ(facts.subnormal, 2 * 0x3ff);  // bits 1 .. 0x3ff, both signs
        EXPECT_TRUE(facts.outside);
    });
}

/// The scalar reference of HalfFacts over values FP16 holds exactly (q = x / c).
HalfFacts reference_facts(const std::vector<double>& x, std::size_t len, double c) {
    HalfFacts f;
    for (std::size_t i = 0; i < len; ++i) {
        const double m = std::fabs(x[i] / c);
        const bool subnormal = m != 0.0 && m < kHalfMinNormal;
        f.subnormal += subnormal;
        f.outside = f.outside || subnormal || m > kHalfMax / 2;
    }
    return f;
}

// The HalfFacts narrow_exact and narrow_exact_multiple find in their pass equal the scalar
// reference (subnormals counted, nonzero values outside [min normal, max / 2] flagged) for
// arrays of exact FP16 values with subnormals and large values placed anywhere (vector part,
// chunk boundaries, scalar tail), on every target; they add to what `facts` holds.
TEST(ConvertSimd, ExactNarrowingFindsTheHalfFacts) {
    std::mt19937_64 gen(31);
    const double specials[] = {kHalfMinSubnormal, -0x1p-15, 0x3ffp-24, kHalfMinNormal,
                               32752.0,           32768.0,  -kHalfMax, 0.0};
    for (const double c : {1.0, 3.0}) {
        testing::on_every_target([&](std::int64_t /*t*/) {
            for (int round = 0; round < 300; ++round) {
                const std::size_t len = 1 + gen() % 1100;
                std::vector<double> v(len);
                for (std::size_t i = 0; i < len; ++i) {
                    v[i] = c * std::ldexp(static_cast<double>(static_cast<int>(gen() % 97) - 48),
                                          -static_cast<int>(gen() % 5));
                }
                const int put = static_cast<int>(gen() % 4);
                for (int k = 0; k < put; ++k) v[gen() % len] = c * specials[gen() % 8];
                std::vector<half> out(len);
                HalfFacts facts{.subnormal = 5, .outside = false};
                const auto n = static_cast<std::int64_t>(len);
                const bool ok =
                    c == 1.0 ? kernels::narrow_exact(v.data(), out.data(), n, &facts)
                             : kernels::narrow_exact_multiple(v.data(), c, out.data(), n, &facts);
                ASSERT_TRUE(ok);
                const HalfFacts want = reference_facts(v, len, c);
                ASSERT_EQ(facts.subnormal, 5 + want.subnormal) << "len " << len;
                ASSERT_EQ(facts.outside, want.outside) << "len " << len;
            }
        });
    }
}

}  // namespace
}  // namespace mpmg
