// `mpmg bench scaling`: laplace27 on the structured path, or with --matrix the user's matrix on
// the AMG path. Each case is a separate `mpmg solve` process (under mpirun for more than
// one rank; the 1-rank baseline is the plain serial CLI), so a rank count is measured exactly as
// a user runs it. Times are medians over the repetitions, which are interleaved (each round runs
// every case once). The serial baseline runs pinned to each of the first cores in turn: the
// cores of a virtual machine need not be alike (on the 2-core Zen 5 VM one ran everything about
// 1.6x slower), and an unpinned serial run lands on either. Two efficiencies per layout of k
// cores: against the fastest core, T1(best) / (k T), the usual strict figure; and against the
// cores' capacity, (1 / (k mean_c 1/T1(c))) / T, which is the same on alike cores and on unlike
// ones asks only for what the cores together can do; and, round by round, against the slowest
// pinned serial run of that round (what an even split could do on the cores as they were then:
// the slow core moved within minutes). total_s includes the setup (distributed:
// each rank coarsens its own blocks) and ends with x in the solve's layout (distributed: in
// blocks); generating the problem is not timed. solve_s (total - setup) and its efficiencies
// are reported too.
#include "scaling_bench.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <unistd.h>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "bench_util.hpp"

namespace mpmg::bench {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* kConfigs[] = {"K64P64D64", "K64P32D16"};
constexpr const char* kConfigNames[] = {"Full64", "K64P32D16"};
constexpr int kModelRanks = 1024;
/// The serial baseline runs pinned to at most this many cores.
constexpr std::size_t kPinnedMax = 4;

#ifdef MPMG_MPIEXEC
constexpr const char* kMpiexec = MPMG_MPIEXEC;
#else
constexpr const char* kMpiexec = "";
#endif

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/// What a failed solve said on stderr: its last "mpmg: ..." line (under mpirun, Open MPI's
/// banner follows it), else its last line that is not blank or a rule ("" when none).
std::string error_line(const fs::path& path) {
    std::istringstream in(slurp(path));
    std::string line, ours, last;
    while (std::getline(in, line)) {
        if (line.rfind("mpmg", 0) == 0) ours = line;
        if (line.find_first_not_of(" -\t\r") != std::string::npos) last = line;
    }
    return ours.empty() ? last : ours;
}

// One solve of `problem` (the solve options that name it) in a fresh process; the parsed
// --json, or null when it failed (then `error` holds what it said on stderr: error_line).
json run_case(const fs::path& exe, const fs::path& tmp, const std::string& problem,
              const char* config, int ranks, int threads, std::string& error) {
    // A 1x1 case runs pinned where the caller holds a PinToCpu: the child inherits the mask.
    const fs::path out = tmp / fmt::format("scaling_{}_{}_{}.json", config, ranks, threads);
    std::error_code ec;
    fs::remove(out, ec);
    std::string cmd = fmt::format("OMP_NUM_THREADS={} OMP_WAIT_POLICY=passive ", threads);
    if (ranks > 1) {
        cmd += fmt::format(
            "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 '{}' --oversubscribe "
            "--bind-to none -np {} ",
            kMpiexec, ranks);
    }
    const fs::path err = tmp / "solve.err";
    cmd += fmt::format(
        "'{}' solve {} --precision {} --threads {} --quiet --json '{}' >/dev/null "
        "2>'{}'",
        exe.string(), problem, config, threads, out.string(), err.string());
    if (std::system(cmd.c_str()) != 0 || !fs::exists(out)) {
        error = error_line(err);
        return nullptr;
    }
    return json::parse(slurp(out));
}

// Neighbour regions of an interior rank: 6 faces in a 3D process grid, 1 in the 1x1x2 split.
constexpr double kFacesAtModel = 6.0, kFacesAtTwo = 1.0;

// Agglomeration stages at the model's ranks: coarse levels whose blocks get small move onto the
// merged partition (2 x 2 x 2 blocks into one, DistHierarchy) while it keeps at least two
// processes, then onto rank 0: ceil(log8(ranks)) gathers on the way down.
int agglomeration_stages(int ranks) {
    int stages = 1;
    for (int p = ranks; p > 8; p = (p + 7) / 8) ++stages;
    return stages;
}

// The weak-scaling model from a 2-rank, 1-thread run with block b per rank: per iteration,
// compute stays; halo time scales with the faces of an interior rank; a reduction with
// log2(ranks) tree stages. Agglomeration is staged (agglomeration_stages): each stage's holder
// gathers and scatters 7 blocks where rank 0 of the 2-rank run does 1 (gather/scatter time x 7)
// and runs the merged levels of up to 8 blocks where rank 0 ran 2 (its cycles' time x 4).
// Iterations are taken as constant (measured: within +-1 from 1 to 3 ranks).
json weak_model(const json& two, const char* config_name) {
    const json& c = two["partition"]["comm"];
    const double it = std::max(1, two["iterations"].get<int>());
    const double solve =
        two["time_s"]["total"].get<double>() - two["time_s"]["setup"].get<double>();
    const double halo = c["halo_s"].get<double>() / it, red = c["reduce_s"].get<double>() / it;
    const double agg = c["agglomerate_s"].get<double>() / it;
    const double tail = c["agglomerated_cycles_s"].get<double>() / it;
    const double comp = std::max(0.0, solve / it - halo - red - agg - tail);
    const double p = kModelRanks;
    const double halo_p = halo * kFacesAtModel / kFacesAtTwo;
    const double red_p = red * std::log2(p);
    const double agg_p = agglomeration_stages(kModelRanks) * (7.0 * agg + 4.0 * tail);
    const double t2 = solve / it, tp = comp + halo_p + red_p + agg_p;
    return json{
        {"config", config_name},
        {"kind", "model (not measured): weak scaling, fixed block per rank"},
        {"ranks", kModelRanks},
        {"measured_at_ranks", 2},
        {"per_iteration_s_at_2",
         {{"compute", comp}, {"halo", halo}, {"reduce", red}, {"agglomeration", agg + tail}}},
        {"per_iteration_s_predicted",
         {{"compute", comp}, {"halo", halo_p}, {"reduce", red_p}, {"agglomeration", agg_p}}},
        {"predicted_weak_efficiency", t2 / tp},
        {"predicted_weak_efficiency_without_agglomeration", t2 / (comp + halo_p + red_p)}};
}

/// "9.3 / 15.4" from the STREAM rates on 1, 2, ... cores.
std::string stream_list(const json& rates) {
    std::string out;
    for (const json& r : rates) {
        out += fmt::format("{}{:.1f}", out.empty() ? "" : " / ", r.get<double>());
    }
    return out;
}

/// "73%" for a ratio, "-" for null.
std::string percent(const json& v) {
    return v.is_null() ? std::string("-") : fmt::format("{:.0f}%", 100.0 * v.get<double>());
}

std::string markdown(const json& doc) {
    const std::string cores = describe_cores(doc["machine"]["core_speeds"]);
    std::string md = fmt::format(
        "Strong scaling of {} ({} rows) on {} ({} cores; load average before / "
        "after: {} / {}). Medians of {} run(s), interleaved (each round runs every case once). "
        "The serial baseline runs pinned to each core in turn (1 x 1 rows with a cpu). "
        "Efficiency = T(1x1, fastest core) / (cores x T); vs capacity = T_cap / T with "
        "T_cap = 1 / (cores x mean over the pinned cores of 1 / T(1x1, cpu)), the same on alike "
        "cores. Each core's speed alone, pinned: {}. total_s includes the setup ({}) and ends "
        "with x in blocks over the ranks (gathering it whole for the report is not timed); "
        "solve_s = total - setup. STREAM triad measured in the same run on 1, 2, "
        "... cores: {} GB/s; STREAM bound "
        "= STREAM(k) / (k x STREAM(1)), the efficiency a memory-bound phase can reach on k "
        "cores. Even-split bound = T_cap / max over the pinned cores of T(1x1, cpu) / k: what a "
        "run that gives every core the same work can reach against the capacity (100 % on alike "
        "cores). Vs the round's slowest core: round by round, T(1x1) of the slowest pinned core "
        "in that round / (k x T), median over the rounds: against what an even split could do "
        "on the cores as they were in that round.\n\n",
        doc["problem"].get<std::string>(), doc["unknowns"].get<long long>(),
        doc["machine"]["cpu"].get<std::string>(), doc["machine"]["threads"].get<int>(),
        doc["machine"]["load_average_before"].get<std::string>(),
        doc["machine"]["load_average_after"].get<std::string>(), doc["repetitions"].get<int>(),
        cores.empty() ? std::string("not measured") : cores,
        doc["method"] == "amg"
            ? "distributed: the RCM renumbering where --reorder auto picks it, on rank 0, and "
              "each rank's aggregation of its row block; reading the file, each rank its share "
              "of the lines, is not timed"
            : "distributed: each rank coarsens its own blocks; generating the problem, each "
              "rank its own rows, is not timed",
        stream_list(doc["machine"]["stream_triad_gbs_by_cores"]));
    md +=
        "| config | ranks | threads | cpu | iterations | total_s | efficiency | vs capacity | "
        "vs the round's slowest core | solve_s | solve efficiency | solve vs capacity | STREAM "
        "bound | even-split bound |\n";
    md += "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const json& r : doc["rows"]) {
        md += fmt::format(
            "| {} | {} | {} | {} | {} | {:.3f} | {} | {} | {} | {:.3f} | {} | {} | {} | {} |\n",
            r["config"].get<std::string>(), r["ranks"].get<int>(), r["threads"].get<int>(),
            r["cpu"].is_null() ? std::string("any") : std::to_string(r["cpu"].get<int>()),
            r["iterations"].get<int>(), r["total_s"].get<double>(), percent(r["efficiency"]),
            percent(r["capacity_efficiency"]), percent(r["round_slowest_efficiency"]),
            r["solve_s"].get<double>(), percent(r["solve_efficiency"]),
            percent(r["solve_capacity_efficiency"]), percent(r["stream_bound"]),
            percent(r["even_split_bound"]));
    }
    if (doc["weak_model"].empty() && doc["method"] == "amg") {
        md +=
            "\nNo weak-scaling model for the AMG path: the model scales the halo by the faces "
            "of an interior rank of a 3D grid of boxes, which row blocks of a general matrix do "
            "not have.\n";
    }
    if (!doc["weak_model"].empty()) {
        md += fmt::format(
            "\nWeak-scaling MODEL (not a measurement) for {} ranks, from the per-iteration costs "
            "measured on rank 0 of the 2-rank runs: halo x 6 (faces of an interior rank vs 1), "
            "reduction x log2(ranks), agglomeration in {} stages of 1/8 of the ranks each "
            "(per stage: gather/scatter x 7 blocks instead of 1, the agglomerated cycles x 4 "
            "for 8 blocks instead of 2), compute and iterations unchanged; intra-node MPI costs "
            "stand in for a network.\n\n",
            kModelRanks, agglomeration_stages(kModelRanks));
        md +=
            "| config | compute s/it | halo s/it (2 → 1024) | reduce s/it (2 → 1024) | "
            "agglomeration s/it (2 → 1024) | predicted weak efficiency | without "
            "agglomeration |\n|---|---|---|---|---|---|---|\n";
        for (const json& m : doc["weak_model"]) {
            const json& a = m["per_iteration_s_at_2"];
            const json& b = m["per_iteration_s_predicted"];
            md += fmt::format(
                "| {} | {:.2e} | {:.2e} → {:.2e} | {:.2e} → {:.2e} | {:.2e} → {:.2e} | {:.0f}% | "
                "{:.0f}% |\n",
                m["config"].get<std::string>(), a["compute"].get<double>(), a["halo"].get<double>(),
                b["halo"].get<double>(), a["reduce"].get<double>(), b["reduce"].get<double>(),
                a["agglomeration"].get<double>(), b["agglomeration"].get<double>(),
                100.0 * m["predicted_weak_efficiency"].get<double>(),
                100.0 * m["predicted_weak_efficiency_without_agglomeration"].get<double>());
        }
    }
    return md;
}

}  // namespace

