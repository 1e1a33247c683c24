// `mpmg bench scaling` (issue #8, ICPP'24 Figure 10): strong scaling of laplace27 beyond the
// cache over the ranks x threads this machine allows, for Full64 and K64P32D16, with parallel
// efficiency; and a weak-scaling MODEL to 1024 ranks built from the halo, reduction and
// agglomeration costs measured in the 2-rank runs (a model, not a measurement). With --matrix
// (and --rhs), the same strong scaling of that matrix on the AMG path (issue #8 item 5), without
// the model.
#pragma once

#include "kernels_bench.hpp"

namespace mpmg::bench {

/// Runs the benchmark (spawning `mpirun -np R mpmg solve ...`), writes scaling.json and
/// scaling.md; returns the process exit code (0; 1 if no row could be measured).
int run_scaling_bench(const BenchOptions& opt);

}  // namespace mpmg::bench
