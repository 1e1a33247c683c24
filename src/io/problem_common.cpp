#include "io/problem_common.hpp"

#include <fmt/format.h>

#include <cmath>
#include <numbers>

#include "mpmg/errors.hpp"
#include "structured/sgdia_ops.hpp"

namespace mpmg::problem_detail {

Box problem_box(const ProblemOptions& opt) {
    if (opt.grid[0] != 0) return Box{opt.grid[0], opt.grid[1], opt.grid[2]};
    return Box{opt.n, opt.n, opt.n};
}

void add(SgDiaMatrix<double>& a, std::int64_t cell, Offset o, int ca, int cb, double v) {
    const int d = a.stencil().find(o);
    if (d < 0) {
        throw InvalidInput(fmt::format("offset ({},{},{}) is not in stencil {}", o.dx, o.dy, o.dz,
                                       a.stencil().name()));
    }
    a.value(d, cell, ca, cb) += v;
}

void add_fv_diffusion(SgDiaMatrix<double>& a, int comp, const FvDiffusion& f) {
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
    for (std::int64_t p = 0; p < box.cells(); ++p) {
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
    }
}

void add_upwind(SgDiaMatrix<double>& a, int comp, std::int64_t p, Offset o, double flux) {
    const Box& box = a.box();
    const std::int64_t q = p + o.dx + std::int64_t{box.nx} * (o.dy + std::int64_t{box.ny} * o.dz);
    add(a, p, Offset{0, 0, 0}, comp, comp, flux);
    add(a, q, Offset{-o.dx, -o.dy, -o.dz}, comp, comp, -flux);
}

std::vector<double> smooth_solution(const Box& box, int block) {
    std::vector<double> x(static_cast<std::size_t>(box.cells() * block));
    const double pi = std::numbers::pi;
    for (std::int64_t p = 0; p < box.cells(); ++p) {
        const Ijk c = ijk(box, p);
        const double xs = (c.i + 0.5) / box.nx, ys = (c.j + 0.5) / box.ny,
                     zs = (c.k + 0.5) / box.nz;
        const double v =
            1.0 + 0.5 * std::sin(pi * xs) * std::sin(pi * ys) * std::sin(pi * zs) + 0.25 * xs;
        for (int r = 0; r < block; ++r) {
            x[static_cast<std::size_t>(p * block + r)] = v - 0.1 * r;
        }
    }
    return x;
}

void set_rhs(StructuredProblem& p, std::vector<double> x_exact) {
    p.x_exact = std::move(x_exact);
    p.b.assign(p.x_exact.size(), 0.0);
    spmv(p.a, p.x_exact.data(), p.b.data());
}

}  // namespace mpmg::problem_detail
