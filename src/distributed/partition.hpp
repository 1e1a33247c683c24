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

private:
    Box global_;
    std::array<int, 3> dims_{1, 1, 1};
    std::array<std::vector<int>, 3> cuts_;
    int rank_ = 0;
};

/// The local block of a vector of the global grid (cells * block values, component fastest).
template <class T>
std::vector<T> extract_local(const std::vector<T>& global, const Partition& p, int block);

/// The local block of an SG-DIA matrix: rows of the process's cells; entries that couple to
/// another process's cells are zero here (the halo coupling holds them).
SgDiaMatrix<double> extract_local(const SgDiaMatrix<double>& a, const Partition& p);

}  // namespace mpmg::dist
