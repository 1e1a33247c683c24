#include "multigrid/coarse_solver.hpp"

#include <fmt/format.h>

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <mutex>

#include "mpmg/errors.hpp"

extern "C" {
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda,
             const int* ipiv, double* b, const int* ldb, int* info);
}

namespace mpmg {
namespace {

/// Pivots below this fraction of the largest are numerically zero (FP64 rounding of a
/// rank-deficient matrix leaves ~1e-16 relative).
constexpr double kRankTolerance = 1e-12;

/// Keeps a threaded BLAS (OpenBLAS's pthreads build is Debian's default libblas) on one thread.
/// The coarsest systems are small, and OpenBLAS's own workers spin in sched_yield between the
/// V-cycle's coarse solves: measured 16 % of all samples on a second thread in a 1-thread
/// laplace27 solve, taking a core from mpmg's OpenMP threads. Looked up at run time, so any
/// other LAPACK works too.
void single_threaded_blas() {
    static std::once_flag once;
    std::call_once(once, [] {
        using SetThreads = void (*)(int);
        for (const char* name : {"openblas_set_num_threads", "goto_set_num_threads"}) {
            if (void* f = dlsym(RTLD_DEFAULT, name)) {
                reinterpret_cast<SetThreads>(f)(1);
                return;
            }
        }
    });
}

/// Most rounds of Ruiz's equilibration (below). A round takes the square root of the spread
/// left between the rows' (columns') largest magnitudes, so 2^k becomes about 2^(k / 2^r) after r
/// rounds: 12 take the widest a double holds (k ~ 2100) to within the rounding to powers of two.
/// The rounds stop early once no scale changes (a Laplacian's levels: after one or two).
constexpr int kEquilibrationRounds = 12;

/// A row's or column's scale stays within 2^+-kMaxScaleExponent: a subnormal entry alone in its
/// column would otherwise take it past the double range (2^1073 for 4.9e-324) to inf; a scaled
/// entry, at most about 1 once equilibrated, stays finite with either factor applied first.
constexpr long kMaxScaleExponent = 1000;

/// 1 / sqrt(m) (m > 0 and finite) as a power of two, its exponent rounded towards zero: 1 for m
/// in (1/4, 4), so rows and columns whose largest magnitudes lie within a factor of 4 of 1 are
/// left as they are (the pure Neumann chain's ends, 1 against 2 inside, keep the minimum-norm
/// pseudo-inverse); for a scale now 2^e, the new scale 2^e times it stays within
/// 2^+-kMaxScaleExponent.
double inverse_sqrt_pow2(double m, int e) {
    const auto k = static_cast<long>(std::trunc(-0.5 * std::log2(m)));
    return std::ldexp(
        1.0, static_cast<int>(std::clamp(k, -kMaxScaleExponent - e, kMaxScaleExponent - e)));
}

/// Modified Gram-Schmidt on the few null vectors.
void orthonormalise(std::vector<std::vector<double>>& vs) {
    for (std::size_t a = 0; a < vs.size(); ++a) {
        for (std::size_t b = 0; b < a; ++b) {
            double dot = 0.0;
            for (std::size_t i = 0; i < vs[a].size(); ++i) dot += vs[a][i] * vs[b][i];
            for (std::size_t i = 0; i < vs[a].size(); ++i) vs[a][i] -= dot * vs[b][i];
        }
        double norm = 0.0;
        for (double v : vs[a]) norm += v * v;
        norm = std::sqrt(norm);
        for (double& v : vs[a]) v /= norm;
    }
}

/// x -= V V^T x for orthonormal V.
void project_out(const std::vector<std::vector<double>>& vs, double* x, std::size_t n) {
    for (const std::vector<double>& v : vs) {
        double dot = 0.0;
        for (std::size_t i = 0; i < n; ++i) dot += v[i] * x[i];
        for (std::size_t i = 0; i < n; ++i) x[i] -= dot * v[i];
    }
}

}  // namespace

CoarseSolver::CoarseSolver(const SgDiaMatrix<double>& a) : n_(a.rows()) {
    const Box& box = a.box();
    const int r = a.block();
    const auto n = static_cast<std::size_t>(n_);
    lu_.assign(n * n, 0.0);
    for (int d = 0; d < a.stencil().size(); ++d) {
        const Offset& o = a.stencil()[d];
        for (std::int64_t c = 0; c < box.cells(); ++c) {
            if (!a.neighbour_inside(c, d)) continue;
            const std::int64_t nb =
                c + o.dx + std::int64_t{box.nx} * (o.dy + std::int64_t{box.ny} * o.dz);
            for (int i = 0; i < r; ++i) {
                for (int j = 0; j < r; ++j) {
                    const auto row = static_cast<std::size_t>(c * r + i);
                    const auto col = static_cast<std::size_t>(nb * r + j);
                    lu_[col * n + row] = a.value(d, c, i, j);
                }
            }
        }
    }
    factorise();
}

CoarseSolver::CoarseSolver(const CsrMatrix& a) : n_(a.rows) {
    const auto n = static_cast<std::size_t>(n_);
    // A diagonal level (rows that share no entry, which aggregation cannot coarsen: the Schur
    // block of constraints on disjoint unknowns) is solved by division, not a dense LU: 2,500
    // such rows took 0.45 s to factorise.
    bool diagonal = true;
    for (std::size_t i = 0; i < n && diagonal; ++i) {
        diagonal = a.row_ptr[i + 1] - a.row_ptr[i] == 1 &&
                   a.col[static_cast<std::size_t>(a.row_ptr[i])] == static_cast<std::int64_t>(i) &&
                   a.val[static_cast<std::size_t>(a.row_ptr[i])] != 0.0 &&
                   std::isfinite(a.val[static_cast<std::size_t>(a.row_ptr[i])]);
    }
    if (diagonal && n > 0) {
        inverse_diagonal_.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            inverse_diagonal_[i] = 1.0 / a.val[static_cast<std::size_t>(a.row_ptr[i])];
        }
        rank_ = n_;
        return;
    }
    lu_.assign(n * n, 0.0);
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            lu_[static_cast<std::size_t>(a.col[p]) * n + static_cast<std::size_t>(i)] = a.val[p];
        }
    }
    factorise();
}

