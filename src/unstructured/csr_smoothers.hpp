// CSR smoother sweeps in compute precision C on a matrix stored in S; the smoother data
// (inverse diagonal) is stored in S too and converted in registers. The row loops are the SIMD
// kernels of kernels/csr_simd.hpp. Plain templates over the supported (S, C) pairs of
// csr_typed.hpp, instantiated by the one dispatch point (multigrid/amg_level.cpp). They neither
// allocate nor throw; `w1`, `w2` are caller-owned work vectors of the matrix' size. Formulas in
// smoother_setup.hpp.
#pragma once

#include <algorithm>
#include <cstdint>

#include <omp.h>

#include "kernels/convert.hpp"
#include "unstructured/csr_typed.hpp"
#include "unstructured/smoother_setup.hpp"

namespace mpmg::csr_smoothers {

/// Hybrid Gauss-Seidel and block Jacobi split their rows over the threads from this many rows
/// (the split is part of the hybrid smoother's definition, so it stays where its convergence
/// was measured; the plain vector passes use kParallelVector of csr_typed.hpp).
inline constexpr std::int64_t kParallelRows = 4096;

/// u_new = u + omega D^{-1} (f - A u) (weighted Jacobi; l1-Jacobi with the l1 diagonal and
/// omega 1). u_new must not alias u: the caller swaps the two vectors afterwards.
template <class S, class C>
void jacobi(const TypedCsr<S>& a, const S* inv_d, C omega, const C* f, const C* u, C* u_new) {
    mpmg::jacobi(a, inv_d, omega, f, u, u_new);
}

/// u = omega D^{-1} f: the Jacobi sweep from a zero initial guess, without the product A 0.
template <class S, class C>
void jacobi_from_zero(const TypedCsr<S>& a, const S* inv_d, C omega, const C* f, C* u) {
    const std::int64_t n = a.rows;
#pragma omp parallel for schedule(static) if (n > kParallelVector)
    for (std::int64_t i = 0; i < n; ++i) u[i] = omega * kernels::to_compute<C>(inv_d[i]) * f[i];
}

/// u += omega B^{-1} (f - A u): block Jacobi, block b holding rows block_ptr[b] ..
/// block_ptr[b+1]-1 (at most kMaxJacobiBlock) and its inverse (column-major, stored in S) at
/// inv + inv_ptr[b]; sums in C, column by column (the inner loop over the block's rows has no
/// dependency chain and vectorises, conversions included; a row-major dot product per row
/// would be one add latency per entry). With `u_zero` (u = 0 on entry) u = omega B^{-1} f,
/// without the product A 0. `r` is a work vector.
template <class S, class C>
void block_jacobi(const TypedCsr<S>& a, const std::int64_t* block_ptr, const std::int64_t* inv_ptr,
                  std::int64_t blocks, const S* inv, C omega, const C* f, C* u, C* r, bool u_zero) {
    const C* res = f;
    if (!u_zero) {
        residual(a, f, u, r);
        res = r;
    }
#pragma omp parallel for schedule(static) if (a.rows > kParallelRows)
    for (std::int64_t b = 0; b < blocks; ++b) {
        const std::int64_t r0 = block_ptr[b], m = block_ptr[b + 1] - r0;
        const S* blk = inv + inv_ptr[b];
        const C* x = res + r0;
        C acc[kMaxJacobiBlock] = {};
        for (std::int64_t j = 0; j < m; ++j) {
            const C xj = x[j];
            const S* col = blk + j * m;
            for (std::int64_t i = 0; i < m; ++i) acc[i] += kernels::to_compute<C>(col[i]) * xj;
        }
        for (std::int64_t i = 0; i < m; ++i) {
            u[r0 + i] = (u_zero ? C{0} : u[r0 + i]) + omega * acc[i];
        }
    }
}

/// One hybrid Gauss-Seidel sweep (forward or backward): rows split into one contiguous block
/// per thread; inside a block, newest values; across blocks, the values at the start of the
/// sweep (kept in `w1`), so the result is deterministic for a given thread count.
template <class S, class C>
void hybrid_gs(const TypedCsr<S>& a, const S* inv_d, const C* f, C* u, C* w1, bool forward) {
    const std::int64_t n = a.rows;
    const bool parallel = n > kParallelRows;
    if (parallel) std::copy(u, u + n, w1);
    kernels::csr::CsrGsArgs<S, C> q;
    q.a = a.view();
    q.inv_d = inv_d;
    q.b = f;
    q.x = u;
    q.forward = forward;
#pragma omp parallel if (parallel)
    {
        const std::int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
        kernels::csr::CsrGsArgs<S, C> mine = q;
        mine.row_begin = n * t / nt;
        mine.row_end = n * (t + 1) / nt;
        mine.outside = parallel ? w1 : u;
        kernels::csr::gs_sweep(mine);
    }
}

/// u += U^{-1} L^{-1} (f - A u): block ILU(0) (smoother_setup.hpp), each row block's two
/// triangular solves on one thread (the factors hold no entries outside a row's block). L has
/// a unit diagonal, U's pivots enter as their inverses `inv_pivot`. With `u_zero` (u = 0 on
/// entry) u = U^{-1} L^{-1} f, without the product A 0. `w1`, `w2` are work vectors.
template <class S, class C>
void ilu0(const TypedCsr<S>& a, const TypedCsr<S>& l, const TypedCsr<S>& upper, const S* inv_pivot,
          const std::int64_t* block_ptr, std::int64_t blocks, const C* f, C* u, C* w1, C* w2,
          bool u_zero) {
    const C* r = f;
    if (!u_zero) {
        residual(a, f, u, w1);
        r = w1;
    }
    // A block's rows of r are read only by its own forward solve, so the backward solve may
    // write them (r is w1 unless u_zero).
    C* out = u_zero ? u : w1;
#pragma omp parallel for schedule(static) if (blocks > 1)
    for (std::int64_t b = 0; b < blocks; ++b) {
        const std::int64_t b0 = block_ptr[b], b1 = block_ptr[b + 1];
        // x = T^{-1} rhs on the block's rows, T triangular: a Gauss-Seidel sweep from x = 0.
        const auto solve = [&](const TypedCsr<S>& t, const S* inv_d, const C* rhs, C* x,
                               bool forward) {
            std::fill(x + b0, x + b1, C{0});
            kernels::csr::CsrGsArgs<S, C> q;
            q.a = t.view();
            q.inv_d = inv_d;
            q.b = rhs;
            q.x = x;
            q.outside = x;
            q.row_begin = b0;
            q.row_end = b1;
            q.forward = forward;
            kernels::csr::gs_sweep(q);
        };
        solve(l, nullptr, r, w2, true);
        solve(upper, inv_pivot, w2, out, false);
    }
    if (u_zero) return;
    const std::int64_t n = a.rows;
#pragma omp parallel for schedule(static) if (n > kParallelVector)
    for (std::int64_t i = 0; i < n; ++i) u[i] += w1[i];
}

/// Chebyshev iteration of `degree` steps preconditioned by D^{-1} on [alpha, beta]
/// (Saad, Iterative Methods, Algorithm 12.1).
template <class S, class C>
void chebyshev(const TypedCsr<S>& a, const S* inv_d, double alpha, double beta, int degree,
               const C* f, C* u, C* w1, C* w2) {
    const double theta = (beta + alpha) / 2, delta = (beta - alpha) / 2;
    const double sigma = theta / delta;
    double rho = 1.0 / sigma;
    const std::int64_t n = a.rows;
    for (int k = 0; k < degree; ++k) {
        residual(a, f, u, w1);
        const double rho_new = k == 0 ? rho : 1.0 / (2.0 * sigma - rho);
        const C c_old = static_cast<C>(k == 0 ? 0.0 : rho_new * rho);
        const C c_res = static_cast<C>(k == 0 ? 1.0 / theta : 2.0 * rho_new / delta);
#pragma omp parallel for schedule(static) if (n > kParallelVector)
        for (std::int64_t i = 0; i < n; ++i) {
            w2[i] =
                (k == 0 ? C{0} : c_old * w2[i]) + c_res * kernels::to_compute<C>(inv_d[i]) * w1[i];
            u[i] += w2[i];
        }
        rho = rho_new;
    }
}

}  // namespace mpmg::csr_smoothers
