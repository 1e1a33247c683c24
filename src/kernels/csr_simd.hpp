// SIMD (Google Highway, dynamic dispatch) CSR kernels for the AMG path: y = A x, r = b - A x,
// the (l1-)Jacobi update and one hybrid Gauss-Seidel block sweep, on a row range (the caller
// splits rows over threads). The per-target code is in csr_simd.cpp; the scalar FP64 twins in
// reference/csr_reference.hpp. Highway 1.0.3 (Debian 12) has no HWY_EXPORT_T, so every supported
// (storage S, compute C) pair has one plain overload, each dispatched to the best target at run
// time. Supported pairs (S never wider than C): C = double with S in {double, float, half,
// bfloat16}; C = float with S in {float, half, bfloat16}.
//
// A row is a dot product of its values with x gathered at its column indices: values are loaded
// as S lanes and converted in registers (hn::PromoteTo to f32, then f64 when C = double; FP16 and
// BF16 are never expanded into a temporary array), x is read entry by entry into vectors of at
// most 256 bits for FP32 compute, and with hn::GatherIndex on AVX-512 for FP64 compute
// (csr_simd.cpp: RowTag, kLoadLanes).
//
// Column indices come in one of three encodings (CsrView):
//   col32  int32 per entry (the plain CSR of FGCS'23 §3);
//   col16  uint16 offsets from a per-row base, col = base[i] + col16[p]: half the index bytes,
//          possible for a matrix when every row's columns lie in [base[i], base[i] + 65535];
//   col64  int64 per entry, for matrices with 2^31 columns or more (x read lane by lane).
// The kernels neither allocate nor throw.
#pragma once

#include <cstdint>

#include "core/float16.hpp"

namespace mpmg::kernels::csr {

/// A CSR matrix by plain pointers; exactly one of col32, col16 (+ base), col64 is set.
template <class S>
struct CsrView {
    const std::int64_t* row_ptr = nullptr;  ///< rows + 1 entries
    const std::int32_t* col32 = nullptr;
    const std::int64_t* col64 = nullptr;
    const std::uint16_t* col16 = nullptr;
    const std::int32_t* base = nullptr;  ///< per row, with col16
    const S* val = nullptr;
};

/// What apply() writes for row i from s_i = (A x)_i:
///   spmv      out_i = s_i
///   residual  out_i = b_i - s_i
///   jacobi    out_i = x_i + omega inv_d_i (b_i - s_i)   (out must not alias x)
enum class CsrOp { spmv, residual, jacobi };

template <class S, class C>
struct CsrApplyArgs {
    CsrView<S> a;
    const S* inv_d = nullptr;  ///< jacobi: inverse (l1) diagonal, stored in S
    const C* b = nullptr;      ///< residual, jacobi
    const C* x = nullptr;
    C* out = nullptr;
    C omega = 1;  ///< jacobi
    CsrOp op = CsrOp::spmv;
    std::int64_t row_begin = 0, row_end = 0;
};

/// One Gauss-Seidel sweep over rows [row_begin, row_end), forward or backward, in place on x:
/// x_i += inv_d_i (b_i - sum_j a_ij x'_j) with x'_j = x_j (newest) for j inside the row range
/// and `outside`_j for j outside it (`outside` may be x itself: plain Gauss-Seidel on the range
/// with the other rows' current values). inv_d null: 1 (a unit triangular solve).
template <class S, class C>
struct CsrGsArgs {
    CsrView<S> a;
    const S* inv_d = nullptr;
    const C* b = nullptr;
    C* x = nullptr;
    const C* outside = nullptr;
    std::int64_t row_begin = 0, row_end = 0;
    bool forward = true;
};

void apply(const CsrApplyArgs<double, double>& args);
void apply(const CsrApplyArgs<float, double>& args);
void apply(const CsrApplyArgs<half, double>& args);
void apply(const CsrApplyArgs<bfloat16, double>& args);
void apply(const CsrApplyArgs<float, float>& args);
void apply(const CsrApplyArgs<half, float>& args);
void apply(const CsrApplyArgs<bfloat16, float>& args);

void gs_sweep(const CsrGsArgs<double, double>& args);
void gs_sweep(const CsrGsArgs<float, double>& args);
void gs_sweep(const CsrGsArgs<half, double>& args);
void gs_sweep(const CsrGsArgs<bfloat16, double>& args);
void gs_sweep(const CsrGsArgs<float, float>& args);
void gs_sweep(const CsrGsArgs<half, float>& args);
void gs_sweep(const CsrGsArgs<bfloat16, float>& args);

/// Name of the Highway target that dynamic dispatch runs on this CPU (e.g. "AVX2"), honouring
/// hwy::SetSupportedTargetsForTest.
const char* target_name();

}  // namespace mpmg::kernels::csr
