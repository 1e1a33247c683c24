// The Krylov vector kernels (kernels::dot, kernels::axpy_dot) on every Highway target this CPU
// supports and the build generated, against a scalar emulation of the documented summation
// order (bit for bit: the result must not depend on the vector width) and against a long double
// sum (accuracy), for double and float vectors, lengths that are not multiples of the vector
// or group size, and non-finite values.
#include "kernels/vector_simd.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/every_target_test_util.hpp"

namespace mpmg {
namespace {

/// Slot k mod 8 gets x[k] z[k]; the slots are summed as a fixed tree.
template <class K>
double slot_sum(const std::vector<K>& x, const std::vector<K>& z) {
    double s[8] = {};
    for (std::size_t k = 0; k < x.size(); ++k) {
        s[k % 8] += static_cast<double>(x[k]) * static_cast<double>(z[k]);
    }
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

template <class K>
long double exact_sum(const std::vector<K>& x, const std::vector<K>& z) {
    long double s = 0;
    for (std::size_t k = 0; k < x.size(); ++k) {
        s += static_cast<long double>(x[k]) * static_cast<long double>(z[k]);
    }
    return s;
}

template <class K>
std::vector<K> random_vector(std::size_t n, std::uint32_t seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<K> v(n);
    for (K& e : v) e = static_cast<K>(u(gen) * std::ldexp(1.0, static_cast<int>(gen() % 9) - 4));
    return v;
}

const std::vector<std::size_t> kLengths = {0, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 33, 1000, 4099};

template <class K>
class VectorSimd : public ::testing::Test {};
using Precisions = ::testing::Types<double, float>;
TYPED_TEST_SUITE(VectorSimd, Precisions);

TYPED_TEST(VectorSimd, DotIsTheSlotSumOnEveryTarget) {
    using K = TypeParam;
    testing::on_every_target([&](std::int64_t) {
        for (const std::size_t n : kLengths) {
            SCOPED_TRACE(n);
            const std::vector<K> x = random_vector<K>(n, 1), y = random_vector<K>(n, 2);
            const double got = kernels::dot(x.data(), y.data(), static_cast<std::int64_t>(n));
            ASSERT_EQ(std::bit_cast<std::uint64_t>(got),
                      std::bit_cast<std::uint64_t>(slot_sum(x, y)));
            // Accuracy: a few roundings of the largest partial sums.
            long double mag = 0;
            for (std::size_t k = 0; k < n; ++k) mag += std::fabs(double(x[k]) * double(y[k]));
            EXPECT_LE(
                std::fabs(static_cast<long double>(got) - exact_sum(x, y)),
                static_cast<long double>(n + 1) * std::numeric_limits<double>::epsilon() * mag);
            // x with itself (the norm) reads one array.
            ASSERT_EQ(kernels::dot(x.data(), x.data(), static_cast<std::int64_t>(n)),
                      slot_sum(x, x));
        }
    });
}

TYPED_TEST(VectorSimd, AxpyDotUpdatesThenMultipliesOnEveryTarget) {
    using K = TypeParam;
    const double alpha = -0.3712;
    testing::on_every_target([&](std::int64_t) {
        for (const std::size_t n : kLengths) {
            SCOPED_TRACE(n);
            const std::vector<K> x = random_vector<K>(n, 3), z = random_vector<K>(n, 4);
            const std::vector<K> y0 = random_vector<K>(n, 5);
            // The update in K: a product, then a sum (volatile keeps them two roundings).
            std::vector<K> want(n);
            for (std::size_t k = 0; k < n; ++k) {
                volatile K t = static_cast<K>(alpha) * x[k];
                want[k] = y0[k] + t;
            }
            std::vector<K> y = y0;
            const double got = kernels::axpy_dot(alpha, x.data(), y.data(), z.data(),
                                                 static_cast<std::int64_t>(n));
            ASSERT_EQ(y, want);
            ASSERT_EQ(std::bit_cast<std::uint64_t>(got),
                      std::bit_cast<std::uint64_t>(slot_sum(want, z)));
            // z = y: the squared norm of the updated y.
            y = y0;
            const double self = kernels::axpy_dot(alpha, x.data(), y.data(), y.data(),
                                                  static_cast<std::int64_t>(n));
            ASSERT_EQ(y, want);
            ASSERT_EQ(std::bit_cast<std::uint64_t>(self),
                      std::bit_cast<std::uint64_t>(slot_sum(want, want)));
        }
    });
}

TYPED_TEST(VectorSimd, NonFiniteValuesReachTheResult) {
    using K = TypeParam;
    testing::on_every_target([&](std::int64_t) {
        for (const std::size_t at : {std::size_t{0}, std::size_t{6}, std::size_t{40}}) {
            SCOPED_TRACE(at);
            std::vector<K> x = random_vector<K>(43, 6), y = random_vector<K>(43, 7);
            x[at] = std::numeric_limits<K>::quiet_NaN();
            EXPECT_TRUE(std::isnan(kernels::dot(x.data(), y.data(), 43)));
            x[at] = std::numeric_limits<K>::infinity();
            y[at] = K(1);
            EXPECT_TRUE(std::isinf(kernels::dot(x.data(), y.data(), 43)));
            // Overflow of the update itself shows in the norm.
            x[at] = std::numeric_limits<K>::max();
            y[at] = std::numeric_limits<K>::max();
            EXPECT_TRUE(std::isinf(kernels::axpy_dot(1.0, x.data(), y.data(), y.data(), 43)));
        }
    });
}

}  // namespace
}  // namespace mpmg
