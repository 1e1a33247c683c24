#include "io/problems.hpp"

#include <fmt/format.h>

#include <functional>

#include "io/problem_common.hpp"
#include "mpmg/errors.hpp"

namespace mpmg {
namespace {

struct Entry {
    const char* name;
    int block;  ///< unknowns per cell
    std::function<StructuredProblem(Box, std::uint64_t)> make;
};

const std::vector<Entry>& registry() {
    static const std::vector<Entry> r = {
        {"laplace27", 1,
         [](Box b, std::uint64_t) {
             StructuredProblem p;
             p.a = laplace27(b, 1.0);
             problem_detail::set_rhs(p,
                                     std::vector<double>(static_cast<std::size_t>(b.cells()), 1.0));
             return p;
         }},
        {"laplace27e8", 1,
         [](Box b, std::uint64_t) {
             StructuredProblem p;
             p.a = laplace27(b, 1e8);
             problem_detail::set_rhs(p,
                                     std::vector<double>(static_cast<std::size_t>(b.cells()), 1.0));
             return p;
         }},
        {"rhd", 1, make_rhd},
        {"oil", 1, make_oil},
        {"weather", 1, make_weather},
        {"rhd3t", 3, make_rhd3t},
        {"oil4c", 4, make_oil4c},
        {"solid3d", 3, [](Box b, std::uint64_t) { return make_solid3d(b); }},
        {"jump7", 1, [](Box b, std::uint64_t) { return make_jump7(b); }},
    };
    return r;
}

}  // namespace

std::vector<std::string> problem_names() {
    std::vector<std::string> names;
    for (const Entry& e : registry()) names.emplace_back(e.name);
    return names;
}

SgDiaMatrix<double> laplace27(Box box, double scale) {
    SgDiaMatrix<double> a(box, Stencil::named("3d27"), 1);
    const int center = a.stencil().center();
    for (int d = 0; d < a.stencil().size(); ++d) {
        double* v = a.diagonal(d);
        const double value = (d == center ? 26.0 : -1.0) * scale;
        a.for_each_inside(d, [&](std::int64_t c) { v[c] = value; });
    }
    return a;
}

StructuredProblem make_problem(const ProblemOptions& opt) {
    const Box box = problem_detail::problem_box(opt);
    for (const Entry& e : registry()) {
        if (opt.name != e.name) continue;
        if (opt.components != 0 && opt.components != e.block) {
            throw InvalidInput(fmt::format("--problem {} has {} component(s) per cell, not {}",
                                           opt.name, e.block, opt.components));
        }
        if (box.nx <= 0 || box.ny <= 0 || box.nz <= 0) {
            throw InvalidInput(fmt::format("--problem {}: grid {}x{}x{} must have positive extents",
                                           opt.name, box.nx, box.ny, box.nz));
        }
        StructuredProblem p = e.make(box, opt.seed);
        p.name = opt.name;
        return p;
    }
    std::string valid;
    for (const auto& n : problem_names()) valid += (valid.empty() ? "" : ", ") + n;
    throw InvalidInput(fmt::format("--problem '{}': unknown; valid: {}", opt.name, valid));
}

}  // namespace mpmg
