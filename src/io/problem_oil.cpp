// oil and oil4c: petroleum reservoir analogs of ICPP'24 Table 3 (docs/problems.md). One
// implicit step of compressible Darcy flow on cells of 10 m x 10 m x 1 m in a layered,
// heterogeneous permeability field (SPE10-like: each layer its own log-permeability level and
// kz/kx in [1e-3, 1e-1], smooth random variation inside a layer; all from the seed through
// SplitMix64); two-point flux transmissibilities with harmonic means, no-flow boundaries, two
// vertical wells (Peaceman productivity index) at fixed bottom-hole pressure, and a first-order
// upwind term (the upwinded mobility / density derivatives of the fully implicit Jacobian,
// gravity-driven in z) that makes the matrix nonsymmetric.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "io/problem_common.hpp"

namespace mpmg {

using namespace problem_detail;

namespace {

constexpr double kHx = 10.0, kHy = 10.0, kHz = 1.0;  // cell size, m
constexpr double kDarcy = 0.008527;  // m^3/day/bar per (mD m^2 / (cP m)), metric units
constexpr double kPorosity = 0.2;
constexpr double kDt = 1.0;  // day

struct Permeability {
    std::vector<double> kx, ky, kz;  // mD
};

/// The permeability on the cells of `where` (0 elsewhere: never read).
Permeability layered_permeability(const Box& box, std::uint64_t seed, const CellRange& where) {
    SplitMix64 rng(seed);
    std::vector<double> layer_mean(static_cast<std::size_t>(box.nz)),
        layer_kzkx(static_cast<std::size_t>(box.nz));
    for (int k = 0; k < box.nz; ++k) {
        layer_mean[static_cast<std::size_t>(k)] = rng.uniform(-0.5, 3.0);  // log10 mD
        layer_kzkx[static_cast<std::size_t>(k)] = std::pow(10.0, rng.uniform(-3.0, -1.0));
    }
    struct Mode {
        double fx, fy, fz, phase, amp;
    };
    std::vector<Mode> modes(6);
    for (Mode& m : modes) {
        m = Mode{rng.uniform(0.5, 4.0), rng.uniform(0.5, 4.0), rng.uniform(0.0, 2.0),
                 rng.uniform(0.0, 2.0 * std::numbers::pi), rng.uniform(0.1, 0.3)};
    }
    Permeability k;
    const std::size_t cells = static_cast<std::size_t>(box.cells());
    k.kx.resize(cells);
    k.ky.resize(cells);
    k.kz.resize(cells);
    where.for_each([&](std::int64_t p) {
        const Ijk c = ijk(box, p);
        const double x = (c.i + 0.5) / box.nx, y = (c.j + 0.5) / box.ny, z = (c.k + 0.5) / box.nz;
        double lg = layer_mean[static_cast<std::size_t>(c.k)];
        for (const Mode& m : modes) {
            lg += m.amp *
                  std::sin(2.0 * std::numbers::pi * (m.fx * x + m.fy * y + m.fz * z) + m.phase);
        }
        lg = std::clamp(lg, -1.0, 3.5);
        const std::size_t u = static_cast<std::size_t>(p);
        k.kx[u] = std::pow(10.0, lg);
        k.ky[u] = 0.5 * k.kx[u];
        k.kz[u] = k.kx[u] * layer_kzkx[static_cast<std::size_t>(c.k)];
    });
    return k;
}

/// Darcy flow of one component with mobility `mobility` (1/cP) and total compressibility
/// `compress` (1/bar) into component `comp`; upwind fractions beta (x, y, z: flux per
/// transmissibility, flow towards +x, +y and -z; a negative beta reverses the direction).
void add_flow(Assembly& a, int comp, const Permeability& k, double mobility, double compress,
              const double (&beta)[3]) {
    const Box& box = a.box();
    FvDiffusion f;
    f.k[0] = &k.kx;
    f.k[1] = &k.ky;
    f.k[2] = &k.kz;
    f.geom = {kDarcy * mobility * kHy * kHz / kHx, kDarcy * mobility * kHx * kHz / kHy,
              kDarcy * mobility * kHx * kHy / kHz};
    f.dirichlet = {false, false, false, false, false, false};  // no-flow boundaries
    add_fv_diffusion(a, comp, f);
    const double acc = kPorosity * compress * kHx * kHy * kHz / kDt;
    const std::vector<double>* kd[3] = {&k.kx, &k.ky, &k.kz};
    // A face's flux writes the rows of both its cells: the stored rows' cells and their
    // neighbours are visited.
    a.cells(1).for_each([&](std::int64_t p) {
        const Ijk c = ijk(box, p);
        const std::size_t u = static_cast<std::size_t>(p);
        add(a, p, Offset{0, 0, 0}, comp, comp, acc);
        // Each face once, from p to its neighbour q = p + o; a negative beta flows q -> p.
        const auto flux = [&](Offset o, int d, std::size_t q) {
            const double w = f.geom[static_cast<std::size_t>(d)] *
                             harmonic((*kd[d])[u], (*kd[d])[q]) * std::abs(beta[d]);
            if (beta[d] >= 0.0) {
                add_upwind(a, comp, p, o, w);
            } else {
                add_upwind(a, comp, static_cast<std::int64_t>(q), Offset{-o.dx, -o.dy, -o.dz}, w);
            }
        };
        if (c.i + 1 < box.nx) flux(Offset{1, 0, 0}, 0, u + 1);
        if (c.j + 1 < box.ny) flux(Offset{0, 1, 0}, 1, u + static_cast<std::size_t>(box.nx));
        if (c.k > 0) flux(Offset{0, 0, -1}, 2, u - static_cast<std::size_t>(box.nx) * box.ny);
    });
    // Vertical wells at (nx/4, ny/4) and (3nx/4, 3ny/4), Peaceman PI with r_e = 0.2 hx and
    // r_w = 0.1 m, on every layer.
    const double pi_factor =
        2.0 * std::numbers::pi * kDarcy * mobility * kHz / std::log(0.2 * kHx / 0.1);
    for (const auto& [wi, wj] :
         {std::pair{box.nx / 4, box.ny / 4}, std::pair{3 * box.nx / 4, 3 * box.ny / 4}}) {
        const CellRange rows = a.cells(0);
        if (wi < rows.lo[0] || wi >= rows.hi[0] || wj < rows.lo[1] || wj >= rows.hi[1]) continue;
        for (int kk = rows.lo[2]; kk < rows.hi[2]; ++kk) {
            const std::int64_t p = cell_index(box, wi, wj, kk);
            add(a, p, Offset{0, 0, 0}, comp, comp,
                pi_factor * std::sqrt(k.kx[static_cast<std::size_t>(p)] *
                                      k.ky[static_cast<std::size_t>(p)]));
        }
    }
}

}  // namespace

// The permeability is read at the cells add_flow visits (the stored rows' cells and their
// neighbours) and at their neighbours.
StructuredProblem make_oil(Box box, std::uint64_t seed, const GridWindow& window) {
    Assembly rows(box, Stencil::named("3d7"), 1, window);
    const Permeability k = layered_permeability(box, seed, rows.cells(2));
    StructuredProblem p;
    add_flow(rows, 0, k, 1.0, 1e-4, {0.1, 0.1, 0.3});
    finish(p, rows, smooth_solution(box, 1));
    p.solver = SolverKind::gmres;
    // ILU(0) beyond the cache: at n = 134, 58 GMRES iterations and 16.9 s against SymGS's 132
    // and 23.4 s (the orthogonalisation of 132 iterations is half the time). At n = 32 SymGS
    // was faster (0.88 vs 1.26 s); docs/problems.md has both.
    p.smoother = SmootherKind::ilu0;
    return p;
}

StructuredProblem make_oil4c(Box box, std::uint64_t seed, const GridWindow& window) {
    Assembly rows(box, Stencil::named("3d7"), 4, window);
    const Permeability k = layered_permeability(box, seed, rows.cells(2));
    StructuredProblem p;
    // Components: oil, water, gas, gas dissolved in oil. Mobilities 1/viscosity (1/cP; the
    // dissolved gas moves with the oil), compressibilities (1/bar), upwind fractions.
    add_flow(rows, 0, k, 1.0, 1e-4, {0.1, 0.1, 0.3});
    add_flow(rows, 1, k, 2.0, 4e-5, {0.1, 0.1, 0.5});
    add_flow(rows, 2, k, 50.0, 1e-2, {0.2, 0.2, -0.3});
    add_flow(rows, 3, k, 1.0, 1e-4, {0.1, 0.1, 0.3});
    // Cell-local mass transfer (dissolution oil <-> dissolved gas <-> free gas, capillary
    // oil <-> water): a rate r = k_ab u_a - k_ba u_b from a to b adds +k_ab, -k_ba to row a and
    // -k_ab, +k_ba to row b, so columns sum to zero (mass is conserved) and the block is
    // nonsymmetric. Rates vary smoothly with the cell's depth.
    const double vol_dt = kPorosity * kHx * kHy * kHz / kDt;
    struct Transfer {
        int a, b;
        double ab, ba;
    };
    const Transfer transfers[] = {{0, 3, 0.05, 0.02}, {3, 2, 0.08, 0.01}, {0, 1, 0.01, 0.03}};
    const int centre = rows.stencil().center();
    rows.cells(0).for_each([&](std::int64_t c) {
        const double depth = (ijk(box, c).k + 0.5) / box.nz;
        for (const Transfer& t : transfers) {
            const double kab = vol_dt * t.ab * (0.5 + depth), kba = vol_dt * t.ba * (1.5 - depth);
            rows.value(centre, c, t.a, t.a) += kab;
            rows.value(centre, c, t.a, t.b) -= kba;
            rows.value(centre, c, t.b, t.a) -= kab;
            rows.value(centre, c, t.b, t.b) += kba;
        }
    });
    // Each row is a mass balance: component equation times its density (kg/m^3; gas at
    // ~20 bar), so the rows of the light components are much smaller than oil's and water's.
    const double density[4] = {800.0, 1000.0, 20.0, 20.0};
    for (int d = 0; d < rows.stencil().size(); ++d) {
        rows.cells(0).for_each([&](std::int64_t c) {
            for (int r = 0; r < 4; ++r) {
                for (int s = 0; s < 4; ++s) rows.value(d, c, r, s) *= density[r];
            }
        });
    }
    finish(p, rows, smooth_solution(box, 4));
    p.solver = SolverKind::gmres;
    return p;
}

}  // namespace mpmg
