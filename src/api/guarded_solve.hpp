// The runtime guard (DESIGN.md Safety §5) around a preconditioned Krylov solve, shared by the
// structured and the AMG path: build the preconditioner, solve, and on a non-finite value,
// breakdown or stagnation rebuild it with a wider precision plan and continue from the last
// finite iterate.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "krylov/krylov.hpp"
#include "mpmg/solver.hpp"
#include "multigrid/level.hpp"
#include "unstructured/saddle_point.hpp"

namespace mpmg {

/// Krylov products before a structured operator (serial or distributed) makes an exact FP16
/// copy of A that level 0 does not share. Ski rental: wait about as many products as the copy
/// costs in what each product saves, which depends on what the products read until then
/// (`reads`, and whether they read a symmetric A mirrored: the centre and upper offsets only).
/// Measured on laplace27 n = 128, one thread, scratch drivers: the FP16 copy costs 150-170 ms
/// (the conversion and the first touch of 113 MB). A 3d27 product costs 13-22 ms from the FP16
/// copy, so the wait is
///   - 6 products from FP64 values (38-47 ms each);
///   - 10 from FP64 mirrored (29-33 ms; until the twenty-eighth session these waited 6 too, and
///     a Full64 laplace27 solve of 9 products lost about 100 ms on the copy);
///   - about 20 from FP32 values (K = FP32; 20-25 ms);
///   - about 40 from FP32 mirrored (17-21 ms).
inline int products_before_half_copy(Precision reads, bool mirrored) {
    if (reads == Precision::fp64) return mirrored ? 10 : 6;
    return mirrored ? 40 : 20;
}

/// Products before a structured operator checks whether A is exactly symmetric (one read of A,
/// stopping at the first plane with a difference). Measured (one thread): the check costs about
/// one product (rhd n = 160 14 ms, laplace27e8 n = 128 37-40 ms, solid3d n = 56 43 ms) and each
/// later product saves 4-17 ms, so it has paid for itself 3-9 products later.
constexpr int kProductsBeforeSymmetryCheck = 1;

// A built multigrid preconditioner of either path, as the guard needs it.
class BuiltPreconditioner {
public:
    virtual ~BuiltPreconditioner() = default;
    virtual void apply(const double* r, double* z) = 0;
    virtual void apply(const float* r, float* z) = 0;
    virtual const std::vector<LevelReport>& report() const = 0;
    virtual double grid_complexity() const = 0;
    virtual double operator_complexity() const = 0;
};

template <class H>
class Built final : public BuiltPreconditioner {
public:
    template <class... Args>
    explicit Built(Args&&... args) : h_(std::forward<Args>(args)...) {}
    void apply(const double* r, double* z) override { h_.apply(r, z); }
    void apply(const float* r, float* z) override { h_.apply(r, z); }
    const std::vector<LevelReport>& report() const override { return h_.report(); }
    double grid_complexity() const override { return h_.grid_complexity(); }
    double operator_complexity() const override { return h_.operator_complexity(); }

private:
    H h_;
};

/// Builds the preconditioner for a precision plan and multigrid options (the guard's rebuilds
/// change the smoother and the interpolation).
using BuildFn = std::function<std::unique_ptr<BuiltPreconditioner>(const PrecisionPlan&,
                                                                   const MultigridOptions&)>;

/// What the guard's last rebuilds take, by path.
struct GuardFallbacks {
    /// The smoother once every level is FP64 and the solve still fails.
    SmootherKind robust = SmootherKind::jacobi;
    /// The interpolation when the robust smoother did not help either (the structured path:
    /// operator-dependent weights, for what linear interpolation coarsens badly, such as
    /// convection-dominated operators); none on the AMG path.
    std::optional<InterpolationKind> interpolation;
    /// Smoothers tried in this order, each once, when the solve stagnates or is too slow to
    /// reach rtol within max_iter, before the precision is widened: a smoother that suits the
    /// matrix is what such a solve lacks, not range (the AMG path: ILU(0), which reservoir
    /// matrices such as sherman5 need, then l1-Jacobi). One that cannot be set up (a zero
    /// pivot) is passed over.
    std::vector<SmootherKind> stagnation_smoothers;
    /// Whether the last rebuild may solve the whole A by LU (FP64), one level, with GMRES: for
    /// an A small enough that its dense factorisation costs about a second at most (serial
    /// paths: up to kAutoDirectRows rows). It comes after every other remedy, and while it is
    /// left the other runs keep kDirectIterations of max_iter for it.
    bool direct = false;
    /// The smoother of one AMG on all of A, taken first when a solve with the saddle-point
    /// blocks (MultigridOptions::saddle_point block) stagnates or is too slow (empty: no
    /// blocks to leave). SIMPLE's S = B diag(A)^-1 E can be a poor Schur complement where one
    /// AMG is a good preconditioner.
    std::optional<SmootherKind> saddle_whole = std::nullopt;
};

/// Iterations the guard keeps for a last direct solve (GuardFallbacks::direct): GMRES with
/// A's LU as the preconditioner converges in one or two (more on an ill-conditioned A, whose
/// LU is inexact).
inline constexpr int kDirectIterations = 5;

/// The structured path's fallbacks (Jacobi, operator-dependent interpolation); `rows`: A's rows
/// in a serial solve (the direct solve when small enough), 0 in a distributed one (none).
GuardFallbacks structured_fallbacks(std::int64_t rows);
/// The AMG path's (ILU(0) then l1-Jacobi for a stagnating solve, l1-Jacobi as the robust one,
/// and with `saddle_blocks` one AMG with l1-Jacobi first); `rows` as for structured_fallbacks.
GuardFallbacks amg_fallbacks(std::int64_t rows, bool saddle_blocks = false);

/// The AMG path's preconditioner of `a`: the saddle-point blocks of `split` while mg asks for
/// them (MultigridOptions::saddle_point block; the guard may leave them, saddle_whole), else
/// one hierarchy on all of `a`.
std::unique_ptr<BuiltPreconditioner> amg_preconditioner(const CsrMatrix& a,
                                                        const std::optional<SaddleSplit>& split,
                                                        const MultigridOptions& mg,
                                                        const PrecisionPlan& plan,
                                                        const AmgSettings& settings);

template <class K>
class Adapter final : public Preconditioner<K> {
public:
    explicit Adapter(BuiltPreconditioner& m) : m_(m) {}
    void apply(const K* r, K* z) override { m_.apply(r, z); }

private:
    BuiltPreconditioner& m_;
};

/// What a guarded solve leaves for the next solve of the same A (mpmg::Solver): the
/// preconditioner as last (re)built, and the settings it was built with.
struct GuardState {
    PrecisionPlan plan;
    MultigridOptions mg;
    SolverKind solver = SolverKind::cg;
    std::unique_ptr<BuiltPreconditioner> m;
};

/// Builds the preconditioner of `o` (its time into out.setup_s, its levels and complexities
/// into out).
GuardState guarded_setup(const BuildFn& build, const SolverOptions& o, SolveResult& out);

/// Solves A x = b (b in FP64) in precision K with the preconditioner of `state`; fills status,
/// iterations, history, message, guard events, levels, complexities, the setup time of the
/// guard's rebuilds, the preconditioner time, and x of `out`. x starts from zero, or from out.x
/// when `x_given` (then out.x has b's size). When FP64 everywhere still fails, the guard rebuilds
/// with the robust smoother, then (CG breaking down) goes on with GMRES, or (otherwise) with the
/// fallback interpolation, and last, for a small A, solves it whole by LU. A rebuild replaces
/// state's preconditioner and settings: a later solve starts from what worked.
template <class K>
void guarded_solve(const LinearOperator<K>& a, const std::vector<double>& b, const BuildFn& build,
                   const SolverOptions& o, const GuardFallbacks& fallbacks, GuardState& state,
                   bool x_given, SolveResult& out);

/// guarded_setup, then guarded_solve from x = 0.
template <class K>
void run_guarded(const LinearOperator<K>& a, const std::vector<double>& b, const BuildFn& build,
                 const SolverOptions& o, const GuardFallbacks& fallbacks, SolveResult& out) {
    GuardState state = guarded_setup(build, o, out);
    guarded_solve<K>(a, b, build, o, fallbacks, state, false, out);
}

}  // namespace mpmg
