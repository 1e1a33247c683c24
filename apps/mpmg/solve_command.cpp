// mpmg solve: options -> SolverOptions (after --config), solve, print, --json.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <system_error>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

#include "commands.hpp"
#include "distributed/mpi_env.hpp"
#include "mpmg/errors.hpp"
#include "mpmg/solver.hpp"

namespace mpmg::cli {
namespace {

struct SolveArgs {
    std::string problem, matrix, rhs, grid, precision, work, matrix_precision, scaling, method,
        solver, cycle, smoother, interpolation, aggregation, reorder, row_weights, block_size,
        coarse_solver, saddle_point, config, json;
    int n = 0, shift_level = -1, max_iter = 0, threads = 0, restart = 0;
    std::uint64_t seed = 1;
    double rtol = 0.0;
    bool quiet = false;
};

std::array<int, 4> parse_grid(const std::string& text) {
    std::array<int, 4> out{0, 0, 0, 0};
    std::size_t count = 0;
    const char* p = text.data();
    const char* end = p + text.size();
    while (p <= end && count < 5) {
        int v = 0;
        const auto [next, ec] = std::from_chars(p, end, v);
        if (ec != std::errc() || v < 1 || count >= 4) break;
        out[count++] = v;
        if (next == end) {
            p = end + 1;
            break;
        }
        if (*next != ',') break;
        p = next + 1;
    }
    if (p != end + 1 || count < 3) {
        throw InvalidInput(fmt::format(
            "--grid '{}': expected NX,NY,NZ or NX,NY,NZ,R with positive integers", text));
    }
    return out;
}

// Applies the flags the user gave (count() > 0) over `o`.
void apply_flags(const CLI::App& cmd, const SolveArgs& a, SolverOptions& o) {
    const auto given = [&](const char* name) { return cmd.get_option(name)->count() > 0; };
    if (given("--problem")) o.problem.name = a.problem;
    if (given("--matrix")) o.problem.matrix = a.matrix;
    if (given("--rhs")) o.problem.rhs = a.rhs;
    if (given("--n")) o.problem.n = a.n;
    if (given("--seed")) o.problem.seed = a.seed;
    if (given("--grid")) {
        const auto g = parse_grid(a.grid);
        o.problem.grid = {g[0], g[1], g[2]};
        o.problem.components = g[3];
    }
    if (given("--precision") && (given("--work") || given("--matrix-precision"))) {
        throw InvalidInput("--precision and --work/--matrix-precision contradict: give one form");
    }
    if (given("--matrix-precision") && !given("--work")) {
        throw InvalidInput(
            "--matrix-precision needs --work (e.g. --work DP-SP "
            "--matrix-precision DP-SP-HP)");
    }
    const int shift = o.precision.shift_level;
    if (given("--precision")) o.precision = parse_precision(a.precision, "--precision");
    if (given("--work")) o.precision = parse_ginkgo_precision(a.work, a.matrix_precision);
    o.precision.shift_level = given("--shift-level") ? a.shift_level : shift;
    if (given("--scaling")) o.multigrid.scaling = parse_scaling(a.scaling, "--scaling");
    if (given("--method")) o.method = parse_method(a.method, "--method");
    if (given("--solver")) o.solver = parse_solver(a.solver, "--solver");
    if (given("--cycle")) o.multigrid.cycle = parse_cycle(a.cycle, "--cycle");
    if (given("--smoother")) o.multigrid.smoother = parse_smoother(a.smoother, "--smoother");
    if (given("--reorder")) o.multigrid.reorder = parse_reorder(a.reorder, "--reorder");
    if (given("--row-weights")) {
        o.multigrid.row_weights = parse_row_weights(a.row_weights, "--row-weights");
    }
    if (given("--block-size")) {
        o.multigrid.block_size = parse_block_size(a.block_size, "--block-size");
    }
    if (given("--saddle-point")) {
        o.multigrid.saddle_point = parse_saddle_point(a.saddle_point, "--saddle-point");
    }
    if (given("--coarse-solver")) {
        o.multigrid.coarse_solver = parse_coarse_solver(a.coarse_solver, "--coarse-solver");
    }
    if (given("--aggregation")) {
        o.multigrid.aggregation = parse_aggregation(a.aggregation, "--aggregation");
    }
    if (given("--interpolation")) {
        o.multigrid.interpolation = parse_interpolation(a.interpolation, "--interpolation");
    }
    if (given("--rtol")) o.rtol = a.rtol;
    if (given("--max-iter")) o.max_iter = a.max_iter;
    if (given("--restart")) o.restart = a.restart;
    if (given("--threads")) o.threads = a.threads;
}

SolverOptions read_config(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
        throw InvalidInput(fmt::format("--config '{}': is a directory, not a JSON file", path));
    }
    std::ifstream in(path);
    if (!in) throw InvalidInput(fmt::format("--config '{}': cannot open the file", path));
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e999
        throw InvalidInput(fmt::format("--config '{}': not valid JSON: {}", path, e.what()));
    } catch (const std::ios_base::failure& e) {
        throw InvalidInput(fmt::format("--config '{}': cannot read the file: {}", path, e.what()));
    }
    try {
        return options_from_json(j);
    } catch (const InvalidInput& e) {
        throw InvalidInput(fmt::format("--config '{}': {}", path, e.what()));
    }
}

