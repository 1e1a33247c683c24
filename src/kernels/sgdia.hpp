// SG-DIA kernels (plain pointers; no allocation, no exceptions). The caller (src/structured)
// splits the grid into "lines" (all i for one (j,k); line index j + ny*k) and parallelises over
// lines; a kernel processes lines [line_begin, line_end).
//
// Supported (storage S, compute C) pairs, S never wider than C:
//   C = double: S in {double, float, half, bfloat16};  C = float: S in {float, half, bfloat16}.
// Each function is overloaded for exactly these pairs. A reference twin in
// kernels/reference/sgdia_reference.hpp computes the same in FP64, scalar, for the tests.
#pragma once

#include <cstdint>

#include "core/float16.hpp"
#include "mpmg/sgdia_matrix.hpp"

namespace mpmg::kernels {

/// Geometry of an SG-DIA matrix: what every kernel needs besides the value pointer.
struct SgDiaGeom {
    int nx = 0, ny = 0, nz = 0;
    int block = 1;   ///< r: unknowns per cell
    int ndiag = 0;   ///< stencil size
    int center = 0;  ///< index of offset (0,0,0)
    const Offset* offsets = nullptr;
    std::int64_t diag_stride = 0;  ///< from one offset's values to the next (>= cells * r * r)
    /// The products (spmv, residual, jacobi, upper_residual) take the values of every offset
    /// before the centre from its mirror after it: A(c, c - s) as A(c - s, c), transposed for
    /// r x r blocks, so the lower offsets' arrays are never read (14 of 27 value streams for
    /// 3d27). Only for a matrix that exactly_symmetric (structured/sgdia_ops.hpp) accepted:
    /// then every kernel gives bit for bit what it gives reading every offset (the same values
    /// in the same order). Honoured by the products; Gauss-Seidel may still read either.
    bool mirror_lower = false;

    std::int64_t lines() const { return std::int64_t{ny} * nz; }
};

template <class S>
SgDiaGeom geometry(const SgDiaMatrix<S>& a) {
    return SgDiaGeom{a.box().nx,
                     a.box().ny,
                     a.box().nz,
                     a.block(),
                     a.stencil().size(),
                     a.stencil().center(),
                     a.stencil().offsets().data(),
                     a.diag_stride(),
                     false};
}

// Vectors have rows = cells * r entries, component a of cell c at c*r + a. Each function is a
// template declared here and explicitly instantiated, written out, for the supported pairs in
// sgdia.cpp; any other pair fails to link.

/// y = A x on the given lines.
template <class S, class C>
void spmv(const SgDiaGeom& g, const S* a, const C* x, C* y, std::int64_t line_begin,
          std::int64_t line_end);

/// r = b - A x on the given lines. r holds the lines from `r_first_line` on (0: a whole
/// vector; a plane's first line: a buffer of that plane).
template <class S, class C>
void residual(const SgDiaGeom& g, const S* a, const C* b, const C* x, C* r, std::int64_t line_begin,
              std::int64_t line_end, std::int64_t r_first_line = 0);

/// r = -U x on the given lines, U the part of A whose offsets point after the cell in the
/// lexicographic order (the strictly upper triangle, r x r centre blocks excluded). After one
/// forward Gauss-Seidel sweep from x = 0, (D + L) x = b, so this is the residual b - A x at
/// the cost of half the stencil's values.
/// r holds the lines from `r_first_line` on, as for residual.
template <class S, class C>
void upper_residual(const SgDiaGeom& g, const S* a, const C* x, C* r, std::int64_t line_begin,
                    std::int64_t line_end, std::int64_t r_first_line = 0);

/// In-place Gauss-Seidel on the lines [line_begin, line_end), one after the other in
/// increasing line index if `forward`, else decreasing: x_c <- D_c^{-1} (b_c - sum_{d !=
/// centre} A_d x_{c+d}), cells of a line in increasing i if `forward`, else decreasing. r x r
/// diagonal blocks are solved exactly (Gaussian elimination with partial pivoting in C).
/// `zero_guess`: x is zero before the sweep, so the neighbours not yet updated are not read
/// (half the stencil's values; the r x r block path reads them, which gives the same result).
/// Several lines per call share the per-line setup (the r = 1 kernels collect a line's
/// offsets again only where the line moves onto or off a face of the box).
template <class S, class C>
void gs_lines(const SgDiaGeom& g, const S* a, const C* b, C* x, std::int64_t line_begin,
              std::int64_t line_end, bool forward, bool zero_guess = false);

/// gs_lines on the one line `line`.
template <class S, class C>
void gs_line(const SgDiaGeom& g, const S* a, const C* b, C* x, std::int64_t line, bool forward,
             bool zero_guess = false) {
    gs_lines(g, a, b, x, line, line + 1, forward, zero_guess);
}

/// x_new = x + omega D^{-1} (b - A x) on the given lines (x_new and x distinct).
template <class S, class C>
void jacobi(const SgDiaGeom& g, const S* a, const C* b, const C* x, C* x_new, C omega,
            std::int64_t line_begin, std::int64_t line_end);

}  // namespace mpmg::kernels
