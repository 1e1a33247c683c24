// Zero-filled memory for the SG-DIA value arrays (mpmg/sgdia_matrix.hpp, detail::ZeroedAllocator).
//
// A value-initialised std::vector writes zeros over every byte before the matrix's producer
// (Galerkin product, truncation, scaling) writes the values: a memset pass over memory that is
// about to be overwritten. calloc knows when its memory is zero already: large blocks are
// fresh pages from the operating system (glibc maps every block above its mmap threshold,
// at most 32 MiB), so no byte is written before the producer's own write; smaller blocks it
// clears itself, as the vector did.
//
// Tried and rejected: mapping large arrays in transparent huge pages (madvise MADV_HUGEPAGE).
// On this KVM guest it cut the kernel's fault time when the huge pages were already backed by
// the host, but made setup 2x slower when they were not (first touch of guest memory faults
// on the host too): laplace27e8 n=86 setup medians of 8 runs 0.25 s in one series, 0.71 s in
// the next, against a steady 0.33 s with calloc.
#include <cstdlib>
#include <new>

#include "mpmg/sgdia_matrix.hpp"

namespace mpmg::detail {

void* allocate_zeroed(std::size_t bytes) {
    void* p = std::calloc(bytes > 0 ? bytes : 1, 1);
    if (!p) throw std::bad_alloc();
    return p;
}

void deallocate_zeroed(void* p, std::size_t /*bytes*/) noexcept { std::free(p); }

}  // namespace mpmg::detail
