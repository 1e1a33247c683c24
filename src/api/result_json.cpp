#include <nlohmann/json.hpp>

#include <cmath>

#include "mpmg/solver.hpp"

namespace mpmg {
namespace {

using json = nlohmann::json;

// JSON has no Inf/NaN: such a number is written as null (a result never holds one, but a
// residual history of a failed run may).
json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json level_json(const LevelInfo& l) {
    return json{{"grid", l.grid},
                {"block", l.block},
                {"stencil", l.stencil},
                {"rows", l.rows},
                {"nnz", l.nnz},
                {"storage_precision", to_string(l.storage)},
                {"compute_precision", to_string(l.compute)},
                {"scaled", l.scaled},
                {"scale_G", l.scaled && l.scale_g > 0.0 ? json(l.scale_g) : json(nullptr)},
                {"scale_G_max", l.scale_g_max > 0.0 ? json(l.scale_g_max) : json(nullptr)},
                {"overflow_count", l.overflow_count},
                {"underflow_count", l.underflow_count},
                {"subnormal_count", l.subnormal_count},
                {"matrix_bytes", l.matrix_bytes},
                {"solve", l.solve},
                {"note", l.note},
                {"reads_upper_half", l.upper_half}};
}

json partition_json(const std::optional<PartitionInfo>& p) {
    if (!p) return nullptr;
    json boxes = json::array();
    for (const auto& b : p->boxes) {
        boxes.push_back(json{{"lo", {b[0], b[1], b[2]}}, {"extent", {b[3], b[4], b[5]}}});
    }
    return json{{"ranks", p->ranks},
                {"threads_per_rank", p->threads_per_rank},
                {"dims", p->dims},
                {"boxes", boxes},
                {"distributed_levels", p->distributed_levels},
                {"level_ranks", p->level_ranks},
                {"smoother", p->smoother},
                {"comm",
                 {{"halo_s", p->halo_s},
                  {"halo_exchanges", p->halo_exchanges},
                  {"halo_values_sent", p->halo_values},
                  {"reduce_s", p->reduce_s},
                  {"reductions", p->reductions},
                  {"agglomerate_s", p->agglomerate_s},
                  {"agglomerations", p->agglomerations},
                  {"agglomerated_cycles_s", p->tail_s}}},
                {"setup", p->setup},
                {"input", p->input}};
}

json hierarchy_json(const std::vector<LevelInfo>& levels_in, double grid_complexity,
                    double operator_complexity, const std::string& reordered, int block_size,
                    const std::string& block_size_reason) {
    json levels = json::array();
    for (const auto& l : levels_in) levels.push_back(level_json(l));
    return json{{"levels", levels},
                {"grid_complexity", grid_complexity},
                {"operator_complexity", operator_complexity},
                {"reordered", reordered.empty() ? json(nullptr) : json(reordered)},
                {"block_size", block_size > 0 ? json(block_size) : json(nullptr)},
                {"block_size_reason", block_size > 0 ? json(block_size_reason) : json(nullptr)}};
}

}  // namespace

json to_json(const SetupResult& r) {
    return json{{"rows", r.rows},
                {"nnz", r.nnz},
                {"config", to_json(r.options)},
                {"precision_notation", r.options.precision.notation()},
                {"negated", r.negated},
                {"auto_reason", r.auto_reason.empty() ? json(nullptr) : json(r.auto_reason)},
                {"reused_aggregates", r.reused_aggregates},
                {"input_scale_exponents", {{"a", r.a_exponent}}},
                {"input_scale_flushed", {{"a", r.a_flushed}}},
                {"time_s", {{"setup", r.setup_s}}},
                {"hierarchy", hierarchy_json(r.levels, r.grid_complexity, r.operator_complexity,
                                             r.reordered, r.block_size, r.block_size_reason)},
                {"partition", partition_json(r.partition)}};
}

json to_json(const SolveResult& r) {
    json history = json::array();
    for (double v : r.residual_history) history.push_back(number(v));
    return json{{"problem", r.problem},
                {"rows", r.rows},
                {"nnz", r.nnz},
                {"config", to_json(r.options)},
                {"precision_notation", r.options.precision.notation()},
                {"converged", r.converged},
                {"status", to_string(r.status)},
                {"message", r.message},
                {"negated", r.negated},
                {"auto_reason", r.auto_reason.empty() ? json(nullptr) : json(r.auto_reason)},
                {"input_scale_exponents", {{"a", r.a_exponent}, {"b", r.b_exponent}}},
                {"input_scale_flushed", {{"a", r.a_flushed}, {"b", r.b_flushed}}},
                {"guard_events", r.guard_events},
                {"iterations", r.iterations},
                {"final_relative_residual", number(r.final_relative_residual)},
                {"residual_history", history},
                {"time_s",
                 {{"setup", r.setup_s},
                  {"preconditioner", r.preconditioner_s},
                  {"other", r.other_s},
                  {"total", r.total_s}}},
                {"krylov_operator_storage", to_string(r.operator_storage)},
                {"krylov_operator_storage_from_product", r.operator_storage_from},
                {"krylov_operator_scale", r.operator_scale},
                {"krylov_operator_mirrored_from_product", r.operator_mirrored_from},
                {"hierarchy", hierarchy_json(r.levels, r.grid_complexity, r.operator_complexity,
                                             r.reordered, r.block_size, r.block_size_reason)},
                {"error_vs_exact", r.error_vs_exact ? number(*r.error_vs_exact) : json(nullptr)},
                {"partition", partition_json(r.partition)}};
}

}  // namespace mpmg
