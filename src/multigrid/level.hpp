// One multigrid level, type-erased over its (storage S, compute C) pair. make_level() is the one
// place that maps a runtime LevelPrecision onto the template LevelImpl<S, C> (STYLE.md: one
// dispatch point, at setup; one virtual call per level operation, never per element).
//
// A level keeps f (right-hand side) and u (solution) in C. When the level is scaled
// (setup-then-scale, ICPP'24 §4.2) they hold the scaled variables f̂ = f / s, û = s u, with
// s = diag(Q^{1/2}); the conversions happen at the level's interfaces (restriction,
// correction, the preconditioner's input and output), so the V-cycle and the smoothers work on
// Â û = f̂ exactly as on A u = f (recover-and-rescale on the fly, at vector level).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/float16.hpp"
#include "mpmg/options.hpp"
#include "mpmg/precision.hpp"
#include "mpmg/sgdia_matrix.hpp"
#include "structured/coarsen.hpp"
#include "structured/sgdia_view.hpp"

namespace mpmg {

/// What setup did to one level (DESIGN.md Safety §3; echoed in the JSON "hierarchy").
struct LevelReport {
    Box box;
    int block = 1;
    std::string stencil;
    std::int64_t rows = 0;
    std::int64_t nnz = 0;
    Precision storage = Precision::fp64;
    Precision compute = Precision::fp64;
    bool scaled = false;
    double scale_g = 0.0;      ///< G (0 when not scaled)
    double scale_g_max = 0.0;  ///< G_max for the storage range (0 when not computed)
    TruncationCounts counts;   ///< of the truncation to `storage`
    std::int64_t matrix_bytes = 0;
    std::string solve;  ///< "smoother" or "direct (LU)" or "smoother sweeps"
    std::string note;   ///< a fallback or decision, with its reason
    /// The level's matrix is exactly symmetric and its sweeps, residuals and products read the
    /// centre and the offsets after it only (SgDiaView::mirror_lower).
    bool upper_half = false;
};

/// The coupling of a distributed level's rows to the cells other processes own (issue #8): the
/// entries of the operator that the level's local matrix leaves out. Serial levels have none.
/// The distributed hierarchy implements it with a halo exchange (distributed/dist_ops.hpp).
class LevelBoundary {
public:
    virtual ~LevelBoundary() = default;
    /// y -= G u_ghost, u_ghost the neighbours' current values of u (collective: exchanges u's
    /// halo). u and y are the level's local vectors.
    virtual void subtract(const double* u, double* y) = 0;
    virtual void subtract(const float* u, float* y) = 0;
    /// The local cells whose rows have coupling entries.
    virtual const std::vector<std::int64_t>& rows() const = 0;
    /// The largest of every process's `local` (collective), for a level whose right-hand side
    /// scale must be the same on all processes (the AMG level's underflow guard).
    virtual double global_max(double local) { return local; }
    /// Where this process's box lies when the level is a z-split: every process's box spans the
    /// whole grid in x and y and at least 2 planes in z, so its only neighbours lie below and
    /// above it. Then the level's Gauss-Seidel sweeps are exact in a permuted order (level.cpp).
    enum class ZSplit { none, bottom, above };
    virtual ZSplit z_split() const { return ZSplit::none; }
};

/// A level's matrix in FP16 without rounding: A = scale x m, value by value (scale 1 when FP16
/// holds A itself; multigrid/truncate.hpp exact_multiple).
struct ExactHalf {
    std::shared_ptr<const SgDiaMatrix<half>> m;  ///< null: FP16 holds no such multiple of A
    double scale = 1.0;
    HalfFacts facts;  ///< m's subnormal count and range, found while it was made
    /// m equals its transpose bit for bit, checked once when it was made (false: it does not, or
    /// nobody checked): a level that reads m then reads its upper half without a check of its
    /// own (LevelReport::upper_half).
    bool symmetric = false;
};

/// Makes or returns the ExactHalf of a level's matrix (the Krylov operator's copy of A).
using ExactHalfSource = std::function<ExactHalf()>;

/// A pointer to `m` that owns nothing (LevelSetup::shared_fp64 of a matrix that outlives the
/// level, such as the caller's A).
inline std::shared_ptr<const SgDiaMatrix<double>> not_owned(const SgDiaMatrix<double>& m) {
    return {std::shared_ptr<const void>(), &m};
}

/// The data a level is built from.
struct LevelSetup {
    const SgDiaMatrix<double>* source = nullptr;  ///< the level's FP64 operator (not owned)
    /// An FP64 operator the setup owns, when `owns`: a process's block of the level's operator
    /// (distributed levels).
    SgDiaMatrix<double> owned;
    bool owns = false;
    /// The FP64 operator to build from: scaled already under scale-then-setup (level 0 keeps `s`
    /// for the vectors only), else `s`, when set, applies inside the truncations.
    const SgDiaMatrix<double>& matrix() const {
        if (!owns && source == nullptr) throw std::logic_error("LevelSetup: no FP64 operator");
        return owns ? owned : *source;
    }
    std::vector<double> s;  ///< diag(Q^{1/2}); empty: unscaled
    /// Setup-then-scale without the FP64 Â: matrix() is A and the level truncates
    /// Q^{-1/2} A Q^{-1/2}, scaling each value inside the truncation (truncate_scaled).
    bool scale_in_truncation = false;
    /// False for level 0 of scale-then-setup: the whole hierarchy lives in the scaled
    /// variables, so s applies only at the preconditioner's input and output.
    bool scale_transfers = true;
    /// Gives the level's matrix in FP16 if FP16 holds it exactly (equal to
    /// truncate<half>(matrix())), else null: the Krylov operator's exact copy of A
    /// (api/solve.cpp). A level that stores FP16 unscaled asks for it and shares it instead of
    /// truncating a second copy (a copy with a scale other than 1 is not A's: it is
    /// `shared_half`'s); empty: no such source.
    ExactHalfSource exact_half;
    /// A / c held exactly in FP16 (the Krylov operator's copy, scale c): the level stores it
    /// as it is, scaled by the scalar Q = c I (s = sqrt(c) on every row), without rounding a
    /// value. Set by level_setup for a level 0 whose A is such a multiple (Laplace's stencil
    /// times 1/h^2 or a material constant); null: not so.
    ExactHalf shared_half;
    /// The level's FP64 operator itself, for a level that stores it unscaled in FP64: the level
    /// holds this pointer (shared ownership, or none where the owner outlives the level, as the
    /// caller's A for level 0) instead of copying the matrix. Null: the level copies.
    std::shared_ptr<const SgDiaMatrix<double>> shared_fp64;
    /// The level's FP64 operator as a window of a process's rows with a margin (sgdia_view.hpp:
    /// its entries to cells outside its box are not zero; dist_hierarchy.cpp), in place of
    /// shared_fp64 and matrix(). A level that stores it unscaled in FP64, with
    /// shared_fp64_normal, r = 1 and the symgs or jacobi smoother reads it in place through the
    /// SG-DIA operations (the rows must outlive the level); a level that stores it unscaled in
    /// a narrower format truncates it (only the entries inside the box) while make_level runs.
    /// Not for ILU(0), the coarsest level or a scaled level. Unset: not so.
    std::optional<SgDiaView<double>> fp64_view;
    /// Every value of shared_fp64 is zero or a normal FP64 number, as the solve's input pass
    /// found for A (StructuredProblem::a_normal): its truncation counts are zero without the
    /// counting pass (a full read of A that an FP64 level 0 would otherwise make).
    bool shared_fp64_normal = false;
    /// The level's FP16 storage matrix already truncated (scaled) by the storage decision, with
    /// its counts (StorageDecision::truncated); null: the level truncates. Set only together
    /// with scale_in_truncation.
    std::shared_ptr<const SgDiaMatrix<half>> truncated;
    TruncationCounts truncated_counts;
    LevelPrecision precision;             ///< storage as finally decided
    const Transfer* to_coarse = nullptr;  ///< transfer to the next level (null on the coarsest)
    SmootherKind smoother = SmootherKind::symgs;
    double jacobi_weight = 0.8;
    /// A distributed level's coupling to other processes (null: serial, the whole grid). The
    /// matrix is then this process's block. Gauss-Seidel is exact in a permuted order on a
    /// z-split (LevelBoundary::z_split), else hybrid: inside the block as on a serial level,
    /// across its faces with the neighbours' values from before the sweep.
    std::shared_ptr<LevelBoundary> boundary;
    /// The first cell of the level's matrix in the level's whole grid: (0, 0, 0) serially, the
    /// process's block corner on a distributed level (for messages that name a cell).
    std::array<int, 3> origin{0, 0, 0};
};

class Level {
public:
    virtual ~Level() = default;
    virtual Precision compute() const = 0;
    virtual std::int64_t rows() const = 0;

