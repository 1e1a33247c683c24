// The value arrays of SgDiaMatrix come zeroed without a memset (src/core/zeroed_memory.cpp):
// small and large arrays read as zero, are writable to their last byte, and copy like any
// vector.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/float16.hpp"
#include "mpmg/sgdia_matrix.hpp"

namespace mpmg {
namespace {

TEST(ZeroedMemory, SmallAndLargeBlocksAreZeroAndWritable) {
    for (std::size_t bytes :
         {std::size_t{0}, std::size_t{1}, std::size_t{4096}, (std::size_t{4} << 20) - 8,
          std::size_t{4} << 20, (std::size_t{4} << 20) + 24, (std::size_t{9} << 20) + 4096}) {
        SCOPED_TRACE(bytes);
        auto* p = static_cast<unsigned char*>(detail::allocate_zeroed(bytes));
        ASSERT_NE(p, nullptr);
        EXPECT_TRUE(std::all_of(p, p + bytes, [](unsigned char c) { return c == 0; }));
        std::memset(p, 0xAB, bytes);
        if (bytes > 0) {
            EXPECT_EQ(p[bytes - 1], 0xAB);
        }
        detail::deallocate_zeroed(p, bytes);
    }
}

template <class T>
void expect_zero_matrix(Box box) {
    SgDiaMatrix<T> a(box, Stencil::named("3d27"), 1);
    const auto* bytes = reinterpret_cast<const unsigned char*>(a.values().data());
    const std::size_t n = a.values().size() * sizeof(T);
    EXPECT_TRUE(std::all_of(bytes, bytes + n, [](unsigned char c) { return c == 0; }));
    a.value(3, 5, 0, 0) = from_double<T>(2.0);
    const SgDiaMatrix<T> copy = a;
    EXPECT_EQ(to_double(copy.value(3, 5, 0, 0)), 2.0);
    EXPECT_EQ(to_double(copy.value(3, 6, 0, 0)), 0.0);
    EXPECT_EQ(std::memcmp(copy.values().data(), a.values().data(), n), 0);
}

TEST(ZeroedMemory, NewMatricesAreZero) {
    expect_zero_matrix<double>(Box{5, 4, 3});
    expect_zero_matrix<half>(Box{5, 4, 3});
    expect_zero_matrix<double>(Box{40, 40, 40});  // 13.8 MB: above glibc's mmap threshold
    expect_zero_matrix<half>(Box{40, 40, 40});
}

}  // namespace
}  // namespace mpmg
