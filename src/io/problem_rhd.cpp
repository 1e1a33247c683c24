// rhd and rhd3t: radiation hydrodynamics analogs of ICPP'24 Table 3 (docs/problems.md).
// One backward-Euler step of grey radiation diffusion (rhd), and of the coupled radiation /
// electron / ion three-temperature system (rhd3t), on a unit cube [0,1]^3 cm with cells of
// h = 1/n cm: cell-centred finite volumes, harmonic face means, Dirichlet (bath) boundaries.
// Materials: light gas, a foam slab at x in [0.55, 0.7] and dense spheres (random centres and
// radii from the seed, SplitMix64); a temperature profile hot at x = 0 makes the opacity,
// sigma ~ T^-3 (Kramers), vary smoothly on top of the material jumps.
#include <algorithm>
#include <cmath>

#include "io/problem_common.hpp"

namespace mpmg {

using namespace problem_detail;

namespace {

constexpr double kLight = 3e10;  // c, cm/s
constexpr double kDt = 1e-10;    // time step, s

enum Material { gas = 0, foam = 1, dense = 2 };

struct RhdMedium {
    std::vector<int> material;
    std::vector<double> temp;  // T / T_ref, in (0.3, 1]
    double h = 0.0;            // cell size, cm (cubic cells of the longest extent)
};

/// The medium on the cells of `where` (elsewhere gas at T = 0: never read).
RhdMedium rhd_medium(const Box& box, std::uint64_t seed, const CellRange& where) {
    struct Sphere {
        double x, y, z, r;
    };
    SplitMix64 rng(seed);
    std::vector<Sphere> spheres(6);
    for (Sphere& s : spheres) {
        s.x = rng.uniform(0.15, 0.85);
        s.y = rng.uniform(0.15, 0.85);
        s.z = rng.uniform(0.15, 0.85);
        s.r = rng.uniform(0.06, 0.14);
    }
    RhdMedium m;
    const int n = std::max({box.nx, box.ny, box.nz});
    m.h = 1.0 / n;
    m.material.resize(static_cast<std::size_t>(box.cells()));
    m.temp.resize(m.material.size());
    where.for_each([&](std::int64_t p) {
        const Ijk c = ijk(box, p);
        const double x = (c.i + 0.5) * m.h, y = (c.j + 0.5) * m.h, z = (c.k + 0.5) * m.h;
        int mat = x >= 0.55 && x <= 0.7 ? foam : gas;
        for (const Sphere& s : spheres) {
            const double d2 = (x - s.x) * (x - s.x) + (y - s.y) * (y - s.y) + (z - s.z) * (z - s.z);
            if (d2 <= s.r * s.r) mat = dense;
        }
        m.material[static_cast<std::size_t>(p)] = mat;
        m.temp[static_cast<std::size_t>(p)] = 0.3 + 0.7 * std::exp(-3.0 * x);
    });
    return m;
}

/// Rosseland opacity, 1/cm: sigma_m * (T/T_ref)^-3.
double opacity(int material, double temp) {
    static constexpr double sigma[3] = {0.1, 1e2, 1e4};
    return sigma[material] / (temp * temp * temp);
}

/// Density, g/cm^3.
double density(int material) {
    static constexpr double rho[3] = {1e-3, 0.1, 10.0};
    return rho[material];
}

/// Fleck factor f = 1 / (1 + c sigma dt) (beta = 1): the effective absorption c sigma f of the
/// linearised emission-absorption term after eliminating the material energy.
double absorption(double sigma) { return kLight * sigma / (1.0 + kLight * sigma * kDt); }

/// c / (3 sigma) on the cells of `where` (0 elsewhere).
std::vector<double> radiation_diffusion(const RhdMedium& m, const CellRange& where) {
    std::vector<double> d(m.material.size());
    where.for_each([&](std::int64_t c) {
        const auto p = static_cast<std::size_t>(c);
        d[p] = kLight / (3.0 * opacity(m.material[p], m.temp[p]));
    });
    return d;
}

}  // namespace

StructuredProblem make_rhd(Box box, std::uint64_t seed, const GridWindow& window) {
    Assembly rows(box, Stencil::named("3d7"), 1, window);
    // The rows' cells and their neighbours (the faces' harmonic means).
    const RhdMedium m = rhd_medium(box, seed, rows.cells(1));
    const double vol = m.h * m.h * m.h;
    const std::vector<double> diff = radiation_diffusion(m, rows.cells(1));
    StructuredProblem p;
    FvDiffusion f;
    f.k[0] = f.k[1] = f.k[2] = &diff;
    f.geom = {m.h, m.h, m.h};  // face area h^2 over centre distance h
    add_fv_diffusion(rows, 0, f);
    const int centre = rows.stencil().center();
    rows.cells(0).for_each([&](std::int64_t c) {
        const std::size_t u = static_cast<std::size_t>(c);
        rows.value(centre, c, 0, 0) +=
            vol * (1.0 / kDt + absorption(opacity(m.material[u], m.temp[u])));
    });
    finish(p, rows, smooth_solution(box, 1));
    p.solver = SolverKind::cg;
    return p;
}

StructuredProblem make_rhd3t(Box box, std::uint64_t seed, const GridWindow& window) {
    Assembly rows(box, Stencil::named("3d7"), 3, window);
    const CellRange near = rows.cells(1);  // the rows' cells and their neighbours
    const RhdMedium m = rhd_medium(box, seed, near);
    const double vol = m.h * m.h * m.h;
    const std::size_t cells = m.material.size();
    // Conductivities (cm^2/s in code units): radiation c / (3 sigma); electrons Spitzer-like
    // K_e ~ T^{5/2}, lower in the dense, degenerate material; ions 1/40 of the electrons'.
    std::vector<double> kr = radiation_diffusion(m, near), ke(cells), ki(cells);
    near.for_each([&](std::int64_t p) {
        const auto c = static_cast<std::size_t>(p);
        const double k0 = m.material[c] == dense ? 1e6 : 1e7;
        ke[c] = k0 * std::pow(m.temp[c], 2.5);
        ki[c] = ke[c] / 40.0;
    });
    StructuredProblem p;
    const std::vector<double>* k[3] = {&kr, &ke, &ki};
    for (int comp = 0; comp < 3; ++comp) {
        FvDiffusion f;
        f.k[0] = f.k[1] = f.k[2] = k[comp];
        f.geom = {m.h, m.h, m.h};
        add_fv_diffusion(rows, comp, f);
    }
    const int centre = rows.stencil().center();
    rows.cells(0).for_each([&](std::int64_t c) {
        const std::size_t u = static_cast<std::size_t>(c);
        const double rho = density(m.material[u]);
        const double t = m.temp[u];
        // Heat capacities over dt: radiation 1, electrons and ions ~ density.
        const double cap[3] = {vol / kDt, vol * rho / kDt, vol * rho / kDt};
        // Exchange: radiation-electron by absorption/emission, electron-ion by collisions
        // (~ rho^2 T^-3/2).
        const double w_re = vol * absorption(opacity(m.material[u], t));
        const double w_ei = vol * 1e11 * rho * rho / std::pow(t, 1.5);
        for (int a = 0; a < 3; ++a) rows.value(centre, c, a, a) += cap[a];
        rows.value(centre, c, 0, 0) += w_re;
        rows.value(centre, c, 1, 1) += w_re + w_ei;
        rows.value(centre, c, 2, 2) += w_ei;
        rows.value(centre, c, 0, 1) -= w_re;
        rows.value(centre, c, 1, 0) -= w_re;
        rows.value(centre, c, 1, 2) -= w_ei;
        rows.value(centre, c, 2, 1) -= w_ei;
    });
    finish(p, rows, smooth_solution(box, 3));
    p.solver = SolverKind::cg;
    return p;
}

}  // namespace mpmg
