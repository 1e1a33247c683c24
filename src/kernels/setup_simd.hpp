// SIMD (Google Highway, dynamic dispatch) passes of the structured multigrid setup over FP64
// values: the range check that decides whether a level needs scaling, the counts a truncation
// would give, G_max's minimum ratio and the symmetric scaling of setup-then-scale (ICPP'24
// §4.1), and the sums of |a_ij| that choose the coarsening directions. The per-target code is in
// setup_simd.cpp. Every function but sum_abs returns exactly what its scalar loop returns (the
// same IEEE operations per value; minimum and counts do not depend on order). The kernels
// neither allocate nor throw; callers split the work over threads.
#pragma once

#include <cstdint>
#include <limits>

#include "core/float16.hpp"

namespace mpmg::kernels {

/// True when some v[k], k < n, is NaN, has |v[k]| > hi, or is nonzero with |v[k]| < lo.
bool any_outside(const double* v, std::int64_t n, double lo, double hi);

/// What narrowing v[0..n) into a format with limits `lim` would count (count_by_limits).
TruncationCounts count_range(const double* v, std::int64_t n, const RangeLimits& lim);

/// max over k < n of |a[k]| si[k] sj[k] (multiplied in that order), NaN entries skipped; 0
/// when there is none. With si, sj the inverse square roots of the diagonal, the largest entry
/// of Q^-1/2 A Q^-1/2: two multiplications per entry, where sqrt(a_ii a_jj) / |a_ij| took a
/// square root and a division (the compute-bound part of a block level's scaling).
double max_scaled_abs(const double* a, const double* si, const double* sj, std::int64_t n);

/// out[k] = a[k] / (si[k] sj[k]) for k < n, and what narrowing out[0..n) into a format with
/// limits `lim` would count.
TruncationCounts scale_counted(const double* a, const double* si, const double* sj, double* out,
                               std::int64_t n, const RangeLimits& lim);

/// What narrowing a[k] / (si[k] sj[k]), k < n, into a format with limits `lim` would count
/// (scale_counted without writing the scaled values).
TruncationCounts count_scaled(const double* a, const double* si, const double* sj, std::int64_t n,
                              const RangeLimits& lim);

/// s[k] = sqrt(v[k] / g) for k < n (IEEE division and square root: the scalar loop's bits);
/// true when every v[k] is positive and finite. s may be v (in place).
bool sqrt_over(const double* v, std::int64_t n, double g, double* s);

/// s[k] = 1 / sqrt(v[k]) for k < n (IEEE square root and division: the scalar loop's bits).
void inverse_sqrt(const double* v, std::int64_t n, double* s);

/// sum over k < n of |v[k]|, accumulated in SIMD lanes: the order differs from a sequential
/// sum (the result may differ in the last bits), but not between threads or runs.
double sum_abs(const double* v, std::int64_t n);

/// The magnitudes of v[0..n) in one pass: the largest |v[k]| over finite v[k] (0 when there are
/// none), the smallest nonzero one (+Inf when there are none), and whether some v[k] is Inf or
/// NaN; the scalar loop's values.
struct FiniteRange {
    double largest = 0.0;
    double smallest = std::numeric_limits<double>::infinity();
    bool nonfinite = false;
};
FiniteRange finite_range(const double* v, std::int64_t n);

/// finite_range(v, n).largest.
double largest_finite_abs(const double* v, std::int64_t n);

/// The smallest |pivot| / largest |entry| of Gaussian elimination with partial pivoting (the
/// first largest |entry| of the column as pivot; rows swapped; each row updated by
/// m_ij - (m_ic / p) m_cj, a multiplication and a subtraction) of n r x r blocks, 0 for a
/// block with a zero pivot or no nonzero entry: how close each block is to singular. Entry
/// (i, j) of block b is m[(i r + j) n + b] (the blocks side by side, one lane each);
/// eliminates in place (m is scratch). out[b] is the scalar loop's value, bit for bit.
void pivot_ratios(double* m, std::int64_t n, int r, double* out);

/// Name of the Highway target that dynamic dispatch runs on this CPU.
const char* setup_target_name();

}  // namespace mpmg::kernels
