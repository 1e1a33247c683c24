// The value arrays of SgDiaMatrix come zeroed without a memset (src/core/zeroed_memory.cpp):
// small and large arrays read as zero, are writable to their last byte, and copy like any
// vector.
#include <gtest/gtest.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "core/float16.hpp"
#include "core/prefault.hpp"
#include "mpmg/sgdia_matrix.hpp"
#include "mpmg/solver.hpp"

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

#if defined(__linux__) && defined(MADV_POPULATE_WRITE) && !defined(__SANITIZE_ADDRESS__)
// Resident pages among the whole pages of [p, p + bytes) (mincore), or -1.
long resident_pages(const void* p, std::size_t bytes) {
    const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    const auto first = (reinterpret_cast<std::uintptr_t>(p) + page - 1) & ~(page - 1);
    const auto last = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(page - 1);
    std::vector<unsigned char> in((last - first) / page);
    if (mincore(reinterpret_cast<void*>(first), last - first, in.data()) != 0) return -1;
    return static_cast<long>(
        std::count_if(in.begin(), in.end(), [](unsigned char c) { return (c & 1) != 0; }));
}

// A large block comes already faulted in (one madvise instead of a fault per page as the
// producer writes it): every page of a fresh one is resident before anything touches it. A
// small block is left to be faulted in as it is written.
TEST(ZeroedMemory, LargeBlocksComeFaultedIn) {
    // 64 MiB: glibc maps it afresh unless keep_freed_memory took effect in this process, and a
    // heap that size has not been touched before in this test binary.
    const std::size_t bytes = std::size_t{64} << 20;
    void* p = detail::allocate_zeroed(bytes);
    const long pages = static_cast<long>(bytes / static_cast<std::size_t>(sysconf(_SC_PAGESIZE)));
    EXPECT_GE(resident_pages(p, bytes), pages - 1);
    detail::deallocate_zeroed(p, bytes);
}

// reserve_prefaulted grows a vector into storage faulted in before anything is written to it,
// and keeps its values (the Galerkin product's plane windows grow so).
TEST(ZeroedMemory, ReservePrefaultedKeepsTheValuesInFaultedInStorage) {
    std::vector<double> v{1.5, 2.5, 3.5};
    // 128 MiB, twice the block above: even if the heap hands back that block's (resident)
    // pages, half of these are new.
    const std::size_t n = (std::size_t{128} << 20) / sizeof(double);
    reserve_prefaulted(v, n);
    EXPECT_EQ(v, (std::vector<double>{1.5, 2.5, 3.5}));
    ASSERT_GE(v.capacity(), n);
    const long pages =
        static_cast<long>(n * sizeof(double) / static_cast<std::size_t>(sysconf(_SC_PAGESIZE)));
    EXPECT_GE(resident_pages(v.data(), n * sizeof(double)), pages - 1);
    const double* at = v.data();
    reserve_prefaulted(v, n / 2);  // enough capacity already: nothing moves
    EXPECT_EQ(v.data(), at);
}
#endif

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
/// Whether a 1 GiB block (more than the heap holds free; never touched, so it costs address
/// space only) is mapped on its own instead of taken from the heap.
bool large_block_is_mapped() {
    const std::size_t before = mallinfo2().hblks;
    void* volatile p = std::malloc(std::size_t{1} << 30);
    const bool mapped = mallinfo2().hblks > before;
    std::free(p);
    return mapped;
}
#endif

TEST(KeepFreedMemory, LargeBlocksComeFromTheHeap) {
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
    // glibc's default first (libsuperlu_dist, linked into this binary with hypre, may have set
    // the same in its constructor): a large block is mapped, and unmapped when freed.
    mallopt(M_MMAP_MAX, 65536);
    mallopt(M_TRIM_THRESHOLD, 128 * 1024);
    EXPECT_TRUE(large_block_is_mapped()) << "the check sees a mapped block";
    ASSERT_TRUE(keep_freed_memory());
    EXPECT_FALSE(large_block_is_mapped());
#else
    EXPECT_FALSE(keep_freed_memory());
#endif
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
