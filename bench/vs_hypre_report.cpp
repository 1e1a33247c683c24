// The report of `mpmg bench vs-hypre`: issue 7's targets judged at the largest size of every
// problem, and the Markdown table for the README.
#include <fmt/format.h>

#include <limits>
#include <map>
#include <string>

#include "vs_hypre_bench.hpp"

namespace mpmg::bench {
namespace {

using nlohmann::json;

/// Issue 7: K64P32D16 / auto at least this much faster than hypre's fastest.
double fp16_target(const std::string& problem) { return problem == "laplace27" ? 2.5 : 1.8; }

json num_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

std::string cell(const json& v, const char* f) {
    if (v.is_null()) return "-";
    return fmt::format(fmt::runtime(f), v.get<double>());
}

/// The mpmg row `config` at `threads`, or nullptr.
const json* find_mpmg(const std::vector<const json*>& rows, const std::string& config,
                      int threads) {
    for (const json* r : rows) {
        if ((*r)["package"] == "mpmg" && (*r)["solver"] == "mpmg " + config &&
            (*r)["threads"].get<int>() == threads) {
            return r;
        }
    }
    return nullptr;
}

bool ok(const json* r) { return r != nullptr && (*r)["converged"].get<bool>(); }

/// Best (smallest ratio) of K64P32D16 and auto at `threads`: {config, ratio}.
std::pair<std::string, double> best_fp16(const std::vector<const json*>& rows, int threads) {
    std::pair<std::string, double> best{"-", std::numeric_limits<double>::quiet_NaN()};
    for (const char* c : {"K64P32D16", "auto"}) {
        const json* r = find_mpmg(rows, c, threads);
        if (!ok(r) || (*r)["ratio_to_fastest_hypre"].is_null()) continue;
        const double q = (*r)["ratio_to_fastest_hypre"].get<double>();
        if (!(q >= best.second)) best = {c, q};
    }
    return best;
}

}  // namespace

json vs_hypre_targets(const json& rows) {
    std::map<std::string, int> largest;
    std::vector<std::string> order;
    int max_threads = 1;
    for (const json& r : rows) {
        const std::string p = r["problem"].get<std::string>();
        if (!largest.contains(p)) order.push_back(p);
        largest[p] = std::max(largest[p], r["n"].get<int>());
        max_threads = std::max(max_threads, r["threads"].get<int>());
    }
    json out = json::array();
    for (const std::string& p : order) {
        std::vector<const json*> at;
        for (const json& r : rows) {
            if (r["problem"] == p && r["n"].get<int>() == largest[p]) at.push_back(&r);
        }
        const std::string fastest = (*at.front())["fastest_hypre"].get<std::string>();
        double fastest_s = std::numeric_limits<double>::quiet_NaN();
        int fastest_its = 0;
        for (const json* r : at) {
            if ((*r)["solver"] == fastest) {
                fastest_s = (*r)["total_s"].get<double>();
                fastest_its = (*r)["iterations"].get<int>();
            }
        }
        const json* full = find_mpmg(at, "Full64", 1);
        const double full_ratio = ok(full) && !(*full)["ratio_to_fastest_hypre"].is_null()
                                      ? (*full)["ratio_to_fastest_hypre"].get<double>()
                                      : std::numeric_limits<double>::quiet_NaN();
        const auto [cfg1, q1] = best_fp16(at, 1);
        const auto [cfgt, qt] = best_fp16(at, max_threads);
        const double target = fp16_target(p);
        out.push_back({{"problem", p},
                       {"n", largest[p]},
                       {"fastest_hypre", fastest},
                       {"fastest_hypre_total_s", num_or_null(fastest_s)},
                       {"fastest_hypre_iterations", fastest_its},
                       {"full64_ratio", num_or_null(full_ratio)},
                       {"full64_met", full_ratio <= 1.0},
                       {"fp16_config", cfg1},
                       {"fp16_speedup", num_or_null(1.0 / q1)},
                       {"fp16_target", target},
                       {"fp16_met", 1.0 / q1 >= target},
                       {"threads", max_threads},
                       {"fp16_config_threads", cfgt},
                       {"fp16_speedup_threads", num_or_null(1.0 / qt)}});
    }
    return out;
}

std::string vs_hypre_markdown(const json& doc) {
    const json& m = doc["machine"];
    const int t = m["threads"].get<int>();
    std::string s = fmt::format(
        "CPU: {}; STREAM triad {:.1f} GB/s (1 thread), {:.1f} GB/s ({} threads); LLC {} MiB ({}); "
        "load average before / after: {} / {}. hypre {} ({}, 1 MPI rank); mpmg with 1 thread "
        "(as hypre) and {} threads. rtol {:g} (||r||/||b||), zero initial guess, the problem's "
        "Krylov method (PCG / GMRES(30)), at most {} iterations. Times exclude building the "
        "problem and hypre's matrix assembly; true relres = ||b - A x||/||b|| computed by mpmg "
        "in FP64; ratio = total / the fastest hypre total of the same problem and size.\n\n",
        m["cpu"].get<std::string>(), m["stream_triad_gbs_1thread"].get<double>(),
        m["stream_triad_gbs"].get<double>(), t, m["llc_bytes"].get<std::int64_t>() >> 20,
        m["llc_source"].get<std::string>(), m["load_average_before"].get<std::string>(),
        m["load_average_after"].get<std::string>(), m["hypre_version"].get<std::string>(),
        m["hypre_openmp"].get<bool>() ? "with OpenMP" : "serial: built without OpenMP", t,
        doc["rtol"].get<double>(), doc["max_iter"].get<int>());
    s += "| problem | n | solver | threads | its | setup s | solve s | total s | true relres | "
         "ratio to fastest hypre |\n";
    s += "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const json& r : doc["rows"]) {
        const bool failed = r["status"] != "ok";
        std::string its =
            r["iterations"].is_null() ? "-" : std::to_string(r["iterations"].get<int>());
        if (!failed && !r["converged"].get<bool>()) its += " (not conv.)";
        s += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                         r["problem"].get<std::string>(), r["n"].get<int>(),
                         r["solver"].get<std::string>(), r["threads"].get<int>(),
                         failed ? r["note"].get<std::string>() : its, cell(r["setup_s"], "{:.3f}"),
                         cell(r["solve_s"], "{:.3f}"), cell(r["total_s"], "{:.3f}"),
                         cell(r["true_relres"], "{:.1e}"),
                         cell(r["ratio_to_fastest_hypre"], "{:.2f}"));
    }
    s += fmt::format(
        "\nTargets of issue 7 at the largest size, mpmg with 1 thread as hypre (and with {} "
        "threads for information):\n\n",
        t);
    s += "| problem | n | fastest hypre | its | total s | Full64 / fastest hypre (target <= 1) | "
         "K64P32D16 or auto speedup (target) | speedup with " +
         std::to_string(t) + " threads |\n";
    s += "|---|---:|---|---:|---:|---:|---:|---:|\n";
    for (const json& g : doc["targets"]) {
        s += fmt::format(
            "| {} | {} | {} | {} | {} | {} {} | {} ({}, >= {:.1f}x) {} | {} ({}) |\n",
            g["problem"].get<std::string>(), g["n"].get<int>(),
            g["fastest_hypre"].get<std::string>(), g["fastest_hypre_iterations"].get<int>(),
            cell(g["fastest_hypre_total_s"], "{:.3f}"), cell(g["full64_ratio"], "{:.2f}"),
            g["full64_met"].get<bool>() ? "met" : "**not met**", cell(g["fp16_speedup"], "{:.2f}x"),
            g["fp16_config"].get<std::string>(), g["fp16_target"].get<double>(),
            g["fp16_met"].get<bool>() ? "met" : "**not met**",
            cell(g["fp16_speedup_threads"], "{:.2f}x"),
            g["fp16_config_threads"].get<std::string>());
    }
    return s;
}

}  // namespace mpmg::bench
