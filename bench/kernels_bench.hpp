// `mpmg bench kernels`: the SG-DIA kernel ablation (ICPP'24 Figure 7) against STREAM.
#pragma once

#include <string>
#include <vector>

namespace mpmg::bench {

struct BenchOptions {
    bool quick = false;                 ///< small sizes, 3 repetitions (CI smoke test)
    std::string out = ".";              ///< directory for NAME.json, NAME.md and the PNG figures
    int threads = 2;                    ///< measure 1 and this many OpenMP threads
    std::string bench_dir;              ///< where the plot_*.py scripts live
    std::vector<std::string> problems;  ///< e2e: run only these problems of the suite (empty: all)
    std::string matrix, rhs;            ///< scaling: a Matrix Market A (and b) instead of laplace27
};

/// Runs the benchmark, writes the files; returns the process exit code (0).
int run_kernels_bench(const BenchOptions& opt);

}  // namespace mpmg::bench
