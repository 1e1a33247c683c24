// Structured coarsening (ICPP'24 §4.1 Algorithm 1 lines 1-3; PFMG-style directional steps):
// a coarse level is made by one or more directional steps, each halving one direction.
// In direction `dir`, coarse index I sits at fine index 2I+1 (nc = n/2); fine 2I+1 injects
// coarse I with weight 1, fine 2I interpolates from coarse I-1 and I with weights w_left,
// w_right (1/2 each for linear interpolation); coarse indices outside the box count as zero
// (Dirichlet). Full 2x2x2 coarsening is three steps with linear weights, which equals
// R A P with trilinear P exactly; semi-coarsening takes only the strongly coupled directions.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "mpmg/csr_matrix.hpp"
#include "mpmg/sgdia_matrix.hpp"

namespace mpmg {

struct CoarseningOptions {
    /// A direction is coarsened when its coupling strength is >= this fraction of the
    /// strongest direction's (1 = only the strongest; 0 = always full coarsening).
    double semi_threshold = 0.5;
    /// Directions with fewer fine cells than this are not coarsened.
    int min_extent = 2;
    /// Use operator-dependent interpolation weights (from the collapsed stencil) instead of 1/2.
    bool operator_dependent = false;
};

/// One directional step from `fine` to `coarse` (coarse.extent(dir) = fine.extent(dir) / 2).
struct DirectionalTransfer {
    int dir = 0;
    Box fine, coarse;
    int block = 1;
    /// Per fine cell; only entries of even-index cells along `dir` are used. Empty = 1/2.
    std::vector<double> w_left, w_right;

    /// Weight of coarse I-1 at the even fine cell `cell` (index 2I along `dir`).
    double left(std::int64_t cell) const {
        return w_left.empty() ? 0.5 : w_left[static_cast<std::size_t>(cell)];
    }
    /// Weight of coarse I at the even fine cell `cell` (index 2I along `dir`).
    double right(std::int64_t cell) const {
        return w_right.empty() ? 0.5 : w_right[static_cast<std::size_t>(cell)];
    }
};

/// The prolongation P of one level to the next, as a sequence of directional steps
/// (P = P_steps[0] * P_steps[1] * ...; restriction is R = P^T).
class Transfer {
public:
    Transfer() = default;
    /// Throws InvalidInput unless the steps chain (step i's coarse box is step i+1's fine box,
    /// same block size) and each halves its direction.
    explicit Transfer(std::vector<DirectionalTransfer> steps);
    /// First step's fine box (an empty box for a default-constructed Transfer).
    const Box& fine() const;
    /// Last step's coarse box (an empty box for a default-constructed Transfer).
    const Box& coarse() const;
    const std::vector<DirectionalTransfer>& steps() const { return steps_; }

