// The directional Galerkin product on the SG-DIA structure (internal to src/structured).
#pragma once

#include <optional>
#include <vector>

#include "mpmg/sgdia_matrix.hpp"
#include "structured/coarsen.hpp"

namespace mpmg {

/// A_c = P_s^T A P_s for one directional step `s` (s.fine == a.box()), in FP64. The result
/// keeps only the offsets with any nonzero value, plus the centre.
SgDiaMatrix<double> galerkin_step(const SgDiaMatrix<double>& a, const DirectionalTransfer& s);

/// The product of two or more chained steps with linear weights (no w_left/w_right), bit for
/// bit what galerkin_step applied step by step gives, computed z-plane by z-plane: the
/// intermediate operators exist only as one plane (or a ring of three planes for a final z
/// step) per thread instead of whole matrices. Returns nothing when an intermediate operator
/// has an all-zero offset (the step-by-step path prunes it, which changes the next step's
/// stencil); the caller then runs the steps one by one.
std::optional<SgDiaMatrix<double>> galerkin_steps(const SgDiaMatrix<double>& a,
                                                  const std::vector<DirectionalTransfer>& steps);

}  // namespace mpmg
