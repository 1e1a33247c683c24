// Recognises a CSR matrix that lives on a structured grid (issue 4: --matrix A.mtx --grid
// NX,NY,NZ[,R]): rows are cells i fastest, then j, then k, with R unknowns per cell (component
// fastest); every entry must couple cells at most one apart in each direction. The stencil is
// the set of offsets that occur.
#pragma once

#include <string>

#include "mpmg/csr_matrix.hpp"
#include "mpmg/sgdia_matrix.hpp"

namespace mpmg {

/// Throws InvalidInput naming `source` (the file) when the sizes do not fit the grid or an
/// entry reaches beyond the 27-point neighbourhood.
SgDiaMatrix<double> sgdia_from_csr(const CsrMatrix& a, Box box, int block,
                                   const std::string& source);

}  // namespace mpmg
