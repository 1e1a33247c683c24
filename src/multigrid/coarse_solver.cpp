#include "multigrid/coarse_solver.hpp"

#include <fmt/format.h>

#include <dlfcn.h>

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
    if (info != 0) {
        throw NumericalError(fmt::format(
            "coarsest level ({} rows) is singular: zero pivot at row {} of its LU factorisation; "
            "the operator may have a null space (e.g. pure Neumann) or be wrongly assembled",
            n_, info));
    }
}

void CoarseSolver::solve(double* x) const {
    const int m = static_cast<int>(n_);
    const int one = 1;
    int info = 0;
    const char trans = 'N';
    dgetrs_(&trans, &m, &one, lu_.data(), &m, pivots_.data(), x, &m, &info);
}

}  // namespace mpmg
