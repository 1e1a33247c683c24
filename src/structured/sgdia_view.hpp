// What the SG-DIA operations (structured/sgdia_ops.hpp) read of a matrix: a view of its
// geometry and values. Every SgDiaMatrix is one; a window of z-planes of a larger matrix is
// another, read in place: a distributed process's block of level 0 inside its rows with a
// margin (distributed/dist_galerkin.hpp), which would otherwise be a copy of the process's
// share of A (issue #8: on 2 ranks of laplace27 n = 88 that copy was about a quarter of
// Full64's rank-0 samples, most of them first-touch page faults).
#pragma once

#include <cstdint>
#include <stdexcept>

#include "mpmg/sgdia_matrix.hpp"

namespace mpmg {

/// A matrix on `box` whose offset d has its values at values + d * diag_stride, cell by cell
/// (block x block values per cell), as SgDiaMatrix lays them out. Not owning: the values and
/// the stencil belong to a matrix that must outlive the view.
///
/// A window's entries whose neighbour lies outside its box are those of the matrix it is cut
/// from, not zero. The SG-DIA kernels never read such entries (kernels/sgdia.hpp), so the
/// operations of sgdia_ops.hpp give on a window bit for bit what they give on a copy of the
/// same rows with those entries zeroed; anything that reads a diagonal's values whole
/// (truncation, counts, factorisations, the block kernels' re-laid-out copy) needs a matrix.
template <class S>
struct SgDiaView {
    Box box;
    const Stencil* stencil = nullptr;
    int block = 1;
    std::int64_t diag_stride = 0;
    const S* values = nullptr;
    /// The values are exactly symmetric (exactly_symmetric) and the operations on the view may
    /// read each offset before the centre from its mirror after it (kernels::SgDiaGeom::
    /// mirror_lower: the same values, bit for bit the same results, from about half the value
    /// streams). Point matrices (block 1) only.
    bool mirror_lower = false;

    SgDiaView() = default;
    /// The whole of `a` (implicit: every matrix is a view of itself).
    SgDiaView(const SgDiaMatrix<S>& a)  // NOLINT(google-explicit-constructor)
        : box(a.box()),
          stencil(&a.stencil()),
          block(a.block()),
          diag_stride(a.diag_stride()),
          values(a.diagonal(0)) {}

    std::int64_t rows() const { return box.cells() * block; }
    const S* diagonal(int d) const { return values + d * diag_stride; }
};

/// The planes k0 .. k0 + nz - 1 of `a` as a matrix of its own on nz planes, read in place (a
/// window: see SgDiaView). Throws std::logic_error when they are not planes of `a`.
template <class S>
SgDiaView<S> planes_of(const SgDiaMatrix<S>& a, int k0, int nz) {
    if (k0 < 0 || nz < 1 || k0 + nz > a.box().nz) {
        throw std::logic_error("planes_of: the planes are not inside the matrix");
    }
    SgDiaView<S> v(a);
    v.box.nz = nz;
    v.values += std::int64_t{k0} * a.box().nx * a.box().ny * a.block() * a.block();
    return v;
}

}  // namespace mpmg
