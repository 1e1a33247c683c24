// SIMD (Google Highway, dynamic dispatch) x-lines of the structured path's trilinear transfers
// (structured/transfer.cpp, the fused restriction and interpolation): the restriction of one
// fine line to its coarse line, and the interpolation of one coarse line added to its fine
// line, for r = 1 and r x r block grids. They were the scalar part of the V-cycle: in a scratch
// driver (laplace27 n = 108, one thread, perf) the scalar loops took 0.87 ms of a K64P32D16
// cycle with FP32 level vectors and 1.10 ms of a Full64 cycle with FP64 ones: half the bytes
// in 80 % of the time, bound by their arithmetic and the stride-2 accesses.
//
// Rounding: every product and sum is rounded on its own, in the order of the scalar code (no
// fused multiply-add; the file is compiled with -ffp-contract=off), so the results are bit for
// bit those of the scalar loops they replace (copied into transfer_simd_test.cpp as its
// reference), on every target. The kernels neither allocate nor throw.
#pragma once

#include <cstdint>

namespace mpmg::kernels {

/// The x-restriction of a fine line of n cells of r values each into nc = n / 2 coarse cells,
/// in FP64: component a of coarse cell ic is
/// out[ic r + a] = (v((2ic+1) r + a) + 0.5 v(2ic r + a)) + 0.5 v((2ic+2) r + a), without the
/// last term for ic >= (n - 1) / 2 (the neighbour 2ic + 2 outside the line). v(q) =
/// double(fine[q]), or with a scale s (not null) double(fine[q] * s[q]) with the product
/// rounded in the vector's own precision: a scaled level's unscaled residual, formed on the fly.
void restrict_line(const float* fine, const float* s, std::int64_t n, int r, double* out);
void restrict_line(const double* fine, const double* s, std::int64_t n, int r, double* out);

/// y += the x-interpolation of the coarse line c (cx = nx / 2 cells of r values, FP64) on a
/// fine line of nx cells. Component a of fine cell 2ic + 1 is added w = c[ic r + a]; of fine
/// cell 2ic the sum of the terms present (inside 0 <= . < cx) of 0.5 c[(ic-1) r + a] and
/// 0.5 c[ic r + a], a lone term added to 0.0 (and for r >= 2 the first term too, as the block
/// loop always did: (0.0 + 0.5 c[..]) + 0.5 c[..]). Without a scale y = Out(double(y) + w);
/// with one, as a scaled level adds its correction, y += s Out(0.0 + w) in Out.
void interpolate_line_add(const double* c, std::int64_t nx, int r, float* y, const float* s);
void interpolate_line_add(const double* c, std::int64_t nx, int r, double* y, const double* s);

}  // namespace mpmg::kernels
