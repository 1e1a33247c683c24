// Vector operations shared by the Krylov solvers (cg, gmres, richardson). Vectors are stored in
// the iterative precision K; inner products and norms accumulate in double for every K
// (STYLE.md: errors and numerics). Loops run under OpenMP when the vector is long enough to pay
// for the threads.
#pragma once

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>

#include "krylov/krylov.hpp"

namespace mpmg::krylov_ops {

/// Below this length the loops run serially: thread start-up costs more than the work.
inline constexpr std::int64_t kParallelMin = 8192;

/// Most columns block_dot sums in one pass (more are done in groups of this many).
inline constexpr int kMaxBlockDot = 1024;

/// (x, y), accumulated in double.
template <class K>
double dot(std::int64_t n, const K* x, const K* y) {
    double s = 0.0;
#pragma omp parallel for reduction(+ : s) schedule(static) if (n >= kParallelMin)
    for (std::int64_t i = 0; i < n; ++i) {
        s += static_cast<double>(x[i]) * static_cast<double>(y[i]);
    }
    return s;
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

/// y <- alpha x.
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

/// Rows per chunk of the block operations below: a chunk of w (8 KiB in double) stays in L1
/// while the m basis vectors stream past it.
inline constexpr std::int64_t kBlockRows = 1024;

/// h[i] = (v_i, w) for the m columns v_i = v + i n (column-major), accumulated in double, in one
/// pass over w and the columns (m dot products would read w m times). Summed chunk by chunk in
/// a fixed order per thread, then over the threads in thread order.
template <class K>
void block_dot(std::int64_t n, int m, const K* v, const K* w, double* h) {
    for (; m > kMaxBlockDot; m -= kMaxBlockDot, v += kMaxBlockDot * n, h += kMaxBlockDot)
        block_dot(n, kMaxBlockDot, v, w, h);
    for (int i = 0; i < m; ++i) h[i] = 0.0;
    const std::int64_t chunks = (n + kBlockRows - 1) / kBlockRows;
#pragma omp parallel if (n >= kParallelMin)
    {
        double local[kMaxBlockDot] = {};
#pragma omp for schedule(static)
        for (std::int64_t c = 0; c < chunks; ++c) {
            const std::int64_t r0 = c * kBlockRows, r1 = std::min(n, r0 + kBlockRows);
            for (int i = 0; i < m; ++i) {
                const K* vi = v + i * n;
                double s = 0.0;
                for (std::int64_t r = r0; r < r1; ++r)
                    s += static_cast<double>(vi[r]) * static_cast<double>(w[r]);
                local[i] += s;
            }
        }
#pragma omp for ordered schedule(static, 1)
        for (int t = 0; t < omp_get_num_threads(); ++t) {
#pragma omp ordered
            for (int i = 0; i < m; ++i) h[i] += local[i];
        }
    }
}

/// w <- w - sum_i h[i] v_i over the m columns of v, in one pass over w.
template <class K>
void block_subtract(std::int64_t n, int m, const K* v, const double* h, K* w) {
    const std::int64_t chunks = (n + kBlockRows - 1) / kBlockRows;
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
    for (std::int64_t c = 0; c < chunks; ++c) {
        const std::int64_t r0 = c * kBlockRows, r1 = std::min(n, r0 + kBlockRows);
        for (int i = 0; i < m; ++i) {
            const K* vi = v + i * n;
            const K hi = static_cast<K>(h[i]);
            for (std::int64_t r = r0; r < r1; ++r) w[r] -= hi * vi[r];
        }
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
