// The pieces of a distributed structured level (issue #8): the coupling of a process's rows to
// its neighbours' cells, and the structured transfers across process boundaries.
#pragma once

#ifdef MPMG_HAVE_MPI

#include <mpi.h>

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/float16.hpp"
#include "distributed/halo.hpp"
#include "distributed/partition.hpp"
#include "mpmg/solver.hpp"
#include "multigrid/level.hpp"
#include "structured/coarsen.hpp"

namespace mpmg::dist {

/// Calls f(d, cell, rc, rn, nb) for every entry of this process's rows that couples its cell
/// to a cell another process owns, cell after cell (local order), offsets in stencil order:
/// `d` the offset, `cell` the local cell, `rc` and `rn` the cell and the neighbour in `rows`
/// (first cell: the global cell `rows_lo`; it holds this process's rows whole), `nb` the
/// neighbour in local coordinates (-1 .. n along each direction).
template <class F>
void for_each_coupling(const SgDiaMatrix<double>& rows, const std::array<int, 3>& rows_lo,
                       const Partition& p, F&& f) {
    const Box gb = p.global(), lb = p.local(), rb = rows.box();
    const auto lo = p.lo();
    const Stencil& st = rows.stencil();
    for (int k = 0; k < lb.nz; ++k) {
        for (int j = 0; j < lb.ny; ++j) {
            // Only cells on a face of the local box can reach another process's cells.
            const bool inner_line = j > 0 && j < lb.ny - 1 && k > 0 && k < lb.nz - 1;
            for (int i = 0; i < lb.nx; i = inner_line && i == 0 && lb.nx > 1 ? lb.nx - 1 : i + 1) {
                const int gi = i + lo[0], gj = j + lo[1], gk = k + lo[2];
                const std::int64_t rc =
                    (std::int64_t{gk - rows_lo[2]} * rb.ny + (gj - rows_lo[1])) * rb.nx +
                    (gi - rows_lo[0]);
                const std::int64_t cell = (std::int64_t{k} * lb.ny + j) * lb.nx + i;
                for (int d = 0; d < st.size(); ++d) {
                    const Offset& o = st[d];
                    const int ni = i + o.dx, nj = j + o.dy, nk = k + o.dz;
                    const bool local =
                        ni >= 0 && ni < lb.nx && nj >= 0 && nj < lb.ny && nk >= 0 && nk < lb.nz;
                    const bool inside = gi + o.dx >= 0 && gi + o.dx < gb.nx && gj + o.dy >= 0 &&
                                        gj + o.dy < gb.ny && gk + o.dz >= 0 && gk + o.dz < gb.nz;
                    if (local || !inside) continue;
                    const std::int64_t rn =
                        rc + o.dx + std::int64_t{rb.nx} * (o.dy + std::int64_t{rb.ny} * o.dz);
                    f(d, cell, rc, rn, std::array<int, 3>{ni, nj, nk});
                }
            }
        }
    }
}

/// Entry (a, b) of offset d of row cell `rc` of `rows` (for_each_coupling's cells), divided by
/// s_rc,a s_rn,b when `s` (one per row of `rows`) is given: as a scaled level stores it.
inline double coupling_entry(const SgDiaMatrix<double>& rows, int d, std::int64_t rc,
                             std::int64_t rn, int a, int b, const std::vector<double>* s) {
    const double v = rows.value(d, rc, a, b);
    if (s == nullptr) return v;
    const std::int64_t r = rows.block();
    return v / ((*s)[static_cast<std::size_t>(rc * r + a)] *
                (*s)[static_cast<std::size_t>(rn * r + b)]);
}

/// The entries of a level's operator that couple this process's cells to cells its neighbours
/// own: exactly the entries extract_local() leaves out. Values are rounded through the storage
/// type S (so the process boundary sees the same numbers as the serial level) and kept in FP64.
class GhostCoupling {
public:
    GhostCoupling() = default;
    /// `rows`: the level's FP64 rows on a box whose first cell is the global cell `rows_lo`,
    /// holding this process's rows whole: the whole grid (lo 0), or the process's block grown
    /// by ghost cells (dist_galerkin.hpp). `halo` must reach its stencil. `s` (one per row of
    /// `rows`, may be null): the entries are a_ij / (s_i s_j), scaled as the level's own block
    /// is (LevelSetup::scale_in_truncation). Adds the truncation counts of the entries kept here
    /// to `counts`.
    template <class S>
    static GhostCoupling build(const SgDiaMatrix<double>& rows, const std::array<int, 3>& rows_lo,
                               const Partition& p, const Halo& halo, TruncationCounts& counts,
                               const std::vector<double>* s = nullptr);
    /// y += sign * G x_ghost, where `ghost` is the halo's values() after an exchange.
    template <class T>
    void add(const std::vector<double>& ghost, T* y, double sign) const;
    /// The local cells that have ghost entries.
    const std::vector<std::int64_t>& rows() const { return rows_; }
    int block() const { return block_; }

private:
    int block_ = 1;
    std::vector<std::int64_t> rows_;  // local cells with entries
    std::vector<std::int64_t> ptr_;   // entries of rows_[q]: ptr_[q] .. ptr_[q+1]-1
    std::vector<std::int64_t> slot_;  // halo slot (cell) of each entry
    std::vector<double> val_;         // block*block values per entry, row-major
};

/// A distributed level's LevelBoundary: a halo exchange of u and its GhostCoupling.
class HaloBoundary final : public LevelBoundary {
public:
    /// The coupling of the level's FP64 `rows` (first cell `rows_lo`; scaled by `s`; both as
    /// in GhostCoupling::build) on partition `p`, rounded through `storage`; adds its
    /// truncation counts to `counts`.
    HaloBoundary(const SgDiaMatrix<double>& rows, const std::array<int, 3>& rows_lo,
                 const Partition& p, Precision storage, MPI_Comm comm, TruncationCounts& counts,
                 const std::vector<double>* s);
    void subtract(const double* u, double* y) override { apply(u, y); }
    void subtract(const float* u, float* y) override { apply(u, y); }
    const std::vector<std::int64_t>& rows() const override { return coupling_.rows(); }
    ZSplit z_split() const override { return z_split_; }

private:
    template <class T>
    void apply(const T* u, T* y) {
        halo_.exchange(u);
        coupling_.add(halo_.values(), y, -1.0);
    }
    Halo halo_;
    GhostCoupling coupling_;
    ZSplit z_split_ = ZSplit::none;
};

/// The operator-dependent weights of one directional step (DirectionalTransfer's w_left and
/// w_right) on the cells a process's restriction and interpolation read: its block of the
/// step's fine grid grown by one cell each way along the step's direction (weight_region()).
/// Empty vectors: linear weights (1/2).
struct StepWeights {
    std::array<int, 3> lo{};  ///< first cell (global)
    Box box;
    std::vector<double> left, right;

