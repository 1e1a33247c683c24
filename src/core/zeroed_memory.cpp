// Zero-filled memory for the SG-DIA value arrays (mpmg/sgdia_matrix.hpp, detail::ZeroedAllocator).
//
// A value-initialised std::vector writes zeros over every byte before the matrix's producer
// (Galerkin product, truncation, scaling) writes the values: a memset pass over memory that is
// about to be overwritten. Fresh anonymous pages from the operating system are zero already, so
// no byte is written before the producer's own write.
//
// Arrays of at least 4 MiB are mapped directly, aligned to 2 MiB and advised as transparent huge
// pages (MADV_HUGEPAGE; Linux's default THP mode "madvise" gives them only to memory that asks):
// one fault per 2 MiB instead of 512, and one TLB entry where a line of a 27-point stencil reads
// 27 runs of values far apart. Measured on the twenty-first session's Zen 5 VM, where a 4 KiB
// first-touch fault costs about 11 us: filling 256 MiB of new memory took 0.72 s in 4 KiB pages,
// 0.47 s in huge pages the host had not backed yet and 0.024 s once it had; `mpmg solve
// --problem solid3d --n 52` (K64P32D16, one thread) went from 134.6k to 11.0k minor faults,
// setup 1.48-1.51 -> 1.00-1.11 s, total 6.3-7.0 -> 5.3-5.5 s (two interleaved runs each, the
// machine compiling on the other core). An earlier session (21b9046) rejected huge pages on a KVM
// guest where setup was 2x slower in some series (0.25 s in one, 0.71 s in the next, against a
// steady 0.33 s in 4 KiB pages), which it put down to the host backing the huge pages; on this
// VM not-yet-backed huge pages were still faster than small ones. Smaller arrays come from
// calloc, which clears only what is not fresh from the system.
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <new>

#include "mpmg/sgdia_matrix.hpp"

namespace mpmg::detail {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kMapFrom = std::size_t{4} << 20;  ///< mapped directly from this size on

std::size_t mapped_length(std::size_t bytes) {
    return (bytes + kHugePage - 1) / kHugePage * kHugePage;
}

/// `len` bytes (a multiple of kHugePage) of zero pages aligned to kHugePage, advised as huge.
void* map_huge(std::size_t len) {
    // Over-map by one huge page and unmap the unaligned ends.
    void* raw =
        mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    const auto first = reinterpret_cast<std::uintptr_t>(raw);
    const std::uintptr_t start = (first + kHugePage - 1) / kHugePage * kHugePage;
    const std::uintptr_t end = first + len + kHugePage;
    if (start > first) munmap(raw, start - first);
    if (end > start + len) munmap(reinterpret_cast<void*>(start + len), end - (start + len));
#ifdef MADV_HUGEPAGE
    (void)madvise(reinterpret_cast<void*>(start), len, MADV_HUGEPAGE);  // advice only
#endif
    return reinterpret_cast<void*>(start);
}

}  // namespace

void* allocate_zeroed(std::size_t bytes) {
    if (bytes >= kMapFrom) return map_huge(mapped_length(bytes));
    void* p = std::calloc(bytes > 0 ? bytes : 1, 1);
    if (!p) throw std::bad_alloc();
    return p;
}

void deallocate_zeroed(void* p, std::size_t bytes) noexcept {
    if (bytes >= kMapFrom) {
        munmap(p, mapped_length(bytes));
        return;
    }
    std::free(p);
}

}  // namespace mpmg::detail
