// Test helpers for windows of planes (structured/sgdia_view.hpp): a process's rows with a
// margin, whose entries leaving its own planes are couplings rather than zeros, and the copy of
// those planes that a process would otherwise make.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/sgdia_test_util.hpp"
#include "mpmg/sgdia_matrix.hpp"
#include "structured/sgdia_ops.hpp"

namespace mpmg::testing {

/// A random matrix on `box` with every entry finite (those whose neighbour lies outside the box
/// too), and symmetric bit for bit across inside pairs when `symmetric`: a process's rows with
/// a margin, whose own rows' entries to the margin are couplings, not zeros.
inline SgDiaMatrix<double> finite_rows(Box box, const Stencil& st, int r, bool symmetric,
                                       unsigned seed) {
    SgDiaMatrix<double> a = random_matrix<double>(box, st, r, seed);
    const std::vector<double> fill = random_vector<double>(a.diag_values(), seed + 1);
    for (int d = 0; d < st.size(); ++d) {
        for (std::int64_t e = 0; e < a.diag_values(); ++e) {
            double& v = a.diagonal(d)[e];
            if (std::isnan(v)) v = fill[static_cast<std::size_t>(e)];
        }
    }
    if (symmetric) symmetrize(a);
    return a;
}

/// The planes k0 .. k0 + nz - 1 of `rows` copied, entries to cells outside them zero.
inline SgDiaMatrix<double> copied_planes(const SgDiaMatrix<double>& rows, int k0, int nz) {
    const Box b{rows.box().nx, rows.box().ny, nz};
    SgDiaMatrix<double> m(b, rows.stencil(), rows.block());
    const std::int64_t first = std::int64_t{k0} * b.nx * b.ny * rows.block() * rows.block();
    for (int d = 0; d < rows.stencil().size(); ++d) {
        std::memcpy(m.diagonal(d), rows.diagonal(d) + first,
                    static_cast<std::size_t>(m.diag_values()) * sizeof(double));
    }
    zero_outside_box(m);
    return m;
}

}  // namespace mpmg::testing
