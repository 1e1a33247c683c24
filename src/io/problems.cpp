#include "io/problems.hpp"

#include <fmt/format.h>

#include "mpmg/errors.hpp"
#include "structured/sgdia_ops.hpp"

namespace mpmg {

std::vector<std::string> problem_names() { return {"laplace27", "laplace27e8"}; }

SgDiaMatrix<double> laplace27(Box box, double scale) {
    SgDiaMatrix<double> a(box, Stencil::named("3d27"), 1);
    const int center = a.stencil().center();
    const std::int64_t cells = box.cells();
    for (int d = 0; d < a.stencil().size(); ++d) {
        double* v = a.diagonal(d);
        for (std::int64_t c = 0; c < cells; ++c) {
            if (d == center) {
                v[c] = 26.0 * scale;
            } else if (a.neighbour_inside(c, d)) {
                v[c] = -1.0 * scale;
            }
        }
    }
    return a;
}

StructuredProblem make_problem(const ProblemOptions& opt) {
    Box box{opt.n, opt.n, opt.n};
    if (opt.grid[0] != 0) box = Box{opt.grid[0], opt.grid[1], opt.grid[2]};
    if (opt.components > 1) {
        throw InvalidInput(
            fmt::format("--problem {} has 1 component per cell, not {}", opt.name, opt.components));
    }
    StructuredProblem p;
    p.name = opt.name;
    if (opt.name == "laplace27") {
        p.a = laplace27(box, 1.0);
    } else if (opt.name == "laplace27e8") {
        p.a = laplace27(box, 1e8);
    } else {
        std::string valid;
        for (const auto& n : problem_names()) valid += (valid.empty() ? "" : ", ") + n;
        throw InvalidInput(fmt::format("--problem '{}': unknown; valid: {}", opt.name, valid));
    }
    p.x_exact.assign(static_cast<std::size_t>(p.a.rows()), 1.0);
    p.b.assign(p.x_exact.size(), 0.0);
    spmv(p.a, p.x_exact.data(), p.b.data());
    return p;
}

}  // namespace mpmg
