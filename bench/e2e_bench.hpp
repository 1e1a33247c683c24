// `mpmg bench e2e`: end-to-end solves of the problem suite in Full64, K64P32D32, K64P32D16
// (setup-then-scale), the scaling ablation of K64P32D16 (none, scale-then-setup) and `auto`
// (ICPP'24 §7.1 Figure 6 and §7.3 Figures 8/9).
#pragma once

#include "kernels_bench.hpp"

namespace mpmg::bench {

/// Runs the benchmark, writes e2e.json, e2e.md, e2e_residuals.png and e2e_times.png; returns
/// the process exit code (0; 1 if no row could be measured).
int run_e2e_bench(const BenchOptions& opt);

}  // namespace mpmg::bench
