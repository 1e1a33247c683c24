// SIMD (Google Highway, dynamic dispatch) SG-DIA kernels for scalar matrices (block r = 1).
// Internal to src/kernels: sgdia.cpp forwards its r = 1 cases here; the per-target code is in
// sgdia_simd.cpp. Highway 1.0.3 (Debian 12) has no HWY_EXPORT_T, so every supported (storage,
// compute) pair has one plain overload, and each is dispatched to the best target at run time.
//
// FP16/BF16 values are loaded as 16-bit lanes and converted in registers (hn::PromoteTo to f32,
// then to f64 when C = double): never expanded into a temporary array (ICPP'24 §5.1).
#pragma once

#include <cstdint>

#include "core/float16.hpp"
#include "kernels/sgdia.hpp"

namespace mpmg::kernels::simd {

/// What apply() writes, per cell, from s = (A x)_c: spmv y = s; residual r = b - s; jacobi
/// x_new = x + omega (b - s) / a_cc; upper_residual r = -(U x)_c, the sum over the offsets whose
/// cell comes after c (see kernels::upper_residual).
enum class ApplyKind { spmv, residual, jacobi, upper_residual };

template <class S, class C>
struct ApplyArgs {
    const SgDiaGeom* g = nullptr;
    const S* a = nullptr;
    const C* b = nullptr;  ///< residual, jacobi
    const C* x = nullptr;
    C* out = nullptr;  ///< never aliases x or b (large stencils keep partial sums in it)
    C omega = 0;       ///< jacobi
    ApplyKind kind = ApplyKind::spmv;
    std::int64_t line_begin = 0, line_end = 0;
    /// out holds the lines from this one on (0: all of x's; a plane buffer: its first line).
    std::int64_t out_first_line = 0;
};

/// Gauss-Seidel on lines [line_begin, line_end), as kernels::gs_lines (r = 1).
template <class S, class C>
struct GsArgs {
    const SgDiaGeom* g = nullptr;
    const S* a = nullptr;
    const C* b = nullptr;
    C* x = nullptr;
    std::int64_t line_begin = 0, line_end = 0;  ///< ascending if forward, else descending
    bool forward = true;
    /// x is zero on entry to the sweep (the first sweep after a new right-hand side): the
    /// neighbours not yet updated contribute nothing, so their values are not read at all.
    bool zero_guess = false;
};

void apply(const ApplyArgs<double, double>& args);
void apply(const ApplyArgs<float, double>& args);
void apply(const ApplyArgs<half, double>& args);
void apply(const ApplyArgs<bfloat16, double>& args);
void apply(const ApplyArgs<float, float>& args);
void apply(const ApplyArgs<half, float>& args);
void apply(const ApplyArgs<bfloat16, float>& args);

void gs_lines(const GsArgs<double, double>& args);
void gs_lines(const GsArgs<float, double>& args);
void gs_lines(const GsArgs<half, double>& args);
void gs_lines(const GsArgs<bfloat16, double>& args);
void gs_lines(const GsArgs<float, float>& args);
void gs_lines(const GsArgs<half, float>& args);
void gs_lines(const GsArgs<bfloat16, float>& args);

/// Name of the Highway target that dynamic dispatch runs on this CPU (e.g. "AVX2"), honouring
/// hwy::SetSupportedTargetsForTest.
const char* target_name();

}  // namespace mpmg::kernels::simd
