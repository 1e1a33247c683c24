// JSON <-> SolverOptions. Paths mirror the struct: problem.*, multigrid.*, and top-level solver
// fields. Unknown keys and wrong types are InvalidInput naming the path.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <functional>
#include <map>

#include "mpmg/errors.hpp"
#include "mpmg/options.hpp"

namespace mpmg {
namespace {

using json = nlohmann::json;
using Handler = std::function<void(const json&, const std::string& path)>;

[[noreturn]] void wrong_type(const std::string& path, std::string_view expected, const json& v) {
    throw InvalidInput(fmt::format("config {}: expected {}, got {} ({})", path, expected,
                                   v.type_name(), v.dump()));
}

std::string get_string(const json& v, const std::string& path) {
    if (!v.is_string()) wrong_type(path, "a string", v);
    return v.get<std::string>();
}
int get_int(const json& v, const std::string& path) {
    if (!v.is_number_integer()) wrong_type(path, "an integer", v);
    const auto x = v.get<long long>();
    if (x < -(1LL << 31) || x > (1LL << 31) - 1) wrong_type(path, "a 32-bit integer", v);
    return static_cast<int>(x);
}
bool get_bool(const json& v, const std::string& path) {
    if (!v.is_boolean()) wrong_type(path, "true or false", v);
    return v.get<bool>();
}
double get_double(const json& v, const std::string& path) {
    if (!v.is_number()) wrong_type(path, "a number", v);
    return v.get<double>();
}

void walk(const json& obj, const std::string& prefix, const std::map<std::string, Handler>& keys) {
    const std::string where = prefix.empty() ? "(top level)" : prefix;
    if (!obj.is_object()) wrong_type(where, "an object", obj);
    for (const auto& [k, v] : obj.items()) {
        const std::string path = prefix.empty() ? k : prefix + "." + k;
        const auto it = keys.find(k);
        if (it == keys.end()) {
            std::string valid;
            for (const auto& [name, h] : keys) valid += (valid.empty() ? "" : ", ") + name;
            throw InvalidInput(
                fmt::format("config: unknown key '{}'; valid keys here: {}", path, valid));
        }
        it->second(v, path);
    }
}

void read_problem(const json& j, const std::string& prefix, ProblemOptions& p) {
    walk(j, prefix,
         {{"name", [&](const json& v, const std::string& at) { p.name = get_string(v, at); }},
          {"n", [&](const json& v, const std::string& at) { p.n = get_int(v, at); }},
          {"grid",
           [&](const json& v, const std::string& at) {
               if (!v.is_array() || v.size() < 3 || v.size() > 4) {
                   wrong_type(at, "an array [nx, ny, nz] or [nx, ny, nz, r]", v);
               }
               for (std::size_t i = 0; i < 3; ++i) {
                   p.grid[i] = get_int(v[i], fmt::format("{}[{}]", at, i));
               }
               if (v.size() == 4) p.components = get_int(v[3], at + "[3]");
           }},
          {"seed",
           [&](const json& v, const std::string& at) {
               if (!v.is_number_unsigned()) wrong_type(at, "a non-negative integer", v);
               p.seed = v.get<std::uint64_t>();
           }},
          {"matrix", [&](const json& v, const std::string& at) { p.matrix = get_string(v, at); }},
          {"rhs", [&](const json& v, const std::string& at) { p.rhs = get_string(v, at); }}});
}

void read_multigrid(const json& j, const std::string& prefix, MultigridOptions& m) {
    auto str = [](const json& v, const std::string& at) { return get_string(v, at); };
    walk(j, prefix,
         {{"cycle",
           [&](const json& v, const std::string& at) {
               m.cycle = parse_cycle(str(v, at), "config " + at);
           }},
          {"smoother",
           [&](const json& v, const std::string& at) {
               m.smoother = parse_smoother(str(v, at), "config " + at);
           }},
          {"scaling",
           [&](const json& v, const std::string& at) {
               m.scaling = parse_scaling(str(v, at), "config " + at);
           }},
          {"interpolation",
           [&](const json& v, const std::string& at) {
               m.interpolation = parse_interpolation(str(v, at), "config " + at);
           }},
          {"aggregation",
           [&](const json& v, const std::string& at) {
               m.aggregation = parse_aggregation(str(v, at), "config " + at);
           }},
          {"coarse_solver",
           [&](const json& v, const std::string& at) {
               m.coarse_solver = parse_coarse_solver(str(v, at), "config " + at);
           }},
          {"coarse_sweeps",
           [&](const json& v, const std::string& at) { m.coarse_sweeps = get_int(v, at); }},
          {"reorder",
           [&](const json& v, const std::string& at) {
               m.reorder = parse_reorder(str(v, at), "config " + at);
           }},
          {"row_weights",
           [&](const json& v, const std::string& at) {
               m.row_weights = parse_row_weights(str(v, at), "config " + at);
           }},
          {"saddle_point",
           [&](const json& v, const std::string& at) {
               m.saddle_point = parse_saddle_point(str(v, at), "config " + at);
           }},
          {"block_size",
           [&](const json& v, const std::string& at) {
               if (v.is_string()) {
                   m.block_size = parse_block_size(v.get<std::string>(), "config " + at);
               } else {
                   m.block_size = get_int(v, at);
               }
           }},
          {"pre_sweeps",
           [&](const json& v, const std::string& at) { m.pre_sweeps = get_int(v, at); }},
          {"post_sweeps",
           [&](const json& v, const std::string& at) { m.post_sweeps = get_int(v, at); }},
          {"jacobi_weight",
           [&](const json& v, const std::string& at) { m.jacobi_weight = get_double(v, at); }},
          {"max_levels",
           [&](const json& v, const std::string& at) { m.max_levels = get_int(v, at); }},
          {"max_coarse_rows",
           [&](const json& v, const std::string& at) { m.max_coarse_rows = get_int(v, at); }},
          {"setup_fallback",
           [&](const json& v, const std::string& at) { m.setup_fallback = get_bool(v, at); }},
          {"semi_threshold",
           [&](const json& v, const std::string& at) { m.semi_threshold = get_double(v, at); }}});
}

PrecisionPlan read_precision(const json& v, const std::string& at, int shift) {
    PrecisionPlan plan;
    if (v.is_string()) {
        plan = parse_precision(v.get<std::string>(), "config " + at);
    } else if (v.is_object()) {
        std::string work, matrix;
        walk(v, at,
             {{"work", [&](const json& x, const std::string& p) { work = get_string(x, p); }},
              {"matrix", [&](const json& x, const std::string& p) { matrix = get_string(x, p); }}});
        if (work.empty()) throw InvalidInput(fmt::format("config {}.work is missing", at));
        plan = parse_ginkgo_precision(work, matrix);
    } else {
        wrong_type(at, "a string like \"K64P32D16\" or {\"work\": ..., \"matrix\": ...}", v);
    }
    plan.shift_level = shift;
    return plan;
}

json precision_to_json(PrecisionPlan plan) {
    plan.shift_level = -1;  // written as its own key
    const std::string text = plan.notation();
    if (text.rfind("work=", 0) != 0) return text;
    const std::size_t space = text.find(' ');
    return json{{"work", text.substr(5, space - 5)}, {"matrix", text.substr(space + 8)}};
}

}  // namespace

SolverOptions options_from_json(const json& j, SolverOptions base) {
    SolverOptions o = std::move(base);
    const json* precision = nullptr;
    std::string precision_path;
    walk(
        j, "",
        {{"problem", [&](const json& v, const std::string& at) { read_problem(v, at, o.problem); }},
         {"multigrid",
          [&](const json& v, const std::string& at) { read_multigrid(v, at, o.multigrid); }},
         {"precision",
          [&](const json& v, const std::string& at) {
              precision = &v;
              precision_path = at;
          }},
         {"shift_level",
          [&](const json& v, const std::string& at) { o.precision.shift_level = get_int(v, at); }},
         {"method",
          [&](const json& v, const std::string& at) {
              o.method = parse_method(get_string(v, at), "config " + at);
          }},
         {"solver",
          [&](const json& v, const std::string& at) {
              o.solver = parse_solver(get_string(v, at), "config " + at);
          }},
         {"rtol", [&](const json& v, const std::string& at) { o.rtol = get_double(v, at); }},
         {"max_iter", [&](const json& v, const std::string& at) { o.max_iter = get_int(v, at); }},
         {"restart", [&](const json& v, const std::string& at) { o.restart = get_int(v, at); }},
         {"threads", [&](const json& v, const std::string& at) { o.threads = get_int(v, at); }},
         {"guard", [&](const json& v, const std::string& at) { o.guard = get_bool(v, at); }}});
    if (precision != nullptr) {
        o.precision = read_precision(*precision, precision_path, o.precision.shift_level);
    }
    return o;
}

json to_json(const SolverOptions& o) {
    json problem = {{"seed", o.problem.seed}};
    if (!o.problem.name.empty()) {
        problem["name"] = o.problem.name;
        problem["n"] = o.problem.n;
    }
    if (o.problem.grid[0] != 0) {
        problem["grid"] =
            o.problem.components > 0
                ? json::array({o.problem.grid[0], o.problem.grid[1], o.problem.grid[2],
                               o.problem.components})
                : json::array({o.problem.grid[0], o.problem.grid[1], o.problem.grid[2]});
    }
    if (!o.problem.matrix.empty()) problem["matrix"] = o.problem.matrix;
    if (!o.problem.rhs.empty()) problem["rhs"] = o.problem.rhs;
    const MultigridOptions& m = o.multigrid;
    return json{{"problem", problem},
                {"multigrid",
                 {{"cycle", to_string(m.cycle)},
                  {"smoother", to_string(m.smoother)},
                  {"scaling", to_string(m.scaling)},
                  {"interpolation", to_string(m.interpolation)},
                  {"aggregation", to_string(m.aggregation)},
                  {"reorder", to_string(m.reorder)},
                  {"row_weights", to_string(m.row_weights)},
                  {"saddle_point", to_string(m.saddle_point)},
                  {"block_size", m.block_size == 0 ? json("auto") : json(m.block_size)},
                  {"coarse_solver", to_string(m.coarse_solver)},
                  {"coarse_sweeps", m.coarse_sweeps},
                  {"pre_sweeps", m.pre_sweeps},
                  {"post_sweeps", m.post_sweeps},
                  {"jacobi_weight", m.jacobi_weight},
                  {"max_levels", m.max_levels},
                  {"max_coarse_rows", m.max_coarse_rows},
                  {"setup_fallback", m.setup_fallback},
                  {"semi_threshold", m.semi_threshold}}},
                {"precision", precision_to_json(o.precision)},
                {"shift_level", o.precision.shift_level},
                {"method", to_string(o.method)},
                {"solver", to_string(o.solver)},
                {"rtol", o.rtol},
                {"max_iter", o.max_iter},
                {"restart", o.restart},
                {"threads", o.threads},
                {"guard", o.guard}};
}

}  // namespace mpmg
