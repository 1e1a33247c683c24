// Bookkeeping shared by the Krylov solvers: the b = 0 result, stopping with a status and a
// message, and recording one iteration's relative residual with the divergence test.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "krylov/krylov.hpp"
#include "krylov/vector_ops.hpp"
#include "mpmg/errors.hpp"

namespace mpmg::krylov_ops {

/// Divergence: the relative residual grew past this many times its initial value.
inline constexpr double kDivergenceFactor = 1e3;

/// The converged result for b = 0: x = 0, no iterations, history {0}.
template <class K>
KrylovResult zero_rhs_result(std::int64_t n, K* x) {
    set_zero(n, x);
    KrylovResult res;
    res.status = SolveStatus::converged;
    res.relative_residual = 0.0;
    res.history = {0.0};
    return res;
}

/// Sets the final status and message; returns res for `return stop(...)`.
inline KrylovResult& stop(KrylovResult& res, SolveStatus status, std::string message) {
    res.status = status;
    res.message = std::move(message);
    return res;
}

/// Appends ||r_k|| / ||b|| for iteration k. Returns false when the solve ends here: converged
/// (rel <= rtol) or diverged (status stagnated, message naming the solver and iteration).
inline bool record(KrylovResult& res, std::string_view solver, int k, double rel, double rtol) {
    res.history.push_back(rel);
    res.iterations = k;
    res.relative_residual = rel;
    if (rel <= rtol) {
        res.status = SolveStatus::converged;
        return false;
    }
    if (rel > kDivergenceFactor * res.history.front()) {
        stop(res, SolveStatus::stagnated,
             fmt::format("{}: iteration {}: relative residual {:.3e} exceeds {:g} times the "
                         "initial {:.3e} — the iteration diverges",
                         solver, k, rel, kDivergenceFactor, res.history.front()));
        return false;
    }
    return true;
}

/// The max_iterations result message.
inline KrylovResult& out_of_iterations(KrylovResult& res, std::string_view solver, int max_iter,
                                       double rtol) {
    return stop(res, SolveStatus::max_iterations,
                fmt::format("{}: reached max_iter = {} with relative residual {:.3e} > rtol = "
                            "{:.3e}",
                            solver, max_iter, res.relative_residual, rtol));
}

/// The common start of a solve: checks the options and b, computes ||b|| into *bnorm and
/// r0 = b - A x0 into r, and records history[0]. Returns false when the solve already ended
/// (b = 0, r0 not finite, or x0 already converged); res then holds the final result.
template <class K>
bool begin(std::string_view solver, const LinearOperator<K>& a, const K* b, K* x, K* r,
           const KrylovOptions& opt, KrylovResult& res, double* bnorm) {
    const std::int64_t n = a.size();
    if (opt.max_iter < 0) {
        throw InvalidInput(
            fmt::format("{}: max_iter = {} is negative; use 0 or more", solver, opt.max_iter));
    }
    *bnorm = norm2(a, b);
    if (!std::isfinite(*bnorm)) {
        throw InvalidInput(fmt::format(
            "{}: ||b|| = {} — the right-hand side has non-finite entries", solver, *bnorm));
    }
    if (*bnorm == 0.0) {
        res = zero_rhs_result(n, x);
        return false;
    }
    if (opt.zero_initial_guess) set_zero(n, x);
    residual(a, b, x, r, opt.zero_initial_guess);
    const double rel0 = norm2(a, r) / *bnorm;
    res.history.reserve(static_cast<std::size_t>(opt.max_iter) + 1);
    res.history.push_back(rel0);
    res.relative_residual = rel0;
    if (!std::isfinite(rel0)) {
        stop(res, SolveStatus::non_finite,
             fmt::format("{}: iteration 0: ||b - A x0|| / ||b|| = {} — the initial guess or the "
                         "operator is not finite",
                         solver, rel0));
        return false;
    }
    if (rel0 <= opt.rtol) {
        res.status = SolveStatus::converged;
        return false;
    }
    return true;
}

}  // namespace mpmg::krylov_ops
