// Sending items to the processes that own them, in one MPI_Alltoallv: the entries of a file read
// in parts go to the owners of their rows (dist_read.cpp), rows to their renumbered blocks
// (dist_amg.cpp, which lays them out by process itself and calls send_grouped).
#pragma once

#ifdef MPMG_HAVE_MPI

#include <fmt/format.h>
#include <mpi.h>

#include <climits>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "core/prefault.hpp"
#include "mpmg/errors.hpp"

namespace mpmg::dist {

/// Sends `grouped`, laid out by process (its first send_count[0] items to process 0, the next
/// send_count[1] to process 1, ...), and returns what this process received: in process order,
/// each process's items in their order there (collective). Throws Unsupported beyond MPI's int
/// counts. `received_count`, when given, receives how many items came from each process.
template <class T>
std::vector<T> send_grouped(const std::vector<T>& grouped, const std::vector<int>& send_count,
                            MPI_Comm comm, std::vector<int>* received_count = nullptr) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto size = static_cast<int>(send_count.size());
    std::vector<int> own_count;
    std::vector<int>& recv_count = received_count != nullptr ? *received_count : own_count;
    recv_count.assign(send_count.size(), 0);
    MPI_Alltoall(send_count.data(), 1, MPI_INT, recv_count.data(), 1, MPI_INT, comm);
    std::vector<int> send_disp(send_count.size(), 0), recv_disp(send_count.size(), 0);
    long long received = 0;
    for (int r = 0; r < size; ++r) {
        const auto u = static_cast<std::size_t>(r);
        if (r > 0) send_disp[u] = send_disp[u - 1] + send_count[u - 1];
        recv_disp[u] = static_cast<int>(received);
        received += recv_count[u];
        if (received > INT_MAX) {
            throw Unsupported(fmt::format(
                "a process would receive more than {} matrix entries: run on more processes",
                INT_MAX));
        }
    }
    std::vector<T> recv = prefaulted<T>(static_cast<std::size_t>(received));
    MPI_Datatype type;
    MPI_Type_contiguous(static_cast<int>(sizeof(T)), MPI_BYTE, &type);
    MPI_Type_commit(&type);
    MPI_Alltoallv(grouped.data(), send_count.data(), send_disp.data(), type, recv.data(),
                  recv_count.data(), recv_disp.data(), type, comm);
    MPI_Type_free(&type);
    return recv;
}

/// What send_keeping received: the items of the processes before this one (the first `before`),
/// then those of the processes after it.
template <class T>
struct Received {
    std::vector<T> items;
    std::size_t before = 0;
};

/// send_to_owners for items of which this process (`rank` of `comm`) owns many: those stay in
/// `items` (moved to its front in their order; the rest of it dropped) and only the others are
/// laid out and sent. received.items' first `before`, then `items`, then the rest of
/// received.items are what send_to_owners returns, in its order, without the copies of the
/// items that stay. `owner` is called twice per item, in order, in two passes.
template <class T, class Owner>
Received<T> send_keeping(std::vector<T>& items, int size, int rank, Owner&& owner, MPI_Comm comm) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::vector<int> send_count(static_cast<std::size_t>(size), 0);
    for (std::size_t k = 0; k < items.size(); ++k) {
        const auto q = static_cast<std::size_t>(owner(k));
        if (send_count[q] == INT_MAX) {
            throw Unsupported(fmt::format(
                "a process would send more than {} matrix entries to one process: run on more "
                "processes",
                INT_MAX));
        }
        ++send_count[q];
    }
    const auto me = static_cast<std::size_t>(rank);
    send_count[me] = 0;  // the items that stay
    std::vector<std::size_t> next(send_count.size(), 0);
    for (std::size_t q = 1; q < next.size(); ++q) {
        next[q] = next[q - 1] + static_cast<std::size_t>(send_count[q - 1]);
    }
    std::vector<T> out = prefaulted<T>(next.back() + static_cast<std::size_t>(send_count.back()));
    std::size_t kept = 0;
    for (std::size_t k = 0; k < items.size(); ++k) {
        const auto q = static_cast<std::size_t>(owner(k));
        if (q == me) {
            items[kept++] = items[k];  // kept <= k: in place
        } else {
            out[next[q]++] = items[k];
        }
    }
    items.resize(kept);
    Received<T> r;
    std::vector<int> recv_count;
    r.items = send_grouped(out, send_count, comm, &recv_count);
    for (std::size_t q = 0; q < me; ++q) r.before += static_cast<std::size_t>(recv_count[q]);
    return r;
}

/// Sends items[k] to process owner(k) of `comm` (`size` processes; owner is called once per
/// item, in order) and returns what this process received: in process order, each process's
/// items in their order in `items` (collective). `items` is left sorted by owner, stably, so
/// that it can be sent again. Throws Unsupported beyond MPI's int counts.
template <class T, class Owner>
std::vector<T> send_to_owners(std::vector<T>& items, int size, Owner&& owner, MPI_Comm comm) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (items.size() > static_cast<std::size_t>(INT_MAX)) {
        throw Unsupported(fmt::format(
            "a process would send {} matrix entries; more than {} per process: run on more "
            "processes",
            items.size(), INT_MAX));
    }
    std::vector<int> to(items.size());
    std::vector<int> send_count(static_cast<std::size_t>(size), 0);
    for (std::size_t k = 0; k < items.size(); ++k) {
        to[k] = owner(k);
        ++send_count[static_cast<std::size_t>(to[k])];
    }
    {
        std::vector<int> next(static_cast<std::size_t>(size), 0);
        for (int r = 1; r < size; ++r) {
            const auto u = static_cast<std::size_t>(r);
            next[u] = next[u - 1] + send_count[u - 1];
        }
        std::vector<T> by_owner = prefaulted<T>(items.size());
        for (std::size_t k = 0; k < items.size(); ++k) {
            by_owner[static_cast<std::size_t>(next[static_cast<std::size_t>(to[k])]++)] = items[k];
        }
        items.swap(by_owner);
        to = std::vector<int>();
    }
    return send_grouped(items, send_count, comm);
}

}  // namespace mpmg::dist

#endif  // MPMG_HAVE_MPI