    bool linear() const { return left.empty(); }
    /// Index of the global cell `g` (inside the box).
    std::size_t at(const std::array<int, 3>& g) const {
        return static_cast<std::size_t>(
            (std::int64_t{g[2] - lo[2]} * box.ny + (g[1] - lo[1])) * box.nx + (g[0] - lo[0]));
    }
};

/// The cells whose weights a process's step along `dir` reads (StepWeights): first global cell
/// and box of its block of `fine` grown by one cell along `dir`, clipped to the grid.
std::pair<std::array<int, 3>, Box> weight_region(const Partition& fine, int dir);

/// One level's transfer (a chain of directional steps) over a partition. Vectors are the
/// process's local blocks in FP64 (unscaled variables), as the serial Transfer sees them; the
/// fine side may also be a level's own FP32 block (restrict_to, interpolate_add).
class DistTransfer {
public:
    /// `t`: the whole grid's steps (boxes and directions). Operator-dependent weights come from
    /// `weights` (one per step, this process's region of each; empty: linear weights).
    DistTransfer(const Transfer& t, const Partition& fine, MPI_Comm comm,
                 std::vector<StepWeights> weights = {});
    /// False when some step leaves a process without cells (then the level below must be
    /// agglomerated instead).
    bool valid() const { return valid_; }
    const Partition& coarse() const { return steps_.back().coarse; }
    /// coarse = R fine (collective).
    void restrict_to(const std::vector<double>& fine, std::vector<double>& coarse) {
        restrict_to(fine.data(), coarse);
    }
    /// The same from this process's block in FP64 or FP32 (double, float): a level's own
    /// unscaled residual, read in place. Same bits as from its FP64 copy.
    template <class T>
    void restrict_to(const T* fine, std::vector<double>& coarse);
    /// fine = P coarse (collective).
    void interpolate(const std::vector<double>& coarse, std::vector<double>& fine);
    /// fine += P coarse with each value of P coarse rounded to T first (double, float): a
    /// level's own unscaled û corrected in place, with the same bits as interpolate() into FP64
    /// followed by Level::add_correction.
    template <class T>
    void interpolate_add(const std::vector<double>& coarse, T* fine);

private:
    struct Step {
        const DirectionalTransfer* s = nullptr;
        StepWeights w;
        Partition fine, coarse;
        Halo fine_halo, coarse_halo;  // one layer along s->dir
    };
    template <class T>
    void restrict_step(Step& st, const T* fine, std::vector<double>& coarse);
    /// fine = (Add: +=) the step's interpolation of coarse; `fine` holds the step's fine block.
    template <class T, bool Add>
    void prolong_step(Step& st, const std::vector<double>& coarse, T* fine);
    void prolong_into(Step& st, const std::vector<double>& coarse, std::vector<double>& fine);
    template <class T, bool Add>
    void prolong_chain(const std::vector<double>& coarse, T* fine);