void print_hierarchy(const SolveResult& r) {
    fmt::print("hierarchy: {} levels, grid complexity {:.3f}, operator complexity {:.3f}{}{}\n",
               r.levels.size(), r.grid_complexity, r.operator_complexity,
               r.block_size > 1 ? fmt::format(", nodes of {} unknowns", r.block_size) : "",
               r.reordered.empty() ? "" : fmt::format(", unknowns renumbered ({})", r.reordered));
    if (r.block_size > 1 || r.block_size_reason.find("--block-size") != std::string::npos) {
        fmt::print("block size: {} ({})\n", r.block_size, r.block_size_reason);
    }
    if (r.operator_storage != r.options.precision.krylov) {
        const std::string what =
            r.operator_scale != 1.0 ? fmt::format("A / {:g}", r.operator_scale) : "A";
        fmt::print(
            "Krylov products: {} stored in {} (holds every value of {} exactly){}, computed in "
            "{}{}\n",
            what, to_string(r.operator_storage), what,
            r.operator_storage_from > 1
                ? fmt::format(" from product {} on", r.operator_storage_from)
                : std::string(),
            to_string(r.options.precision.krylov),
            r.operator_scale != 1.0 ? fmt::format(", times {:g}", r.operator_scale) : "");
    }
    if (r.operator_mirrored_from > 0) {
        fmt::print(
            "Krylov products: A is exactly symmetric, the products read the centre and the "
            "offsets after it only (from product {} on)\n",
            r.operator_mirrored_from);
    }
    fmt::print("  {:>3} {:>15} {:>6} {:>10} {:>11} {:>5} {:>5} {:>6} {:>8} {:>8} {:>8}  {}\n",
               "lvl", "grid", "stncl", "rows", "nnz", "P", "D", "scaled", "G", "overflow",
               "underfl", "solve / note");
    for (std::size_t l = 0; l < r.levels.size(); ++l) {
        const LevelInfo& v = r.levels[l];
        const std::string grid = v.stencil == "csr"
                                     ? std::string("-")
                                     : fmt::format("{}x{}x{}{}", v.grid[0], v.grid[1], v.grid[2],
                                                   v.block > 1 ? fmt::format("x{}", v.block) : "");
        fmt::print("  {:>3} {:>15} {:>6} {:>10} {:>11} {:>5} {:>5} {:>6} {:>8} {:>8} {:>8}  {}{}\n",
                   l, grid, v.stencil, v.rows, v.nnz, to_string(v.compute), to_string(v.storage),
                   v.scaled ? "yes" : "no",
                   v.scaled && v.scale_g > 0.0 ? fmt::format("{:g}", v.scale_g) : "-",
                   v.overflow_count, v.underflow_count, v.solve,
                   v.note.empty() ? "" : "; " + v.note);
    }
}

/// The most resident memory this process has held so far, in MB (10^6 bytes): the read, the
/// setup and the solve together, libraries and MPI's buffers included.
double peak_resident_mb() {
    rusage u{};
    if (getrusage(RUSAGE_SELF, &u) != 0) return 0.0;
#if defined(__APPLE__)
    return static_cast<double>(u.ru_maxrss) / 1e6;  // bytes
#else
    return static_cast<double>(u.ru_maxrss) * 1024.0 / 1e6;  // KiB
#endif
}

void print_result(const SolveResult& r) {
    for (std::size_t k = 0; k < r.residual_history.size(); ++k) {
        fmt::print("  iter {:4d}  ||r||/||b|| = {:.6e}\n", k, r.residual_history[k]);
    }
    fmt::print("{} after {} iterations: relative residual {:.3e}{}\n",
               r.converged ? "converged" : "NOT converged", r.iterations, r.final_relative_residual,
               r.error_vs_exact ? fmt::format(", error vs exact {:.3e}", *r.error_vs_exact) : "");
    for (const std::string& g : r.guard_events) fmt::print("guard: {}\n", g);
    if (!r.message.empty() && !r.converged) fmt::print("reason: {}\n", r.message);
    fmt::print("time [s]: setup {:.4f}  preconditioner {:.4f}  other {:.4f}  total {:.4f}\n",
               r.setup_s, r.preconditioner_s, r.other_s, r.total_s);
}

}  // namespace

