// Setup-then-scale (ICPP'24 §4.1, Algorithm 1 lines 5-9, Theorem 4.1): a level's FP64 matrix A
// is scaled symmetrically by Q = diag(A)/G before truncation to FP16, giving
//   Â = Q^{-1/2} A Q^{-1/2},   â_ij = G a_ij / sqrt(a_ii a_jj),
// so the diagonal becomes exactly G and no entry overflows when G < G_max, with
//   G_max = FP16_MAX / max_ij |a_ij| / sqrt(a_ii a_jj)   (over stored entries, i = j included),
// the largest entry of Q^-1/2 A Q^-1/2 computed as |a_ij| (1 / sqrt(a_ii)) (1 / sqrt(a_jj)).
// Choice of G: the largest power of two <= G_max / 2. Half of G_max leaves a factor-2 margin
// against rounding up at the top of the range; the largest such G keeps the small entries as
// far above the underflow threshold as possible (underflow is the remaining risk, §4.3); a power
// of two makes the diagonal G exact in every format.
// The solve works in the scaled unknowns û = Q^{1/2} u, f̂ = Q^{-1/2} f (the level keeps
// s = diag(Q^{1/2}) in compute precision): Gauss-Seidel and Jacobi are invariant under this
// symmetric diagonal scaling, so smoothing Â û = f̂ is smoothing A u = f.
#pragma once

#include <string>
#include <vector>

#include "core/float16.hpp"
#include "mpmg/precision.hpp"
#include "mpmg/sgdia_matrix.hpp"

namespace mpmg {

struct LevelScaling {
    bool ok = false;        ///< false: the level cannot be scaled (see `problem`)
    double g = 0.0;         ///< G
    double g_max = 0.0;     ///< G_max for the target storage range
    std::vector<double> s;  ///< s_i = sqrt(a_ii / G), one per row
    std::string problem;    ///< why not (e.g. "non-positive diagonal at row 17: -2")
};

/// How a storage decision combines what it measures when each process holds part of a level
/// (src/distributed/): `a` is then the process's rows grown by ghost cells, its own rows whole,
/// so any, min and max over its entries, taken over all processes, are those of the whole
/// level (the ghost rows' entries are entries of the level too). Counts must not see an entry
/// twice: counts() and nnz() cover each process's own rows only.
class LevelReductions {
public:
    virtual ~LevelReductions() = default;
    virtual bool any(bool local) const = 0;
    virtual double min(double local) const = 0;
    /// What truncating every entry of the level to `p` counts, each entry divided by s_i s_j
    /// when `s` (one per row of `a`) is given.
    virtual TruncationCounts counts(Precision p, const std::vector<double>* s) const = 0;
    /// The level's structural nonzeros.
    virtual std::int64_t nnz() const = 0;
};

/// Computes G_max for storage whose largest finite value is `storage_max`, chooses G and s.
/// With `dist`, G_max is the whole level's, and the level cannot be scaled when some process's
/// rows cannot (collective).
LevelScaling compute_scaling(const SgDiaMatrix<double>& a, double storage_max,
                             const LevelReductions* dist = nullptr);

/// The largest |a_ij| (1 / sqrt(a_ii)) (1 / sqrt(a_jj)) over the centre offset's entries (the
/// couplings inside each cell's r x r block), as compute_scaling measures every entry; 1 for a
/// scalar matrix without a pass (a diagonal entry's ratio is 1 up to rounding); 0 when a
/// diagonal entry is not a positive finite number. One pass over 1 / (offsets) of the values.
double centre_ratio(const SgDiaMatrix<double>& a);

/// The largest power of two <= g_max / 2: the G chosen for G_max = g_max. With g_max the
/// storage's largest value it is the largest G any level can get (min ratio 1, which the
/// diagonal entries always give). FP16: 16384, the G of every level whose entries satisfy
/// |a_ij| <= ~2 sqrt(a_ii a_jj) (every SPD level: there |a_ij| < sqrt(a_ii a_jj)).
double largest_g(double g_max);

/// s for a given G (s_i = sqrt(a_ii / G)) and G; g_max is left 0. Not ok when the diagonal is
/// not positive. The caller checks the scaled range itself: the largest |â_ij| must stay
/// <= storage_max / 2, which is G <= G_max / 2 (truncate_scaled reports it in the same pass as
/// the truncation, so the separate min-ratio pass of compute_scaling is not needed).
LevelScaling scaling_for(const SgDiaMatrix<double>& a, double g);

/// Returns Â with â_ij = a_ij / (s_i s_j).
SgDiaMatrix<double> scale_matrix(const SgDiaMatrix<double>& a, const std::vector<double>& s);
/// What truncating Â into a format with limits `lim` would count, without building Â.
TruncationCounts count_scaled_truncation(const SgDiaMatrix<double>& a, const std::vector<double>& s,
                                         const RangeLimits& lim);

}  // namespace mpmg