// Ruiz's scaling (D. Ruiz, "A scaling algorithm to equilibrate both rows and columns norms in
// matrices", RAL-TR-2001-034): every round divides each row and each column by the square root
// of its largest magnitude, which brings every row's and column's largest magnitude towards 1;
// a symmetric A keeps R = C. Here by powers of two, so R A C holds A's own bits, rescaled, up to
// the largest magnitudes (1/4, 4): a matrix whose rows and columns are alike (a Laplacian's
// Galerkin levels) gets one scale, or none, and solves as before to the bit.
// Why: the rank test below compares pivots with the largest. A symmetrically scaled A (D A D,
// D spread over 1e+-15, as unit conversions between unknowns make it) has pivots spread over
// 1e30 that say nothing about its rank: the coarsest level of such a Laplacian failed as
// "singular: pivot 62 is -49 (largest 5.83e+14)" unequilibrated.
void CoarseSolver::equilibrate() {
    const auto n = static_cast<std::size_t>(n_);
    // First one scale for all, which brings the largest magnitude to [1, 2): the rounds below
    // then see 2^k A as they see A, so it solves as A does, times 2^-k, to the bit.
    double largest = 0.0;
    for (double v : lu_) largest = std::max(largest, std::fabs(v));
    const int e = largest > 0.0 ? -std::ilogb(largest) : 0;
    row_scale_.assign(n, std::ldexp(1.0, e / 2));
    col_scale_.assign(n, std::ldexp(1.0, e - e / 2));
    std::vector<double> row_max(n), col_max(n);
    for (int round = 0; round < kEquilibrationRounds; ++round) {
        std::fill(row_max.begin(), row_max.end(), 0.0);
        std::fill(col_max.begin(), col_max.end(), 0.0);
        for (std::size_t j = 0; j < n; ++j) {
            for (std::size_t i = 0; i < n; ++i) {
                const double v = std::fabs(lu_[j * n + i]) * row_scale_[i] * col_scale_[j];
                row_max[i] = std::max(row_max[i], v);
                col_max[j] = std::max(col_max[j], v);
            }
        }
        bool changed = false;
        for (std::size_t i = 0; i < n; ++i) {
            // An empty row or column keeps its scale (the rank test finds it).
            const double r =
                row_max[i] > 0.0 ? inverse_sqrt_pow2(row_max[i], std::ilogb(row_scale_[i])) : 1.0;
            const double c =
                col_max[i] > 0.0 ? inverse_sqrt_pow2(col_max[i], std::ilogb(col_scale_[i])) : 1.0;
            changed = changed || r != 1.0 || c != 1.0;
            row_scale_[i] *= r;
            col_scale_[i] *= c;
        }
        if (!changed) break;
    }
    for (std::size_t j = 0; j < n; ++j) {
        // One factor at a time: the product of the two can overflow (a subnormal entry alone
        // in its row and column takes 2^515 from each).
        for (std::size_t i = 0; i < n; ++i)
            lu_[j * n + i] = lu_[j * n + i] * row_scale_[i] * col_scale_[j];
    }
}

