// The subcommands of the mpmg CLI. Each registers its options on the CLI11 app and returns the
// process exit code when run: 0 converged / ok, 3 ran but did not converge, 2 bad input.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace mpmg::cli {

/// Registers `mpmg solve`; the returned function runs it after parsing.
std::function<int()> add_solve(CLI::App& app);
/// Registers `mpmg info`.
std::function<int()> add_info(CLI::App& app);
/// Registers `mpmg bench NAME`.
std::function<int()> add_bench(CLI::App& app);

/// Writes `text` to `path` through a temporary file renamed into place (never a partial file).
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace mpmg::cli
