// mpmg against hypre (DESIGN.md "Benchmark contract": vs-hypre).
//
// For laplace27, laplace27e8, rhd and oil at sizes from in-cache to beyond it, the very same
// generated FP64 coefficients and right-hand side are solved from a zero initial guess to the
// same relative residual (rtol 1e-8, ||r||_2/||b||_2; hypre's PCG with its two-norm criterion)
// with the problem's Krylov method (CG, or GMRES(30) for the nonsymmetric oil):
//   - hypre 2.x: PCG/GMRES + PFMG and + SMG (Struct interface), + BoomerAMG tuned for 3D and
//     + BoomerAMG with hypre's defaults (IJ interface); bench/hypre/ says how each is set up;
//   - mpmg: Full64 (K64P64D64), K64P32D32, K64P32D16 and auto (mpmg::solve, V(1,1) SymGS),
//     with as many threads as hypre uses (Debian's hypre is serial: 1) and with --threads T.
// Every solution's true relative residual ||b - A x||/||b|| is computed by mpmg with the FP64
// matrix. Times exclude building the problem and handing it to hypre (reported as assembly_s);
// they are medians of 3 runs at n = 32 and single runs above (the 2-core machine has no time
// for more). ratio_to_fastest_hypre = total_s / the smallest hypre
// total_s of the same problem and size. A hypre solver that did not converge at a smaller size,
// or whose time there scaled by the cell count predicts more than kSkipAboveS seconds, is
// skipped at the larger size (its row says so).
#include "vs_hypre_bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "io/problems.hpp"
#include "mpmg/solver.hpp"
#include "structured/sgdia_ops.hpp"

#ifdef MPMG_HAVE_HYPRE
#include "hypre/hypre_solvers.hpp"
#endif

