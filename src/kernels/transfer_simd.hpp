// SIMD (Google Highway, dynamic dispatch) x-lines of the structured path's trilinear transfers
// (structured/transfer.cpp, the fused restriction and interpolation of r = 1 grids): the
// restriction of one fine line to its coarse line, and the interpolation of one coarse line
// added to its fine line. They were the scalar part of the V-cycle: in a scratch driver
// (laplace27 n = 108, one thread) they took the same time with FP32 level vectors as with
// FP64 ones (0.87 against 0.92 ms a cycle), so they were bound by their arithmetic and the
// stride-2 accesses, not by the bytes they move.
//
// Rounding: every product and sum is rounded on its own, in the order of the scalar code (no
// fused multiply-add; the file is compiled with -ffp-contract=off), so the results are bit for
// bit those of the scalar loops they replace (kept in transfer.cpp as the reference of
// transfer_simd_test.cpp), on every target. The kernels neither allocate nor throw.
#pragma once

#include <cstdint>

namespace mpmg::kernels {

/// The x-restriction of a fine line of n cells (r = 1) into nc = n / 2 coarse values, in FP64:
/// out[ic] = (v(2ic+1) + 0.5 v(2ic)) + 0.5 v(2ic+2), without the last term for
/// ic >= (n - 1) / 2 (the neighbour 2ic + 2 outside the line). v(q) = double(fine[q]), or with
/// a scale s (not null) double(fine[q] * s[q]) with the product rounded in the vector's own
/// precision: a scaled level's unscaled residual, formed on the fly.
void restrict_line(const float* fine, const float* s, std::int64_t n, double* out);
void restrict_line(const double* fine, const double* s, std::int64_t n, double* out);

/// restrict_line of a line of n cells of r >= 2 values each (r x r block grids): component a
/// of coarse cell ic is out[ic r + a] = (v((2ic+1) r + a) + 0.5 v(2ic r + a)) +
/// 0.5 v((2ic+2) r + a), the last term again only for ic < (n - 1) / 2.
void restrict_line_blocks(const float* fine, const float* s, std::int64_t n, int r, double* out);
void restrict_line_blocks(const double* fine, const double* s, std::int64_t n, int r, double* out);

/// y[i] += the x-interpolation of the coarse line c (cx = nx / 2 values, FP64) for i < nx
/// (r = 1): w(2ic + 1) = c[ic], w(2ic) = 0.5 c[ic - 1] + 0.5 c[ic] (each term present only
/// inside 0 <= . < cx, a lone term added to 0.0). Without a scale y[i] = Out(double(y[i]) +
/// w(i)); with one, as a scaled level adds its correction, y[i] += s[i] Out(0.0 + w(i)) in Out.
void interpolate_line_add(const double* c, std::int64_t nx, float* y, const float* s);
void interpolate_line_add(const double* c, std::int64_t nx, double* y, const double* s);

/// interpolate_line_add of a line of nx cells of r >= 2 values each: component a of fine cell
/// 2ic + 1 is added w = c[ic r + a], of fine cell 2ic the sum w = (0.0 + 0.5 c[(ic-1) r + a]) +
/// 0.5 c[ic r + a] of the terms present (0.0 + 0.5 c[..] for a lone one), as add_to adds.
void interpolate_line_add_blocks(const double* c, std::int64_t nx, int r, float* y, const float* s);
void interpolate_line_add_blocks(const double* c, std::int64_t nx, int r, double* y,
                                 const double* s);

}  // namespace mpmg::kernels
