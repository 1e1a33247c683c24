// SIMD (Google Highway, dynamic dispatch) block rows of an r x r block SG-DIA matrix in its own
// layout ([cell][ra][rb], see mpmg/sgdia_matrix.hpp), for r = 2, 3, 4. Internal to src/kernels:
// the block products of sgdia.cpp (the Krylov operator's products, which read the matrix as
// stored, with no kernel-layout copy as BlockSoa makes for the smoothers) come here.
//
// Every cell's r row sums are formed in one fixed order, s = p_0 + p_1 + ... + p_{r-1} with
// p_rb = A[ra][rb] x_rb each rounded (no fused multiply-add), then out += s. The vector and the
// scalar cells of a run, and the plain and the transposed (mirrored) reads of a block, give the
// same bits, so spmv and spmv_mirrored agree bit for bit.
#pragma once

#include <cstdint>

#include "core/float16.hpp"

namespace mpmg::kernels::simd {

/// out[i r + ra] += sum_rb A_i[ra][rb] x[i r + rb] for the n cells i of a run, where
/// A_i[ra][rb] = av[(i r + ra) r + rb], or with `transposed` av[(i r + rb) r + ra] (a lower
/// offset's blocks read from its mirror). `ahead`: cells beyond the current ones whose values
/// are prefetched (the same offset on the next line). r must be 2, 3 or 4.
template <class S, class C>
struct BlockRowsArgs {
    int r = 0;
    bool transposed = false;
    int n = 0;
    const S* av = nullptr;
    const C* x = nullptr;
    C* out = nullptr;
    std::int64_t ahead = 0;
};

void block_rows(const BlockRowsArgs<double, double>& args);
void block_rows(const BlockRowsArgs<float, double>& args);
void block_rows(const BlockRowsArgs<half, double>& args);
void block_rows(const BlockRowsArgs<bfloat16, double>& args);
void block_rows(const BlockRowsArgs<float, float>& args);
void block_rows(const BlockRowsArgs<half, float>& args);
void block_rows(const BlockRowsArgs<bfloat16, float>& args);

}  // namespace mpmg::kernels::simd
