// Internal helpers of the hypre side of `mpmg bench vs-hypre`: lazy MPI start, hypre error
// checks, timing, and the grid index of an SG-DIA offset.
#pragma once

#include <HYPRE_utilities.h>

#include <chrono>
#include <cstdint>

#include "mpmg/sgdia_matrix.hpp"

namespace mpmg::bench::hypre::detail {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// Initialises MPI (if nobody has) and hypre once; both are finalised at process exit.
void ensure_started();

/// Throws mpmg::NumericalError naming `what` if hypre reports an error other than
/// non-convergence (HYPRE_ERROR_CONV, which the caller judges from the residual); then clears
/// hypre's sticky global error flag.
void check(HYPRE_Int err, const char* what);

/// Checks that the grid fits hypre's 32-bit HYPRE_Int / HYPRE_BigInt and the problem is scalar;
/// throws mpmg::Unsupported otherwise.
void check_supported(const SgDiaMatrix<double>& a);

}  // namespace mpmg::bench::hypre::detail
