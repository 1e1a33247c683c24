// Fresh memory faulted in by one madvise instead of one page fault per page as it is first
// written (zeroed_memory.cpp measures the difference): for the large vectors the setup and the
// solve allocate.
#pragma once

#include <cstddef>
#include <iterator>
#include <vector>

namespace mpmg {

/// Faults in the whole pages of [p, p + bytes) for writing when bytes >= 1 MiB
/// (madvise MADV_POPULATE_WRITE, Linux 5.14; elsewhere, and under ASan, nothing). Pages already
/// mapped cost only a walk of their page tables.
void prefault(void* p, std::size_t bytes);

/// v.reserve(n), with storage it allocates anew prefaulted before the values are moved into it.
template <class T>
void reserve_prefaulted(std::vector<T>& v, std::size_t n) {
    if (v.capacity() >= n) return;
    std::vector<T> fresh;
    fresh.reserve(n);
    prefault(fresh.data(), n * sizeof(T));
    fresh.insert(fresh.end(), std::make_move_iterator(v.begin()), std::make_move_iterator(v.end()));
    v.swap(fresh);
}

/// v = n copies of `value`; storage it allocates anew is prefaulted before the values are
/// written (the old values are dropped first, not copied).
template <class T>
void assign_prefaulted(std::vector<T>& v, std::size_t n, const T& value = T{}) {
    if (v.capacity() < n) v = std::vector<T>();
    reserve_prefaulted(v, n);
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