// An empty column (an unknown no equation reads: an empty row and column of A, or values the
// input scale flushed to zero) gives a zero pivot wherever it stands, and the rank test below
// takes only trailing zero pivots as a null space. Last in the column order, its pivot is
// trailing, and partial pivoting leaves the empty rows for the last steps.
void CoarseSolver::move_empty_columns_last() {
    const auto n = static_cast<std::size_t>(n_);
    const auto empty = [&](std::size_t j) {
        return std::all_of(lu_.begin() + static_cast<std::ptrdiff_t>(j * n),
                           lu_.begin() + static_cast<std::ptrdiff_t>((j + 1) * n),
                           [](double v) { return v == 0.0; });
    };
    std::vector<std::int64_t> order, last;
    for (std::size_t j = 0; j < n; ++j) {
        (empty(j) ? last : order).push_back(static_cast<std::int64_t>(j));
    }
    if (last.empty()) {
        col_order_.clear();
        return;
    }
    order.insert(order.end(), last.begin(), last.end());
    std::vector<double> moved(lu_.size());
    for (std::size_t k = 0; k < n; ++k) {
        std::copy_n(
            lu_.begin() + static_cast<std::ptrdiff_t>(order[k]) * static_cast<std::ptrdiff_t>(n), n,
            moved.begin() + static_cast<std::ptrdiff_t>(k * n));
    }
    lu_ = std::move(moved);
    col_order_ = std::move(order);
}