void check_output_path(const std::string& path, const std::vector<std::string>& inputs) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path out = fs::weakly_canonical(path, ec);
    for (const std::string& input : inputs) {
        std::error_code ec_in;
        if (!ec && !input.empty() && fs::weakly_canonical(input, ec_in) == out && !ec_in) {
            throw InvalidInput(fmt::format("--json '{}' would overwrite an input file", path));
        }
    }
    const fs::path parent = fs::path(path).parent_path();
    if (!parent.empty() && !fs::is_directory(parent, ec)) {
        throw InvalidInput(
            fmt::format("--json '{}': the directory '{}' does not exist; create it "
                        "or choose another path",
                        path, parent.string()));
    }
    if (fs::is_directory(path, ec)) {
        throw InvalidInput(
            fmt::format("--json '{}': is a directory; give the path of a file", path));
    }
}

void write_file_atomically(const std::string& path, const std::string& text) {
    const std::string tmp = fmt::format("{}.tmp.{}", path, static_cast<long>(::getpid()));
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw InvalidInput(fmt::format("cannot write '{}'", path));
        out << text;
        if (!out.flush()) {
            std::remove(tmp.c_str());
            throw InvalidInput(fmt::format("writing '{}' failed", path));
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::remove(tmp.c_str());
        throw InvalidInput(fmt::format("cannot write '{}': {}", path, ec.message()));
    }
}

