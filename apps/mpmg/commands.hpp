// The subcommands of the mpmg CLI. Each registers its options on the CLI11 app and returns the
// process exit code when run: 0 converged / ok, 3 ran but did not converge, 2 bad input.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace mpmg::cli {

/// Registers `mpmg solve`; the returned function runs it after parsing.
std::function<int()> add_solve(CLI::App& app);
/// Registers `mpmg info`.
std::function<int()> add_info(CLI::App& app);
/// Registers `mpmg bench NAME`.
std::function<int()> add_bench(CLI::App& app);

/// Throws InvalidInput, before any work is done, when the --json `path` names one of `inputs`, a
/// directory, or a file in a directory that does not exist.
void check_output_path(const std::string& path, const std::vector<std::string>& inputs);

/// Writes `text` to `path` through a temporary file renamed into place (never a partial file).
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace mpmg::cli
