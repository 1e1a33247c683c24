// weather: the Helmholtz equation of a semi-implicit nonhydrostatic dynamical core (as in
// GRAPES, ICPP'24 Table 3) in terrain-following Gal-Chen coordinates (docs/problems.md):
//   A u = V [ u / (c tau)^2 - ( u_xx + u_yy + G u_zeta-zeta + 2 zeta_x u_x-zeta + 2 zeta_y u_y-zeta
//   ) ]
// with zeta = H (z - z_s) / (H - z_s), G = zeta_x^2 + zeta_y^2 + zeta_z^2 and V = dx dy dzeta.
// Horizontal cells of 2 km; nz levels stretched from ~100 m at the ground to ~2 km at the top
// H = 20 km (thin vertical layers: strong vertical coupling). Second-order terms in flux form
// with face means (symmetric); the metric cross terms in the non-conservative form of the
// model (coefficient at the cell centre), which makes A nonsymmetric; 19-point stencil.
// Lateral boundaries Dirichlet (the driving model's values), ground and lid no-flux; the cross
// terms are left out on the lowest and highest levels, where the centred zeta-difference is
// not available. Terrain: random Gaussian mountains plus a ridge (seed, SplitMix64).
#include <algorithm>
#include <cmath>
#include <numbers>

#include "io/problem_common.hpp"

namespace mpmg {

using namespace problem_detail;

namespace {

constexpr double kDx = 2000.0;                           // m
constexpr double kTop = 20000.0;                         // H, m
constexpr double kStretch = 3.0;                         // level spacing ~ exp(kStretch * k / nz)
constexpr double kC2Tau2 = 340.0 * 340.0 * 20.0 * 20.0;  // (sound speed * time scale)^2, m^2
constexpr double kFlatSlope = 1e-6;  // |zeta_x| below this counts as flat terrain

struct Terrain {
    struct Mountain {
        double x, y, height, width;
    };
    std::vector<Mountain> mountains;
    double ridge_height = 300.0, ridge_wavelength = 0.0;

