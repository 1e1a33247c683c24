#include "mpmg/options.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <charconv>
#include <string>
#include <utility>
#include <vector>

#include "mpmg/errors.hpp"

namespace mpmg {
namespace {

template <class E>
using NameTable = std::vector<std::pair<E, std::string_view>>;

const NameTable<SolverKind>& solver_names() {
    static const NameTable<SolverKind> t{{SolverKind::automatic, "auto"},
                                         {SolverKind::cg, "cg"},
                                         {SolverKind::gmres, "gmres"},
                                         {SolverKind::richardson, "richardson"},
                                         {SolverKind::mg, "mg"}};
    return t;
}
const NameTable<MethodKind>& method_names() {
    static const NameTable<MethodKind> t{{MethodKind::automatic, "auto"},
                                         {MethodKind::structured, "structured"},
                                         {MethodKind::amg, "amg"}};
    return t;
}
const NameTable<CycleKind>& cycle_names() {
    static const NameTable<CycleKind> t{{CycleKind::automatic, "auto"},
                                        {CycleKind::v, "V"},
                                        {CycleKind::w, "W"},
                                        {CycleKind::f, "F"},
                                        {CycleKind::k, "K"}};
    return t;
}
const NameTable<SmootherKind>& smoother_names() {
    static const NameTable<SmootherKind> t{{SmootherKind::automatic, "auto"},
                                           {SmootherKind::symgs, "symgs"},
                                           {SmootherKind::jacobi, "jacobi"},
                                           {SmootherKind::ilu0, "ilu0"},
                                           {SmootherKind::l1_jacobi, "l1-jacobi"},
                                           {SmootherKind::chebyshev, "chebyshev"},
                                           {SmootherKind::block_jacobi, "block-jacobi"}};
    return t;
}
const NameTable<ScalingKind>& scaling_names() {
    static const NameTable<ScalingKind> t{{ScalingKind::automatic, "auto"},
                                          {ScalingKind::setup_then_scale, "setup-then-scale"},
                                          {ScalingKind::scale_then_setup, "scale-then-setup"},
                                          {ScalingKind::none, "none"}};
    return t;
}

const NameTable<InterpolationKind>& interpolation_names() {
    static const NameTable<InterpolationKind> t{
        {InterpolationKind::automatic, "auto"},
        {InterpolationKind::linear, "linear"},
        {InterpolationKind::operator_dependent, "operator"}};
    return t;
}

const NameTable<AggregationKind>& aggregation_names() {
    static const NameTable<AggregationKind> t{{AggregationKind::automatic, "auto"},
                                              {AggregationKind::pgm, "pgm"},
                                              {AggregationKind::smoothed, "smoothed"}};
    return t;
}

const NameTable<ReorderKind>& reorder_names() {
    static const NameTable<ReorderKind> t{
        {ReorderKind::automatic, "auto"}, {ReorderKind::none, "none"}, {ReorderKind::rcm, "rcm"}};
    return t;
}

const NameTable<SaddlePointKind>& saddle_point_names() {
    static const NameTable<SaddlePointKind> t{{SaddlePointKind::automatic, "auto"},
                                              {SaddlePointKind::none, "none"},
                                              {SaddlePointKind::block, "block"}};
    return t;
}

const NameTable<RowWeightsKind>& row_weights_names() {
    static const NameTable<RowWeightsKind> t{{RowWeightsKind::automatic, "auto"},
                                             {RowWeightsKind::none, "none"}};
    return t;
}

const NameTable<CoarseSolverKind>& coarse_solver_names() {
    static const NameTable<CoarseSolverKind> t{{CoarseSolverKind::automatic, "auto"},
                                               {CoarseSolverKind::direct, "direct"},
                                               {CoarseSolverKind::smoother, "smoother"}};
    return t;
}

template <class E>
std::string_view name_of(const NameTable<E>& t, E e) {
    for (const auto& [k, n] : t) {
        if (k == e) return n;
    }
    return "?";
}

template <class E>
E parse_name(const NameTable<E>& t, std::string_view s, std::string_view where) {
    std::string valid;
    for (const auto& [k, n] : t) {
        if (n == s || (n.size() == 1 && s.size() == 1 && (n[0] | 0x20) == (s[0] | 0x20))) {
            return k;
        }
        valid += fmt::format("{}{}", valid.empty() ? "" : ", ", n);
    }
    throw InvalidInput(fmt::format("{}: unknown value '{}'; valid: {}", where, s, valid));
}

}  // namespace

std::string_view to_string(SolverKind k) { return name_of(solver_names(), k); }
std::string_view to_string(MethodKind k) { return name_of(method_names(), k); }
std::string_view to_string(CycleKind k) { return name_of(cycle_names(), k); }
std::string_view to_string(SmootherKind k) { return name_of(smoother_names(), k); }
std::string_view to_string(ScalingKind k) { return name_of(scaling_names(), k); }
std::string_view to_string(InterpolationKind k) { return name_of(interpolation_names(), k); }
std::string_view to_string(AggregationKind k) { return name_of(aggregation_names(), k); }
std::string_view to_string(ReorderKind k) { return name_of(reorder_names(), k); }
std::string_view to_string(RowWeightsKind k) { return name_of(row_weights_names(), k); }
std::string_view to_string(SaddlePointKind k) { return name_of(saddle_point_names(), k); }
std::string_view to_string(CoarseSolverKind k) { return name_of(coarse_solver_names(), k); }

SolverKind parse_solver(std::string_view s, std::string_view w) {
    return parse_name(solver_names(), s, w);
}
MethodKind parse_method(std::string_view s, std::string_view w) {
    return parse_name(method_names(), s, w);
}
CycleKind parse_cycle(std::string_view s, std::string_view w) {
    return parse_name(cycle_names(), s, w);
}
SmootherKind parse_smoother(std::string_view s, std::string_view w) {
    return parse_name(smoother_names(), s, w);
}
ScalingKind parse_scaling(std::string_view s, std::string_view w) {
    return parse_name(scaling_names(), s, w);
}
InterpolationKind parse_interpolation(std::string_view s, std::string_view w) {
    return parse_name(interpolation_names(), s, w);
}
AggregationKind parse_aggregation(std::string_view s, std::string_view w) {
    return parse_name(aggregation_names(), s, w);
}
ReorderKind parse_reorder(std::string_view s, std::string_view w) {
    return parse_name(reorder_names(), s, w);
}
RowWeightsKind parse_row_weights(std::string_view s, std::string_view w) {
    return parse_name(row_weights_names(), s, w);
}
SaddlePointKind parse_saddle_point(std::string_view s, std::string_view w) {
    return parse_name(saddle_point_names(), s, w);
}
int parse_block_size(std::string_view s, std::string_view w) {
    if (s == "auto") return 0;
    int v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || v < 1 || v > kMaxBlockSize) {
        throw InvalidInput(
            fmt::format("{} '{}': expected auto or an integer in 1..{}", w, s, kMaxBlockSize));
    }
    return v;
}
std::string block_size_name(int block_size) {
    return block_size == 0 ? std::string("auto") : std::to_string(block_size);
}
CoarseSolverKind parse_coarse_solver(std::string_view s, std::string_view w) {
    return parse_name(coarse_solver_names(), s, w);
}

