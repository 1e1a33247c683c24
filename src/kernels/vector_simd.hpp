// SIMD (Google Highway, dynamic dispatch) vector kernels of the Krylov solvers: inner products
// accumulated in double, and the fused update-then-product of modified Gram-Schmidt and CG.
// The per-target code is in vector_simd.cpp.
//
// Summation order: element k is added into slot k mod 8 (each slot in order of k), and the
// eight slots are summed as ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)); products and
// sums are separate roundings (no fused multiply-add). Every target (AVX-512, AVX2, SSE4,
// NEON, EMU128, scalar) therefore returns the same bits for the same input: a solve's
// iterates do not depend on the machine's vector width. Vectors of float are widened to double
// before the product (exact), as the solvers' contract asks (krylov/krylov.hpp).
// The eight independent chains also keep the additions off the critical path: the scalar loop
// it replaces was bound by one add latency per element (~2.5x slower than memory here).
// The kernels neither allocate nor throw.
#pragma once

#include <cstdint>

namespace mpmg::kernels {

/// sum_k x[k] y[k] over k < n, accumulated in double in the order above.
double dot(const double* x, const double* y, std::int64_t n);
double dot(const float* x, const float* y, std::int64_t n);

/// y[k] = y[k] + K(alpha) x[k] (a product and a sum in K), then returns sum_k y[k] z[k] over the
/// updated y, in the order above. z may be y (then the result is ||y||^2); otherwise z must not
/// overlap y.
double axpy_dot(double alpha, const double* x, double* y, const double* z, std::int64_t n);
double axpy_dot(double alpha, const float* x, float* y, const float* z, std::int64_t n);

}  // namespace mpmg::kernels
