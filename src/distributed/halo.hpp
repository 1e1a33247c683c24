// Halo exchange on a partitioned structured grid (issue #8): each process receives the values
// of the cells one layer around its box that its neighbours own. A Halo is set up once for a
// partition and a reach (the stencil's offsets, or one direction for the transfers); only the
// regions the reach touches are exchanged, and only with neighbours that exist.
//
// The received values land in one buffer (FP64, exact for FP64 and FP32 vectors); slot(i, j, k)
// maps a cell of the one-layer shell around the local box (local coordinates, -1 .. n) to its
// position there.
#pragma once

#ifdef MPMG_HAVE_MPI

#include <mpi.h>

#include <array>
#include <cstdint>
#include <vector>

#include "distributed/partition.hpp"

namespace mpmg::dist {

class Halo {
public:
    Halo() = default;
    /// `reach`: offsets with components in {-1, 0, 1} that the operation reads.
    Halo(const Partition& p, int block, const std::vector<Offset>& reach, MPI_Comm comm);

    /// Sends this process's boundary values of `x` (its local vector) and receives the
    /// neighbours' into values(). Collective over the neighbours.
    template <class T>
    void exchange(const T* x);
    const std::vector<double>& values() const { return recv_; }
    /// Position (in cells) of shell cell (i, j, k) in values(), or -1 when no process owns it
    /// (outside the global grid) or the reach does not cover it.
    std::int64_t slot(int i, int j, int k) const;
    /// Total values received per exchange.
    std::int64_t received() const { return static_cast<std::int64_t>(recv_.size()); }

private:
    struct Region {
        int peer = -1;                          // neighbour rank in this direction
        std::array<int, 3> send_lo{}, ext{};    // local cells sent (same extents as received)
        std::int64_t send_at = 0, recv_at = 0;  // offsets (cells) into the buffers
        int send_tag = 0, recv_tag = 0;
    };
    Box local_;
    int block_ = 1;
    MPI_Comm comm_ = MPI_COMM_NULL;
    std::array<Region, 27> regions_{};  // index (dx+1) + 3 (dy+1) + 9 (dz+1)
    std::vector<int> active_;           // regions with a peer
    std::vector<double> send_, recv_;
    std::vector<MPI_Request> requests_;
};

}  // namespace mpmg::dist

#endif  // MPMG_HAVE_MPI
