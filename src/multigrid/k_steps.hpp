// The K-cycle's two Krylov steps (Notay and Vassilevski, "Recursive Krylov-based multigrid
// cycles", NLAA 2008) on a level's system A e = r, each preconditioned by one cycle B from that
// level: flexible CG on a symmetric level, GCR (the residual norm minimised over both
// directions) otherwise; the second step only when the first left more than kThreshold of the
// residual. The serial AMG level (amg_level.cpp, in its compute precision) and the distributed
// AMG (dist_amg.cpp, FP64, the sums added over the ranks between the calls) own the vectors,
// the products A c and the cycles; the inner products and the scalars are here, once.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>

#include "unstructured/csr_typed.hpp"  // kParallelVector

namespace mpmg::k_steps {

/// Notay and Vassilevski 2008 §3: t = 0.25.
inline constexpr double kThreshold = 0.25;

/// s = {(p1, v1), (p1, r), (r, r)} with v1 = A c1 and p1 = c1 (CG) or v1 (GCR), in one pass.
template <class T>
void first_sums(bool symmetric, std::int64_t n, const T* c1, const T* v1, const T* r, double s[3]) {
    const T* p1 = symmetric ? c1 : v1;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : s0, s1, s2) if (n > kParallelVector)
    for (std::int64_t i = 0; i < n; ++i) {
        const double p = static_cast<double>(p1[i]), ri = static_cast<double>(r[i]);
        s0 += p * static_cast<double>(v1[i]);
        s1 += p * ri;
        s2 += ri * ri;
    }
    s[0] = s0;
    s[1] = s1;
    s[2] = s2;
}

/// alpha1 = (p1, r) / (p1, v1) from first_sums' (summed) s; nothing when there is no step
/// ((p1, v1) <= 0 or a non-finite quotient): the caller keeps the plain cycle's c1.
inline std::optional<double> first_step(const double s[3]) {
    const double alpha1 = s[1] / s[0];
    if (!(s[0] > 0.0) || !std::isfinite(alpha1)) return std::nullopt;
    return alpha1;
}

/// out = r - alpha1 v1 (out may be r); returns (out, out).
template <class T>
double first_residual(std::int64_t n, double alpha1, const T* v1, const T* r, T* out) {
    const auto a = static_cast<T>(alpha1);
    double tt = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : tt) if (n > kParallelVector)
    for (std::int64_t i = 0; i < n; ++i) {
        out[i] = r[i] - a * v1[i];
        tt += static_cast<double>(out[i]) * static_cast<double>(out[i]);
    }
    return tt;
}

/// The first step is enough: ||r~||² = tt <= kThreshold² ||r||² = kThreshold² rr.
inline bool first_enough(double tt, double rr) { return tt <= kThreshold * kThreshold * rr; }

/// s = {(c2, v1), (c2, v2), (c2, r~)} (CG) or {(v1, v2), (v2, v2), (v2, r~)} (GCR), v2 = A c2,
/// in one pass.
template <class T>
void second_sums(bool symmetric, std::int64_t n, const T* c2, const T* v1, const T* v2, const T* rt,
                 double s[3]) {
    const T* p = symmetric ? c2 : v2;  // the vector that multiplies v1, v2 and r~
    double s0 = 0.0, s1 = 0.0, s2 = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : s0, s1, s2) if (n > kParallelVector)
    for (std::int64_t i = 0; i < n; ++i) {
        const double pi = static_cast<double>(p[i]);
        s0 += pi * static_cast<double>(v1[i]);
        s1 += pi * static_cast<double>(v2[i]);
        s2 += pi * static_cast<double>(rt[i]);
    }
    s[0] = s0;
    s[1] = s1;
    s[2] = s2;
}

/// {beta1, beta2} with e = beta1 c1 + beta2 c2, from rho1 = (p1, v1), alpha1 and second_sums'
/// (summed) s: the second direction d2 = c2 - g c1 is made A-orthogonal to c1 (CG) or A d2
/// orthogonal to v1 (GCR), and r~ is already orthogonal to c1 (CG) or v1 (GCR), so both take
/// the same formulas in their own sums. Nothing when d2 gives no step: the caller keeps
/// alpha1 c1.
inline std::optional<std::array<double, 2>> second_step(double rho1, double alpha1,
                                                        const double s[3]) {
    const double g = s[0] / rho1;         // (c2, A c1) / (c1, A c1), or (A c2, A c1) / ||A c1||²
    const double rho2 = s[1] - g * s[0];  // (d2, A d2), or ||A d2||²
    const double beta2 = s[2] / rho2;
    const double beta1 = alpha1 - g * beta2;
    if (!(rho2 > 0.0) || !std::isfinite(beta1) || !std::isfinite(beta2)) return std::nullopt;
    return std::array<double, 2>{beta1, beta2};
}

/// out = a x + b y (out may be x or y).
template <class T>
void combine(std::int64_t n, double a, const T* x, double b, const T* y, T* out) {
    const auto ca = static_cast<T>(a), cb = static_cast<T>(b);
#pragma omp parallel for schedule(static) if (n > kParallelVector)
    for (std::int64_t i = 0; i < n; ++i) out[i] = ca * x[i] + cb * y[i];
}

}  // namespace mpmg::k_steps
