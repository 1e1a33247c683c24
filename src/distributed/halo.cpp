#ifdef MPMG_HAVE_MPI

#include "distributed/halo.hpp"

#include "distributed/dist_ops.hpp"

namespace mpmg::dist {
namespace {

int region_index(int dx, int dy, int dz) { return (dx + 1) + 3 * (dy + 1) + 9 * (dz + 1); }

// Region (dx, dy, dz) of the shell is read by `reach` when some offset agrees with it in every
// direction where the region lies outside the box.
bool touched(const std::vector<Offset>& reach, int dx, int dy, int dz) {
    for (const Offset& o : reach) {
        if ((dx == 0 || o.dx == dx) && (dy == 0 || o.dy == dy) && (dz == 0 || o.dz == dz)) {
            return true;
        }
    }
    return false;
}

}  // namespace

Halo::Halo(const Partition& p, int block, const std::vector<Offset>& reach, MPI_Comm comm)
    : local_(p.local()), block_(block), comm_(comm) {
    const auto me = p.coord(p.rank());
    std::int64_t send_cells = 0, recv_cells = 0;
    for (int dz = -1; dz <= 1; ++dz) {
        for (int dy = -1; dy <= 1; ++dy) {
            for (int dx = -1; dx <= 1; ++dx) {
                if ((dx == 0 && dy == 0 && dz == 0) || !touched(reach, dx, dy, dz)) continue;
                const int peer = p.rank_of({me[0] + dx, me[1] + dy, me[2] + dz});
                if (peer < 0) continue;
                Region& r = regions_[static_cast<std::size_t>(region_index(dx, dy, dz))];
                r.peer = peer;
                const std::array<int, 3> dir{dx, dy, dz};
                std::int64_t cells = 1;
                for (std::size_t d = 0; d < 3; ++d) {
                    const int n = local_.extent(static_cast<int>(d));
                    r.ext[d] = dir[d] == 0 ? n : 1;
                    r.send_lo[d] = dir[d] > 0 ? n - 1 : 0;
                    cells *= r.ext[d];
                }
                // Our face towards the peer goes out with the tag of our direction; the peer's
                // face towards us comes in with the tag of its direction (the opposite one).
                r.send_tag = region_index(dx, dy, dz);
                r.recv_tag = region_index(-dx, -dy, -dz);
                r.send_at = send_cells;
                r.recv_at = recv_cells;
                send_cells += cells;
                recv_cells += cells;
                active_.push_back(region_index(dx, dy, dz));
            }
        }
    }
    send_.resize(static_cast<std::size_t>(send_cells * block));
    recv_.resize(static_cast<std::size_t>(recv_cells * block));
    requests_.resize(2 * active_.size());
}

template <class T>
void Halo::exchange(const T* x) {
    const double t0 = MPI_Wtime();
    const std::int64_t r = block_;
    std::size_t q = 0;
    for (int idx : active_) {
        const Region& g = regions_[static_cast<std::size_t>(idx)];
        const std::int64_t n = std::int64_t{g.ext[0]} * g.ext[1] * g.ext[2] * r;
        MPI_Irecv(recv_.data() + g.recv_at * r, static_cast<int>(n), MPI_DOUBLE, g.peer, g.recv_tag,
                  comm_, &requests_[q++]);
    }
    for (int idx : active_) {
        const Region& g = regions_[static_cast<std::size_t>(idx)];
        double* out = send_.data() + g.send_at * r;
        for (int k = 0; k < g.ext[2]; ++k) {
            for (int j = 0; j < g.ext[1]; ++j) {
                const std::int64_t line =
                    ((std::int64_t{g.send_lo[2]} + k) * local_.ny + (g.send_lo[1] + j)) *
                        local_.nx +
                    g.send_lo[0];
                const T* in = x + line * r;
                for (std::int64_t v = 0; v < g.ext[0] * r; ++v) *out++ = static_cast<double>(in[v]);
            }
        }
        const std::int64_t n = std::int64_t{g.ext[0]} * g.ext[1] * g.ext[2] * r;
        MPI_Isend(send_.data() + g.send_at * r, static_cast<int>(n), MPI_DOUBLE, g.peer, g.send_tag,
                  comm_, &requests_[q++]);
    }
    MPI_Waitall(static_cast<int>(q), requests_.data(), MPI_STATUSES_IGNORE);
    CommStats& stats = comm_stats();
    stats.halo_s += MPI_Wtime() - t0;
    ++stats.halo_exchanges;
    stats.halo_values += static_cast<long long>(send_.size());
}

template void Halo::exchange<double>(const double*);
template void Halo::exchange<float>(const float*);

std::int64_t Halo::slot(int i, int j, int k) const {
    const std::array<int, 3> c{i, j, k};
    std::array<int, 3> dir{};
    for (std::size_t d = 0; d < 3; ++d) {
        const int n = local_.extent(static_cast<int>(d));
        dir[d] = c[d] < 0 ? -1 : c[d] >= n ? 1 : 0;
    }
    const Region& g = regions_[static_cast<std::size_t>(region_index(dir[0], dir[1], dir[2]))];
    if (g.peer < 0 || (dir[0] == 0 && dir[1] == 0 && dir[2] == 0)) return -1;
    // Position inside the peer's face: along directions where the region is inside, the local
    // coordinate; elsewhere the face is one cell thick.
    const std::int64_t ii = dir[0] == 0 ? i : 0, jj = dir[1] == 0 ? j : 0, kk = dir[2] == 0 ? k : 0;
    return g.recv_at + (kk * g.ext[1] + jj) * g.ext[0] + ii;
}

}  // namespace mpmg::dist

#endif  // MPMG_HAVE_MPI
