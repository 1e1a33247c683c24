// The Krylov vector kernels (kernels::dot, kernels::axpy_dot, and GMRES's block Gram-Schmidt
// passes kernels::multi_dot, kernels::gs_update) on every Highway target this CPU
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
#include <utility>
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

// Sub-ranges [lo, lo + len) that start off the group grid and span several chunks (1024).
const std::vector<std::pair<std::size_t, std::size_t>> kRanges = {{0, 0},    {0, 7},    {3, 17},
                                                                  {0, 1000}, {5, 2500}, {11, 4099}};

TYPED_TEST(VectorSimd, MultiDotIsSeparateDotsOnEveryTarget) {
    using K = TypeParam;
    testing::on_every_target([&](std::int64_t) {
        for (const auto& [lo, len] : kRanges) {
            for (const int m : {1, 2, 5}) {
                SCOPED_TRACE(::testing::Message() << "lo " << lo << " len " << len << " m " << m);
                const std::size_t n = lo + len + 3;
                std::vector<std::vector<K>> basis;
                std::vector<const K*> ptr;
                for (int i = 0; i < m; ++i) basis.push_back(random_vector<K>(n, 10 + i));
                for (const auto& b : basis) ptr.push_back(b.data());
                const std::vector<K> t0 = random_vector<K>(n, 20), t1 = random_vector<K>(n, 21);
                std::vector<double> out(2 * m + 1, -1.0), slots(8 * (2 * m + 1));
                const auto ilo = static_cast<std::int64_t>(lo),
                           ilen = static_cast<std::int64_t>(len);
                const auto sub = [&](const std::vector<K>& v) {
                    return std::vector<K>(v.begin() + ilo, v.begin() + ilo + ilen);
                };
                for (const bool two : {false, true}) {
                    kernels::multi_dot(m, ptr.data(), t0.data(), two ? t1.data() : nullptr, ilo,
                                       ilen, out.data(), slots.data());
                    for (int i = 0; i < m; ++i) {
                        ASSERT_EQ(std::bit_cast<std::uint64_t>(out[i]),
                                  std::bit_cast<std::uint64_t>(slot_sum(sub(basis[i]), sub(t0))));
                        if (!two) continue;
                        ASSERT_EQ(std::bit_cast<std::uint64_t>(out[m + i]),
                                  std::bit_cast<std::uint64_t>(slot_sum(sub(basis[i]), sub(t1))));
                    }
                    if (two) {
                        ASSERT_EQ(std::bit_cast<std::uint64_t>(out[2 * m]),
                                  std::bit_cast<std::uint64_t>(slot_sum(sub(t1), sub(t1))));
                    }
                }
            }
        }
    });
}

TYPED_TEST(VectorSimd, GsUpdateFollowsTheScalarOrderOnEveryTarget) {
    using K = TypeParam;
    testing::on_every_target([&](std::int64_t) {
        for (const auto& [lo, len] : kRanges) {
            for (const int m : {0, 1, 4}) {
                SCOPED_TRACE(::testing::Message() << "lo " << lo << " len " << len << " m " << m);
                const std::size_t n = lo + len + 3;
                std::vector<std::vector<K>> basis;
                std::vector<const K*> ptr;
                for (int i = 0; i < m; ++i) basis.push_back(random_vector<K>(n, 30 + i));
                for (const auto& b : basis) ptr.push_back(b.data());
                std::vector<double> c, h;
                for (int i = 0; i <= m; ++i) {
                    c.push_back(0.3 - 0.17 * i);
                    h.push_back(-0.6 + 0.23 * i);
                }
                const double qscale = 1.7, wscale = 0.45;
                const std::vector<K> q0 = random_vector<K>(n, 40), w0 = random_vector<K>(n, 41);
                // The documented order in K, one rounding per product and per difference.
                std::vector<K> qwant = q0, wwant = w0;
                std::vector<long double> q64(n), w64(n);
                for (std::size_t k = lo; k < lo + len; ++k) {
                    volatile K qk = q0[k], wk = w0[k];
                    long double qe = q0[k], we = w0[k];
                    for (int i = 0; i < m; ++i) {
                        volatile K t = static_cast<K>(c[i]) * basis[i][k];
                        qk = qk - t;
                        qe -= static_cast<long double>(static_cast<K>(c[i])) * basis[i][k];
                    }
                    qk = qk * static_cast<K>(qscale);
                    qe *= static_cast<long double>(static_cast<K>(qscale));
                    for (int i = 0; i < m; ++i) {
                        volatile K t = static_cast<K>(h[i]) * basis[i][k];
                        wk = wk - t;
                        we -= static_cast<long double>(static_cast<K>(h[i])) * basis[i][k];
                    }
                    volatile K t = static_cast<K>(h[m]) * qk;
                    wk = (wk - t) * static_cast<K>(wscale);
                    we = (we - static_cast<long double>(static_cast<K>(h[m])) * qe) *
                         static_cast<long double>(static_cast<K>(wscale));
                    qwant[k] = qk;
                    wwant[k] = wk;
                    q64[k] = qe;
                    w64[k] = we;
                }
                const auto ilo = static_cast<std::int64_t>(lo),
                           ilen = static_cast<std::int64_t>(len);
                double slots[8];
                std::vector<K> q = q0, w = w0;
                const double got = kernels::gs_update(m, ptr.data(), c.data(), qscale, q.data(),
                                                      h.data(), wscale, w.data(), ilo, ilen, slots);
                ASSERT_EQ(q, qwant);  // outside [lo, lo + len) nothing changed either
                ASSERT_EQ(w, wwant);
                const std::vector<K> wsub(w.begin() + ilo, w.begin() + ilo + ilen);
                ASSERT_EQ(std::bit_cast<std::uint64_t>(got),
                          std::bit_cast<std::uint64_t>(slot_sum(wsub, wsub)));
                // Against the exact (long double) update: a few roundings in K per term.
                const long double tol =
                    16.0L * (m + 2) * static_cast<long double>(std::numeric_limits<K>::epsilon());
                for (std::size_t k = lo; k < lo + len; ++k) {
                    ASSERT_LE(std::fabs(q[k] - q64[k]), tol * (1 + std::fabs(q64[k]))) << k;
                    ASSERT_LE(std::fabs(w[k] - w64[k]), tol * (1 + std::fabs(w64[k]))) << k;
                }
                // Without w only q is updated, and the result is 0.
                q = q0;
                ASSERT_EQ(kernels::gs_update(m, ptr.data(), c.data(), qscale, q.data(), h.data(),
                                             wscale, static_cast<K*>(nullptr), ilo, ilen, slots),
                          0.0);
                ASSERT_EQ(q, qwant);
            }
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
