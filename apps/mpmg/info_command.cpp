// mpmg info A.mtx: size, nnz, symmetry, value range and the FP16 range verdict.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <memory>

#include "commands.hpp"
#include "io/matrix_info.hpp"
#include "io/matrix_market.hpp"

namespace mpmg::cli {

std::function<int()> add_info(CLI::App& app) {
    struct Args {
        std::string path, json;
    };
    auto a = std::make_shared<Args>();
    CLI::App* cmd = app.add_subcommand("info", "describe a Matrix Market matrix");
    cmd->add_option("matrix", a->path, "Matrix Market file (.mtx or .mtx.gz)")->required();
    cmd->add_option("--json", a->json, "also write the description as JSON to this file");
    return [a]() {
        if (!a->json.empty()) check_output_path(a->json, {a->path});
        const CsrMatrix m = read_matrix_market(a->path);
        const MatrixInfo info = analyse_matrix(m);
        fmt::print("{}", format_info(info, a->path));
        if (!a->json.empty()) write_file_atomically(a->json, to_json(info).dump(2) + "\n");
        return 0;
    };
}

}  // namespace mpmg::cli
