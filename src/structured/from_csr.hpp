// Recognises a CSR matrix that lives on a structured grid (issue 4: --matrix A.mtx --grid
// NX,NY,NZ[,R]): rows are cells i fastest, then j, then k, with R unknowns per cell (component
// fastest); every entry must couple cells at most one apart in each direction. The stencil is
// the set of offsets that occur.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "mpmg/csr_matrix.hpp"
#include "mpmg/sgdia_matrix.hpp"

namespace mpmg {

/// Throws InvalidInput naming `source` (the file) when a rows x cols matrix is not square or
/// its rows are not box.cells() x block.
void check_fits_grid(std::int64_t rows, std::int64_t cols, const Box& box, int block,
                     const std::string& source);

/// Stencil::lex of the offset that entry (row, col) takes on `box` with `block` unknowns per
/// cell, or -1 when its cells lie beyond the 27-point neighbourhood.
int stencil_slot(std::int64_t row, std::int64_t col, const Box& box, int block);

/// The InvalidInput for entry (row, col) beyond the 27-point neighbourhood.
[[noreturn]] void fail_beyond_neighbourhood(std::int64_t row, std::int64_t col, const Box& box,
                                            int block, const std::string& source);

/// The stencil of the slots in `used` (Stencil::lex order), with the centre always in it.
Stencil stencil_of_slots(const std::array<bool, 27>& used);

/// Throws InvalidInput naming `source` (the file) when the sizes do not fit the grid or an
/// entry reaches beyond the 27-point neighbourhood (the first in row order).
SgDiaMatrix<double> sgdia_from_csr(const CsrMatrix& a, Box box, int block,
                                   const std::string& source);

}  // namespace mpmg
