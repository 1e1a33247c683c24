// mpmg command-line tool. Maps the library's errors to exit codes (DESIGN.md):
//   0 converged, 3 ran but did not converge (or numerical trouble), 2 bad input or usage.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <string_view>

#include "commands.hpp"
#include "distributed/mpi_env.hpp"
#include "mpmg/errors.hpp"
#include "mpmg/solver.hpp"

namespace {

// Errors echo what the user gave (a file's line, a JSON key, an option value), which may hold
// newlines or other control bytes; escape them so that an error is always one line on stderr.
std::string one_line(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (u < 0x20 || u == 0x7f) {
            out += fmt::format("\\x{:02x}", u);
        } else {
            out += c;
        }
    }
    return out;
}

int usage_error(std::string_view what) {
    fmt::print(stderr, "mpmg: {}\n", one_line(what));
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    // Each benchmark repetition's hierarchy, and each level's scratch, reuses memory freed
    // before instead of faulting fresh pages in (mpmg/solver.hpp; README "Memory of the
    // hierarchy"). libsuperlu_dist, linked with hypre for `bench vs-hypre`, sets the same in its
    // constructor, so every CLI and benchmark number measured before this call existed was
    // measured so; a build without hypre now behaves the same.
    mpmg::keep_freed_memory();
    // Under mpirun (issue #8): MPI is initialised here when built in, and only rank 0 speaks;
    // every rank runs the same command and returns the same exit code.
    const mpmg::dist::Session mpi(&argc, &argv);
#ifndef MPMG_HAVE_MPI
    if (mpmg::dist::launched_in_parallel()) {
        return usage_error(
            "this mpmg was built without MPI; run it without mpirun, or rebuild "
            "with MPI (apt-get install libopenmpi-dev)");
    }
#endif
    if (mpmg::dist::world_rank() != 0) {
        std::fflush(stdout);
        std::fflush(stderr);
        if (std::freopen("/dev/null", "w", stdout) == nullptr ||
            std::freopen("/dev/null", "w", stderr) == nullptr) {
            return 2;
        }
    }
    CLI::App app{"mpmg: Krylov solvers preconditioned by mixed-precision multigrid"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "mpmg 0.1.0");
    const auto solve = mpmg::cli::add_solve(app);
    const auto info = mpmg::cli::add_info(app);
    const auto bench = mpmg::cli::add_bench(app);
    if (argc > 1 && argv[1][0] != '-' && std::string_view(argv[1]) != "solve" &&
        std::string_view(argv[1]) != "info" && std::string_view(argv[1]) != "bench") {
        return usage_error(fmt::format(
            "unknown command '{}'; expected solve, info or bench (see --help)", argv[1]));
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
        return usage_error(e.what());
    }
    try {
        if (app.got_subcommand("solve")) return solve();
        if (app.got_subcommand("bench")) return bench();
        return info();
    } catch (const mpmg::NumericalError& e) {
        fmt::print(stderr, "mpmg: numerical failure: {}\n", one_line(e.what()));
        return 3;
    } catch (const mpmg::Error& e) {
        return usage_error(e.what());
    } catch (const std::bad_alloc&) {
        return usage_error("out of memory: the problem is too large for this machine");
    } catch (const std::exception& e) {
        return usage_error(e.what());
    }
}