std::function<int()> add_solve(CLI::App& app) {
    auto a = std::make_shared<SolveArgs>();
    CLI::App* cmd = app.add_subcommand("solve", "solve A x = b");
    cmd->add_option("--problem", a->problem,
                    "built-in problem: laplace27, laplace27e8, rhd, oil, weather, rhd3t, oil4c, "
                    "solid3d, jump7");
    cmd->add_option("--n", a->n, "cells per direction of a built-in problem (grid n^3)");
    cmd->add_option("--grid", a->grid, "grid NX,NY,NZ[,R] (R unknowns per cell)");
    cmd->add_option("--seed", a->seed, "seed of randomised problems");
    cmd->add_option("--matrix", a->matrix, "Matrix Market file of A");
    cmd->add_option("--rhs", a->rhs, "Matrix Market file of b (default b = A*1)");
    cmd->add_option("--precision", a->precision, "K64P32D16 (K, P, D bits), or auto");
    cmd->add_option("--work", a->work, "Ginkgo-style working precision per level: DP-SP");
    cmd->add_option("--matrix-precision", a->matrix_precision,
                    "matrix precision per level: DP-SP-HP");
    cmd->add_option("--shift-level", a->shift_level, "levels >= L store in compute precision");
    cmd->add_option("--scaling", a->scaling, "setup-then-scale|scale-then-setup|none|auto");
    cmd->add_option("--method", a->method, "structured|amg|auto");
    cmd->add_option("--solver", a->solver,
                    "auto|cg|gmres|richardson|mg (auto: CG if symmetric, else GMRES)");
    cmd->add_option("--cycle", a->cycle,
                    "auto|V|W|F|K (K: Krylov-accelerated cycle, AMG path; auto: V, or K for an AMG "
                    "A of at least 50000 rows whose diagonal spreads at most 1e4)");
    cmd->add_option(
        "--smoother", a->smoother,
        "auto (the problem's own) | symgs | ilu0 | jacobi | block-jacobi | l1-jacobi | chebyshev");
    cmd->add_option("--interpolation", a->interpolation,
                    "auto (the problem's own) | linear | operator (structured path)");
    cmd->add_option("--aggregation", a->aggregation,
                    "auto (pgm) | pgm | smoothed (AMG path: piecewise-constant or smoothed "
                    "aggregation)");
    cmd->add_option("--coarse-solver", a->coarse_solver,
                    "auto | direct | smoother (the coarsest level: LU, or multigrid.coarse_sweeps "
                    "symmetric sweeps; auto: LU up to 4096 rows)");
    cmd->add_option("--reorder", a->reorder,
                    "auto (none; under mpirun rcm where it makes the ranks' row blocks more "
                    "local) | none | rcm (AMG path: reverse Cuthill-McKee renumbering before "
                    "setup)");
    cmd->add_option("--row-weights", a->row_weights,
                    "auto | none (AMG path, nonsymmetric A: build the hierarchy on W A, W the "
                    "estimated left near-null row weights, where they balance the equations "
                    "better than constants)");
    cmd->add_option("--block-size", a->block_size,
                    "auto | R (AMG path: R unknowns per node, numbered node by node, as in "
                    "elasticity; nodes are aggregated and each component keeps its own coarse "
                    "unknown; auto: read from A's pattern, 1: scalar)");
    cmd->add_option("--saddle-point", a->saddle_point,
                    "auto | none | block (AMG path, A with zero diagonal entries [[A_uu, B^T], "
                    "[B, C]]: block = GMRES with AMG on A_uu and on B diag(A_uu)^-1 B^T - C; "
                    "auto: block where A's rows split so, none: one AMG on all of A)");
    cmd->add_option("--rtol", a->rtol, "relative residual tolerance (default 1e-10)");
    cmd->add_option("--max-iter", a->max_iter, "maximum iterations (default 200)");
    cmd->add_option("--restart", a->restart, "GMRES restart length (default 30)");
    cmd->add_option("--threads", a->threads, "OpenMP threads (default: all)");
    cmd->add_option("--config", a->config, "JSON options; flags given here override it");
    cmd->add_option("--json", a->json, "write the result as JSON to this file");
    cmd->add_flag("--quiet", a->quiet, "print only the summary");
    return [a, cmd]() {
        SolverOptions o = a->config.empty() ? SolverOptions{} : read_config(a->config);
        apply_flags(*cmd, *a, o);
        validate(o);
        // Before the solve, so that a bad output path costs nothing.
        if (!a->json.empty())
            check_output_path(a->json, {o.problem.matrix, o.problem.rhs, a->config});
        fmt::print(
            "mpmg solve: {} | precision {} | method {} | solver {} | cycle {} | smoother {} "
            "| scaling {} | rtol {:g}\n",
            o.problem.name.empty() ? o.problem.matrix : o.problem.name, o.precision.notation(),
            to_string(o.method), to_string(o.solver), to_string(o.multigrid.cycle),
            to_string(o.multigrid.smoother), to_string(o.multigrid.scaling), o.rtol);
        const SolveResult r = solve(o);
        fmt::print("problem: {} rows, {} nonzeros | resolved: method {} | solver {} | cycle {}\n",
                   r.rows, r.nnz, to_string(r.options.method), to_string(r.options.solver),
                   to_string(r.options.multigrid.cycle));
        if (r.negated) {
            fmt::print(
                "A's diagonal is negative on every row: solved -A x = -b (the same x and "
                "relative residuals)\n");
        }
        if (!r.auto_reason.empty()) fmt::print("auto: {}\n", r.auto_reason);
        if (r.a_exponent != 0 || r.b_exponent != 0) {
            fmt::print(
                "input scale: the largest |a_ij| or |b_i| lies outside [2^-64, 2^64]: solved "
                "(2^{} A) x' = 2^{} b, x = 2^{} x'\n",
                r.a_exponent, r.b_exponent, r.a_exponent - r.b_exponent);
        }
        if (r.a_flushed || r.b_flushed) {
            fmt::print(
                "warning: the input scale turned some nonzero values of {} into zero (their "
                "magnitudes span more than FP64 holds): the system solved is not quite the one "
                "given, and a small residual may hide large errors in the unknowns they "
                "determined\n",
                r.a_flushed && r.b_flushed ? "A and b"
                : r.a_flushed              ? "A"
                                           : "b");
        }
        print_hierarchy(r);
        if (a->quiet) {
            fmt::print("{} after {} iterations: relative residual {:.3e}, total {:.4f} s\n",
                       r.converged ? "converged" : "NOT converged", r.iterations,
                       r.final_relative_residual, r.total_s);
        } else {
            print_result(r);
        }
        if (r.partition) {
            const PartitionInfo& pi = *r.partition;
            fmt::print("distributed: {} ranks ({}x{}x{}) x {} threads, {} distributed levels\n",
                       pi.ranks, pi.dims[0], pi.dims[1], pi.dims[2], pi.threads_per_rank,
                       pi.distributed_levels);
        }
        // Under mpirun: the largest process's (a collective call, on every rank).
        const double peak_mb = dist::max_all_ranks(peak_resident_mb());
        if (!a->quiet) {
            fmt::print("peak memory: {:.0f} MB resident{}\n", peak_mb,
                       r.partition ? " (the largest process)" : "");
        }
        // Under mpirun every rank solves; rank 0 alone writes.
        if (!a->json.empty() && dist::world_rank() == 0) {
            nlohmann::json j = to_json(r);
            j["peak_memory_mb"] = peak_mb;
            write_file_atomically(a->json, j.dump(2) + "\n");
        }
        if (!r.converged) {
            fmt::print(stderr, "mpmg: did not converge: {}\n",
                       r.message.empty() ? std::string(to_string(r.status)) : r.message);
        }
        return r.converged ? 0 : 3;
    };
}

}  // namespace mpmg::cli