    std::vector<Step> steps_;
    bool valid_ = true;
    std::vector<double> tmp_a_, tmp_b_;
    std::vector<float> shell_f_;  // a step's halo as FP32 when it reads an FP32 block
};

/// Rank 0 receives the whole-grid vector `global` from every process's block `local`
/// (collective; `buf` is scratch). Other processes leave `global` untouched.
void gather(const std::vector<double>& local, const Partition& p, int block, MPI_Comm comm,
            std::vector<double>& global, std::vector<double>& buf);
/// Every process receives its block `local` of rank 0's whole-grid vector `global`.
void scatter(const std::vector<double>& global, const Partition& p, int block, MPI_Comm comm,
             std::vector<double>& local, std::vector<double>& buf);

/// Agglomeration onto a subset (Partition::merged): each process's block `local` of a vector on
/// `p` goes to the holder of its merged block, which assembles its block of the merged
/// partition in `merged_local` (left alone elsewhere). Collective over `comm` (p's processes).
void gather_merged(const std::vector<double>& local, const Partition& p, const Partition& merged,
                   int block, MPI_Comm comm, std::vector<double>& merged_local);
/// The inverse: each holder's `merged_local` back to the processes of its blocks, into `local`.
void scatter_merged(const std::vector<double>& merged_local, const Partition& p,
                    const Partition& merged, int block, MPI_Comm comm, std::vector<double>& local);

/// What this process spent communicating since the last reset (for the scaling model of
/// `mpmg bench scaling`); MPI_Wtime, including waits for slower processes.
struct CommStats {
    double halo_s = 0.0;
    long long halo_exchanges = 0, halo_values = 0;  ///< values sent
    double reduce_s = 0.0;
    long long reductions = 0;
    double agglomerate_s = 0.0;  ///< gathers to / scatters from rank 0
    long long agglomerations = 0;
    double tail_s = 0.0;  ///< rank 0: cycles on the agglomerated levels
};
CommStats& comm_stats();
/// Copies comm_stats() into the JSON's partition report.
void report_comm(PartitionInfo& info);

/// Rank 0's level reports on every process (collective): the levels only rank 0 builds (the
/// agglomerated ones), reported by every process alike.
void broadcast_reports(std::vector<LevelReport>& reports, MPI_Comm comm);

/// Sum over all processes of `comm`.
double allreduce_sum(double local, MPI_Comm comm);
/// values[i] <- the sum of values[i] over all processes of `comm`, for i < count: one message.
void allreduce_sums(double* values, int count, MPI_Comm comm);
TruncationCounts allreduce(const TruncationCounts& local, MPI_Comm comm);
/// `v` combined over all processes of `comm` by `op` (MPI_SUM, MPI_MIN, ...): setup counts,
/// not timed as the solve's reductions are.
std::int64_t reduce(std::int64_t v, MPI_Op op, MPI_Comm comm);

}  // namespace mpmg::dist

#endif  // MPMG_HAVE_MPI
