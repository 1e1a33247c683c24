// The one options tree of mpmg. Every field has an in-class default; the JSON mapping
// (options_from_json / to_json) uses the same names, one-to-one with the struct paths
// ("multigrid.smoother"), and the CLI overwrites the same tree after --config. validate()
// covers both. Unknown keys and wrong types are errors naming the JSON path.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "mpmg/precision.hpp"

namespace mpmg {

enum class SolverKind { automatic, cg, gmres, richardson, mg };
enum class MethodKind { automatic, structured, amg };
/// Multigrid cycle. K (AMG path): the coarse correction to every second level (not a directly
/// solved one) is up to two steps of a Krylov method on that level preconditioned by its own
/// K-cycle, the second only when the first did not reduce the residual enough (Notay and
/// Vassilevski, "Recursive Krylov-based multigrid cycles", NLAA 2008). auto: V on the structured
/// path; on the AMG path K for A of at least kKCycleRows rows whose diagonal spreads at most
/// kKCycleMaxSpread (multigrid/cycle.hpp), else V.
enum class CycleKind { automatic, v, w, f, k };
enum class SmootherKind { automatic, symgs, jacobi, ilu0, l1_jacobi, chebyshev, block_jacobi };
enum class ScalingKind { automatic, setup_then_scale, scale_then_setup, none };
/// Structured interpolation weights: 1/2 (linear), or from the operator's collapsed stencil
/// (follows coefficient jumps; ICPP'24 §4.1 lists both).
enum class InterpolationKind { automatic, linear, operator_dependent };
/// AMG coarsening: Ginkgo's PGM pairwise aggregation with piecewise-constant transfers
/// (FGCS'23 §4.2), or smoothed aggregation (Vaněk, Mandel, Brezina 1996) on PGM aggregates.
enum class AggregationKind { automatic, pgm, smoothed };
/// AMG path: renumber the unknowns before setup (reverse Cuthill-McKee) or keep the file's order.
enum class ReorderKind { automatic, none, rcm };
/// AMG path: build a nonsymmetric A's hierarchy on W A, W its estimated left near-null row
/// weights (unstructured/row_weights.hpp), where they balance its equations better than
/// constants (auto), or always on A (none).
enum class RowWeightsKind { automatic, none };
/// AMG path, A with zero diagonal entries (a saddle point [[A_uu, B^T], [B, C]]): one AMG on
/// the whole matrix (none), or a block preconditioner with an AMG on A_uu and one on
/// B diag(A_uu)^-1 B^T - C (block; unstructured/saddle_point.hpp); auto: block when A's rows
/// split so (saddle_split).
enum class SaddlePointKind { automatic, none, block };
/// The coarsest level's solve: dense LU (FP64, LAPACK) or symmetric smoothing sweeps.
enum class CoarseSolverKind { automatic, direct, smoother };

std::string_view to_string(SolverKind k);
std::string_view to_string(MethodKind k);
std::string_view to_string(CycleKind k);
std::string_view to_string(SmootherKind k);
std::string_view to_string(ScalingKind k);
std::string_view to_string(InterpolationKind k);
std::string_view to_string(AggregationKind k);
std::string_view to_string(ReorderKind k);
std::string_view to_string(CoarseSolverKind k);
std::string_view to_string(RowWeightsKind k);
std::string_view to_string(SaddlePointKind k);

/// Parse a choice by name; throws InvalidInput naming `where` and listing the valid names.
SolverKind parse_solver(std::string_view s, std::string_view where);
MethodKind parse_method(std::string_view s, std::string_view where);
CycleKind parse_cycle(std::string_view s, std::string_view where);
SmootherKind parse_smoother(std::string_view s, std::string_view where);
ScalingKind parse_scaling(std::string_view s, std::string_view where);
InterpolationKind parse_interpolation(std::string_view s, std::string_view where);
AggregationKind parse_aggregation(std::string_view s, std::string_view where);
ReorderKind parse_reorder(std::string_view s, std::string_view where);
CoarseSolverKind parse_coarse_solver(std::string_view s, std::string_view where);
RowWeightsKind parse_row_weights(std::string_view s, std::string_view where);
SaddlePointKind parse_saddle_point(std::string_view s, std::string_view where);
/// "auto" (0) or an integer 1..kMaxBlockSize: MultigridOptions::block_size.
int parse_block_size(std::string_view s, std::string_view where);
/// "auto" for 0, else the number.
std::string block_size_name(int block_size);

/// The largest number of unknowns per node the AMG path aggregates by (--block-size).
inline constexpr int kMaxBlockSize = 64;

/// What to solve: a built-in problem or a Matrix Market file.
struct ProblemOptions {
    std::string name;  ///< built-in problem (e.g. "laplace27"); empty when `matrix` is set
    int n = 32;        ///< cells per direction of a built-in problem (grid n^3)
    std::array<int, 3> grid{0, 0, 0};  ///< explicit grid; overrides n when nonzero
    int components = 0;                ///< r of --grid NX,NY,NZ,R (0: not given)
    std::uint64_t seed = 1;            ///< seed of randomised problems
    std::string matrix;                ///< path of A (Matrix Market)
    std::string rhs;                   ///< path of b (Matrix Market); empty: b = A * 1
};

struct MultigridOptions {
    CycleKind cycle = CycleKind::automatic;
    /// auto: the problem's own (built-in problems: whichever of SymGS and ILU(0) solved it
    /// faster, docs/problems.md; files: SymGS, ICPP'24 §6)
    SmootherKind smoother = SmootherKind::automatic;
    int pre_sweeps = 1;                            ///< nu_1
    int post_sweeps = 1;                           ///< nu_2
    double jacobi_weight = 0.8;                    ///< omega of weighted Jacobi, in (0, 1]
    ScalingKind scaling = ScalingKind::automatic;  ///< auto = setup-then-scale (ICPP'24 §4.1)
    /// auto: the problem's own (operator-dependent for jump7, linear for the other built-ins and
    /// files; docs/problems.md). Structured path only.
    InterpolationKind interpolation = InterpolationKind::automatic;
    /// auto: PGM (the paper's). AMG path only.
    AggregationKind aggregation = AggregationKind::automatic;
    /// auto: the given order (RCM costs more setup than it saves in one solve on the mfem
    /// matrices; README "AMG"). rcm: reverse Cuthill-McKee before setup. AMG path only.
    ReorderKind reorder = ReorderKind::automatic;
    /// auto: weight the rows of a nonsymmetric A whose equations do not share one scale
    /// (README "AMG"). AMG path only.
    RowWeightsKind row_weights = RowWeightsKind::automatic;
    /// auto: the block preconditioner for A whose zero-diagonal rows make it a saddle point
    /// (README "AMG"). AMG path, one process.
    SaddlePointKind saddle_point = SaddlePointKind::automatic;
    /// Unknowns per node of a system of PDEs numbered node by node (AMG path): nodes are
    /// aggregated and P keeps each component apart (unstructured/nodes.hpp). 0 (auto): read
    /// from A's pattern; 1: scalar aggregation.
    int block_size = 0;
    int max_levels = 20;        ///< including the finest
    int max_coarse_rows = 512;  ///< direct (LAPACK) solve once a level has at most this many rows
    /// auto: LU when the coarsest level has <= 4096 rows (max_levels or a stalling coarsening can
    /// leave it larger), else coarse_sweeps symmetric sweeps. direct: LU up to 20000 rows (an
    /// error beyond). smoother: always coarse_sweeps symmetric sweeps (FGCS'23 §4.2.3 uses 2).
    CoarseSolverKind coarse_solver = CoarseSolverKind::automatic;
    int coarse_sweeps = 20;  ///< symmetric sweeps (forward + backward) of a smoothed coarsest level
    double semi_threshold = 0.5;  ///< coarsen directions with strength >= this * strongest
    /// A level whose values overflow its storage precision is stored in its compute precision
    /// instead (DESIGN.md Safety §4). false only for the ablation study: the overflowed level
    /// is kept, and the runtime guard must catch what it does.
    bool setup_fallback = true;
};

struct SolverOptions {
    ProblemOptions problem;
    MultigridOptions multigrid;
    /// Default "auto" (issue 6): per-level storage chosen from the values.
    PrecisionPlan precision = parse_precision("auto");
    MethodKind method = MethodKind::automatic;
    /// auto: the problem's own (CG for the SPD built-ins and symmetric files, else GMRES).
    SolverKind solver = SolverKind::automatic;
    double rtol = 1e-10;  ///< relative residual ||b - A x|| / ||b||
    int max_iter = 200;   ///< Krylov iterations (preconditioner applications)
    int restart = 30;     ///< GMRES restart length
    int threads = 0;      ///< OpenMP threads; 0 = OpenMP's default
    /// Runtime guard (DESIGN.md Safety §5): when the preconditioned solve meets a non-finite
    /// value, breakdown or stagnation, rebuild the hierarchy with wider storage (then wider
    /// compute) and continue from the last finite iterate. false: stop with the reason.
    bool guard = true;
};

/// Throws InvalidInput for any out-of-range or contradictory value, naming the option.
void validate(const SolverOptions& o);
/// validate() without asking for a problem to solve (mpmg::Solver takes its matrix from
/// setup()): a built-in problem, file or grid given is still checked.
void validate_settings(const SolverOptions& o);

/// Reads a config (JSON object) over `base`: only keys present change. Throws InvalidInput
/// naming the JSON path for unknown keys and wrong types.
SolverOptions options_from_json(const nlohmann::json& j, SolverOptions base = {});
/// The resolved options as JSON (the same paths options_from_json reads).
nlohmann::json to_json(const SolverOptions& o);

}  // namespace mpmg
