// SIMD (Google Highway, dynamic dispatch) vector kernels of the Krylov solvers: inner products
// accumulated in double, the fused update-then-product of CG, and the block Gram-Schmidt passes
// of GMRES (many inner products, or many updates, in one pass over the basis). The per-target
// code is in vector_simd.cpp.
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

/// Inner products of m basis vectors with one or two targets, over elements [lo, lo + len) of
/// each vector, in one pass over the basis (the targets are reread from cache, a chunk at a
/// time):
///   out[i]     = sum_k basis[i][k] t0[k]   (i < m),
///   out[m + i] = sum_k basis[i][k] t1[k]   (i < m, only when t1 is not null),
///   out[2m]    = sum_k t1[k] t1[k]         (only when t1 is not null).
/// Each is accumulated as dot() accumulates it, slot (k - lo) mod 8: the same bits as m separate
/// calls of dot(). slots is scratch of 8 (2m + 1) doubles.
void multi_dot(int m, const double* const* basis, const double* t0, const double* t1,
               std::int64_t lo, std::int64_t len, double* out, double* slots);
void multi_dot(int m, const float* const* basis, const float* t0, const float* t1, std::int64_t lo,
               std::int64_t len, double* out, double* slots);

/// The update pass of block Gram-Schmidt, over elements [lo, lo + len), in one pass over the
/// basis. With K(.) the rounding to K and every product and difference rounded to K:
///   q[k] <- ((q[k] - K(c[0]) basis[0][k]) - ... - K(c[m-1]) basis[m-1][k]) * K(qscale);
/// then, when w is not null, with that updated q,
///   w[k] <- (((w[k] - K(h[0]) basis[0][k]) - ... - K(h[m-1]) basis[m-1][k])
///            - K(h[m]) q[k]) * K(wscale),
/// and returns sum_k w[k]^2 of the updated w, accumulated as dot() accumulates it (0 without w).
/// slots is scratch of 8 doubles.
double gs_update(int m, const double* const* basis, const double* c, double qscale, double* q,
                 const double* h, double wscale, double* w, std::int64_t lo, std::int64_t len,
                 double* slots);
double gs_update(int m, const float* const* basis, const double* c, double qscale, float* q,
                 const double* h, double wscale, float* w, std::int64_t lo, std::int64_t len,
                 double* slots);

}  // namespace mpmg::kernels