void CoarseSolver::factorise() {
    const auto n = static_cast<std::size_t>(n_);
    for (std::size_t k = 0; k < lu_.size(); ++k) {
        if (!std::isfinite(lu_[k])) {
            throw NumericalError(
                fmt::format("coarsest level ({} rows): non-finite entry in row {}", n_, k % n));
        }
    }
    equilibrate();
    move_empty_columns_last();
    single_threaded_blas();
    const int m = static_cast<int>(n_);
    pivots_.assign(n, 0);
    int info = 0;
    dgetrf_(&m, &m, lu_.data(), &m, pivots_.data(), &info);
    if (info < 0) throw NumericalError(fmt::format("dgetrf: bad argument {}", -info));
    // Numerically zero pivots (relative to the largest) at the end of the elimination: a
    // rank-deficient coarse operator such as pure Neumann's (constants in its null space). The
    // plain LU would amplify the right-hand side's null-space component, rounding included
    // (1e-7 in FP32 vectors), by 1 / pivot (1e16): the preconditioner then diverges. Instead
    // solve() applies the pseudo-inverse of the equilibrated R A C: project R b onto its range
    // (orthogonal to the left null vectors W), take the basic solution (the null unknowns pinned
    // to zero), project the result orthogonal to the right null vectors Z, and scale it by C.
    // Symmetric A (R = C) keeps a symmetric operator.
    double umax = 0.0;
    for (std::size_t k = 0; k < n; ++k) umax = std::max(umax, std::fabs(lu_[k * n + k]));
    const double tiny = kRankTolerance * umax;
    std::size_t rank = n;
    while (rank > 0 && std::fabs(lu_[(rank - 1) * n + rank - 1]) <= tiny) --rank;
    for (std::size_t k = 0; k < rank; ++k) {
        if (std::fabs(lu_[k * n + k]) <= tiny) {
            throw NumericalError(fmt::format(
                "coarsest level ({} rows) is singular: pivot {} of its LU factorisation is {:.3g} "
                "(largest {:.3g}) with nonzero pivots after it",
                n_, k + 1, lu_[k * n + k], umax));
        }
    }
    if (rank == 0) throw NumericalError(fmt::format("coarsest level ({} rows) is zero", n_));
    null_left_.clear();
    null_right_.clear();
    for (std::size_t k = rank; k < n; ++k) {
        // Right: U z = 0 with z_k = 1 and the other null unknowns 0 (back substitution).
        std::vector<double> z(n, 0.0);
        z[k] = 1.0;
        for (std::size_t i = rank; i-- > 0;) {
            double sum = -lu_[k * n + i];
            for (std::size_t j = i + 1; j < rank; ++j) sum -= lu_[j * n + i] * z[j];
            z[i] = sum / lu_[i * n + i];
        }
        // Left: w = P v with L^T v = e_k (row k of U is ~0, so w^T A = v^T L U ~ 0).
        std::vector<double> w(n, 0.0);
        w[k] = 1.0;
        for (std::size_t i = k; i-- > 0;) {
            double sum = 0.0;
            for (std::size_t j = i + 1; j <= k; ++j) sum += lu_[i * n + j] * w[j];
            w[i] = -sum;
        }
        for (std::size_t i = n; i-- > 0;) {
            std::swap(w[i], w[static_cast<std::size_t>(pivots_[i] - 1)]);
        }
        null_right_.push_back(std::move(z));
        null_left_.push_back(std::move(w));
    }
    orthonormalise(null_right_);
    orthonormalise(null_left_);
    // The basic solution: the null unknowns decoupled (U's column zeroed, pivot 1) and zeroed.
    for (std::size_t k = rank; k < n; ++k) {
        for (std::size_t i = 0; i < k; ++i) lu_[k * n + i] = 0.0;
        lu_[k * n + k] = 1.0;
    }
    rank_ = static_cast<std::int64_t>(rank);
}

void CoarseSolver::solve(double* x) const {
    if (!inverse_diagonal_.empty()) {
        for (std::size_t i = 0; i < inverse_diagonal_.size(); ++i) x[i] *= inverse_diagonal_[i];
        return;
    }
    const int m = static_cast<int>(n_);
    const int one = 1;
    int info = 0;
    const char trans = 'N';
    const auto n = static_cast<std::size_t>(n_);
    for (std::size_t i = 0; i < n; ++i) x[i] *= row_scale_[i];
    project_out(null_left_, x, n);
    dgetrs_(&trans, &m, &one, lu_.data(), &m, pivots_.data(), x, &m, &info);
    for (std::size_t k = static_cast<std::size_t>(rank_); k < n; ++k) x[k] = 0.0;
    project_out(null_right_, x, n);
    if (!col_order_.empty()) {  // x holds the unknowns in col_order_
        reordered_.assign(x, x + n);
        for (std::size_t k = 0; k < n; ++k) x[col_order_[k]] = reordered_[k];
    }
    for (std::size_t i = 0; i < n; ++i) x[i] *= col_scale_[i];
}

std::string coarse_lu_failure(const std::exception& e, int index, std::string_view alternatives) {
    if (index == 0) return fmt::format("{}; A may be wrongly assembled", e.what());
    return fmt::format(
        "{}; level {} is a coarse operator the hierarchy made, not A: try --coarse-solver "
        "smoother or {}",
        e.what(), index, alternatives);
}

}  // namespace mpmg
