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
    lu_.assign(n * n, 0.0);
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            lu_[static_cast<std::size_t>(a.col[p]) * n + static_cast<std::size_t>(i)] = a.val[p];
        }
    }
    factorise();
}

void CoarseSolver::factorise() {
    const auto n = static_cast<std::size_t>(n_);
    for (std::size_t k = 0; k < lu_.size(); ++k) {
        if (!std::isfinite(lu_[k])) {
            throw NumericalError(
                fmt::format("coarsest level ({} rows): non-finite entry in row {}", n_, k % n));
        }
    }
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
    // solve() applies the pseudo-inverse: project b onto range(A) (orthogonal to the left null
    // vectors W), take the basic solution (the null unknowns pinned to zero), and project the
    // result orthogonal to the right null vectors Z. Symmetric A keeps a symmetric operator.
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
    const int m = static_cast<int>(n_);
    const int one = 1;
    int info = 0;
    const char trans = 'N';
    const auto n = static_cast<std::size_t>(n_);
    project_out(null_left_, x, n);
    dgetrs_(&trans, &m, &one, lu_.data(), &m, pivots_.data(), x, &m, &info);
    for (std::size_t k = static_cast<std::size_t>(rank_); k < n; ++k) x[k] = 0.0;
    project_out(null_right_, x, n);
}

std::string coarse_lu_failure(const std::exception& e, int index, std::string_view alternatives) {
    if (index == 0) return fmt::format("{}; A may be wrongly assembled", e.what());
    return fmt::format(
        "{}; level {} is a coarse operator the hierarchy made, not A: try --coarse-solver "
        "smoother or {}",
        e.what(), index, alternatives);
}

}  // namespace mpmg
