// Explicitly stored zeros of a CSR matrix. Matrix Market files from finite-element codes store
// the full sparsity pattern of the assembled operator, including entries that are exactly zero
// (the mfem beam matrices: 23-71 % of the stored entries; eliminated Dirichlet rows keep their
// couplings as zeros). They cost memory traffic in every product, and, counted as couplings,
// would make eliminated rows look connected. The AMG path drops them when the matrix is read
// (api/problem_input.cpp) and from every Galerkin product (multigrid/amg_hierarchy.cpp).
#pragma once

#include <cstdint>

#include "mpmg/csr_matrix.hpp"

namespace mpmg {

/// Removes the stored entries equal to zero outside the diagonal, in place (the diagonal is
/// kept even when zero, so the smoothers' diagonal checks still see it); returns how many. Row i
/// of `a` is row first_row + i of the matrix (a process's rows, with global columns).
std::int64_t drop_zeros(CsrMatrix& a, std::int64_t first_row = 0);

/// Whether drop_zeros would remove an entry of `a` (without copying or changing it).
bool has_droppable_zeros(const CsrMatrix& a, std::int64_t first_row = 0);

}  // namespace mpmg