void validate(const SolverOptions& o) {
    const ProblemOptions& p = o.problem;
    if (p.name.empty() && p.matrix.empty()) {
        throw InvalidInput("nothing to solve: give --problem NAME or --matrix A.mtx");
    }
    validate_settings(o);
}

void validate_settings(const SolverOptions& o) {
    const auto fail = [](std::string msg) { throw InvalidInput(std::move(msg)); };
    const ProblemOptions& p = o.problem;
    if (!p.name.empty() && !p.matrix.empty()) {
        fail(
            fmt::format("--problem '{}' and --matrix '{}' contradict: give one", p.name, p.matrix));
    }
    if (!p.rhs.empty() && p.matrix.empty()) fail("--rhs needs --matrix");
    const bool grid_given = p.grid[0] != 0 || p.grid[1] != 0 || p.grid[2] != 0;
    // n^3 <= 2e9 cells, the bound --grid has too: rejected here, before anything is allocated.
    if (!grid_given && (p.n < 1 || p.n > 1259)) {
        fail(fmt::format("--n {}: must be in 1..1259 (at most 2e9 cells)", p.n));
    }
    if (grid_given) {
        for (int g : p.grid) {
            if (g < 1 || g > 1 << 20) {
                fail(fmt::format("--grid {},{},{}: every extent must be in 1..{}", p.grid[0],
                                 p.grid[1], p.grid[2], 1 << 20));
            }
        }
        const double cells = 1.0 * p.grid[0] * p.grid[1] * p.grid[2];
        if (cells > 2e9) fail(fmt::format("--grid: {:.3g} cells is more than 2e9", cells));
    }
    if (p.components < 0 || p.components > 8) {
        fail(fmt::format("--grid: {} components per cell; must be in 1..8", p.components));
    }
    const MultigridOptions& m = o.multigrid;
    if (m.pre_sweeps < 0 || m.pre_sweeps > 100 || m.post_sweeps < 0 || m.post_sweeps > 100) {
        fail("multigrid.pre_sweeps/post_sweeps must be in 0..100");
    }
    if (m.pre_sweeps + m.post_sweeps == 0) fail("multigrid: at least one smoothing sweep");
    if (!(m.jacobi_weight > 0.0 && m.jacobi_weight <= 1.0)) {
        fail(fmt::format("multigrid.jacobi_weight {}: must be in (0, 1]", m.jacobi_weight));
    }
    if (m.max_levels < 1 || m.max_levels > 64) fail("multigrid.max_levels must be in 1..64");
    if (m.max_coarse_rows < 1 || m.max_coarse_rows > 20000) {
        fail("multigrid.max_coarse_rows must be in 1..20000 (a dense LAPACK solve)");
    }
    if (m.block_size < 0 || m.block_size > kMaxBlockSize) {
        fail(fmt::format("multigrid.block_size {}: must be auto (0) or in 1..{}", m.block_size,
                         kMaxBlockSize));
    }
    if (m.coarse_sweeps < 1 || m.coarse_sweeps > 1000) {
        fail(fmt::format("multigrid.coarse_sweeps {}: must be in 1..1000", m.coarse_sweeps));
    }
    if (!(m.semi_threshold >= 0.0 && m.semi_threshold <= 1.0)) {
        fail("multigrid.semi_threshold must be in [0, 1]");
    }
    if (!(o.rtol > 0.0 && o.rtol < 1.0)) fail(fmt::format("--rtol {}: must be in (0, 1)", o.rtol));
    if (o.max_iter < 1 || o.max_iter > 1000000) {
        fail(fmt::format("--max-iter {}: must be in 1..1000000", o.max_iter));
    }
    if (o.restart < 1 || o.restart > 1000) fail("restart must be in 1..1000");
    if (o.threads < 0 || o.threads > 1024) {
        fail(fmt::format("--threads {}: must be in 0..1024", o.threads));
    }
    if (o.precision.shift_level < -1 || o.precision.shift_level > 64) {
        fail(fmt::format("--shift-level {}: must be in 0..64", o.precision.shift_level));
    }
}

}  // namespace mpmg
