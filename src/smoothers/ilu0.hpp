// ILU(0) of an SG-DIA matrix (issue 4; the ICPP paper lets users pick SymGS or ILU per level).
// The factors split the matrix's stencil: L holds the lower offsets (those before the centre in
// lexicographic order) and an identity centre block, U the centre and the upper offsets, so
// A ≈ L U; each stores only its own offsets (a sweep reads no zero half). Both are SG-DIA matrices:
// the two triangular solves are a forward and a backward Gauss-Seidel sweep over them (exact
// substitution, because each has only one triangle), and reuse the parallel wavefront sweep and its
// kernels. Block (r x r) entries give block ILU(0).
#pragma once

#include <cstdint>

#include "mpmg/sgdia_matrix.hpp"

namespace mpmg {

struct Ilu0Factors {
    SgDiaMatrix<double>
        l;  ///< unit lower (identity centre blocks): the lower offsets and the centre
    SgDiaMatrix<double> u;  ///< upper with the pivot blocks on the centre: the centre and above
};

/// Takes the factors' values line by line as the factorisation makes them, in place of FP64
/// factors of the whole box: a level stored in a narrower precision narrows them as they come
/// (multigrid/truncate.hpp, FactorNarrowing). The factorisation then keeps only the U values
/// later rows read (a ring of ny + 2 lines) in FP64.
class Ilu0Sink {
public:
    virtual ~Ilu0Sink() = default;
    /// The factors' values of the line of cells [c0, c0 + nx): lower[d][i] for L's offset d
    /// (A's lower offsets, then the centre, which holds 1) and upper[d][i] for U's offset d
    /// (the centre, then A's upper offsets), cell c0 + i. Entries whose neighbour lies outside
    /// the box hold whatever A holds there. Lines come in order; the pointers are good for the
    /// call only.
    virtual void line(std::int64_t c0, const double* const* lower, const double* const* upper) = 0;
};

/// Factors in FP64. Throws NumericalError naming the row when a pivot block is singular.
/// With `sink` (point matrices only; std::invalid_argument for blocks) the factors' values go
/// to it and the returned factors are empty.
Ilu0Factors ilu0_factor(const SgDiaMatrix<double>& a, Ilu0Sink* sink = nullptr);

namespace detail {
/// ilu0_factor with every cell through the general loop (no compile-time stencil for the
/// cells away from the faces): what the tests compare ilu0_factor with, bit for bit.
Ilu0Factors ilu0_factor_general(const SgDiaMatrix<double>& a);
}  // namespace detail

}  // namespace mpmg
