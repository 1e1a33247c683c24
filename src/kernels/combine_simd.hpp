// SIMD (Google Highway, dynamic dispatch) weighted sums of strided lines: the per-output form of
// the structured Galerkin product (structured/galerkin_line.cpp), which adds a few weighted
// fine lines into each coarse line. Summing them in registers and storing each output once
// replaces one read-modify-write pass over the output per input line.
//
// Rounding: out[i] = ((0 + w[0] s[0][i step]) + w[1] s[1][i step]) + ... with each product and
// each sum rounded on its own (no fused multiply-add; the file is compiled with
// -ffp-contract=off), so the result is bit for bit that of the scalar loop it replaces, on every
// target. The kernels neither allocate nor throw.
#pragma once

#include <cstdint>

namespace mpmg::kernels {

/// out[i] = sum over k < m, in order from 0.0, of w[k] src[k][i step], for i < n; step is 1
/// or 2. out must not overlap any src[k].
void weighted_sum(const double* const* src, const double* w, int m, int step, double* out,
                  std::int64_t n);

/// The same sum over n blocks of rr values (r x r block operators, rr >= 4):
/// out[i rr + q] = sum over k < m, in order from 0.0, of w[k] src[k][i step rr + q], q < rr.
void weighted_block_sum(const double* const* src, const double* w, int m, int step, int rr,
                        double* out, std::int64_t n);

}  // namespace mpmg::kernels
