// `mpmg bench amg`: the three-precision CSR AMG study of FGCS'23 (Table 3, §4.3, Figures 12-13)
// on the Matrix Market files of the shared data folder.
#pragma once

#include "kernels_bench.hpp"  // BenchOptions

namespace mpmg::bench {

/// Runs the benchmark, writes DIR/amg.json, DIR/amg.md, DIR/amg.png and DIR/amg_heatmap.png;
/// returns the process exit code (0; 1 when the data folder is missing).
int run_amg_bench(const BenchOptions& opt);

}  // namespace mpmg::bench
