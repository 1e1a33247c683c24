// A 3D block decomposition of a structured grid over processes (issue #8). Pure index
// arithmetic, no MPI: it is the same in every process and testable without MPI.
//
// Processes form a dims[0] x dims[1] x dims[2] grid, rank = cx + dims[0] * (cy + dims[1] * cz);
// along direction d, process coordinate p owns the cells cuts[d][p] .. cuts[d][p+1]-1.
// Coarsening keeps the ownership of the structured transfers local: in a directional step along
// d, coarse cell I is injected from fine cell 2I+1, so it belongs to the process that owns fine
// 2I+1, which makes the coarse cuts floor(cut / 2) (coarsened()). Restriction and
// interpolation then need one layer of halo along d, nothing else.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "mpmg/sgdia_matrix.hpp"

namespace mpmg::dist {

class Partition {
public:
    Partition() = default;
    /// Splits `global` over `size` processes: the process grid minimises the halo surface,
    /// where a direction coupled at least 4x more strongly than the weakest one (`strength`,
    /// e.g. direction_strengths() of the operator) weighs by that ratio (cutting it weakens the
    /// hybrid smoother most); ties go to more processes along z, then y, whose planes are
    /// contiguous. Each direction is cut into near-equal ranges (the first ranges one cell longer
    /// when it does not divide). Throws InvalidInput when no split fits the grid.
    Partition(Box global, int size, int rank, std::array<double, 3> strength = {1.0, 1.0, 1.0});

    /// A process grid given by its cuts: cuts[d] rises strictly from 0 to the grid's extent
    /// along d, process coordinate p owning cells cuts[d][p] .. cuts[d][p + 1] - 1, so dims[d]
    /// = cuts[d].size() - 1 (the caller's decomposition, Solver::setup with a first cell).
    /// InvalidInput for cuts that do not rise so or a rank outside the grid of processes.
    static Partition from_cuts(Box global, std::array<std::vector<int>, 3> cuts, int rank);

    const Box& global() const { return global_; }
    const std::array<int, 3>& dims() const { return dims_; }
    int size() const { return dims_[0] * dims_[1] * dims_[2]; }
    int rank() const { return rank_; }
    std::array<int, 3> coord(int rank) const;
    /// -1 when a coordinate lies outside the process grid.
    int rank_of(std::array<int, 3> c) const;
    /// First global cell (x, y, z) and the box of process `rank`.
    std::array<int, 3> lo(int rank) const;
    Box box(int rank) const;
    std::array<int, 3> lo() const { return lo(rank_); }
    Box local() const { return box(rank_); }
    /// Smallest extent of any process's box in any direction.
    int min_extent() const;
    /// The partition of the coarse grid of one directional step along `dir` (see above).
    Partition coarsened(int dir) const;
    /// The same grid over ceil(dims / 2) processes per direction, each block the union of up to
    /// 2 x 2 x 2 blocks of this partition (the cuts at even process coordinates): where
    /// agglomeration moves a coarse level whose blocks got small (DistHierarchy). `rank`: this
    /// process's rank in it, -1 for a process that holds no block there (then local() and lo()
    /// must not be asked).
    Partition merged(int rank) const;
    /// The rank in merged() of the block that holds process `rank`'s block.
    int merged_rank(int rank) const;
    /// The process of this partition that holds merged block `m` (its block at even
    /// coordinates).
    int holder(int m) const;
    /// The processes whose blocks lie in merged block `m`, its holder first.
    std::vector<int> members(int m) const;

private:
    Box global_;
    std::array<int, 3> dims_{1, 1, 1};
    std::array<std::vector<int>, 3> cuts_;
    int rank_ = 0;
};

/// Copies the values of the cells of `region` (a box whose first cell is the global cell
/// `region_lo`) from `src`, the values of the box `src_box` whose first cell is `src_lo`, to the
/// same cells of `dst` (box `dst_box`, first cell `dst_lo`), `per_cell` values per cell
/// (cell-major), x-line by x-line. The region must lie inside both boxes.
template <class T>
void copy_cells(const T* src, const Box& src_box, const std::array<int, 3>& src_lo, T* dst,
                const Box& dst_box, const std::array<int, 3>& dst_lo,
                const std::array<int, 3>& region_lo, const Box& region, std::int64_t per_cell) {
    const auto first = [&](const Box& b, const std::array<int, 3>& lo, int j, int k) {
        return ((std::int64_t{region_lo[2] - lo[2] + k} * b.ny + (region_lo[1] - lo[1] + j)) *
                    b.nx +
                (region_lo[0] - lo[0])) *
               per_cell;
    };
    for (int k = 0; k < region.nz; ++k) {
        for (int j = 0; j < region.ny; ++j) {
            std::copy_n(src + first(src_box, src_lo, j, k), region.nx * per_cell,
                        dst + first(dst_box, dst_lo, j, k));
        }
    }
}

/// The local block of a vector of the global grid (cells * block values, component fastest).
template <class T>
std::vector<T> extract_local(const std::vector<T>& global, const Partition& p, int block);

/// The local block of an SG-DIA matrix: rows of the process's cells; entries that couple to
/// another process's cells are zero here (the halo coupling holds them).
SgDiaMatrix<double> extract_local(const SgDiaMatrix<double>& a, const Partition& p);

}  // namespace mpmg::dist
