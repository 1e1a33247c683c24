// The directional Galerkin product on the SG-DIA structure (internal to src/structured).
#pragma once

#include "mpmg/sgdia_matrix.hpp"
#include "structured/coarsen.hpp"

namespace mpmg {

/// A_c = P_s^T A P_s for one directional step `s` (s.fine == a.box()), in FP64. The result
/// keeps only the offsets with any nonzero value, plus the centre.
SgDiaMatrix<double> galerkin_step(const SgDiaMatrix<double>& a, const DirectionalTransfer& s);

}  // namespace mpmg