    /// f̂ = r / s, û = 0 (the preconditioner's input at level 0).
    virtual void set_rhs(const double* r) = 0;
    virtual void set_rhs(const float* r) = 0;
    /// z = û / s (the preconditioner's output at level 0).
    virtual void get_solution(double* z) const = 0;
    virtual void get_solution(float* z) const = 0;

    /// `sweeps` smoothing steps on û: pre = forward Gauss-Seidel, post = backward.
    virtual void smooth(int sweeps, bool pre) = 0;
    /// coarse.f̂ = R (f - A u) in the coarse level's variables; coarse.û = 0.
    virtual void restrict_residual(Level& coarse) = 0;
    /// u += P coarse.u (the coarse level's û is consumed).
    virtual void correct_from(Level& coarse) = 0;
    /// correct_from(coarse), then smooth(sweeps, false): the cycle's way up. A level may do
    /// both in one pass (the correction taken plane by plane inside the first sweep).
    virtual void correct_and_smooth(Level& coarse, int sweeps) {
        correct_from(coarse);
        smooth(sweeps, false);
    }
    /// r = f - A u in unscaled variables, in FP64 (a distributed level's transfer reads it).
    virtual void residual_unscaled(std::vector<double>& r) = 0;
    /// û += s ⊙ e, e an unscaled correction of this level's size in FP64.
    virtual void add_correction(const std::vector<double>& e) = 0;
    /// For a level whose variables are unscaled (s = 1 at its transfers): r = f - A u left in
    /// the level's own vector (compute() precision, rows() × block values), which a distributed
    /// transfer then reads in place instead of residual_unscaled's FP64 copy. Null where the
    /// level scales: use residual_unscaled.
    virtual const void* residual_in_place() { return nullptr; }
    /// For such a level: û itself (compute() precision), for a distributed transfer to add an
    /// unscaled correction into, each value rounded as add_correction rounds it. Null where the
    /// level scales: use add_correction.
    virtual void* correction_in_place() { return nullptr; }
    /// Coarsest level: û = A^{-1} f̂ (dense LU in FP64).
    virtual void direct_solve() = 0;
    /// K-cycle: û ≈ Â^{-1} f̂ by up to two Krylov steps, each preconditioned by `cycle` (one
    /// cycle from this level on f̂ from û = 0). Levels without the Krylov step run `cycle` once.
    virtual void k_correction(const std::function<void()>& cycle) { cycle(); }

    /// Raw access for cross-level transfers (data in compute()).
    virtual void* rhs_data() = 0;
    virtual void* solution_data() = 0;
    /// After rhs_data() was written with unscaled values: scale them and zero û.
    virtual void finish_rhs() = 0;
    /// Converts û to unscaled u in place (before a finer level interpolates it).
    virtual void unscale_solution() = 0;
};

/// Builds the level for setup.precision (throws Unsupported naming `index` for an unsupported
/// pair); truncates the matrix into the storage precision and returns the counts in `report`.
/// `direct` builds a dense LU of the FP64 matrix for direct_solve().
std::unique_ptr<Level> make_level(int index, const LevelSetup& setup, bool direct,
                                  LevelReport& report);

}  // namespace mpmg
