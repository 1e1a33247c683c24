// `mpmg bench vs-hypre`: mpmg against hypre (PCG/GMRES + PFMG, SMG, BoomerAMG) on the same
// problems, right-hand side, tolerance and zero initial guess (DESIGN.md "Benchmark contract").
#pragma once

#include <nlohmann/json.hpp>

#include "kernels_bench.hpp"

namespace mpmg::bench {

/// Runs the benchmark, writes vs-hypre.json, vs-hypre.md and vs-hypre.png; returns the process
/// exit code: 0, 1 if no row could be measured, 2 if this build has no hypre (one clear line).
int run_vs_hypre_bench(const BenchOptions& opt);

/// The Markdown of vs-hypre.md (bench/vs_hypre_report.cpp) and the targets of issue 7 judged
/// at the largest size of every problem (doc["targets"]).
nlohmann::json vs_hypre_targets(const nlohmann::json& rows);
std::string vs_hypre_markdown(const nlohmann::json& doc);

}  // namespace mpmg::bench