    /// coarse = R fine, or with `scale` coarse = R (scale ⊙ fine), the product rounded to CF
    /// (a scaled level's unscaled residual). CF, CC in {double, float}; arithmetic in FP64.
    /// Vectors hold cells * block values (cell-major, component fastest). Intermediates use
    /// the mutable scratch buffers, so one Transfer must not be applied from two threads at
    /// once (each call is OpenMP-parallel inside).
    template <class CF, class CC>
    void restrict_to(const CF* fine, CC* coarse, const CF* scale = nullptr) const;
    /// Whether restrict_planes and interpolate_add_planes apply: full coarsening in x, y and z
    /// with linear weights.
    bool restricts_by_planes() const;
    /// restrict_to of a fine vector that is never stored: `plane(z, buf)` writes fine plane
    /// z's nx ny block values into buf (one plane of scratch per thread) as the restriction
    /// reaches it, in increasing z on each thread, each plane once (the one between two threads'
    /// coarse planes on both threads). The same values and operations as restrict_to, so bit for
    /// bit its result. Returns false, calling nothing, unless restricts_by_planes().
    template <class CF, class CC>
    bool restrict_planes(const std::function<void(int, CF*)>& plane, CC* coarse,
                         const CF* scale = nullptr) const;
    /// fine += P coarse, or with `scale` fine += scale ⊙ (P coarse), P coarse rounded to CF
    /// first (a scaled level's correction); same conventions as restrict_to. Full linear
    /// coarsening applies the scale inside its one pass; other transfers through a scratch
    /// vector.
    template <class CC, class CF>
    void interpolate_add(const CC* coarse, CF* fine, const CF* scale = nullptr) const;
    /// interpolate_add on the fine planes z_begin .. z_end - 1 only (the values of
    /// interpolate_add there, bit for bit), on the calling thread, which may be one of several
    /// calling it at once on other planes. Returns false, doing nothing, unless
    /// restricts_by_planes(). A smoothing sweep takes the correction plane by plane this way just
    /// before it reads each plane (gs_sweep_prepared).
    template <class CC, class CF>
    bool interpolate_add_planes(const CC* coarse, CF* fine, const CF* scale, int z_begin,
                                int z_end) const;
    /// P as an FP64 CSR matrix (rows = fine unknowns), for tests.
    CsrMatrix prolongation_csr() const;

private:
    std::vector<DirectionalTransfer> steps_;
    template <class T>
    std::vector<T>& scratch_of() const;
    mutable std::vector<double> scratch_a_, scratch_b_;  // intermediate grids of multi-step
    mutable std::vector<float> scratch_f_;               // scaled staged transfers
    mutable std::vector<double> scratch_d_;
};

struct CoarseLevel {
    SgDiaMatrix<double> a;  ///< Galerkin R A P in FP64; stencil = offsets with any nonzero
    Transfer transfer;
};

/// Coupling strength of each direction: mean |value| over the in-box entries of the offsets
/// that reach along it (0 where a direction has no in-box entries, e.g. a 1-cell-thick grid).
std::array<double, 3> direction_strengths(const SgDiaMatrix<double>& a);

/// direction_strengths() from per-offset sums of |a_ij| and entry counts, indexed by
/// Stencil::lex (27 each; zero for absent offsets), combined in offset order.
std::array<double, 3> strengths_from_sums(const double* sums, const double* counts);

/// Picks the directions to coarsen and builds the Galerkin coarse operator in FP64.
/// Strength of a direction = mean |entry| over the in-box entries (all block entries) of the
/// off-centre offsets with a nonzero component along it. Eligible directions have extent
/// >= max(min_extent, 2); those with strength >= semi_threshold * (strongest eligible) are
/// coarsened, one directional Galerkin step each, in the order x, y, z (weights for a step
/// come from the operator produced by the previous step). Returns nothing when no direction
/// is eligible.
std::optional<CoarseLevel> coarsen(const SgDiaMatrix<double>& a, const CoarseningOptions& opt);

/// The directions coarsen() takes for an operator on `box` with these direction strengths:
/// ascending, empty when none is eligible.
std::vector<int> choose_directions(const std::array<double, 3>& strength, const Box& box,
                                   const CoarseningOptions& opt);

/// The chained directional steps from `fine` along `dirs` (ascending), linear weights: each
/// halves its direction of the previous step's coarse box.
std::vector<DirectionalTransfer> linear_steps(Box fine, const std::vector<int>& dirs, int block);

/// coarsen() along the given directions (ascending, non-empty, each of extent >= 2). The
/// distributed setup (src/distributed/dist_galerkin.hpp) chooses them from the whole grid's
/// strengths and coarsens each process's part of the grid with this.
CoarseLevel coarsen_along(const SgDiaMatrix<double>& a, const std::vector<int>& dirs,
                          const CoarseningOptions& opt);

/// An SG-DIA matrix as FP64 CSR (rows in cell-major order, component fastest), for tests.
/// Columns are sorted; entries whose neighbour lies outside the box are skipped, every other
/// stored entry is kept even when it is zero, so nnz() equals SgDiaMatrix::nnz().
/// T in {double, float, half, bfloat16}.
template <class T>
CsrMatrix to_csr(const SgDiaMatrix<T>& a);

}  // namespace mpmg
