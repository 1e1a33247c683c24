#include "api/guarded_solve.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

#include "core/prefault.hpp"
#include "mpmg/errors.hpp"
#include "multigrid/cycle.hpp"

namespace mpmg {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

LevelInfo to_info(const LevelReport& r) {
    LevelInfo i;
    i.grid = {r.box.nx, r.box.ny, r.box.nz};
    i.block = r.block;
    i.stencil = r.stencil;
    i.rows = r.rows;
    i.nnz = r.nnz;
    i.storage = r.storage;
    i.compute = r.compute;
    i.scaled = r.scaled;
    i.scale_g = r.scale_g;
    i.scale_g_max = r.scale_g_max;
    i.overflow_count = r.counts.overflow;
    i.underflow_count = r.counts.underflow;
    i.subnormal_count = r.counts.subnormal;
    i.upper_half = r.upper_half;
    i.matrix_bytes = r.matrix_bytes;
    i.solve = r.solve;
    i.note = r.note;
    return i;
}

/// The next safer plan for the runtime guard: first store every level in its compute
/// precision, then compute and store in FP64. Nothing when already Full64.
std::optional<PrecisionPlan> widen(const PrecisionPlan& p, int levels) {
    bool narrow_storage = p.automatic, narrow_compute = false;
    for (int l = 0; l < levels; ++l) {
        narrow_storage |= p.level(l).storage != p.level(l).compute;
        narrow_compute |= p.level(l).compute != Precision::fp64;
    }
    if (!narrow_storage && !narrow_compute) return std::nullopt;
    PrecisionPlan w;
    w.krylov = p.krylov;
    w.levels.clear();
    for (int l = 0; l < levels; ++l) {
        const Precision c = narrow_storage ? p.level(l).compute : Precision::fp64;
        w.levels.push_back(LevelPrecision{c, c});
    }
    return w;
}

KrylovResult run_solver(SolverKind kind, const auto& a, auto* m, const auto* b, auto* x,
                        const KrylovOptions& kopt) {
    switch (kind) {
        case SolverKind::gmres:
            return gmres(a, m, b, x, kopt);
        case SolverKind::richardson:
        case SolverKind::mg:
            return richardson(a, m, b, x, kopt);
        case SolverKind::cg:
        case SolverKind::automatic:  // resolved before; CG is the safe reading
            break;
    }
    return cg(a, m, b, x, kopt);
}

/// K = FP32: the recurrence of the residual goes on falling below what an FP32 x can hold
/// (laplace27 n = 24 K32P32D16: 2.6e-11 against ||b - A x|| / ||b|| = 6.0e-7 as checked here). A
/// converged solve is checked once: b - A x from K's product, subtracted and summed in FP64.
/// Above rtol it did not converge: the solve says so, with that residual, instead of claiming
/// rtol (FP64 iterations, K64, follow the true residual; not checked).
void check_fp32_residual(const LinearOperator<float>& a, const std::vector<double>& b,
                         const std::vector<float>& x, SolverKind solver, const SolverOptions& o,
                         SolveResult& out) {
    std::vector<float> ax(x.size());
    a.apply(x.data(), ax.data());
    double sums[2] = {0.0, 0.0};
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double r = b[i] - static_cast<double>(ax[i]);
        sums[0] += r * r;
        sums[1] += b[i] * b[i];
    }
    a.global_sums(sums, 2);
    const double rel = sums[1] > 0.0 ? std::sqrt(sums[0] / sums[1]) : 0.0;
    if (!(rel > o.rtol)) return;
    out.status = SolveStatus::stagnated;
    out.message = fmt::format(
        "{}: the recurrence residual reached {:.3e} <= rtol, but ||b - A x|| / ||b|| of the "
        "FP32 x is {:.3e}: iterations in K = FP32 cannot reach rtol = {:.1e}; use K64 (e.g. "
        "K64P32D16) or rtol >= {:.0e}",
        to_string(solver), out.final_relative_residual, rel, o.rtol,
        std::pow(10.0, std::ceil(std::log10(2.0 * rel))));
    out.final_relative_residual = rel;
}

