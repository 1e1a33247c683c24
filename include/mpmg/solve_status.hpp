// How a solve ended. A solve never reports NaN as finished: non-finite values end it with
// SolveStatus::non_finite and the solution handed back is the last finite iterate.
#pragma once

#include <string_view>

namespace mpmg {

enum class SolveStatus {
    converged,       ///< ||r_k|| / ||b|| <= rtol
    max_iterations,  ///< ran out of iterations
    breakdown,       ///< a Krylov scalar vanished (e.g. p^T A p <= 0 in CG)
    non_finite,      ///< a scalar or the preconditioner output was Inf/NaN
    stagnated,       ///< no progress over many iterations / diverged
};

constexpr std::string_view to_string(SolveStatus s) {
    switch (s) {
        case SolveStatus::converged:
            return "converged";
        case SolveStatus::max_iterations:
            return "max_iterations";
        case SolveStatus::breakdown:
            return "breakdown";
        case SolveStatus::non_finite:
            return "non_finite";
        case SolveStatus::stagnated:
            return "stagnated";
    }
    return "?";
}

}  // namespace mpmg
