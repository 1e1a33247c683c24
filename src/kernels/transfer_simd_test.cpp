// kernels::restrict_line and kernels::interpolate_line_add on every Highway target this CPU
// supports and the build generated, against the scalar loops they replaced in
// structured/transfer.cpp (bit for bit), for FP32 and FP64 lines, with and without a scale,
// and line lengths around the vector width, odd and even.
#include "kernels/transfer_simd.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

#include "kernels/every_target_test_util.hpp"

namespace mpmg {
namespace {

template <class T>
std::uint64_t bits(T v) {
    if constexpr (std::is_same_v<T, float>) {
        return std::bit_cast<std::uint32_t>(v);
    } else {
        return std::bit_cast<std::uint64_t>(v);
    }
}

/// The scalar restriction of transfer.cpp before the SIMD kernel (FineIn and restrict_x_line).
template <class T>
std::vector<double> restrict_reference(const std::vector<T>& f, const T* s, std::int64_t n) {
    const auto v = [&](std::int64_t q) {
        return s == nullptr ? static_cast<double>(f[q])
                            : static_cast<double>(static_cast<T>(f[q] * s[q]));
    };
    const std::int64_t nc = n / 2, full = (n - 1) / 2;
    std::vector<double> out(static_cast<std::size_t>(nc));
    for (std::int64_t ic = 0; ic < full; ++ic) {
        out[ic] = v(2 * ic + 1) + 0.5 * v(2 * ic) + 0.5 * v(2 * ic + 2);
    }
    for (std::int64_t ic = full; ic < nc; ++ic) out[ic] = v(2 * ic + 1) + 0.5 * v(2 * ic);
    return out;
}

/// The scalar interpolation of transfer.cpp before the SIMD kernel (interpolate_x_line_add).
template <class T>
void interpolate_reference(const std::vector<double>& c, std::int64_t nx, std::vector<T>& y,
                           const T* s) {
    const auto add = [&](std::int64_t i, double w) {
        if (s == nullptr) {
            y[i] = static_cast<T>(static_cast<double>(y[i]) + w);
        } else {
            y[i] += s[i] * static_cast<T>(0.0 + w);
        }
    };
    const std::int64_t cx = nx / 2;
    add(0, 0.0 + 0.5 * c[0]);
    add(1, c[0]);
    for (std::int64_t ic = 1; ic < cx; ++ic) {
        add(2 * ic, 0.5 * c[ic - 1] + 0.5 * c[ic]);
        add(2 * ic + 1, c[ic]);
    }
    if (nx % 2 == 1) add(nx - 1, 0.0 + 0.5 * c[cx - 1]);
}

constexpr std::int64_t kMaxN = 70;

template <class T>
void check_restriction(std::mt19937& gen) {
    std::uniform_real_distribution<double> u(-1.0, 1.0), su(0.25, 4.0);
    std::vector<T> f(kMaxN), s(kMaxN);
    for (auto& v : f) v = static_cast<T>(u(gen));
    for (auto& v : s) v = static_cast<T>(su(gen));
    f[3] = T(-0.0);
    f[4] = T(-0.0);  // -0 + -0/2: the sign as the scalar code gives it
    testing::on_every_target([&](std::int64_t) {
        for (const bool scaled : {false, true}) {
            for (std::int64_t n = 1; n <= kMaxN; ++n) {
                SCOPED_TRACE(::testing::Message() << "n " << n << " scaled " << scaled);
                const T* sp = scaled ? s.data() : nullptr;
                const std::vector<double> want = restrict_reference(f, sp, n);
                std::vector<double> got(want.size() + 1, 99.0);
                kernels::restrict_line(f.data(), sp, n, got.data());
                for (std::size_t ic = 0; ic < want.size(); ++ic) {
                    ASSERT_EQ(bits(got[ic]), bits(want[ic])) << "ic = " << ic;
                }
                EXPECT_EQ(got[want.size()], 99.0) << "wrote past n / 2";
            }
        }
    });
}

template <class T>
void check_interpolation(std::mt19937& gen) {
    std::uniform_real_distribution<double> u(-1.0, 1.0), su(0.25, 4.0);
    std::vector<double> c(kMaxN / 2);
    std::vector<T> y0(kMaxN + 1), s(kMaxN);
    for (auto& v : c) v = u(gen);
    for (auto& v : y0) v = static_cast<T>(u(gen));
    for (auto& v : s) v = static_cast<T>(su(gen));
    c[2] = -0.0;
    y0[5] = T(-0.0);  // -0 + -0: kept negative without a scale
    testing::on_every_target([&](std::int64_t) {
        for (const bool scaled : {false, true}) {
            for (std::int64_t nx = 2; nx <= kMaxN; ++nx) {
                SCOPED_TRACE(::testing::Message() << "nx " << nx << " scaled " << scaled);
                const T* sp = scaled ? s.data() : nullptr;
                std::vector<T> want = y0, got = y0;
                interpolate_reference(c, nx, want, sp);
                kernels::interpolate_line_add(c.data(), nx, got.data(), sp);
                for (std::int64_t i = 0; i <= nx; ++i) {  // y[nx]: must stay as it was
                    ASSERT_EQ(bits(got[i]), bits(want[i])) << "i = " << i;
                }
            }
        }
    });
}

TEST(TransferSimd, RestrictLineIsTheScalarLoopOnEveryTarget) {
    std::mt19937 gen(5);
    check_restriction<float>(gen);
    check_restriction<double>(gen);
}

TEST(TransferSimd, InterpolateLineAddIsTheScalarLoopOnEveryTarget) {
    std::mt19937 gen(6);
    check_interpolation<float>(gen);
    check_interpolation<double>(gen);
}

}  // namespace
}  // namespace mpmg
