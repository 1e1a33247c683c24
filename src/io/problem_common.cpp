#include "io/problem_common.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "mpmg/errors.hpp"
#include "structured/sgdia_ops.hpp"

namespace mpmg::problem_detail {

Box problem_box(const ProblemOptions& opt) {
    if (opt.grid[0] != 0) return Box{opt.grid[0], opt.grid[1], opt.grid[2]};
    return Box{opt.n, opt.n, opt.n};
}

Assembly::Assembly(Box grid, Stencil stencil, int block, const GridWindow& window)
    : grid_(grid), whole_(window.whole()) {
    Box stored = grid;
    if (!whole_) {
        int ext[3];
        for (int d = 0; d < 3; ++d) {
            const auto du = static_cast<std::size_t>(d);
            if (window.lo[du] < 0 || window.lo[du] + window.box.extent(d) > grid.extent(d)) {
                throw InvalidInput("a problem window must lie inside the grid");
            }
            lo_[du] = window.lo[du];
            ext[d] = window.box.extent(d);
        }
        stored = Box{ext[0], ext[1], ext[2]};
    }
    m_ = SgDiaMatrix<double>(stored, std::move(stencil), block);
}

CellRange Assembly::cells(int grow) const {
    CellRange r{grid_, {0, 0, 0}, {grid_.nx, grid_.ny, grid_.nz}};
    if (whole_) return r;
    for (int d = 0; d < 3; ++d) {
        const auto du = static_cast<std::size_t>(d);
        r.lo[du] = std::max(0, lo_[du] - grow);
        r.hi[du] = std::min(grid_.extent(d), lo_[du] + m_.box().extent(d) + grow);
    }
    return r;
}

std::int64_t Assembly::stored_cell(std::int64_t cell) const {
    const Ijk c = ijk(grid_, cell);
    const Box& b = m_.box();
    const int i = c.i - lo_[0], j = c.j - lo_[1], k = c.k - lo_[2];
    if (i < 0 || i >= b.nx || j < 0 || j >= b.ny || k < 0 || k >= b.nz) return -1;
    return cell_index(b, i, j, k);
}

void add(Assembly& a, std::int64_t cell, Offset o, int ca, int cb, double v) {
    const int d = a.stencil().find(o);
    if (d < 0) {
        throw InvalidInput(fmt::format("offset ({},{},{}) is not in stencil {}", o.dx, o.dy, o.dz,
                                       a.stencil().name()));
    }
    a.value(d, cell, ca, cb) += v;
}

void add_fv_diffusion(Assembly& a, int comp, const FvDiffusion& f) {
    const Box& box = a.box();
    const Stencil& s = a.stencil();
    const int centre = s.center();
    int dir_plus[3], dir_minus[3];
    for (int d = 0; d < 3; ++d) {
        const Offset plus{d == 0, d == 1, d == 2};
        const Offset minus{-(d == 0), -(d == 1), -(d == 2)};
        dir_plus[d] = s.find(plus);
        dir_minus[d] = s.find(minus);
        if (dir_plus[d] < 0 || dir_minus[d] < 0) {
            throw InvalidInput(fmt::format("stencil {} lacks the 7-point offsets", s.name()));
        }
    }
    const std::int64_t stride[3] = {1, box.nx, std::int64_t{box.nx} * box.ny};
    a.cells(0).for_each([&](std::int64_t p) {
        const Ijk c = ijk(box, p);
        const int idx[3] = {c.i, c.j, c.k};
        double diag = 0.0;
        for (int d = 0; d < 3; ++d) {
            const std::vector<double>& k = *f.k[d];
            const double kp = k[static_cast<std::size_t>(p)];
            for (int side = 0; side < 2; ++side) {
                const bool plus = side == 1;
                const bool inside = plus ? idx[d] + 1 < box.extent(d) : idx[d] > 0;
                if (inside) {
                    const std::int64_t q = plus ? p + stride[d] : p - stride[d];
                    const double w = f.geom[d] * harmonic(kp, k[static_cast<std::size_t>(q)]);
                    a.value(plus ? dir_plus[d] : dir_minus[d], p, comp, comp) -= w;
                    diag += w;
                } else if (f.dirichlet[static_cast<std::size_t>(2 * d + side)]) {
                    diag += f.boundary_factor * f.geom[d] * kp;
                }
            }
        }
        a.value(centre, p, comp, comp) += diag;
    });
}

void add_upwind(Assembly& a, int comp, std::int64_t p, Offset o, double flux) {
    const Box& box = a.box();
    const std::int64_t q = p + o.dx + std::int64_t{box.nx} * (o.dy + std::int64_t{box.ny} * o.dz);
    add(a, p, Offset{0, 0, 0}, comp, comp, flux);
    add(a, q, Offset{-o.dx, -o.dy, -o.dz}, comp, comp, -flux);
}

std::vector<double> smooth_solution(const Box& box, int block) {
    std::vector<double> x(static_cast<std::size_t>(box.cells() * block));
    const double pi = std::numbers::pi;
    std::vector<double> sines[3];
    for (int d = 0; d < 3; ++d) {
        for (int i = 0; i < box.extent(d); ++i) {
            sines[d].push_back(std::sin(pi * ((i + 0.5) / box.extent(d))));
        }
    }
    for (std::int64_t p = 0; p < box.cells(); ++p) {
        const Ijk c = ijk(box, p);
        const double xs = (c.i + 0.5) / box.nx;
        const double v = 1.0 +
                         0.5 * sines[0][static_cast<std::size_t>(c.i)] *
                             sines[1][static_cast<std::size_t>(c.j)] *
                             sines[2][static_cast<std::size_t>(c.k)] +
                         0.25 * xs;
        for (int r = 0; r < block; ++r) {
            x[static_cast<std::size_t>(p * block + r)] = v - 0.1 * r;
        }
    }
    return x;
}

void finish(StructuredProblem& p, Assembly& a, std::vector<double> x_exact) {
    p.x_exact = std::move(x_exact);
    SgDiaMatrix<double>& m = a.stored();
    zero_outside_box(m);
    window_product(m, a.stored_lo(), a.box(), p.x_exact, p.b);
    p.a = std::move(m);
}

}  // namespace mpmg::problem_detail