    /// z_s and its derivatives at (x, y), m.
    void at(double x, double y, double& zs, double& zx, double& zy) const {
        const double kr = 2.0 * std::numbers::pi / ridge_wavelength;
        zs = ridge_height * (1.0 + std::sin(kr * (x + 0.5 * y)));
        zx = ridge_height * kr * std::cos(kr * (x + 0.5 * y));
        zy = 0.5 * zx;
        for (const Mountain& m : mountains) {
            const double dx = x - m.x, dy = y - m.y, w2 = m.width * m.width;
            const double g = m.height * std::exp(-(dx * dx + dy * dy) / w2);
            zs += g;
            zx += -2.0 * dx / w2 * g;
            zy += -2.0 * dy / w2 * g;
        }
    }
};

}  // namespace

StructuredProblem make_weather(Box box, std::uint64_t seed, const GridWindow& window) {
    SplitMix64 rng(seed);
    Terrain terrain;
    const double lx = box.nx * kDx, ly = box.ny * kDx;
    terrain.ridge_wavelength = 0.7 * lx;
    terrain.mountains.resize(3);
    for (auto& m : terrain.mountains) {
        m = {rng.uniform(0.2, 0.8) * lx, rng.uniform(0.2, 0.8) * ly, rng.uniform(500.0, 2500.0),
             rng.uniform(4.0, 10.0) * kDx};
    }
    // Level faces zeta_f[k], k = 0..nz, stretched; centres and spacings.
    const int nz = box.nz;
    std::vector<double> zf(static_cast<std::size_t>(nz) + 1), zc(static_cast<std::size_t>(nz)),
        dz(static_cast<std::size_t>(nz));
    for (int k = 0; k <= nz; ++k) {
        zf[static_cast<std::size_t>(k)] =
            kTop * std::expm1(kStretch * k / nz) / std::expm1(kStretch);
    }
    for (std::size_t k = 0; k < dz.size(); ++k) {
        dz[k] = zf[k + 1] - zf[k];
        zc[k] = 0.5 * (zf[k] + zf[k + 1]);
    }
    Assembly rows(box, Stencil::named("3d19"), 1, window);
    Assembly& a = rows;
    // Metric terms per cell: on the stored rows' cells and their vertical neighbours.
    const std::size_t cells = static_cast<std::size_t>(box.cells());
    std::vector<double> zeta_x(cells), zeta_y(cells), g33(cells);
    rows.cells(1).for_each([&](std::int64_t p) {
        const Ijk c = ijk(box, p);
        double zs = 0.0, sx = 0.0, sy = 0.0;
        terrain.at((c.i + 0.5) * kDx, (c.j + 0.5) * kDx, zs, sx, sy);
        const std::size_t u = static_cast<std::size_t>(p);
        const double f = (zc[static_cast<std::size_t>(c.k)] - kTop) / (kTop - zs);
        zeta_x[u] = std::abs(sx * f) < kFlatSlope ? 0.0 : sx * f;
        zeta_y[u] = std::abs(sy * f) < kFlatSlope ? 0.0 : sy * f;
        const double zeta_z = kTop / (kTop - zs);
        g33[u] = zeta_x[u] * zeta_x[u] + zeta_y[u] * zeta_y[u] + zeta_z * zeta_z;
    });

    StructuredProblem p;
    const std::int64_t sk = std::int64_t{box.nx} * box.ny;
    rows.cells(0).for_each([&](std::int64_t q) {
        const Ijk c = ijk(box, q);
        const std::size_t u = static_cast<std::size_t>(q), k = static_cast<std::size_t>(c.k);
        const double vol = kDx * kDx * dz[k];
        double diag = vol / kC2Tau2;
        // Horizontal second derivatives: weight V / dx^2 = dz; Dirichlet sides at dx/2.
        const int idx[2] = {c.i, c.j};
        for (int d = 0; d < 2; ++d) {
            const double w = dz[k];
            for (int sh = -1; sh <= 1; sh += 2) {
                if (idx[d] + sh >= 0 && idx[d] + sh < box.extent(d)) {
                    add(a, q, Offset{d == 0 ? sh : 0, d == 1 ? sh : 0, 0}, 0, 0, -w);
                    diag += w;
                } else {
                    diag += 2.0 * w;
                }
            }
        }
        // Vertical: weight dx^2 * G_face / (centre distance); no flux through ground and lid.
        for (int s = -1; s <= 1; s += 2) {
            if (c.k + s < 0 || c.k + s >= nz) continue;
            const std::size_t v = static_cast<std::size_t>(q + s * sk);
            const double dist = std::abs(zc[k + static_cast<std::size_t>(s)] - zc[k]);
            const double w = kDx * kDx * 0.5 * (g33[u] + g33[v]) / dist;
            add(a, q, Offset{0, 0, s}, 0, 0, -w);
            diag += w;
        }
        add(a, q, Offset{0, 0, 0}, 0, 0, diag);
        // Metric cross terms 2 zeta_x u_x-zeta, 2 zeta_y u_y-zeta, centred, times V.
        if (c.k == 0 || c.k + 1 == nz) return;
        const double span = zc[k + 1] - zc[k - 1];
        const double coef[2] = {zeta_x[u] * vol / (kDx * span), zeta_y[u] * vol / (kDx * span)};
        for (int d = 0; d < 2; ++d) {
            if (coef[d] == 0.0) continue;
            for (int sh = -1; sh <= 1; sh += 2) {
                if (idx[d] + sh < 0 || idx[d] + sh >= box.extent(d)) continue;
                for (int sv = -1; sv <= 1; sv += 2) {
                    const Offset o{d == 0 ? sh : 0, d == 1 ? sh : 0, sv};
                    add(a, q, o, 0, 0, -coef[d] * sh * sv);
                }
            }
        }
    });
    finish(p, rows, smooth_solution(box, 1));
    p.solver = SolverKind::gmres;
    // ILU(0) solved it in 5x fewer iterations than SymGS (11 vs 55 at n = 32) and in less
    // time (docs/problems.md), unlike every other problem of the suite.
    p.smoother = SmootherKind::ilu0;
    return p;
}

}  // namespace mpmg
