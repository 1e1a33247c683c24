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
    std::function<StructuredProblem(Box, std::uint64_t, const GridWindow&)> make;
};

// laplace27 (times `scale`) with b = A 1, on a window of the grid.
StructuredProblem make_laplace27(Box box, double scale, const GridWindow& window) {
    StructuredProblem p;
    problem_detail::Assembly rows(box, Stencil::named("3d27"), 1, window);
    if (window.whole()) {
        rows.stored() = laplace27(box, scale);
    } else {
        SgDiaMatrix<double>& m = rows.stored();
        const std::array<int, 3>& lo = rows.stored_lo();
        const int center = m.stencil().center();
        for (int d = 0; d < m.stencil().size(); ++d) {
            const Offset& o = m.stencil()[d];
            const double value = (d == center ? 26.0 : -1.0) * scale;
            for (std::int64_t c = 0; c < m.box().cells(); ++c) {
                const problem_detail::Ijk l = problem_detail::ijk(m.box(), c);
                const int i = l.i + lo[0] + o.dx, j = l.j + lo[1] + o.dy, k = l.k + lo[2] + o.dz;
                if (i >= 0 && i < box.nx && j >= 0 && j < box.ny && k >= 0 && k < box.nz) {
                    m.value(d, c, 0, 0) = value;
                }
            }
        }
    }
    problem_detail::finish(p, rows,
                           std::vector<double>(static_cast<std::size_t>(box.cells()), 1.0));
    return p;
}

const std::vector<Entry>& registry() {
    static const std::vector<Entry> r = {
        {"laplace27", 1,
         [](Box b, std::uint64_t, const GridWindow& w) { return make_laplace27(b, 1.0, w); }},
        {"laplace27e8", 1,
         [](Box b, std::uint64_t, const GridWindow& w) { return make_laplace27(b, 1e8, w); }},
        {"rhd", 1, make_rhd},
        {"oil", 1, make_oil},
        {"weather", 1, make_weather},
        {"rhd3t", 3, make_rhd3t},
        {"oil4c", 4, make_oil4c},
        {"solid3d", 3,
         [](Box b, std::uint64_t, const GridWindow& w) { return make_solid3d(b, w); }},
        {"jump7", 1, [](Box b, std::uint64_t, const GridWindow& w) { return make_jump7(b, w); }},
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

Box problem_grid(const ProblemOptions& opt) { return problem_detail::problem_box(opt); }

StructuredProblem make_problem(const ProblemOptions& opt) { return make_problem_rows(opt, {}); }

StructuredProblem make_problem_rows(const ProblemOptions& opt, const GridWindow& window) {
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
        StructuredProblem p = e.make(box, opt.seed, window);
        p.window = window;
        p.name = opt.name;
        return p;
    }
    std::string valid;
    for (const auto& n : problem_names()) valid += (valid.empty() ? "" : ", ") + n;
    throw InvalidInput(fmt::format("--problem '{}': unknown; valid: {}", opt.name, valid));
}

}  // namespace mpmg
