// Fresh memory faulted in by one madvise instead of one page fault per page as it is first
// written (zeroed_memory.cpp measures the difference): for the large vectors the setup and the
// solve allocate.
#pragma once

#include <cstddef>
#include <vector>

namespace mpmg {

/// Faults in the whole pages of [p, p + bytes) for writing when bytes >= 1 MiB
/// (madvise MADV_POPULATE_WRITE, Linux 5.14; elsewhere, and under ASan, nothing). Pages already
/// mapped cost only a walk of their page tables.
void prefault(void* p, std::size_t bytes);

/// v = n copies of `value`; storage it allocates anew is prefaulted before the values are
/// written.
template <class T>
void assign_prefaulted(std::vector<T>& v, std::size_t n, const T& value = T{}) {
    if (v.capacity() < n) {
        v = std::vector<T>();
        v.reserve(n);
        prefault(v.data(), n * sizeof(T));
    }
    v.assign(n, value);
}

/// std::vector<T>(n, value) with its storage prefaulted before the values are written.
template <class T>
std::vector<T> prefaulted(std::size_t n, const T& value = T{}) {
    std::vector<T> v;
    assign_prefaulted(v, n, value);
    return v;
}

}  // namespace mpmg
