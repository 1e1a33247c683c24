// kernels::simd::block_rows on every Highway target this CPU supports and the build generated:
// for r = 2, 3, 4, plain and transposed blocks, every supported (storage, compute) pair and run
// lengths around the vector widths, the result is bit for bit the scalar loop it stands for
// (each product and sum rounded one by one, the r products of a row summed in order, then added
// to out), and within a few epsilons of the same sums in FP64. It writes nothing past the run.
#include "kernels/sgdia_aos_simd.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/float16.hpp"
#include "kernels/every_target_test_util.hpp"
#include "kernels/sgdia_test_util.hpp"

namespace mpmg {
namespace {

template <class T>
class BlockRowsSimd : public ::testing::Test {};
TYPED_TEST_SUITE(BlockRowsSimd, testing::SupportedPairs);

template <class C>
bool same_bits(C a, C b) {
    return std::memcmp(&a, &b, sizeof(C)) == 0;
}

TYPED_TEST(BlockRowsSimd, IsTheScalarLoopOnEveryTargetAndNearFp64) {
    using S = typename TypeParam::Storage;
    using C = typename TypeParam::Compute;
    std::mt19937 gen(23);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    constexpr int kMaxN = 41;
    constexpr int kAhead = 5;  // prefetched cells beyond the run: inside the array here
    testing::on_every_target([&](std::int64_t) {
        for (const int r : {2, 3, 4}) {
            const int rr = r * r;
            std::vector<S> av(static_cast<std::size_t>((kMaxN + kAhead) * rr));
            for (S& v : av) v = from_double<S>(u(gen));
            std::vector<C> x(static_cast<std::size_t>(kMaxN * r));
            for (C& v : x) v = static_cast<C>(u(gen));
            std::vector<C> out0(static_cast<std::size_t>(kMaxN * r + 1));
            for (C& v : out0) v = static_cast<C>(u(gen));
            for (const bool transposed : {false, true}) {
                for (const int n : {0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, kMaxN}) {
                    SCOPED_TRACE(::testing::Message()
                                 << "r " << r << " transposed " << transposed << " n " << n);
                    std::vector<C> got = out0;
                    kernels::simd::BlockRowsArgs<S, C> args;
                    args.r = r;
                    args.transposed = transposed;
                    args.n = n;
                    args.av = av.data();
                    args.x = x.data();
                    args.out = got.data();
                    args.ahead = kAhead;
                    kernels::simd::block_rows(args);
                    for (int i = 0; i < n; ++i) {
                        for (int ra = 0; ra < r; ++ra) {
                            C s = 0;
                            double s64 = 0.0;
                            for (int rb = 0; rb < r; ++rb) {
                                const int e =
                                    transposed ? (i * r + rb) * r + ra : (i * r + ra) * r + rb;
                                const auto a = static_cast<C>(to_double(av[e]));
                                volatile C p = a * x[i * r + rb];
                                s = rb == 0 ? p : s + p;
                                s64 += to_double(av[e]) * static_cast<double>(x[i * r + rb]);
                            }
                            const auto k = static_cast<std::size_t>(i * r + ra);
                            const C want = out0[k] + s;
                            ASSERT_TRUE(same_bits(got[k], want))
                                << "cell " << i << " row " << ra << ": " << got[k] << " vs "
                                << want;
                            const double want64 = static_cast<double>(out0[k]) + s64;
                            EXPECT_NEAR(static_cast<double>(got[k]), want64,
                                        8.0 * r * std::numeric_limits<C>::epsilon());
                        }
                    }
                    for (std::size_t k = static_cast<std::size_t>(n * r); k < got.size(); ++k) {
                        ASSERT_TRUE(same_bits(got[k], out0[k])) << "wrote past the run at " << k;
                    }
                }
            }
        }
    });
}

}  // namespace
}  // namespace mpmg
