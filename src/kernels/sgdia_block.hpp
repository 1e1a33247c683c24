// SIMD kernels for r x r block SG-DIA matrices (r = 2, 3, 4) on a kernel-private re-laid-out
// copy of the matrix, BlockSoa, built once at level setup. Design: sgdia_block.cpp.
//
// SgDiaMatrix stores a block offset's values as [cell][ra][rb]; a vector of cells then needs a
// stride-r^2 gather per block entry. BlockSoa stores them as [line][offset][ra*r+rb][i], so the
// values of one block entry for N consecutive cells of a line are one contiguous load, and all
// values of a line are one contiguous stream (entries whose neighbour lies outside the line, at
// the line's ends, are stored as 0). It also holds the inverses of the centre blocks,
// computed in FP64 with partial pivoting and stored in the compute precision C (layout
// [line][ra*r+rb][i]), which the Gauss-Seidel and Jacobi kernels use instead of solving the
// centre block per cell.
//
// Vectors x, b, y are the usual interleaved ones (component a of cell c at c*r + a). Same
// contract as kernels/sgdia.hpp: the kernels do not allocate or throw, and they process lines
// [line_begin, line_end) (line = j + ny*k). Supported (S, C) pairs as in kernels/sgdia.hpp.
#pragma once

#include <cstdint>
#include <vector>

#include "core/float16.hpp"
#include "kernels/sgdia.hpp"
#include "mpmg/sgdia_matrix.hpp"

namespace mpmg::kernels {

/// A block SG-DIA matrix re-laid out for the block SIMD kernels (values in storage S, centre
/// block inverses in compute C). Owns its data; about the size of the source matrix plus
/// r^2 values of C per cell.
template <class S, class C>
class BlockSoa {
public:
    BlockSoa() = default;
    /// Copies `a` (block size r with supported(r)) into the kernel layout and inverts its centre
    /// blocks. A singular centre block gets a non-finite inverse (counted by singular_blocks()).
    explicit BlockSoa(const SgDiaMatrix<S>& a);

    /// Block sizes these kernels handle.
    static bool supported(int r) { return r >= 2 && r <= 4; }

    bool empty() const { return values_.empty(); }
    /// Geometry of the source matrix (diag_stride is that of the SgDiaMatrix layout).
    SgDiaGeom geom() const {
        SgDiaGeom g = geom_;
        g.offsets = offsets_.data();
        return g;
    }
    std::int64_t rows() const { return std::int64_t{geom_.nx} * geom_.ny * geom_.nz * geom_.block; }
    /// Values of one line: ndiag * r^2 * nx, at values() + line * line_values().
    std::int64_t line_values() const {
        return std::int64_t{geom_.ndiag} * geom_.block * geom_.block * geom_.nx;
    }
    const S* values() const { return values_.data(); }
    /// Centre block inverses: r^2 * nx per line, at inverses() + line * r^2 * nx.
    const C* inverses() const { return inverses_.data(); }
    /// Centre blocks that were singular (zero pivot) or non-finite.
    std::int64_t singular_blocks() const { return singular_; }
    /// Bytes held (values and inverses).
    std::int64_t bytes() const {
        return static_cast<std::int64_t>(values_.size() * sizeof(S) + inverses_.size() * sizeof(C));
    }

private:
    SgDiaGeom geom_;
    std::vector<Offset> offsets_;
    std::vector<S, detail::ZeroedAllocator<S>> values_;
    std::vector<C, detail::ZeroedAllocator<C>> inverses_;
    std::int64_t singular_ = 0;
};

/// y = A x on the given lines.
template <class S, class C>
void block_spmv(const BlockSoa<S, C>& a, const C* x, C* y, std::int64_t line_begin,
                std::int64_t line_end);

/// r = b - A x on the given lines.
template <class S, class C>
void block_residual(const BlockSoa<S, C>& a, const C* b, const C* x, C* r, std::int64_t line_begin,
                    std::int64_t line_end);

/// x_new = x + omega D^{-1} (b - A x) on the given lines (x_new and x distinct), D^{-1} the
/// stored centre block inverses.
template <class S, class C>
void block_jacobi(const BlockSoa<S, C>& a, const C* b, const C* x, C* x_new, C omega,
                  std::int64_t line_begin, std::int64_t line_end);

/// In-place block Gauss-Seidel on one line, as kernels::gs_line: x_c <- D_c^{-1} (b_c -
/// sum_{d != centre} A_d x_{c+d}), cells in increasing i if `forward`, else decreasing.
/// `zero_guess`: x is zero before the sweep, so the neighbours not yet updated are not read.
template <class S, class C>
void block_gs_line(const BlockSoa<S, C>& a, const C* b, C* x, std::int64_t line, bool forward,
                   bool zero_guess = false);

}  // namespace mpmg::kernels