namespace mpmg::bench {

#ifndef MPMG_HAVE_HYPRE

int run_vs_hypre_bench(const BenchOptions&) {
    fmt::print(stderr,
               "mpmg: bench vs-hypre needs hypre and MPI, which this build did not find; install "
               "them (Debian: libhypre-dev, see scripts/install-deps) and rebuild\n");
    return 2;
}

#else

namespace {

using nlohmann::json;
namespace hy = hypre;

constexpr double kRtol = 1e-8;
constexpr int kMaxIter = 500;
constexpr double kSkipAboveS = 150.0;  ///< predicted seconds above which a hypre solver is skipped

struct ProblemSizes {
    const char* name;
    std::vector<int> n;  ///< full run; the last is the "largest size" of the targets
};

/// Sizes: 32^3 fits every cache, 64^3 is about the LLC for FP64, the last is beyond it (the
/// FP64 27-point matrix at 128^3 is 453 MiB) within the time of a 2-core development machine.
const std::vector<ProblemSizes> kFull = {
    {"laplace27", {32, 64, 128}},
    {"laplace27e8", {32, 64, 128}},
    {"rhd", {32, 64, 128}},
    {"oil", {32, 64, 96}},
};
const std::vector<ProblemSizes> kQuick = {
    {"laplace27", {16}}, {"laplace27e8", {16}}, {"rhd", {16}}, {"oil", {16}}};

constexpr hy::Preconditioner kHypre[] = {hy::Preconditioner::pfmg, hy::Preconditioner::smg,
                                         hy::Preconditioner::boomeramg,
                                         hy::Preconditioner::boomeramg_default};

struct MpmgConfig {
    const char* label;
    const char* precision;
};
constexpr MpmgConfig kMpmg[] = {{"Full64", "K64P64D64"},
                                {"K64P32D32", "K64P32D32"},
                                {"K64P32D16", "K64P32D16"},
                                {"auto", "auto"}};

json num_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

double true_relres(const StructuredProblem& p, const std::vector<double>& x) {
    if (x.size() != p.b.size()) return std::numeric_limits<double>::quiet_NaN();
    std::vector<double> r(p.b.size());
    residual(p.a, p.b.data(), x.data(), r.data());
    double rr = 0.0, bb = 0.0;
    for (std::size_t i = 0; i < r.size(); ++i) {
        rr += r[i] * r[i];
        bb += p.b[i] * p.b[i];
    }
    return std::sqrt(rr / bb);
}

/// The timings of `reps` runs as medians, plus what the first run reported.
struct Runs {
    std::vector<double> setup, solve, total;
    int iterations = 0;
    bool converged = false;
    double reported = 0.0, true_rel = 0.0;
    json extra = json::object();
};

json row_of(const std::string& problem, int n, const std::string& package,
            const std::string& solver, int threads, const Runs& r) {
    json row = {{"problem", problem},
                {"n", n},
                {"package", package},
                {"solver", solver},
                {"threads", threads},
                {"repetitions", r.total.size()},
                {"status", "ok"},
                {"iterations", r.iterations},
                {"converged", r.converged},
                {"setup_s", median(r.setup)},
                {"solve_s", median(r.solve)},
                {"total_s", median(r.total)},
                {"total_s_runs", r.total},
                {"true_relres", num_or_null(r.true_rel)},
                {"reported_relres", num_or_null(r.reported)}};
    row.update(r.extra);
    return row;
}

json failed_row(const std::string& problem, int n, const std::string& package,
                const std::string& solver, int threads, const std::string& status,
                const std::string& why) {
    return {{"problem", problem},    {"n", n},
            {"package", package},    {"solver", solver},
            {"threads", threads},    {"status", status},
            {"note", why},           {"iterations", nullptr},
            {"converged", false},    {"setup_s", nullptr},
            {"solve_s", nullptr},    {"total_s", nullptr},
            {"true_relres", nullptr}};
}

json measure_hypre(const StructuredProblem& p, int n, hy::Preconditioner pre, int reps) {
    const std::string krylov = p.solver == SolverKind::gmres ? "GMRES" : "PCG";
    const std::string label = fmt::format("hypre {}+{}", krylov, hy::name(pre));
    hy::Settings s;
    s.krylov = p.solver;
    s.rtol = kRtol;
    s.max_iter = kMaxIter;
    Runs runs;
    std::vector<double> assembly;
    try {
        for (int r = 0; r < reps; ++r) {
            hy::Result res = hy::solve(p, pre, s);
            const double total = res.setup_s + res.solve_s;
            runs.setup.push_back(res.setup_s);
            runs.solve.push_back(res.solve_s);
            runs.total.push_back(total);
            assembly.push_back(res.assembly_s);
            if (r == 0) {
                runs.iterations = res.iterations;
                runs.reported = res.relres;
                runs.true_rel = true_relres(p, res.x);
                runs.converged = res.relres <= kRtol && res.iterations < kMaxIter;
            }
            fmt::print(stderr, "    {:<28} rep {}/{}: {:>3} its{} {:8.3f} s (setup {:.3f})\n",
                       label, r + 1, reps, res.iterations, runs.converged ? "" : " (NOT converged)",
                       total, res.setup_s);
        }
    } catch (const std::exception& e) {
        fmt::print(stderr, "    {:<28} failed: {}\n", label, e.what());
        return failed_row(p.name, n, "hypre", label, 1, "error", e.what());
    }
    runs.extra = {{"preconditioner", hy::name(pre)},
                  {"krylov", krylov},
                  {"assembly_s", median(assembly)},
                  {"settings", hy::settings(pre, p.a.stencil().size(), p.solver)}};
    return row_of(p.name, n, "hypre", label, 1, runs);
}

json measure_mpmg(const StructuredProblem& p, int n, const MpmgConfig& c, int threads, int reps) {
    SolverOptions o;
    o.problem.name = p.name;
    o.problem.n = n;
    o.precision = parse_precision(c.precision);
    o.rtol = kRtol;
    o.max_iter = kMaxIter;
    o.threads = threads;
    const std::string label = fmt::format("mpmg {}", c.label);
    Runs runs;
    try {
        for (int r = 0; r < reps; ++r) {
            SolveResult res = solve(o);
            runs.setup.push_back(res.setup_s);
            runs.solve.push_back(res.total_s - res.setup_s);
            runs.total.push_back(res.total_s);
            if (r == 0) {
                runs.iterations = res.iterations;
                runs.reported = res.final_relative_residual;
                runs.true_rel = true_relres(p, res.x);
                runs.converged = res.converged;
                runs.extra = {{"config", c.label},
                              {"krylov", std::string(to_string(res.options.solver))},
                              {"guard_events", res.guard_events},
                              {"levels", res.levels.size()}};
            }
            fmt::print(stderr,
                       "    {:<22} {} thr rep {}/{}: {:>3} its{} {:8.3f} s (setup {:.3f})\n", label,
                       threads, r + 1, reps, res.iterations,
                       res.converged ? "" : " (NOT converged)", res.total_s, res.setup_s);
        }
    } catch (const std::exception& e) {
        fmt::print(stderr, "    {:<22} failed: {}\n", label, e.what());
        return failed_row(p.name, n, "mpmg", label, threads, "error", e.what());
    }
    return row_of(p.name, n, "mpmg", label, threads, runs);
}

/// Fills ratio_to_fastest_hypre and speedup_vs_fastest_hypre for the rows of one (problem, n).
void add_ratios(std::vector<json>& rows) {
    double best = std::numeric_limits<double>::infinity();
    std::string best_solver = "-";
    for (const json& r : rows) {
        if (r["package"] == "hypre" && r["converged"].get<bool>() &&
            r["total_s"].get<double>() < best) {
            best = r["total_s"].get<double>();
            best_solver = r["solver"].get<std::string>();
        }
    }
    for (json& r : rows) {
        double q = std::numeric_limits<double>::quiet_NaN();
        if (std::isfinite(best) && !r["total_s"].is_null()) q = r["total_s"].get<double>() / best;
        r["ratio_to_fastest_hypre"] = num_or_null(q);
        r["speedup_vs_fastest_hypre"] = num_or_null(1.0 / q);
        r["fastest_hypre"] = best_solver;
    }
}

/// A hypre solver's last measurement on the current problem.
struct Previous {
    int n = 0;
    double total_s = 0.0;
    bool converged = true;
};

/// Why a hypre solver is not run at size n, or "" to run it: it did not converge at a smaller
/// size, or its time there, scaled by the cell count, predicts more than kSkipAboveS.
std::string skip_reason(const std::map<std::string, Previous>& last, const std::string& s, int n) {
    const auto it = last.find(s);
    if (it == last.end()) return "";
    const Previous& p = it->second;
    if (!p.converged) {
        return fmt::format("skipped: did not converge in {} iterations at n = {}", kMaxIter, p.n);
    }
    const double f = static_cast<double>(n) / p.n;
    const double t = p.total_s * f * f * f;
    if (t <= kSkipAboveS) return "";
    return fmt::format("skipped: {:.0f} s predicted from n = {} (limit {:.0f} s)", t, p.n,
                       kSkipAboveS);
}

/// The hypre rows of one problem and size; updates `last`.
void measure_all_hypre(const StructuredProblem& p, int n, int reps,
                       std::map<std::string, Previous>& last, std::vector<json>& rows) {
    for (const hy::Preconditioner pre : kHypre) {
        const std::string krylov = p.solver == SolverKind::gmres ? "GMRES" : "PCG";
        const std::string label = fmt::format("hypre {}+{}", krylov, hy::name(pre));
        const std::string why = skip_reason(last, label, n);
        if (!why.empty()) {
            fmt::print(stderr, "    {:<28} {}\n", label, why);
            rows.push_back(failed_row(p.name, n, "hypre", label, 1, "skipped", why));
            continue;  // `last` keeps the measured size the reason refers to
        }
        rows.push_back(measure_hypre(p, n, pre, reps));
        const json& r = rows.back();
        if (!r["total_s"].is_null()) {
            last[label] = {n, r["total_s"].get<double>(), r["converged"].get<bool>()};
        }
    }
}

void plot(const BenchOptions& opt, const std::filesystem::path& json_path) {
    namespace fs = std::filesystem;
    const fs::path script = fs::path(opt.bench_dir) / "plot_vs_hypre.py";
    const fs::path png = fs::path(opt.out) / "vs-hypre.png";
    const std::string cmd = fmt::format("/usr/bin/python3 '{}' '{}' '{}' >&2", script.string(),
                                        json_path.string(), png.string());
    if (!fs::exists(script) || std::system(cmd.c_str()) != 0) {
        fmt::print(stderr,
                   "  note: vs-hypre.png not written (needs /usr/bin/python3 with matplotlib and "
                   "{}); JSON and Markdown are complete\n",
                   script.string());
    } else {
        fmt::print(stderr, "  wrote {}\n", png.string());
    }
}

}  // namespace

int run_vs_hypre_bench(const BenchOptions& opt) {
    const int threads = opt.threads;
    const std::string load_before = load_average();
    fmt::print(stderr, "bench vs-hypre: hypre {} ({}), mpmg with 1 and {} thread(s){}\n",
               hy::version(), hy::uses_openmp() ? "OpenMP" : "serial, no OpenMP", threads,
               opt.quick ? " (quick)" : "");
    const std::int64_t llc = llc_bytes();
    const std::int64_t stream_n = opt.quick ? (std::int64_t{1} << 20) : 4 * llc / 8 * 2;
    const double stream1 = stream_triad_gbs(1, stream_n, opt.quick ? 3 : 10);
    const double stream =
        threads == 1 ? stream1 : stream_triad_gbs(threads, stream_n, opt.quick ? 3 : 10);
    fmt::print(stderr, "  STREAM triad: {:.1f} GB/s (1 thread), {:.1f} GB/s ({} threads)\n",
               stream1, stream, threads);

    {  // warm-up, untimed: MPI and hypre start, OpenMP thread pool, allocator
        ProblemOptions w;
        w.name = "laplace27";
        w.n = 8;
        const StructuredProblem p = make_problem(w);
        (void)hy::solve(p, hy::Preconditioner::pfmg, hy::Settings{});
        SolverOptions o;
        o.problem = w;
        o.threads = threads;
        (void)solve(o);
    }

    std::vector<json> all_rows;
    for (const ProblemSizes& ps : opt.quick ? kQuick : kFull) {
        std::map<std::string, Previous> last;  // hypre solver -> its last measurement
        for (const int n : ps.n) {
            ProblemOptions po;
            po.name = ps.name;
            po.n = n;
            const StructuredProblem p = make_problem(po);
            const int reps = opt.quick || n > 32 ? 1 : 3;
            fmt::print(stderr, "  {} n = {} ({} rows, {}, {}), {} repetition(s)\n", ps.name, n,
                       p.a.rows(), p.a.stencil().name(),
                       p.solver == SolverKind::gmres ? "GMRES" : "CG", reps);
            std::vector<json> rows;
            measure_all_hypre(p, n, reps, last, rows);
            for (const int t : threads == 1 ? std::vector<int>{1} : std::vector<int>{1, threads}) {
                for (const MpmgConfig& c : kMpmg) rows.push_back(measure_mpmg(p, n, c, t, reps));
            }
            add_ratios(rows);
            all_rows.insert(all_rows.end(), rows.begin(), rows.end());
        }
    }
    if (all_rows.empty()) return 1;

    json doc;
    doc["machine"] = {{"cpu", cpu_model()},
                      {"threads", threads},
                      {"stream_triad_gbs", stream},
                      {"stream_triad_gbs_1thread", stream1},
                      {"llc_bytes", llc},
                      {"llc_source", llc_size().source},
                      {"load_average_before", load_before},
                      {"load_average_after", load_average()},
                      {"hypre_version", hy::version()},
                      {"hypre_openmp", hy::uses_openmp()},
                      {"mpi_ranks", 1}};
    doc["quick"] = opt.quick;
    doc["rtol"] = kRtol;
    doc["max_iter"] = kMaxIter;
    doc["rows"] = all_rows;
    doc["targets"] = vs_hypre_targets(doc["rows"]);

    namespace fs = std::filesystem;
    fs::create_directories(opt.out);
    const fs::path json_path = fs::path(opt.out) / "vs-hypre.json";
    std::ofstream(json_path) << doc.dump(1) << "\n";
    std::ofstream(fs::path(opt.out) / "vs-hypre.md") << vs_hypre_markdown(doc);
    fmt::print(stderr, "  wrote {} and vs-hypre.md\n", json_path.string());
    plot(opt, json_path);
    return 0;
}

#endif  // MPMG_HAVE_HYPRE

}  // namespace mpmg::bench