/// build(plan, mg), its time added to out.setup_s.
std::unique_ptr<BuiltPreconditioner> timed_build(const BuildFn& build, const PrecisionPlan& plan,
                                                 const MultigridOptions& mg, SolveResult& out) {
    const auto t_setup = Clock::now();
    std::unique_ptr<BuiltPreconditioner> built = build(plan, mg);
    out.setup_s += seconds_since(t_setup);
    return built;
}

/// The preconditioner's levels and complexities into out.
void describe(const BuiltPreconditioner& m, SolveResult& out) {
    out.levels.clear();
    for (const auto& r : m.report()) out.levels.push_back(to_info(r));
    out.grid_complexity = m.grid_complexity();
    out.operator_complexity = m.operator_complexity();
}

}  // namespace

GuardFallbacks structured_fallbacks(std::int64_t rows) {
    return GuardFallbacks{SmootherKind::jacobi,
                          InterpolationKind::operator_dependent,
                          {},
                          rows > 0 && rows <= kAutoDirectRows};
}

GuardFallbacks amg_fallbacks(std::int64_t rows, bool saddle_blocks) {
    GuardFallbacks f{SmootherKind::l1_jacobi,
                     {},
                     {SmootherKind::ilu0, SmootherKind::l1_jacobi},
                     rows > 0 && rows <= kAutoDirectRows};
    if (saddle_blocks) f.saddle_whole = SmootherKind::l1_jacobi;
    return f;
}

std::unique_ptr<BuiltPreconditioner> amg_preconditioner(const CsrMatrix& a,
                                                        const std::optional<SaddleSplit>& split,
                                                        const MultigridOptions& mg,
                                                        const PrecisionPlan& plan,
                                                        const AmgSettings& settings) {
    if (split && mg.saddle_point == SaddlePointKind::block) {
        return std::make_unique<Built<SaddlePointPreconditioner>>(a, *split, mg, plan, settings);
    }
    return std::make_unique<Built<AmgHierarchy>>(a, mg, plan, settings);
}

GuardState guarded_setup(const BuildFn& build, const SolverOptions& o, SolveResult& out) {
    GuardState s{o.precision, o.multigrid, o.solver, nullptr};
    s.m = timed_build(build, s.plan, s.mg, out);
    describe(*s.m, out);
    return s;
}

