// mpmg command-line tool. Maps the library's errors to exit codes (DESIGN.md):
//   0 converged, 3 ran but did not converge (or numerical trouble), 2 bad input or usage.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <new>
#include <string_view>

#include "commands.hpp"
#include "mpmg/errors.hpp"

int main(int argc, char** argv) {
    CLI::App app{"mpmg: Krylov solvers preconditioned by mixed-precision multigrid"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "mpmg 0.1.0");
    const auto solve = mpmg::cli::add_solve(app);
    const auto info = mpmg::cli::add_info(app);
    const auto bench = mpmg::cli::add_bench(app);
    if (argc > 1 && argv[1][0] != '-' && std::string_view(argv[1]) != "solve" &&
        std::string_view(argv[1]) != "info" && std::string_view(argv[1]) != "bench") {
        fmt::print(stderr,
                   "mpmg: unknown command '{}'; expected solve, info or bench (see --help)\n",
                   argv[1]);
        return 2;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
        fmt::print(stderr, "mpmg: {}\n", e.what());
        return 2;
    }
    try {
        if (app.got_subcommand("solve")) return solve();
        if (app.got_subcommand("bench")) return bench();
        return info();
    } catch (const mpmg::NumericalError& e) {
        fmt::print(stderr, "mpmg: numerical failure: {}\n", e.what());
        return 3;
    } catch (const mpmg::Error& e) {
        fmt::print(stderr, "mpmg: {}\n", e.what());
        return 2;
    } catch (const std::bad_alloc&) {
        fmt::print(stderr, "mpmg: out of memory: the problem is too large for this machine\n");
        return 2;
    } catch (const std::exception& e) {
        fmt::print(stderr, "mpmg: {}\n", e.what());
        return 2;
    }
}
