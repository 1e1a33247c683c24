// kernels::weighted_sum on every Highway target this CPU supports and the build generated,
// against the scalar loop it stands for (bit for bit: products and sums rounded one by one, in
// order from 0.0), for strides 1 and 2, 1 to 7 lines and lengths around the vector width.
#include "kernels/combine_simd.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/every_target_test_util.hpp"

namespace mpmg {
namespace {

TEST(CombineSimd, WeightedSumIsTheScalarLoopOnEveryTarget) {
    std::mt19937 gen(17);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<std::vector<double>> lines(7, std::vector<double>(2 * 40 + 2));
    for (auto& l : lines) {
        for (double& v : l) v = u(gen);
    }
    lines[2][4] = -0.0;  // a negative zero times a weight, added to 0.0, gives +0.0
    const std::vector<double> w = {0.25, 0.5, 1.0, 0.5, 0.25, -0.75, 3.0};
    testing::on_every_target([&](std::int64_t) {
        for (const int step : {1, 2}) {
            for (int m = 1; m <= 7; ++m) {
                for (const std::int64_t n : {0, 1, 3, 4, 5, 8, 9, 17, 40}) {
                    SCOPED_TRACE(::testing::Message()
                                 << "step " << step << " lines " << m << " n " << n);
                    std::vector<const double*> src;
                    for (int k = 0; k < m; ++k) src.push_back(lines[k].data() + (k % 2));
                    std::vector<double> got(static_cast<std::size_t>(n) + 1, 99.0);
                    kernels::weighted_sum(src.data(), w.data(), m, step, got.data(), n);
                    for (std::int64_t i = 0; i < n; ++i) {
                        double want = 0.0;
                        for (int k = 0; k < m; ++k) {
                            volatile double t = w[k] * src[k][i * step];
                            want = want + t;
                        }
                        ASSERT_EQ(std::bit_cast<std::uint64_t>(got[i]),
                                  std::bit_cast<std::uint64_t>(want))
                            << "i = " << i;
                    }
                    EXPECT_EQ(got[n], 99.0) << "wrote past n";
                }
            }
        }
    });
}

}  // namespace
}  // namespace mpmg
