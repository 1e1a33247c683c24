// kernels::restrict_line and kernels::interpolate_line_add on every Highway target this CPU
// supports and the build generated, against the scalar loops they replaced in
// structured/transfer.cpp (bit for bit), for FP32 and FP64 lines, with and without a scale,
// line lengths around the vector width, odd and even, and blocks of r = 2 to 6 values per cell
// (each line copied into a vector of its own size, so that ASan sees any read past its end).
#include "kernels/transfer_simd.hpp"

#include <gtest/gtest.h>

#include <algorithm>
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

/// The scalar block restriction of transfer.cpp before the SIMD kernel (r >= 2).
template <class T>
std::vector<double> restrict_blocks_reference(const std::vector<T>& f, const T* s, std::int64_t n,
                                              int r) {
    const auto v = [&](std::int64_t q) {
        return s == nullptr ? static_cast<double>(f[q])
                            : static_cast<double>(static_cast<T>(f[q] * s[q]));
    };
    const std::int64_t nc = n / 2, full = (n - 1) / 2;
    std::vector<double> out(static_cast<std::size_t>(nc * r));
    for (std::int64_t ic = 0; ic < nc; ++ic) {
        const std::int64_t q = 2 * ic * r;
        for (int a = 0; a < r; ++a) {
            double w = v(q + r + a) + 0.5 * v(q + a);
            if (ic < full) w += 0.5 * v(q + 2 * r + a);
            out[ic * r + a] = w;
        }
    }
    return out;
}

/// The scalar block interpolation of transfer.cpp before the SIMD kernel (r >= 2).
template <class T>
void interpolate_blocks_reference(const std::vector<double>& c, std::int64_t nx, int r,
                                  std::vector<T>& y, const T* s) {
    const std::int64_t cx = nx / 2;
    for (std::int64_t i = 0; i < nx; ++i) {
        for (int a = 0; a < r; ++a) {
            double w;
            if (i % 2 == 1) {
                w = c[(i - 1) / 2 * r + a];
            } else {
                const std::int64_t ic = i / 2;
                w = 0.0;
                if (ic >= 1) w += 0.5 * c[(ic - 1) * r + a];
                if (ic < cx) w += 0.5 * c[ic * r + a];
            }
            const std::int64_t q = i * r + a;
            if (s == nullptr) {
                y[q] = static_cast<T>(static_cast<double>(y[q]) + w);
            } else {
                y[q] += s[q] * static_cast<T>(0.0 + w);
            }
        }
    }
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
                kernels::restrict_line(f.data(), sp, n, 1, got.data());
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
                kernels::interpolate_line_add(c.data(), nx, 1, got.data(), sp);
                for (std::int64_t i = 0; i <= nx; ++i) {  // y[nx]: must stay as it was
                    ASSERT_EQ(bits(got[i]), bits(want[i])) << "i = " << i;
                }
            }
        }
    });
}

constexpr std::int64_t kMaxCells = 24;

template <class T>
void check_block_restriction(std::mt19937& gen) {
    std::uniform_real_distribution<double> u(-1.0, 1.0), su(0.25, 4.0);
    const std::size_t size = kMaxCells * 6;
    std::vector<T> f(size), s(size);
    for (auto& v : f) v = static_cast<T>(u(gen));
    for (auto& v : s) v = static_cast<T>(su(gen));
    testing::on_every_target([&](std::int64_t) {
        for (const int r : {2, 3, 4, 5, 6}) {
            for (const bool scaled : {false, true}) {
                for (std::int64_t n = 1; n * r <= static_cast<std::int64_t>(size); ++n) {
                    SCOPED_TRACE(::testing::Message()
                                 << "r " << r << " n " << n << " scaled " << scaled);
                    // The line's last value is the vector's: a read past it would be seen by
                    // ASan.
                    std::vector<T> line(f.begin(), f.begin() + n * r);
                    std::vector<T> sl(s.begin(), s.begin() + n * r);
                    const T* sp = scaled ? sl.data() : nullptr;
                    const std::vector<double> want = restrict_blocks_reference(line, sp, n, r);
                    std::vector<double> got(want.size() + 1, 99.0);
                    kernels::restrict_line(line.data(), sp, n, r, got.data());
                    for (std::size_t q = 0; q < want.size(); ++q) {
                        ASSERT_EQ(bits(got[q]), bits(want[q])) << "q = " << q;
                    }
                    EXPECT_EQ(got[want.size()], 99.0) << "wrote past the coarse line";
                }
            }
        }
    });
}

template <class T>
void check_block_interpolation(std::mt19937& gen) {
    std::uniform_real_distribution<double> u(-1.0, 1.0), su(0.25, 4.0);
    const std::size_t size = kMaxCells * 6;
    std::vector<double> c(size / 2);
    std::vector<T> y0(size), s(size);
    for (auto& v : c) v = u(gen);
    for (auto& v : y0) v = static_cast<T>(u(gen));
    for (auto& v : s) v = static_cast<T>(su(gen));
    c[1] = -0.0;
    y0[3] = T(-0.0);
    testing::on_every_target([&](std::int64_t) {
        for (const int r : {2, 3, 4, 5, 6}) {
            for (const bool scaled : {false, true}) {
                for (std::int64_t nx = 1; nx * r <= static_cast<std::int64_t>(size); ++nx) {
                    SCOPED_TRACE(::testing::Message()
                                 << "r " << r << " nx " << nx << " scaled " << scaled);
                    const std::int64_t cx = nx / 2;
                    std::vector<double> line(c.begin(),
                                             c.begin() + std::max<std::int64_t>(cx, 1) * r);
                    std::vector<T> want(y0.begin(), y0.begin() + nx * r), got = want;
                    std::vector<T> sl(s.begin(), s.begin() + nx * r);
                    const T* sp = scaled ? sl.data() : nullptr;
                    interpolate_blocks_reference(line, nx, r, want, sp);
                    kernels::interpolate_line_add(line.data(), nx, r, got.data(), sp);
                    for (std::size_t q = 0; q < want.size(); ++q) {
                        ASSERT_EQ(bits(got[q]), bits(want[q])) << "q = " << q;
                    }
                }
            }
        }
    });
}

TEST(TransferSimd, BlockLinesAreTheScalarLoopsOnEveryTarget) {
    std::mt19937 gen(7);
    check_block_restriction<float>(gen);
    check_block_restriction<double>(gen);
    check_block_interpolation<float>(gen);
    check_block_interpolation<double>(gen);
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
