// SIMD (Google Highway, dynamic dispatch) narrowing of FP64 values to a storage precision: the
// truncation of a multigrid level to FP32/FP16/BF16 (ICPP'24 Algorithm 1 lines 8/11), with the
// overflow, underflow and subnormal counts of DESIGN.md Safety §3 computed in the same pass.
// The per-target code is in convert_simd.cpp; the scalar reference is truncate_counted<S> of
// core/float16.hpp, and the results are bit for bit its results on every target:
//
//   fp32  the hardware conversion (round to nearest even, as static_cast<float>).
//   fp16  on x86 targets with F16C (AVX2 and up): the double is first rounded to odd at 24
//         significant bits on its integer bits, so the hardware double -> float step is exact
//         (or, below 2^-126, far under FP16's range) and the float -> half step (vcvtps2ph,
//         round to nearest even) rounds once: no double rounding. Elsewhere (SSE4, EMU128,
//         scalar, where Highway's float -> half emulation truncates) and for bf16 on every
//         target (Highway's float -> bf16 truncates too): round to nearest even on the
//         integer bits of the double, one variable shift per lane, as detail::narrow_bits.
//
// Counts: a lane is "safe" when |x| is 0 or in [subnormal limit, overflow limit) of the format
// (RangeLimits); a chunk of values with any unsafe lane is counted again by threshold
// comparisons, which give exactly the verdicts of the rounding (multigrid/truncate_test.cpp),
// and its NaN, Inf and overflowing values are converted again by the scalar code: NaN becomes
// the canonical quiet NaN with the input's sign (not the hardware's payload), and overflow Inf
// (Highway's scalar-target double -> float demotion saturates at FLT_MAX).
// The kernels neither allocate nor throw.
#pragma once

#include <cstdint>

#include "core/float16.hpp"

namespace mpmg::kernels {

/// dst[k] = S(src[k]) for k < n, rounded to nearest even exactly as from_double<S>; returns
/// what truncate_counted<S> would have counted over the n values.
/// (double: a copy; only double subnormals and non-finite values count.)
TruncationCounts narrow(const double* src, double* dst, std::int64_t n);
TruncationCounts narrow(const double* src, float* dst, std::int64_t n);
TruncationCounts narrow(const double* src, half* dst, std::int64_t n);
TruncationCounts narrow(const double* src, bfloat16* dst, std::int64_t n);

/// dst[k] = S(src[k]) for k < n if S holds every src[k] exactly (finite and
/// to_double(from_double<S>(x)) == x): then returns true. Returns false at the first chunk of
/// values with one S does not hold, with dst partly written. One pass: convert, widen back,
/// compare. For FP16, `facts` (when not null) is added the HalfFacts of the values written
/// when they are exact, found in the same pass.
bool narrow_exact(const double* src, float* dst, std::int64_t n);
bool narrow_exact(const double* src, half* dst, std::int64_t n, HalfFacts* facts = nullptr);

/// narrow_exact of the values q_k = src[k] / c (FP64 division), which must also give src[k]
/// back as q_k c: true when src = c x (n values FP16 holds exactly), dst then holding them.
/// A scalar multiple of an FP16 matrix (a constant-coefficient stencil times 1/h^2 or a
/// material constant) is stored exactly this way (multigrid/truncate.hpp exact_multiple).
/// `facts` as narrow_exact's.
bool narrow_exact_multiple(const double* src, double c, half* dst, std::int64_t n,
                           HalfFacts* facts = nullptr);

/// dst[k] = S(src[k] / (si[k] sj[k])) for k < n: the symmetric scaling of setup-then-scale
/// inside the narrowing (bit for bit narrow() of scale_counted's output, without writing the
/// FP64 scaled values anywhere), with the counts of the scaled values. With `largest`, raises
/// *largest to the largest |src[k] / (si[k] sj[k])| (NaN ignored; Inf counts), computed in the
/// same pass: what the choice of G checks (multigrid/scaling.hpp).
TruncationCounts narrow_scaled(const double* src, const double* si, const double* sj, half* dst,
                               std::int64_t n, double* largest = nullptr);
TruncationCounts narrow_scaled(const double* src, const double* si, const double* sj, bfloat16* dst,
                               std::int64_t n, double* largest = nullptr);

/// Name of the Highway target that dynamic dispatch runs on this CPU (e.g. "AVX2"), honouring
/// hwy::SetSupportedTargetsForTest.
const char* convert_target_name();

}  // namespace mpmg::kernels
