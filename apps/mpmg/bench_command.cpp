// mpmg bench NAME [--quick] [--out DIR] [--threads T] [--problems P,Q] [--llc MIB]
// [--matrix A.mtx [--rhs b.mtx]] (DESIGN.md
// "Benchmark contract"). Implemented: kernels, e2e, amg, vs-hypre, scaling (bench/*_bench.cpp).
#include <fmt/format.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "amg_bench.hpp"
#include "bench_util.hpp"
#include "commands.hpp"
#include "e2e_bench.hpp"
#include "kernels_bench.hpp"
#include "scaling_bench.hpp"
#include "vs_hypre_bench.hpp"

#include "mpmg_paths.hpp"

namespace mpmg::cli {

std::function<int()> add_bench(CLI::App& app) {
    struct Args {
        std::string name, out = ".";
        bool quick = false;
        int threads = 2;
        std::vector<std::string> problems;
        int llc_mib = 0;
        std::string matrix, rhs;
    };
    auto a = std::make_shared<Args>();
    CLI::App* cmd = app.add_subcommand("bench", "run a benchmark, write NAME.json, NAME.md, PNG");
    cmd->add_option("name", a->name, "benchmark: kernels, e2e, amg, vs-hypre, scaling")->required();
    cmd->add_flag("--quick", a->quick, "small sizes, a few seconds (CI smoke test)");
    cmd->add_option("--out", a->out, "output directory (default: current)");
    cmd->add_option("--threads", a->threads, "measure 1 and T OpenMP threads (default 2)")
        ->check(CLI::Range(1, 1024));
    cmd->add_option("--problems", a->problems,
                    "e2e: only these problems of the suite, comma-separated (default: all)")
        ->delimiter(',');
    cmd->add_option("--llc", a->llc_mib,
                    "last-level cache in MiB that sizes the problems (default: sysfs, else "
                    "measured)")
        ->check(CLI::Range(1, 1 << 20));
    cmd->add_option("--matrix", a->matrix,
                    "scaling: this Matrix Market A on the AMG path instead of laplace27")
        ->check(CLI::ExistingFile);
    cmd->add_option("--rhs", a->rhs, "scaling: b for --matrix (default b = A*1)")
        ->check(CLI::ExistingFile);
    return [a]() {
        bench::BenchOptions opt;  // the common options of every benchmark
        opt.quick = a->quick;
        opt.out = a->out;
        opt.threads = a->threads;
        opt.problems = a->problems;
        opt.matrix = a->matrix;
        opt.rhs = a->rhs;
        if ((!a->matrix.empty() || !a->rhs.empty()) && a->name != "scaling") {
            fmt::print(stderr, "mpmg bench {}: --matrix and --rhs are options of bench scaling\n",
                       a->name);
            return 2;
        }
        if (!a->rhs.empty() && a->matrix.empty()) {
            fmt::print(stderr, "mpmg bench scaling: --rhs {} needs --matrix\n", a->rhs);
            return 2;
        }
        if (a->llc_mib > 0) bench::set_llc(std::int64_t{a->llc_mib} << 20);
        opt.bench_dir = MPMG_BENCH_DIR;
        // One line per benchmark: name -> runner taking the common options.
        const std::map<std::string, int (*)(const bench::BenchOptions&)> benchmarks{
            {"amg", &bench::run_amg_bench},         {"e2e", &bench::run_e2e_bench},
            {"kernels", &bench::run_kernels_bench}, {"vs-hypre", &bench::run_vs_hypre_bench},
            {"scaling", &bench::run_scaling_bench},
        };
        const auto it = benchmarks.find(a->name);
        if (it == benchmarks.end()) {
            std::string names;
            for (const auto& [n, f] : benchmarks) names += (names.empty() ? "" : ", ") + n;
            fmt::print(stderr, "mpmg: unknown benchmark '{}'; available: {}\n", a->name, names);
            return 2;
        }
        return it->second(opt);
    };
}

}  // namespace mpmg::cli
