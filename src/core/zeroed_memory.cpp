// Zero-filled memory for the SG-DIA value arrays (mpmg/sgdia_matrix.hpp, detail::ZeroedAllocator),
// keep_freed_memory (mpmg/solver.hpp), the allocator setting that the `mpmg` command makes, and
// prefault (core/prefault.hpp), which the value arrays and the large vectors are given.
// After keep_freed_memory, large blocks come from the heap too, and calloc clears a reused block
// itself (a memset at memory speed, where a fresh page costs a fault).
//
// A value-initialised std::vector writes zeros over every byte before the matrix's producer
// (Galerkin product, truncation, scaling) writes the values: a memset pass over memory that is
// about to be overwritten. calloc knows when its memory is zero already: large blocks are
// fresh pages from the operating system (glibc maps every block above its mmap threshold,
// at most 32 MiB), so calloc writes no byte before the producer's own write (prefault has the
// kernel map and zero the pages at once); smaller blocks it clears itself, as the vector did.
//
// Tried and rejected, twice: mapping large arrays in transparent huge pages (madvise
// MADV_HUGEPAGE). On a KVM guest it cut the kernel's fault time when the huge pages were already
// backed by the host, but made setup 2x slower when they were not (first touch of guest memory
// faults on the host too): laplace27e8 n=86 setup medians of 8 runs 0.25 s in one series, 0.71 s
// in the next, against a steady 0.33 s with calloc. On the twenty-first session's Zen 5 VM (a
// 4 KiB first-touch fault there costs about 11 us) it helped a fresh process: solid3d n = 52
// K64P32D16 134.6k -> 11.0k faults and setup 1.5 -> 1.0-1.1 s, oil n = 140 setup 2.35-2.37 ->
// 1.66-1.76 s, and `bench scaling` 2-rank efficiency 41 -> 53 %; but in `bench e2e`, which
// allocates and frees every repetition's hierarchy in one process (as a time-stepping
// application would), setups grew up to 3x against the run before (oil K64P32D16 0.55 -> 1.25 s,
// oil4c 0.46 -> 0.91, weather 0.68 -> 2.14 at the same or nearly the same sizes), as if each new
// huge page waited for compaction ("defrag: madvise" compacts synchronously for advised memory)
// or for the host. Commit a85b93e, reverted.
#include <cstdint>
#include <cstdlib>
#include <new>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "core/prefault.hpp"
#include "mpmg/sgdia_matrix.hpp"
#include "mpmg/solver.hpp"

namespace mpmg::detail {

void* allocate_zeroed(std::size_t bytes) {
    void* p = std::calloc(bytes > 0 ? bytes : 1, 1);
    if (!p) throw std::bad_alloc();
    prefault(p, bytes);
    return p;
}

void deallocate_zeroed(void* p, std::size_t /*bytes*/) noexcept { std::free(p); }

}  // namespace mpmg::detail

namespace mpmg {

// glibc maps every block above its mmap threshold (at most 32 MiB) afresh and unmaps it when
// freed: M_MMAP_MAX = 0 serves them from the heap, M_TRIM_THRESHOLD = -1 never gives the heap's
// top back. mallopt returns 1 when it took the setting.
bool keep_freed_memory() {
#if defined(__SANITIZE_ADDRESS__)
    return false;  // ASan's allocator serves malloc; glibc's settings would not apply
#elif defined(__GLIBC__)
    const bool mmap_off = mallopt(M_MMAP_MAX, 0) == 1;
    const bool trim_off = mallopt(M_TRIM_THRESHOLD, -1) == 1;
    return mmap_off && trim_off;
#else
    return false;
#endif
}

// Large blocks are faulted in by one madvise(MADV_POPULATE_WRITE) (Linux 5.14) instead of
// page by page as the producer first writes them. On the Zen 5 VM a scratch program touching a
// fresh 64 MiB heap block spent 2.5-3.4 ms per MiB page by page and 1.3-1.7 ms per MiB with
// the madvise first (the madvise itself 8-12 ms of that). Pages already mapped (a reused
// block, which calloc cleared) cost the madvise only a walk of their page tables. Kernels
// without it answer EINVAL, and the block is faulted in as before.
void prefault(void* p, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE) && !defined(__SANITIZE_ADDRESS__)
    constexpr std::size_t kPrefaultBytes = std::size_t{1} << 20;
    if (bytes < kPrefaultBytes) return;
    constexpr std::uintptr_t kPage = 4096;
    const auto first = (reinterpret_cast<std::uintptr_t>(p) + kPage - 1) & ~(kPage - 1);
    const auto last = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(kPage - 1);
    if (last > first) {
        (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_POPULATE_WRITE);
    }
#else
    (void)p;
    (void)bytes;
#endif
}

}  // namespace mpmg
