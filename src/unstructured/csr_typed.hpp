// CSR in a storage precision S (FGCS'23 §3: the level's matrix precision), with int32 column
// indices and int64 row pointers, and its parallel kernels in a compute precision C (the level's
// working precision). FP16/BF16 values are converted per element in registers
// (kernels/convert.hpp), never expanded into a full-size copy.
//
// Supported (S, C) pairs, as in the structured path (S never wider than C):
//   C = double: S in {double, float, half, bfloat16};  C = float: S in {float, half, bfloat16}.
// The kernels neither allocate nor throw; they are explicitly instantiated for exactly these
// pairs in csr_typed.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "core/float16.hpp"
#include "mpmg/csr_matrix.hpp"

namespace mpmg {

template <class S>
struct TypedCsr {
    std::int64_t rows = 0;
    std::int64_t cols = 0;
    std::vector<std::int64_t> row_ptr{0};  ///< size rows + 1
    std::vector<std::int32_t> col;         ///< as in the source matrix (sorted per row)
    std::vector<S> val;

    std::int64_t nnz() const { return static_cast<std::int64_t>(col.size()); }
    std::int64_t bytes() const {
        return nnz() * static_cast<std::int64_t>(sizeof(S) + sizeof(std::int32_t)) +
               (rows + 1) * static_cast<std::int64_t>(sizeof(std::int64_t));
    }
};

/// Truncates `a` to storage S, counting overflow/underflow/subnormal results in `counts`.
/// Throws InvalidInput when a dimension does not fit int32 column indices.
template <class S>
TypedCsr<S> to_typed(const CsrMatrix& a, TruncationCounts& counts);

/// y = A x.
template <class S, class C>
void spmv(const TypedCsr<S>& a, const C* x, C* y);

/// r = b - A x.
template <class S, class C>
void residual(const TypedCsr<S>& a, const C* b, const C* x, C* r);

}  // namespace mpmg