/// Solves, and on non-finite values, breakdown or stagnation rebuilds with a wider plan and
/// continues from the last finite iterate (DESIGN.md Safety §5).
template <class K>
void guarded_solve(const LinearOperator<K>& a, const std::vector<double>& b_in,
                   const BuildFn& build, const SolverOptions& o, const GuardFallbacks& fallbacks,
                   GuardState& state, bool x_given, SolveResult& out) {
    // K = FP64 iterates on b_in and in out.x themselves; K = FP32 on rounded copies. (A copy
    // of b and one of x would be two more passes, and in a fresh process two more vectors'
    // first touches: about 4 ms per MiB on the Zen 5 VM.)
    std::vector<K> b_own, x_own;
    const K* b = nullptr;
    K* x = nullptr;
    if constexpr (std::is_same_v<K, double>) {
        b = b_in.data();
        if (!x_given) assign_prefaulted(out.x, b_in.size(), 0.0);
        x = out.x.data();
    } else {
        b_own.assign(b_in.begin(), b_in.end());
        if (x_given) {
            x_own.assign(out.x.begin(), out.x.end());
        } else {
            assign_prefaulted(x_own, b_in.size(), K{0});
        }
        b = b_own.data();
        x = x_own.data();
    }
    PrecisionPlan& plan = state.plan;
    MultigridOptions& mg = state.mg;
    SolverKind& solver = state.solver;
    std::unique_ptr<BuiltPreconditioner>& m = state.m;
    int used = 0, last_run = 0;  // iterations in all, and in the last run
    std::vector<K> x_start;      // where the current run started
    std::string last_went_back;  // whether, and why, the last run handed back where it started
    // GMRES stops a run that is too slow for max_iter only while the guard has something else
    // to try; after that it spends the iterations left on the hierarchy it has.
    bool slow_rule = o.guard;
    std::vector<SmootherKind> tried{mg.smoother};
    const auto untried_smoother = [&]() -> std::optional<SmootherKind> {
        for (const SmootherKind s : fallbacks.stagnation_smoothers) {
            if (std::find(tried.begin(), tried.end(), s) == tried.end()) return s;
        }
        return std::nullopt;
    };
    // The last remedy for a small A: one level, solved by its LU. Not when the hierarchy is that
    // already (an A of at most max_coarse_rows rows is one LU level from the start).
    const auto one_lu_level = [&] {
        const auto& levels = m->report();
        return levels.size() == 1 && levels.front().solve.starts_with("direct");
    };
    bool direct_left = o.guard && fallbacks.direct && !one_lu_level();
    for (bool first = true;; first = false) {
        describe(*m, out);

        // While the direct solve is left, each run leaves it kDirectIterations of max_iter
        // (unless max_iter is too small to share).
        const int kept =
            direct_left && o.max_iter - used >= 4 * kDirectIterations ? kDirectIterations : 0;
        // The iterate this run starts from (with the guard): a run that ends unconverged with a
        // larger residual than it started from hands it back, so that neither the next run nor
        // the caller goes on from something worse (CG diverging on a singular A, GMRES after a
        // breakdown). A first run from zero needs no copy (in a fresh process a vector's first
        // touch costs about 4 ms per MiB here).
        const bool from_zero = first && !x_given;
        if (o.guard && !from_zero) x_start.assign(x, x + b_in.size());
        Adapter<K> pre(*m);
        const KrylovOptions kopt{o.rtol,    o.max_iter - used - kept, o.restart, first && !x_given,
                                 slow_rule, mg.cycle == CycleKind::k};
        KrylovResult kr = run_solver(solver, a, &pre, b, x, kopt);
        out.preconditioner_s += kr.preconditioner_seconds;
        const double started =
            kr.history.empty() ? std::numeric_limits<double>::quiet_NaN() : kr.history.front();
        last_went_back.clear();
        if (o.guard && kr.status != SolveStatus::converged && started < kr.relative_residual) {
            if (from_zero) {
                std::fill(x, x + b_in.size(), K{0});
            } else {
                std::copy(x_start.begin(), x_start.end(), x);
            }
            last_went_back = fmt::format(
                "; x is the iterate this run started from, whose relative residual {:.3e} is "
                "below the run's last {:.3e}",
                started, kr.relative_residual);
            kr.message += last_went_back;
            kr.relative_residual = started;
        }
        if (!first && !kr.history.empty()) kr.history.erase(kr.history.begin());
        out.residual_history.insert(out.residual_history.end(), kr.history.begin(),
                                    kr.history.end());
        used += kr.iterations;
        last_run = kr.iterations;
        out.status = kr.status;
        out.iterations = used;
        out.final_relative_residual = kr.relative_residual;
        // The solvers number this run's iterations from 1; after a rebuild, say where it began.
        out.message =
            used > last_run && !kr.message.empty()
                ? fmt::format("{} (iterations counted from the rebuild after iteration {})",
                              kr.message, used - last_run)
                : kr.message;
        const bool trouble = kr.status == SolveStatus::non_finite ||
                             kr.status == SolveStatus::breakdown ||
                             kr.status == SolveStatus::stagnated;
        // The run spent all but the kept iterations: they are the direct solve's.
        const bool out_of_turns = kr.status == SolveStatus::max_iterations && kept > 0;
        if ((!trouble && !out_of_turns) || !o.guard || used >= o.max_iter) break;
        // First widen the precision; once everything is FP64, take the robust smoother (an
        // SPD A whose V-cycle is not SPD). A CG breakdown ((r, z) <= 0 or (p, A p) <= 0) after
        // that says A itself is not symmetric positive definite (symmetric indefinite: a
        // shifted Laplacian, Helmholtz), which GMRES does not need: it goes on with the
        // hierarchy as first built. Last, or first for a stagnating restart cycle, the
        // fallback interpolation (structured path).
        const bool cg_breakdown = solver == SolverKind::cg && kr.status == SolveStatus::breakdown;
        const auto to_gmres = [&] {
            solver = SolverKind::gmres;
            plan = o.precision;
            mg.smoother = o.multigrid.smoother;
            return fmt::format(
                "precision {} and smoother {} as first built, switched to GMRES (CG needs A and "
                "the preconditioner symmetric positive definite),",
                plan.notation(), to_string(mg.smoother));
        };
        const auto to_interpolation = [&] {
            mg.interpolation = *fallbacks.interpolation;
            return fmt::format("precision {}, smoother {} and {} interpolation", plan.notation(),
                               to_string(mg.smoother), to_string(mg.interpolation));
        };
        const bool interpolation_left =
            fallbacks.interpolation && mg.interpolation != *fallbacks.interpolation;
        const auto to_smoother = [&](SmootherKind s) {
            mg.smoother = s;
            tried.push_back(s);
            return fmt::format("smoother {}", to_string(s));
        };
        const auto to_direct = [&] {
            direct_left = false;
            mg.max_levels = 1;
            mg.coarse_solver = CoarseSolverKind::direct;
            solver = SolverKind::gmres;
            return std::string(
                "one level, A itself factorised by LU in FP64 (the last remedy for a matrix this "
                "small), under GMRES,");
        };
        std::string action;
        bool smoother_step = false;  // a failed setup of this rebuild moves to the next one
        bool direct_step = false;    // a failed setup of this rebuild goes back to the last one
        const PrecisionPlan plan_before = plan;
        const MultigridOptions mg_before = mg;
        const SolverKind solver_before = solver;
        if (out_of_turns) {
            out.message = fmt::format(
                "{}: relative residual {:.3e} > rtol = {:.1e} after iteration {}, the last of "
                "max_iter = {} but {} kept for a direct solve",
                to_string(solver), kr.relative_residual, o.rtol, used, o.max_iter, kept);
            action = to_direct();
            direct_step = true;
        } else if (kr.status == SolveStatus::stagnated && fallbacks.saddle_whole &&
                   mg.saddle_point == SaddlePointKind::block) {
            mg.saddle_point = SaddlePointKind::none;
            mg.smoother = *fallbacks.saddle_whole;
            tried.push_back(mg.smoother);
            action =
                fmt::format("one AMG on all of A instead of the saddle-point blocks, smoother {}",
                            to_string(mg.smoother));
        } else if (kr.status == SolveStatus::stagnated && interpolation_left) {
            // A whole restart cycle without progress is the coarse levels', not the storage
            // precision's (that shows as Inf/NaN): linear interpolation of a convection-
            // dominated operator gives a coarse correction that undoes the smoothing
            // (BentPipe2D100 on --grid stagnated at 0.87 through every other rebuild).
            action = to_interpolation();
        } else if (const auto next =
                       kr.status == SolveStatus::stagnated ? untried_smoother() : std::nullopt) {
            action = to_smoother(*next);
            smoother_step = true;
        } else if (const auto wider = widen(plan, static_cast<int>(m->report().size()))) {
            plan = *wider;
            action = fmt::format("precision {}", plan.notation());
        } else if (mg.smoother != fallbacks.robust) {
            mg.smoother = fallbacks.robust;
            action = fmt::format("smoother {}", to_string(mg.smoother));
        } else if (cg_breakdown) {
            action = to_gmres();
        } else if (interpolation_left) {  // neither precision nor the smoother helped
            plan = o.precision;
            mg.smoother = o.multigrid.smoother;
            action = to_interpolation();
        } else if (direct_left) {  // nothing else helped
            action = to_direct();
            direct_step = true;
        } else if (kr.too_slow) {
            // Nothing left to try: the iterations left are best spent where it was going.
            slow_rule = false;
            out.guard_events.push_back(fmt::format(
                "{}; nothing left to try, so it went on with the hierarchy it has", out.message));
            continue;
        } else {
            break;
        }
        // A rebuild that cannot be set up (the robust smoother on a zero diagonal entry) is
        // skipped for GMRES where a CG breakdown calls for it, else ends the solve with this
        // run's result and says why, instead of replacing the result with that error.
        // The direct solve's A is small: the hierarchy that ran is kept until its LU stands, to
        // go on with it when A has no LU (a singular A).
        std::unique_ptr<BuiltPreconditioner> ran = direct_step ? std::move(m) : nullptr;
        m.reset();
        std::string failed;
        bool restored = false;
        for (;;) {
            try {
                m = timed_build(build, plan, mg, out);
                break;
            } catch (const NumericalError& e) {
                failed +=
                    fmt::format("rebuilding the hierarchy with {} failed ({}); ", action, e.what());
                if (direct_step) {
                    plan = plan_before;
                    mg = mg_before;
                    solver = solver_before;
                    m = std::move(ran);
                    slow_rule = false;
                    restored = true;
                    break;
                }
                if (smoother_step) {
                    if (const auto next = untried_smoother()) {
                        action = to_smoother(*next);
                        continue;
                    }
                }
                if (smoother_step || kr.too_slow) {
                    // Nothing else to set up for a solve that was progressing: back to the
                    // hierarchy that ran, without the slow rule (sherman3 on --grid 35,11,13
                    // was slow, and its operator interpolation has a singular coarsest LU).
                    plan = plan_before;
                    mg = mg_before;
                    slow_rule = false;
                    smoother_step = false;
                    action = "the settings that ran";
                    continue;
                }
                if (!cg_breakdown || solver == SolverKind::gmres) break;
                action = to_gmres();
            }
        }
        if (restored) {  // the direct solve could not be set up; m is the hierarchy that ran
            out.guard_events.push_back(
                fmt::format("{}; {}went on with the hierarchy that ran", out.message, failed));
            continue;
        }
        if (!m) {
            out.guard_events.push_back(
                fmt::format("{}; {}so the solve stops here", out.message, failed));
            out.message =
                fmt::format("{} (the guard's {}so the solve stops here)", out.message, failed);
            break;
        }
        out.guard_events.push_back(fmt::format(
            "{}; {}rebuilt the hierarchy with {} and continued from {}", out.message, failed,
            action, last_went_back.empty() ? "the last finite iterate" : "that iterate"));
    }
    if constexpr (std::is_same_v<K, float>) {
        if (out.status == SolveStatus::converged) {
            check_fp32_residual(a, b_in, x_own, solver, o, out);
        }
        out.x.assign(x_own.begin(), x_own.end());
    }
    out.converged = out.status == SolveStatus::converged;
    if (out.status == SolveStatus::max_iterations && used > last_run) {
        // The last run's own limit was what the rebuilds had left of max_iter.
        out.message = fmt::format(
            "{}: reached max_iter = {} with relative residual {:.3e} > rtol = {:.3e} (the last {} "
            "iterations after the guard's rebuild){}",
            to_string(solver), o.max_iter, out.final_relative_residual, o.rtol, last_run,
            last_went_back);
    }
}

template void guarded_solve<double>(const LinearOperator<double>&, const std::vector<double>&,
                                    const BuildFn&, const SolverOptions&, const GuardFallbacks&,
                                    GuardState&, bool, SolveResult&);
template void guarded_solve<float>(const LinearOperator<float>&, const std::vector<double>&,
                                   const BuildFn&, const SolverOptions&, const GuardFallbacks&,
                                   GuardState&, bool, SolveResult&);

}  // namespace mpmg
