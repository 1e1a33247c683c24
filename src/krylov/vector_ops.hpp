// Vector operations shared by the Krylov solvers (cg, gmres, richardson). Vectors are stored in
// the iterative precision K; inner products and norms accumulate in double for every K
// (STYLE.md: errors and numerics), in the SIMD kernels of kernels/vector_simd.hpp (the same bits
// on every vector width; each thread sums one contiguous block). Loops run under OpenMP when the
// vector is long enough to pay for the threads.
#pragma once

#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <omp.h>

#include "kernels/vector_simd.hpp"
#include "krylov/krylov.hpp"

namespace mpmg::krylov_ops {

/// Below this length the loops run serially: thread start-up costs more than the work.
inline constexpr std::int64_t kParallelMin = 8192;

/// f(begin, length) of one contiguous block of [0, n) per thread, summed by the OpenMP reduction.
template <class F>
double sum_blocks(std::int64_t n, F&& f) {
    if (n < kParallelMin) return f(std::int64_t{0}, n);
    double s = 0.0;
#pragma omp parallel reduction(+ : s)
    {
        const std::int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
        const std::int64_t lo = n * t / nt, hi = n * (t + 1) / nt;
        s += f(lo, hi - lo);
    }
    return s;
}

/// f(begin, length, partial, slots) on one contiguous block of [0, n) per thread, each writing
/// count partial sums into partial (slots: 8 count doubles of scratch); out[i] is their sum over
/// the threads, in thread order. scratch grows to 9 count doubles per thread when it must.
template <class F>
void sum_blocks_n(std::int64_t n, int count, std::vector<double>& scratch, double* out, F&& f) {
    const std::size_t per = static_cast<std::size_t>(9 * count);
    if (n < kParallelMin) {
        if (scratch.size() < per) scratch.resize(per);
        f(std::int64_t{0}, n, out, scratch.data());
        return;
    }
    const std::size_t threads = static_cast<std::size_t>(omp_get_max_threads());
    if (scratch.size() < per * threads) scratch.resize(per * threads);
    std::size_t used = 1;
#pragma omp parallel
    {
        const std::int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
        const std::int64_t lo = n * t / nt, hi = n * (t + 1) / nt;
        double* mine = scratch.data() + per * static_cast<std::size_t>(t);
        f(lo, hi - lo, mine, mine + count);
        if (t == 0) used = static_cast<std::size_t>(nt);
    }
    for (int i = 0; i < count; ++i) {
        double s = 0.0;
        for (std::size_t t = 0; t < used; ++t) s += scratch[per * t + static_cast<std::size_t>(i)];
        out[i] = s;
    }
}

/// (x, y), accumulated in double.
template <class K>
double dot(std::int64_t n, const K* x, const K* y) {
    return sum_blocks(
        n, [&](std::int64_t lo, std::int64_t len) { return kernels::dot(x + lo, y + lo, len); });
}

/// y <- y + alpha x, then returns (y, z) over all processes of a's distribution; z may be y.
/// One pass over the vectors (CG's residual update and norm).
template <class K>
double axpy_dot(const LinearOperator<K>& a, double alpha, const K* x, K* y, const K* z) {
    return a.global_sum(sum_blocks(a.size(), [&](std::int64_t lo, std::int64_t len) {
        return kernels::axpy_dot(alpha, x + lo, y + lo, z == y ? y + lo : z + lo, len);
    }));
}

/// Block Gram-Schmidt's inner products over all processes of a's distribution, in one pass
/// over the m basis vectors (kernels::multi_dot: out[i] = (basis_i, t0); with t1, also
/// out[m + i] = (basis_i, t1) and out[2m] = (t1, t1)).
template <class K>
void multi_dot(const LinearOperator<K>& a, int m, const K* const* basis, const K* t0, const K* t1,
               double* out, std::vector<double>& scratch) {
    const int count = t1 ? 2 * m + 1 : m;
    sum_blocks_n(a.size(), count, scratch, out,
                 [&](std::int64_t lo, std::int64_t len, double* part, double* slots) {
                     kernels::multi_dot(m, basis, t0, t1, lo, len, part, slots);
                 });
    a.global_sums(out, count);
}

/// Block Gram-Schmidt's update pass (kernels::gs_update): q <- (q - sum c_i basis_i) qscale and,
/// when w is not null, w <- (w - sum h_i basis_i - h_m q) wscale; returns ||w||^2 over all
/// processes of a's distribution (0 without w).
template <class K>
double gs_update(const LinearOperator<K>& a, int m, const K* const* basis, const double* c,
                 double qscale, K* q, const double* h, double wscale, K* w,
                 std::vector<double>& scratch) {
    double sum = 0.0;
    sum_blocks_n(a.size(), 1, scratch, &sum,
                 [&](std::int64_t lo, std::int64_t len, double* part, double* slots) {
                     part[0] =
                         kernels::gs_update(m, basis, c, qscale, q, h, wscale, w, lo, len, slots);
                 });
    return w ? a.global_sum(sum) : 0.0;
}

/// ||x||_2, accumulated in double. Non-finite entries give a non-finite result.
template <class K>
double norm2(std::int64_t n, const K* x) {
    return std::sqrt(dot(n, x, x));
}

/// (x, y) over all processes of a's distribution (the local part when a is serial).
template <class K>
double dot(const LinearOperator<K>& a, const K* x, const K* y) {
    return a.global_sum(dot(a.size(), x, y));
}

/// ||x||_2 over all processes of a's distribution.
template <class K>
double norm2(const LinearOperator<K>& a, const K* x) {
    return std::sqrt(dot(a, x, x));
}

/// y <- y + alpha x.
template <class K>
void axpy(std::int64_t n, double alpha, const K* x, K* y) {
    const K a = static_cast<K>(alpha);
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
    for (std::int64_t i = 0; i < n; ++i) {
        y[i] += a * x[i];
    }
}

/// y <- x + beta y.
template <class K>
void xpby(std::int64_t n, const K* x, double beta, K* y) {
    const K b = static_cast<K>(beta);
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
    for (std::int64_t i = 0; i < n; ++i) {
        y[i] = x[i] + b * y[i];
    }
}

/// x <- x + alpha p, then p <- z + beta p, in one pass (CG's deferred update of x: the same
/// values as axpy then xpby).
template <class K>
void axpy_xpby(std::int64_t n, double alpha, const K* z, double beta, K* p, K* x) {
    const K a = static_cast<K>(alpha), b = static_cast<K>(beta);
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
    for (std::int64_t i = 0; i < n; ++i) {
        x[i] += a * p[i];
        p[i] = z[i] + b * p[i];
    }
}

/// y <- A x and returns (x, y) over all processes of a's distribution: in the same pass when
/// the operator can (LinearOperator::apply_dot), else by a dot after the product.
template <class K>
double apply_dot(const LinearOperator<K>& a, const K* x, K* y) {
    double local = 0.0;
    if (a.apply_dot(x, y, &local)) return a.global_sum(local);
    return dot(a, x, y);
}

/// y <- alpha x (x may be y).
template <class K>
void scale_copy(std::int64_t n, double alpha, const K* x, K* y) {
    const K a = static_cast<K>(alpha);
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
    for (std::int64_t i = 0; i < n; ++i) {
        y[i] = a * x[i];
    }
}

/// y <- x.
template <class K>
void copy(std::int64_t n, const K* x, K* y) {
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
    for (std::int64_t i = 0; i < n; ++i) {
        y[i] = x[i];
    }
}

/// x <- 0.
template <class K>
void set_zero(std::int64_t n, K* x) {
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
    for (std::int64_t i = 0; i < n; ++i) {
        x[i] = K(0);
    }
}

/// r <- b - A x. With x_is_zero the product is skipped and r <- b.
template <class K>
void residual(const LinearOperator<K>& a, const K* b, const K* x, K* r, bool x_is_zero) {
    const std::int64_t n = a.size();
    if (x_is_zero) {
        copy(n, b, r);
        return;
    }
    a.apply(x, r);
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
    for (std::int64_t i = 0; i < n; ++i) {
        r[i] = b[i] - r[i];
    }
}

/// z <- M^{-1} r, adding the wall time spent inside M to *seconds. m must not be null.
template <class K>
void apply_timed(Preconditioner<K>& m, const K* r, K* z, double* seconds) {
    const auto t0 = std::chrono::steady_clock::now();
    m.apply(r, z);
    const auto t1 = std::chrono::steady_clock::now();
    *seconds += std::chrono::duration<double>(t1 - t0).count();
}

}  // namespace mpmg::krylov_ops