int run_scaling_bench(const BenchOptions& opt) {
    const std::string load_before = load_average();
    const fs::path exe = fs::read_symlink("/proc/self/exe");
    const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    const int budget = std::max(cores, opt.threads);
    const bool mpi = kMpiexec[0] != '\0';
    const int reps = opt.quick ? 1 : 5;
    // Beyond the cache: the FP16 finest matrix (27 x 2 bytes a row) at least twice the LLC.
    const std::int64_t llc = llc_bytes();
    // The problem: laplace27 (the structured path), or the user's matrix (the AMG path).
    const bool file = !opt.matrix.empty();
    int n = 24;
    if (!opt.quick && !file) {
        n = 32;
        while (std::int64_t{27} * 2 * n * n * n < 2 * llc && n < 160) n += 8;
    }
    std::string problem = fmt::format("--problem laplace27 --n {}", n);
    std::string label = fmt::format("laplace27 n = {}", n);
    if (file) {
        problem = fmt::format("--matrix '{}'", fs::absolute(opt.matrix).string());
        label = fs::path(opt.matrix).filename().string();
        if (!opt.rhs.empty()) {
            problem += fmt::format(" --rhs '{}'", fs::absolute(opt.rhs).string());
            label += fmt::format(" with b from {}", fs::path(opt.rhs).filename().string());
        }
        label += " (AMG path)";
    }
    fmt::print(stderr, "bench scaling: {}, up to {} cores, {} repetition(s){}{}\n", label, budget,
               reps, opt.quick ? " (quick)" : "", mpi ? "" : " — built without MPI: threads only");
    std::vector<std::pair<int, int>> layouts;  // (ranks, threads), ranks x threads <= budget
    for (int r = 1; r <= budget; r *= 2) {
        if (r > 1 && !mpi) break;
        for (int t = 1; r * t <= budget; t *= 2) layouts.emplace_back(r, t);
    }
    // STREAM triad on 1, 2, 4, ... cores (OpenMP threads), before the runs: the memory bandwidth
    // a layout can use. A memory-bound solve on k cores can reach at most STREAM(k) / (k
    // STREAM(1)) efficiency, whatever its code does; each row reports that bound next to its own.
    std::vector<double> stream;  // stream[i]: on 2^i cores
    for (int k = 1; k <= budget; k *= 2) {
        stream.push_back(
            stream_triad_gbs(k, opt.quick ? (std::int64_t{1} << 20) : llc, opt.quick ? 3 : 10));
        fmt::print(stderr, "  STREAM triad, {} core(s): {:.1f} GB/s\n", k, stream.back());
    }
    const auto stream_bound = [&](int cores_used) {
        const auto i =
            static_cast<std::size_t>(std::countr_zero(static_cast<unsigned>(cores_used)));
        return stream[i] / (cores_used * stream[0]);
    };
    // Each core's speed alone (pinned), and the cores the serial baseline runs on: every allowed
    // one up to kPinnedMax (all of them on the machines this runs on; a sample on larger ones).
    const std::vector<CoreSpeed> speeds =
        core_speeds(opt.quick ? (std::int64_t{1} << 20) : llc, opt.quick ? 3 : 10, kPinnedMax);
    if (!speeds.empty())
        fmt::print(stderr, "  each core alone: {}\n", describe_cores(core_speeds_json(speeds)));
    const fs::path tmp = fs::temp_directory_path() / fmt::format("mpmg_scaling_{}", ::getpid());
    fs::create_directories(tmp);
    // The cases of a round: the serial baseline once per pinned core (cpu -1: unpinned, where
    // pinning is not possible), then the other layouts.
    struct Layout {
        int ranks, threads, cpu;
    };
    std::vector<Layout> cases_of_round;
    for (const auto& [ranks, threads] : layouts) {
        if (ranks == 1 && threads == 1 && !speeds.empty()) {
            for (const CoreSpeed& c : speeds) cases_of_round.push_back({1, 1, c.cpu});
        } else {
            cases_of_round.push_back({ranks, threads, -1});
        }
    }
    // Repetitions interleaved: each round runs every config and case once, so the VM's slow
    // and fast phases (STREAM varied 19-26 GB/s on one core between runs of a session) fall on
    // every case alike instead of on one case's consecutive runs.
    struct Case {
        std::vector<double> total, solve;
        std::vector<int> round;  ///< the round of each entry of total (a failed run has none)
        json last;
    };
    std::string first_error;  // of the first case that failed
    std::vector<std::vector<Case>> cases(std::size(kConfigs),
                                         std::vector<Case>(cases_of_round.size()));
    for (int rep = 0; rep < reps; ++rep) {
        for (std::size_t c = 0; c < std::size(kConfigs); ++c) {
            for (std::size_t l = 0; l < cases_of_round.size(); ++l) {
                const Layout& lay = cases_of_round[l];
                std::optional<PinToCpu> pin;
                if (lay.cpu >= 0) pin.emplace(lay.cpu);
                std::string error;
                const json j =
                    run_case(exe, tmp, problem, kConfigs[c], lay.ranks, lay.threads, error);
                pin.reset();
                const std::string where =
                    lay.cpu >= 0 ? fmt::format(" on cpu {}", lay.cpu) : std::string();
                if (j.is_null()) {
                    fmt::print(stderr, "  {} {}x{}{}: failed{}\n", kConfigNames[c], lay.ranks,
                               lay.threads, where, error.empty() ? "" : ": " + error);
                    if (first_error.empty()) first_error = error;
                    continue;
                }
                Case& k = cases[c][l];
                k.total.push_back(j["time_s"]["total"].get<double>());
                k.solve.push_back(k.total.back() - j["time_s"]["setup"].get<double>());
                k.round.push_back(rep);
                k.last = j;
                fmt::print(
                    stderr, "  round {}/{}: {:<9} {} rank(s) x {} thread(s){}: total {:.3f} s\n",
                    rep + 1, reps, kConfigNames[c], lay.ranks, lay.threads, where, k.total.back());
            }
        }
    }
    json rows = json::array(), model = json::array();
    long long nrows = 0;
    for (std::size_t c = 0; c < std::size(kConfigs); ++c) {
        // The serial baselines: the fastest core's medians, and the cores' mean rate (1 / T).
        double best_total = 0.0, best_solve = 0.0, rate_total = 0.0, rate_solve = 0.0;
        double slowest_total = 0.0;
        int serial = 0;
        for (std::size_t l = 0; l < cases_of_round.size(); ++l) {
            const Case& k = cases[c][l];
            if (cases_of_round[l].ranks != 1 || cases_of_round[l].threads != 1 || k.total.empty())
                continue;
            const double t = median(k.total), s = median(k.solve);
            best_total = serial == 0 ? t : std::min(best_total, t);
            best_solve = serial == 0 ? s : std::min(best_solve, s);
            slowest_total = std::max(slowest_total, t);
            rate_total += 1.0 / t;
            rate_solve += 1.0 / s;
            ++serial;
        }
        if (serial > 0) {
            rate_total /= serial;
            rate_solve /= serial;
        }
        for (std::size_t l = 0; l < cases_of_round.size(); ++l) {
            const auto [ranks, threads, cpu] = cases_of_round[l];
            const Case& k = cases[c][l];
            if (k.total.empty()) continue;
            const json& last = k.last;
            const double t = median(k.total), s = median(k.solve);
            const double cores_used = ranks * threads;
            const auto ratio = [&](double num, double den) {
                return num > 0 && den > 0 ? json(num / den) : json(nullptr);
            };
            // Against the capacity: T_cap = 1 / (k x mean rate); and what an even split reaches.
            const json cap = ratio(1.0, rate_total * cores_used * t);
            const json cap_solve = ratio(1.0, rate_solve * cores_used * s);
            const json even = ratio(1.0 / rate_total, slowest_total);
            // Round by round, against the slowest pinned serial run of the same round: how
            // close the layout came to what an even split of the work could do on the cores as
            // they were then (the VM's slow core moved between rounds). Median over the rounds.
            std::vector<double> vs_slowest;
            for (std::size_t i = 0; i < k.total.size() && cores_used > 1; ++i) {
                double slowest = 0.0;
                bool all = true;
                for (std::size_t q = 0; q < cases_of_round.size(); ++q) {
                    if (cases_of_round[q].ranks != 1 || cases_of_round[q].threads != 1) continue;
                    const Case& sq = cases[c][q];
                    const auto at = std::find(sq.round.begin(), sq.round.end(), k.round[i]);
                    if (at == sq.round.end()) {
                        all = false;
                        break;
                    }
                    slowest = std::max(slowest,
                                       sq.total[static_cast<std::size_t>(at - sq.round.begin())]);
                }
                if (all && slowest > 0.0) vs_slowest.push_back(slowest / (cores_used * k.total[i]));
            }
            json row{{"problem", file ? label : std::string("laplace27")},
                     {"n", file ? json(nullptr) : json(n)},
                     {"config", kConfigNames[c]},
                     {"precision", kConfigs[c]},
                     {"ranks", ranks},
                     {"threads", threads},
                     {"cpu", cpu >= 0 ? json(cpu) : json(nullptr)},
                     {"total_s", t},
                     {"solve_s", s},
                     {"setup_s", t - s},
                     {"total_runs_s", k.total},
                     {"iterations", last["iterations"]},
                     {"converged", last["converged"]},
                     {"efficiency", ratio(best_total, cores_used * t)},
                     {"solve_efficiency", ratio(best_solve, cores_used * s)},
                     {"capacity_efficiency", cap},
                     {"solve_capacity_efficiency", cap_solve},
                     {"stream_bound", stream_bound(ranks * threads)},
                     {"even_split_bound", cores_used > 1 ? even : json(1.0)},
                     {"round_slowest_efficiency",
                      vs_slowest.empty() ? json(nullptr) : json(median(vs_slowest))},
                     {"partition", last["partition"]}};
            nrows = last["rows"].get<long long>();
            fmt::print(stderr,
                       "  {:<9} {} rank(s) x {} thread(s){}: {} its, total {:.3f} s ({}, {} of "
                       "capacity, {} vs the round's slowest core), solve {:.3f} s ({}, {})\n",
                       kConfigNames[c], ranks, threads,
                       cpu >= 0 ? fmt::format(" on cpu {}", cpu) : std::string(),
                       last["iterations"].get<int>(), t, percent(row["efficiency"]), percent(cap),
                       percent(row["round_slowest_efficiency"]), s,
                       percent(row["solve_efficiency"]), percent(cap_solve));
            if (ranks == 2 && threads == 1 && !file) {
                model.push_back(weak_model(last, kConfigNames[c]));
            }
            rows.push_back(std::move(row));
        }
    }
    std::error_code ec;
    fs::remove_all(tmp, ec);
    if (rows.empty()) {
        fmt::print(stderr, "mpmg bench scaling: no case ran{}\n",
                   first_error.empty() ? std::string() : "; the first error: " + first_error);
        return 1;
    }
    json doc;
    doc["machine"] = {{"cpu", cpu_model()},
                      {"threads", budget},
                      {"stream_triad_gbs", stream.front()},
                      {"stream_triad_gbs_by_cores", stream},
                      {"core_speeds", core_speeds_json(speeds)},
                      {"llc_bytes", llc},
                      {"llc_source", llc_size().source},
                      {"load_average_before", load_before},
                      {"load_average_after", load_average()}};
    doc["quick"] = opt.quick;
    doc["repetitions"] = reps;
    doc["n"] = file ? json(nullptr) : json(n);
    doc["problem"] = label;
    doc["method"] = file ? "amg" : "structured";
    doc["unknowns"] = nrows;
    doc["rows"] = rows;
    doc["weak_model"] = model;
    fs::create_directories(opt.out);
    const fs::path json_path = fs::path(opt.out) / "scaling.json";
    std::ofstream(json_path) << doc.dump(1) << "\n";
    std::ofstream(fs::path(opt.out) / "scaling.md") << markdown(doc);
    fmt::print(stderr, "  wrote {} and scaling.md\n", json_path.string());
    return 0;
}

}  // namespace mpmg::bench
