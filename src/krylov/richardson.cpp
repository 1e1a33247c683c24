// Preconditioned Richardson iteration x <- x + M^{-1}(b - A x) in iterative precision K, with
// the residual recomputed from b - A x every iteration (ICPP'24 Algorithm 2: the multigrid
// V-cycle as a stationary solver). With m == nullptr it is plain Richardson with unit step.
// Iteration k applies the preconditioner once, so iterations == preconditioner applications.
#include <cmath>
#include <cstddef>
#include <vector>

#include <fmt/format.h>

#include "krylov/krylov.hpp"
#include "krylov/result_helpers.hpp"
#include "krylov/vector_ops.hpp"

namespace mpmg {

namespace {

using namespace krylov_ops;

/// Stagnation window: the relative residual must fall by kMinReduction over kWindow iterations.
constexpr int kWindow = 50;
constexpr double kMinReduction = 0.999;

/// Returns false (and fills res) when the last kWindow iterations made no real progress.
bool progressing(KrylovResult& res, int k) {
    if (k < kWindow) return true;
    const double now = res.history[static_cast<std::size_t>(k)];
    const double before = res.history[static_cast<std::size_t>(k - kWindow)];
    if (now <= kMinReduction * before) return true;
    stop(res, SolveStatus::stagnated,
         fmt::format("richardson: iteration {}: relative residual {:.3e} fell by less than a "
                     "factor {:g} over the last {} iterations (was {:.3e}) — the iteration "
                     "stagnates; use cg or gmres",
                     k, now, kMinReduction, kWindow, before));
    return false;
}

}  // namespace

template <class K>
KrylovResult richardson(const LinearOperator<K>& a, Preconditioner<K>* m, const K* b, K* x,
                        const KrylovOptions& opt) {
    const std::int64_t n = a.size();
    std::vector<K> r(n), z(n);  // z = M^{-1} r is kept so that a failed step can be undone
    KrylovResult res;
    double bnorm = 0.0;
    if (!begin("richardson", a, b, x, r.data(), opt, res, &bnorm)) return res;

    for (int k = 1; k <= opt.max_iter; ++k) {
        if (m != nullptr) {
            apply_timed(*m, r.data(), z.data(), &res.preconditioner_seconds);
        } else {
            copy(n, r.data(), z.data());
        }
        const double znorm = norm2(a, z.data());
        if (!std::isfinite(znorm)) {
            return stop(res, SolveStatus::non_finite,
                        fmt::format("richardson: iteration {}: ||M^-1 r|| = {} — the "
                                    "preconditioner output is not finite",
                                    k, znorm));
        }
        axpy(n, 1.0, z.data(), x);
        residual(a, b, x, r.data(), false);
        const double rel = norm2(a, r.data()) / bnorm;
        if (!std::isfinite(rel)) {
            axpy(n, -1.0, z.data(), x);  // back to the last finite iterate
            return stop(res, SolveStatus::non_finite,
                        fmt::format("richardson: iteration {}: ||b - A x|| / ||b|| = {} — the "
                                    "update overflows precision K",
                                    k, rel));
        }
        if (!record(res, "richardson", k, rel, opt.rtol)) return res;
        if (!progressing(res, k)) return res;
    }
    return out_of_iterations(res, "richardson", opt.max_iter, opt.rtol);
}

template KrylovResult richardson<double>(const LinearOperator<double>& a, Preconditioner<double>* m,
                                         const double* b, double* x, const KrylovOptions& opt);
template KrylovResult richardson<float>(const LinearOperator<float>& a, Preconditioner<float>* m,
                                        const float* b, float* x, const KrylovOptions& opt);

}  // namespace mpmg
