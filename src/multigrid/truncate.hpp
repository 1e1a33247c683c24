// Truncation of a level's FP64 matrix to its storage precision (ICPP'24 Algorithm 1 lines 8/11),
// counting overflow, underflow and subnormal results (DESIGN.md Safety §3).
#pragma once

#include "core/float16.hpp"
#include "mpmg/sgdia_matrix.hpp"

namespace mpmg {

template <class S>
SgDiaMatrix<S> truncate(const SgDiaMatrix<double>& a, TruncationCounts& counts) {
    SgDiaMatrix<S> out(a.box(), a.stencil(), a.block());
    const int rr = a.block() * a.block();
    for (int d = 0; d < a.stencil().size(); ++d) {
        const double* src = a.diagonal(d);
        S* dst = out.diagonal(d);
        a.for_each_inside(d, [&](std::int64_t c) {
            for (int k = 0; k < rr; ++k)
                dst[c * rr + k] = truncate_counted<S>(src[c * rr + k], counts);
        });
    }
    return out;
}

}  // namespace mpmg

namespace mpmg {

/// What truncate<S>(a) would count, without building the matrix.
template <class S>
TruncationCounts count_truncation(const SgDiaMatrix<double>& a) {
    TruncationCounts counts;
    const int rr = a.block() * a.block();
    for (int d = 0; d < a.stencil().size(); ++d) {
        const double* src = a.diagonal(d);
        a.for_each_inside(d, [&](std::int64_t c) {
            for (int k = 0; k < rr; ++k) truncate_counted<S>(src[c * rr + k], counts);
        });
    }
    return counts;
}

}  // namespace mpmg
