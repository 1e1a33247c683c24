#include "io/problems.hpp"

#include <fmt/format.h>

#include <algorithm>
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
    {
        // Offset by offset, the runs of each line whose neighbour lies inside the grid, into the
        // rows' own matrix (the whole grid is one window: assigning laplace27(box, scale) here
        // left the rows' first matrix, untouched, for the setup's allocations to fault in).
        SgDiaMatrix<double>& m = rows.stored();
        const std::array<int, 3>& lo = rows.stored_lo();
        const Box& w = m.box();
        const int center = m.stencil().center();
        for (int d = 0; d < m.stencil().size(); ++d) {
            const Offset& o = m.stencil()[d];
            const double value = (d == center ? 26.0 : -1.0) * scale;
            // Window cells l with 0 <= l + lo + o < grid extent, per direction.
            const auto range = [&](int l0, int n, int off, int grid) {
                return std::pair{std::max(0, -(l0 + off)), std::min(n, grid - l0 - off)};
            };
            const auto [i0, i1] = range(lo[0], w.nx, o.dx, box.nx);
            const auto [j0, j1] = range(lo[1], w.ny, o.dy, box.ny);
            const auto [k0, k1] = range(lo[2], w.nz, o.dz, box.nz);
            double* v = m.diagonal(d);
            for (int k = k0; k < k1; ++k) {
                for (int j = j0; j < j1; ++j) {
                    const std::int64_t line = problem_detail::cell_index(w, 0, j, k);
                    if (i1 > i0) std::fill(v + line + i0, v + line + i1, value);
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

StructuredProblem make_problem(const std::string& name, int n) {
    ProblemOptions opt;
    opt.name = name;
    opt.n = n;
    return make_problem(opt);
}

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
