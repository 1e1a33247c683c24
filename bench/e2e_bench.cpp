// End-to-end benchmark (DESIGN.md "Benchmark contract", ICPP'24 §7.1 Figure 6, §7.3 Figures 8/9).
//
// Every problem of the suite is solved in-process with mpmg::solve (the solver chosen by the
// problem: SolverOptions::solver = auto) in six configurations: Full64 (K64P64D64), K64P32D32,
// K64P32D16 with setup-then-scale, the scaling ablation of K64P32D16 (no scaling and
// scale-then-setup, both with multigrid.setup_fallback = false so that an overflowing level is
// kept and the runtime guard has to repair what it does), and `auto`. Sizes: the smallest cube
// whose FP16 finest matrix (n^3 cells x stencil x r^2 x 2 bytes) exceeds kCacheFactor (4) x the
// last-level cache, as `bench kernels` sizes its grids, capped per problem (the cap is reported).
// Times are medians of the repetitions, which are interleaved over the configurations (round
// robin); the speedups divide the Full64 median of the same problem by this configuration's
// median.
#include "e2e_bench.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <sys/resource.h>

#include "bench_util.hpp"
#include "io/problems.hpp"
#include "mpmg/options.hpp"
#include "mpmg/solver.hpp"

namespace mpmg::bench {
namespace {

using nlohmann::json;

struct ProblemSpec {
    const char* name;
    /// Largest n measured: keeps one Full64 solve within ~30 s with 1 thread on the 2-core AMD
    /// EPYC development machine (32 MiB L3). Full64 at 1x its LLC there (1 thread, idle): oil
    /// n=134 30 s (132 its), oil4c n=54 12 s (60), solid3d n=42 7 s (66), weather n=96 6 s
    /// (13), rhd3t n=65 3 s (16), rhd n=134 2 s (11).
    int max_n;
};

constexpr ProblemSpec kSuite[] = {
    {"laplace27", 128}, {"laplace27e8", 128}, {"rhd", 160},  {"oil", 140},
    {"weather", 128},   {"rhd3t", 80},        {"oil4c", 64}, {"solid3d", 56},
};

struct Config {
    const char* label;      ///< unique name of the configuration (legend, table)
    const char* precision;  ///< the `config` field: a precision notation or "auto"
    ScalingKind scaling;
    bool setup_fallback;
};

constexpr Config kConfigs[] = {
    {"Full64", "K64P64D64", ScalingKind::setup_then_scale, true},
    {"K64P32D32", "K64P32D32", ScalingKind::setup_then_scale, true},
    {"K64P32D16", "K64P32D16", ScalingKind::setup_then_scale, true},
    {"K64P32D16-none", "K64P32D16", ScalingKind::none, false},
    {"K64P32D16-scale-setup", "K64P32D16", ScalingKind::scale_then_setup, false},
    {"auto", "auto", ScalingKind::automatic, true},
};

std::string config_name(const Config& c) {
    return std::string(c.precision) == "K64P64D64" ? "Full64" : c.precision;
}

/// Smallest cube edge whose FP16 finest matrix exceeds kCacheFactor x `llc` bytes.
int cache_edge(std::int64_t llc, std::int64_t bytes_per_cell) {
    const std::int64_t target = kCacheFactor * llc;
    int n = static_cast<int>(
        std::cbrt(static_cast<double>(target) / static_cast<double>(bytes_per_cell)));
    while (static_cast<std::int64_t>(n) * n * n * bytes_per_cell <= target) ++n;
    return n;
}

/// A guard event caused by a non-finite (NaN/Inf) value rather than breakdown or stagnation.
bool is_non_finite(const std::string& e) {
    std::string s = e;
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    for (const char* w :
         {"not finite", "non-finite", "overflow", "= inf", "= -inf", "= nan", "= -nan"}) {
        if (s.find(w) != std::string::npos) return true;
    }
    return false;
}

json num_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

double geomean(const std::vector<double>& v) {
    if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
    double s = 0.0;
    for (double x : v) s += std::log(x);
    return std::exp(s / static_cast<double>(v.size()));
}

/// One configuration's runs on one problem so far.
struct Runs {
    const Config* c = nullptr;
    SolverOptions o;
    std::vector<double> setup, pre, other, total;
    std::vector<long> faults;  ///< minor page faults of each run (fresh memory touched)
    std::optional<SolveResult> first;
    std::string error;  ///< the failure that stopped its runs, else empty
};

/// The row of DESIGN.md's contract for one configuration's runs (speedups filled later).
json row_of(const std::string& problem, int n, const Runs& runs, int reps, int threads) {
    const Config& c = *runs.c;
    json row = {{"problem", problem},
                {"n", n},
                {"config", config_name(c)},
                {"label", c.label},
                {"scaling", std::string(to_string(c.scaling))},
                {"setup_fallback", c.setup_fallback},
                {"threads", threads},
                {"repetitions", reps},
                {"page_faults", runs.faults}};
    if (!runs.error.empty()) {
        row.update({{"iterations", nullptr},
                    {"converged", false},
                    {"status", "error"},
                    {"error", runs.error},
                    {"setup_s", nullptr},
                    {"preconditioner_s", nullptr},
                    {"other_s", nullptr},
                    {"total_s", nullptr},
                    {"guard_events", json::array()},
                    {"nan_inf_met", false},
                    {"levels", nullptr},
                    {"level0_storage", nullptr},
                    {"residual_history", json::array()}});
        return row;
    }
    const SolveResult& res = *runs.first;
    bool nan_inf = res.status == SolveStatus::non_finite;
    for (const auto& e : res.guard_events) nan_inf |= is_non_finite(e);
    json hist = json::array();
    for (double h : res.residual_history) hist.push_back(num_or_null(h));
    row.update(
        {{"iterations", res.iterations},
         {"converged", res.converged},
         {"status", std::string(to_string(res.status))},
         {"final_relative_residual", num_or_null(res.final_relative_residual)},
         {"setup_s", median(runs.setup)},
         {"preconditioner_s", median(runs.pre)},
         {"other_s", median(runs.other)},
         {"total_s", median(runs.total)},
         {"total_s_runs", runs.total},
         {"guard_events", res.guard_events},
         {"nan_inf_met", nan_inf},
         {"nan_inf_repaired", nan_inf && res.converged},
         {"message", res.message},
         {"levels", res.levels.size()},
         {"level0_storage",
          res.levels.empty() ? json(nullptr) : json(std::string(to_string(res.levels[0].storage)))},
         {"level0_scaled", !res.levels.empty() && res.levels[0].scaled},
         {"rows", res.rows},
         {"nnz", res.nnz},
         {"residual_history", hist}});
    return row;
}

/// Minor page faults of the process so far (first touches of fresh memory: on a VM they cost
/// about as much as the memory traffic of a solve, so the progress lines show them).
long minor_faults() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

/// Every configuration of kConfigs on one problem, `reps` times each, the repetitions
/// interleaved (round robin: repetition r of every configuration before repetition r + 1), so
/// that a slow phase of a noisy machine falls on all configurations alike instead of on the one
/// that happened to run then. One row per configuration, in kConfigs' order.
std::vector<json> measure_all(const std::string& problem, int n, int reps, int threads) {
    std::vector<Runs> all;
    for (const Config& c : kConfigs) {
        Runs& runs = all.emplace_back();
        runs.c = &c;
        runs.o.problem.name = problem;
        runs.o.problem.n = n;
        runs.o.precision = parse_precision(c.precision);
        runs.o.multigrid.scaling = c.scaling;
        runs.o.multigrid.setup_fallback = c.setup_fallback;
        runs.o.threads = threads;
    }
    // One untimed Full64 solve first (the largest hierarchy): the heap grows to this problem's
    // size here, not inside the first timed repetition. Without it the first Full64 run took
    // the fresh pages' faults (oil n = 140: 290k faults, 7.6 s against 5.2 s of preconditioner),
    // and runs in which they recurred (heap fragmentation) inflated Full64's median and every
    // speedup with it.
    if (reps > 1) {
        try {
            const long faults_before = minor_faults();
            const SolveResult res = solve(all.front().o);
            fmt::print(stderr, "    {:<22} warm-up (untimed): {:7.2f} s; {} page faults\n",
                       all.front().c->label, res.total_s, minor_faults() - faults_before);
        } catch (const std::exception&) {
            // the timed runs report it
        }
    }
    for (int r = 0; r < reps; ++r) {
        for (Runs& runs : all) {
            if (!runs.error.empty()) continue;
            try {
                const long faults_before = minor_faults();
                SolveResult res = solve(runs.o);
                const long faults = minor_faults() - faults_before;
                fmt::print(stderr,
                           "    {:<22} rep {}/{}: {:>3} its{} {:7.2f} s (setup {:.2f}, pre {:.2f}; "
                           "{} page faults)\n",
                           runs.c->label, r + 1, reps, res.iterations,
                           res.converged ? "" : " (NOT converged)", res.total_s, res.setup_s,
                           res.preconditioner_s, faults);
                runs.setup.push_back(res.setup_s);
                runs.pre.push_back(res.preconditioner_s);
                runs.other.push_back(res.other_s);
                runs.total.push_back(res.total_s);
                runs.faults.push_back(faults);
                if (!runs.first) {
                    res.x.clear();
                    runs.first = std::move(res);
                }
            } catch (const std::exception& e) {
                fmt::print(stderr, "    {:<22} failed: {}\n", runs.c->label, e.what());
                runs.error = e.what();
            }
        }
    }
    std::vector<json> rows;
    for (const Runs& runs : all) rows.push_back(row_of(problem, n, runs, reps, threads));
    return rows;
}

/// Fills the speedups of the rows of one problem over its Full64: preconditioner_speedup,
/// e2e_speedup (whole totals, every setup counted) and e2e_speedup_setup_overhead, the paper's
/// end to end (ICPP'24 §7.3, Figures 8/9: "the sum of setup overhead, MG preconditioner and
/// other", the setup counted only where it exceeds Full64's): Full64's setup time taken off
/// both totals, (T_full - S_full) / (T - S_full).
void add_speedups(std::vector<json>& rows) {
    const json* base = nullptr;
    for (const json& r : rows) {
        if (r["label"] == "Full64") base = &r;
    }
    for (json& r : rows) {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        double sp = nan, se = nan, so = nan;
        if (base != nullptr && !(*base)["total_s"].is_null() && !r["total_s"].is_null()) {
            const double t_full = (*base)["total_s"].get<double>();
            const double s_full = (*base)["setup_s"].get<double>();
            const double t = r["total_s"].get<double>();
            sp = (*base)["preconditioner_s"].get<double>() / r["preconditioner_s"].get<double>();
            se = t_full / t;
            if (t - s_full > 0) so = (t_full - s_full) / (t - s_full);
        }
        r["preconditioner_speedup"] = num_or_null(sp);
        r["e2e_speedup"] = num_or_null(se);
        r["e2e_speedup_setup_overhead"] = num_or_null(so);
    }
}

std::string cell(const json& v, const char* f) {
    if (v.is_null()) return "-";
    return fmt::format(fmt::runtime(f), v.get<double>());
}

std::string guard_cell(const json& r) {
    const auto& ev = r["guard_events"];
    if (r.contains("error")) return "setup error";
    if (ev.empty()) return "-";
    return fmt::format("{} rebuild{}{}", ev.size(), ev.size() == 1 ? "" : "s",
                       r["nan_inf_met"].get<bool>()
                           ? (r["converged"].get<bool>() ? ", NaN/Inf repaired" : ", NaN/Inf")
                           : "");
}

std::string markdown(const json& doc) {
    const json& m = doc["machine"];
    std::string s = fmt::format(
        "CPU: {}; {} thread(s); STREAM triad {:.1f} GB/s; LLC {} MiB ({}); median of {} run(s), "
        "interleaved over the configurations; "
        "rtol 1e-10, solver chosen by the problem (CG / GMRES), V(1,1) SymGS.\n\n",
        m["cpu"].get<std::string>(), m["threads"].get<int>(), m["stream_triad_gbs"].get<double>(),
        m["llc_bytes"].get<std::int64_t>() >> 20, m["llc_source"].get<std::string>(),
        doc["repetitions"].get<int>());
    const std::string cores = describe_cores(m.value("core_speeds", json::array()));
    std::string pinned;
    for (const json& p : doc["problems"]) {
        if (p.contains("cpu") && !p["cpu"].is_null()) {
            pinned += fmt::format("{}{} cpu {}", pinned.empty() ? "" : ", ",
                                  p["problem"].get<std::string>(), p["cpu"].get<int>());
        }
    }
    if (!cores.empty()) {
        s += fmt::format(
            "Each core alone, pinned: {}. Each problem runs pinned to the core whose triad in "
            "cache was fastest when it started: {}.\n\n",
            cores, pinned.empty() ? std::string("none") : pinned);
    }
    for (const json& p : doc["problems"]) {
        if (p["capped"].get<bool>()) {
            s += fmt::format(
                "- {}: n = {} (capped; the FP16 finest matrix is {:.1f} MiB, {:.2f}x the LLC; "
                "n = {} would exceed it)\n",
                p["problem"].get<std::string>(), p["n"].get<int>(),
                p["fp16_matrix_bytes"].get<double>() / (1 << 20),
                p["fp16_matrix_bytes"].get<double>() / m["llc_bytes"].get<double>(),
                p["n_cache"].get<int>());
        }
    }
    s += "\n| problem | n | config | scaling | its | conv | setup s | precond s | other s | "
         "total s | precond speedup | e2e speedup | e2e, setup overhead | levels | L0 storage | "
         "guard |\n";
    s += "|---|---:|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n";
    for (const json& r : doc["rows"]) {
        s += fmt::format(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r["problem"].get<std::string>(), r["n"].get<int>(), r["config"].get<std::string>(),
            r["scaling"].get<std::string>(),
            r["iterations"].is_null() ? "-" : std::to_string(r["iterations"].get<int>()),
            r["converged"].get<bool>() ? "yes" : "**no**", cell(r["setup_s"], "{:.3f}"),
            cell(r["preconditioner_s"], "{:.3f}"), cell(r["other_s"], "{:.3f}"),
            cell(r["total_s"], "{:.3f}"), cell(r["preconditioner_speedup"], "{:.2f}x"),
            cell(r["e2e_speedup"], "{:.2f}x"), cell(r["e2e_speedup_setup_overhead"], "{:.2f}x"),
            r["levels"].is_null() ? "-" : std::to_string(r["levels"].get<int>()),
            r["level0_storage"].is_null() ? "-" : r["level0_storage"].get<std::string>(),
            guard_cell(r));
    }
    const json& sm = doc["summary"];
    s += fmt::format(
        "\nK64P32D16 (setup-then-scale) over Full64 on {} problem(s): geometric mean "
        "preconditioner speedup {}, end-to-end speedup {} (every setup counted; {} counting only "
        "the setup beyond Full64's, as ICPP'24 §7.3 does); max iterations ratio "
        "K64P32D16 / Full64 {} ({}); NaN/Inf in default runs (Full64, K64P32D32, K64P32D16, "
        "auto): {}.\n",
        sm["problems"].get<int>(), cell(sm["geomean_preconditioner_speedup"], "{:.2f}x"),
        cell(sm["geomean_e2e_speedup"], "{:.2f}x"),
        cell(sm["geomean_e2e_speedup_setup_overhead"], "{:.2f}x"),
        cell(sm["max_iterations_ratio"], "{:.2f}"),
        sm["max_iterations_ratio_problem"].get<std::string>(),
        sm["nan_inf_in_default_runs"].get<int>() == 0
            ? std::string("none")
            : fmt::format("{} run(s)", sm["nan_inf_in_default_runs"].get<int>()));
    if (sm.contains("auto_vs_fastest") && !sm["auto_vs_fastest"].empty()) {
        std::vector<std::string> parts;
        for (const json& a : sm["auto_vs_fastest"]) {
            parts.push_back(fmt::format("{} {:.2f} ({})", a["problem"].get<std::string>(),
                                        a["ratio"].get<double>(), a["fastest"].get<std::string>()));
        }
        s += fmt::format(
            "\nauto total time / fastest other converged configuration, ablation rows left out "
            "(target <= 1.10): {}; "
            "max {:.2f}.\n",
            fmt::join(parts, ", "), sm["max_auto_vs_fastest"].get<double>());
    }
    return s;
}

json summary(const std::vector<json>& rows) {
    std::vector<double> sp, se, so;
    double max_ratio = std::numeric_limits<double>::quiet_NaN();
    std::string max_problem = "-";
    int nan_default = 0;
    std::map<std::string, const json*> full;
    for (const json& r : rows) {
        if (r["label"] == "Full64") full[r["problem"].get<std::string>()] = &r;
    }
    for (const json& r : rows) {
        const std::string lab = r["label"].get<std::string>();
        const bool is_default =
            lab == "Full64" || lab == "K64P32D32" || lab == "K64P32D16" || lab == "auto";
        if (is_default && (r["nan_inf_met"].get<bool>() || r.contains("error"))) ++nan_default;
        if (lab != "K64P32D16") continue;
        if (!r["preconditioner_speedup"].is_null()) {
            sp.push_back(r["preconditioner_speedup"].get<double>());
            se.push_back(r["e2e_speedup"].get<double>());
            if (!r["e2e_speedup_setup_overhead"].is_null()) {
                so.push_back(r["e2e_speedup_setup_overhead"].get<double>());
            }
        }
        const auto f = full.find(r["problem"].get<std::string>());
        if (f != full.end() && !r["iterations"].is_null() &&
            !(*f->second)["iterations"].is_null()) {
            const double q = r["iterations"].get<double>() /
                             std::max(1.0, (*f->second)["iterations"].get<double>());
            if (!(q <= max_ratio)) {
                max_ratio = q;
                max_problem = r["problem"].get<std::string>();
            }
        }
    }
    // Issue 6's target: auto's total time against the fastest converged configuration a user
    // can pick (the ablation rows keep overflowing levels, which no option allows).
    const auto user_config = [](const std::string& label) {
        for (const Config& c : kConfigs) {
            if (label == c.label) return c.setup_fallback;
        }
        return false;
    };
    std::map<std::string, double> fastest, automatic;
    std::map<std::string, std::string> fastest_label;
    for (const json& r : rows) {
        if (!r["converged"].get<bool>() || r["total_s"].is_null()) continue;
        const std::string prob = r["problem"].get<std::string>();
        const double t = r["total_s"].get<double>();
        if (r["label"] == "auto") {
            automatic[prob] = t;
        } else if (user_config(r["label"].get<std::string>()) &&
                   (!fastest.count(prob) || t < fastest[prob])) {
            fastest[prob] = t;
            fastest_label[prob] = r["label"].get<std::string>();
        }
    }
    json auto_vs = json::array();
    double worst = 0.0;
    for (const auto& [prob, t] : automatic) {
        if (!fastest.count(prob)) continue;
        const double q = t / fastest[prob];
        worst = std::max(worst, q);
        auto_vs.push_back({{"problem", prob}, {"ratio", q}, {"fastest", fastest_label[prob]}});
    }
    return {{"problems", sp.size()},
            {"auto_vs_fastest", auto_vs},
            {"max_auto_vs_fastest", auto_vs.empty() ? json(nullptr) : json(worst)},
            {"geomean_preconditioner_speedup", num_or_null(geomean(sp))},
            {"geomean_e2e_speedup", num_or_null(geomean(se))},
            {"geomean_e2e_speedup_setup_overhead",
             num_or_null(so.size() == sp.size() ? geomean(so)
                                                : std::numeric_limits<double>::quiet_NaN())},
            {"max_iterations_ratio", num_or_null(max_ratio)},
            {"max_iterations_ratio_problem", max_problem},
            {"nan_inf_in_default_runs", nan_default}};
}

void plot(const BenchOptions& opt, const std::filesystem::path& json_path) {
    namespace fs = std::filesystem;
    const fs::path script = fs::path(opt.bench_dir) / "plot_e2e.py";
    const std::string cmd =
        fmt::format("/usr/bin/python3 '{}' '{}' '{}' '{}' >&2", script.string(), json_path.string(),
                    (fs::path(opt.out) / "e2e_residuals.png").string(),
                    (fs::path(opt.out) / "e2e_times.png").string());
    if (!fs::exists(script) || std::system(cmd.c_str()) != 0) {
        fmt::print(stderr,
                   "  note: e2e_residuals.png / e2e_times.png not written (needs /usr/bin/python3 "
                   "with matplotlib and {}); JSON and Markdown are complete\n",
                   script.string());
    } else {
        fmt::print(stderr, "  wrote e2e_residuals.png and e2e_times.png\n");
    }
}

}  // namespace

int run_e2e_bench(const BenchOptions& opt) {
    std::vector<ProblemSpec> suite(std::begin(kSuite), std::end(kSuite));
    if (opt.quick) suite = {{"laplace27", 16}, {"laplace27e8", 16}, {"rhd3t", 16}};
    if (!opt.problems.empty()) {  // --problems: the named ones, in the suite's order
        for (const std::string& name : opt.problems) {
            if (std::none_of(suite.begin(), suite.end(),
                             [&](const ProblemSpec& p) { return p.name == name; })) {
                std::string names;
                for (const ProblemSpec& p : suite)
                    names += (names.empty() ? "" : ", ") + std::string(p.name);
                fmt::print(stderr, "mpmg bench e2e: --problems: '{}' is not in the {}suite ({})\n",
                           name, opt.quick ? "quick " : "", names);
                return 2;
            }
        }
        std::erase_if(suite, [&](const ProblemSpec& p) {
            return std::find(opt.problems.begin(), opt.problems.end(), p.name) ==
                   opt.problems.end();
        });
    }
    const std::int64_t llc = llc_bytes();
    const int reps = opt.quick ? 1 : 3;
    const int threads = opt.threads;
    fmt::print(stderr, "bench e2e: LLC {} MiB ({}), threads {}, {} repetition(s){}\n", llc >> 20,
               llc_size().source, threads, reps, opt.quick ? " (quick)" : "");
    const std::int64_t stream_n = opt.quick ? (std::int64_t{1} << 20) : 4 * llc / 8 * 2;
    // One thread runs pinned, each problem on the core that is fastest when it starts (a probe
    // of each core's triad in cache): the cores of a VM need not be alike (on the 2-core Zen 5
    // VM one ran everything 1.6x slower, and which one changed within minutes), and a thread
    // that the scheduler moved between them mid-problem would compare configurations run at
    // different speeds.
    const bool pin_one = threads == 1;
    // The record: each of the first kRecordedCpus cores alone (STREAM takes about a second a
    // core); the per-problem choice below probes every core's triad in cache.
    constexpr std::size_t kRecordedCpus = 8;
    const std::vector<CoreSpeed> speeds =
        pin_one ? core_speeds(stream_n, opt.quick ? 3 : 10, kRecordedCpus)
                : std::vector<CoreSpeed>{};
    if (!speeds.empty()) {
        fmt::print(stderr, "  each core alone: {}\n", describe_cores(core_speeds_json(speeds)));
    }
    const int start_cpu = fastest_cpu(speeds);
    std::optional<PinToCpu> pin;
    if (pin_one) pin.emplace(start_cpu);
    const double stream = stream_triad_gbs(threads, stream_n, opt.quick ? 3 : 10);
    fmt::print(stderr, "  STREAM triad, {} thread(s){}: {:.1f} GB/s\n", threads,
               pin && pin->pinned() ? fmt::format(" on cpu {}", start_cpu) : "", stream);

    {  // warm-up, untimed: OpenMP thread pool, first-touch of the allocator
        SolverOptions w;
        w.problem.name = "laplace27";
        w.problem.n = 16;
        w.threads = threads;
        (void)solve(w);
    }

    json problems = json::array();
    std::vector<json> all_rows;
    for (const ProblemSpec& p : suite) {
        ProblemOptions po;
        po.name = p.name;
        po.n = 4;
        const StructuredProblem probe = make_problem(po);
        const int ndiag = probe.a.stencil().size();
        const int r = probe.a.block();
        const std::int64_t bytes_per_cell = std::int64_t{2} * ndiag * r * r;
        const int n_cache = cache_edge(llc, bytes_per_cell);
        const int n = opt.quick ? 16 : std::min(n_cache, p.max_n);
        const double fp16_bytes = static_cast<double>(std::int64_t{n} * n * n * bytes_per_cell);
        const bool capped = !opt.quick && n < n_cache;
        problems.push_back({{"problem", p.name},
                            {"stencil", probe.a.stencil().name()},
                            {"components", r},
                            {"n_cache", n_cache},
                            {"n", n},
                            {"capped", capped},
                            {"fp16_matrix_bytes", fp16_bytes}});
        fmt::print(stderr, "  {} ({}, r = {}): n = {}{} (FP16 finest matrix {:.1f} MiB)\n", p.name,
                   probe.a.stencil().name(), r, n,
                   capped ? fmt::format(", capped below the cache target {}", n_cache) : "",
                   fp16_bytes / (1 << 20));
        int cpu = -1;
        if (pin_one) {
            pin.reset();
            cpu = fastest_cpu(core_speeds(0, 3));
            pin.emplace(cpu);
            if (!pin->pinned()) cpu = -1;
            if (cpu >= 0) fmt::print(stderr, "    pinned to cpu {}\n", cpu);
        }
        problems.back()["cpu"] = cpu >= 0 ? json(cpu) : json(nullptr);
        std::vector<json> rows = measure_all(p.name, n, reps, threads);
        add_speedups(rows);
        all_rows.insert(all_rows.end(), rows.begin(), rows.end());
    }
    if (all_rows.empty()) return 1;

    json doc;
    doc["machine"] = {{"cpu", cpu_model()},         {"threads", threads},
                      {"stream_triad_gbs", stream}, {"core_speeds", core_speeds_json(speeds)},
                      {"llc_bytes", llc},           {"llc_source", llc_size().source}};
    doc["quick"] = opt.quick;
    doc["repetitions"] = reps;
    doc["problems"] = problems;
    doc["rows"] = all_rows;
    doc["summary"] = summary(all_rows);

    namespace fs = std::filesystem;
    fs::create_directories(opt.out);
    const fs::path json_path = fs::path(opt.out) / "e2e.json";
    std::ofstream(json_path) << doc.dump(1) << "\n";
    std::ofstream(fs::path(opt.out) / "e2e.md") << markdown(doc);
    fmt::print(stderr, "  wrote {} and e2e.md\n", json_path.string());
    plot(opt, json_path);
    return 0;
}

}  // namespace mpmg::bench
