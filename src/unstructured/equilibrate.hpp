// Symmetry-preserving row and column equilibration (FGCS'23 Algorithm 2, one iteration of
// Algorithm 2.5 of Higham, Pranesh, Zounon 2019):
//   r_i = sqrt(max_j |a_ij|),  c_j = sqrt(max_i |a_ij|),  â_ij = a_ij / (r_i c_j),
// so every |â_ij| <= 1 (|a_ij| <= sqrt(max row_i * max col_j)) and no entry overflows FP16.
// For symmetric A, r = c and Â stays symmetric. A level stores Â and works in the equilibrated
// variables û = c ⊙ u, f̂ = f / r (the conversions happen at the level's interfaces). Jacobi and
// Gauss-Seidel are invariant under this two-sided diagonal scaling.
#pragma once

#include <string>
#include <vector>

#include "mpmg/csr_matrix.hpp"

namespace mpmg {

struct Equilibration {
    bool ok = false;        ///< false: a row or column is all zero (see `problem`)
    std::vector<double> r;  ///< row factors
    std::vector<double> c;  ///< column factors
    std::string problem;
};

/// Computes the factors of Algorithm 2.
Equilibration equilibrate(const CsrMatrix& a);

/// Returns Â with â_ij = a_ij / (r_i c_j).
CsrMatrix apply_equilibration(const CsrMatrix& a, const Equilibration& e);

}  // namespace mpmg
