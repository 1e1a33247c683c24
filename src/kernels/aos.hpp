// Naive array-of-structs (AOS) SG-DIA kernels: the baseline of the kernel ablation benchmark
// (ICPP'24 §5.1, Figure 7), not used by the solver. For each cell the stencil's values are
// contiguous (value of cell c, offset d at c * ndiag + d), and each value is converted to the
// compute precision with scalar code, element by element. Scalar matrices (r = 1) only.
// Instantiated for (S, C) = (double, double), (float, float), (half, float) and (bfloat16, float).
#pragma once

#include <cstdint>

#include "core/float16.hpp"
#include "kernels/sgdia.hpp"

namespace mpmg::kernels {

/// Copies SG-DIA (SOA, r = 1) values into the AOS layout (aos has ndiag * cells entries).
template <class S>
void aos_from_soa(const SgDiaGeom& g, const S* soa, S* aos) {
    const std::int64_t cells = std::int64_t{g.nx} * g.ny * g.nz;
    for (std::int64_t c = 0; c < cells; ++c) {
        for (int d = 0; d < g.ndiag; ++d) aos[c * g.ndiag + d] = soa[d * g.diag_stride + c];
    }
}

/// y = A x on lines [line_begin, line_end), AOS values.
template <class S, class C>
void spmv_aos(const SgDiaGeom& g, const S* a, const C* x, C* y, std::int64_t line_begin,
              std::int64_t line_end);

/// Forward Gauss-Seidel on one line, cells in increasing i, AOS values.
template <class S, class C>
void gs_forward_aos(const SgDiaGeom& g, const S* a, const C* b, C* x, std::int64_t line);

}  // namespace mpmg::kernels
