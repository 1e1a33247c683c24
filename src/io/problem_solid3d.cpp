// solid3d: 3D linear elasticity (ICPP'24 Table 3 "solid-3D"; docs/problems.md) with trilinear
// hexahedral (Q1) finite elements on a structured block of cubes of side 1 cm, steel-like
// E = 2e11 Pa, nu = 0.3, clamped (zero displacement) on the face x = 0, traction-free
// elsewhere. Unknowns are the 3 displacement components of the nodes that are not clamped:
// node (i, j, k) of the unknown grid is the mesh node (i + 1, j, k), so an nx x ny x nz grid
// has nx x (ny - 1) x (nz - 1) elements. 27-point stencil with full 3x3 blocks; SPD.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "io/problem_common.hpp"
#include "mpmg/errors.hpp"

namespace mpmg {

using namespace problem_detail;

namespace {

constexpr double kYoung = 2e11;  // Pa
constexpr double kPoisson = 0.3;
constexpr double kH = 0.01;  // element side, m

using ElementMatrix = std::array<std::array<double, 24>, 24>;

/// Q1 stiffness of a cube of side h, 2x2x2 Gauss quadrature (exact for this element). Local
/// node a = ax + 2 ay + 4 az at (ax, ay, az) h; dof 3 a + component. Symmetric by construction
/// (upper triangle mirrored) and round-off below 1e-12 * max set to exact zero.
ElementMatrix q1_stiffness(double h) {
    const double lam = kYoung * kPoisson / ((1 + kPoisson) * (1 - 2 * kPoisson));
    const double mu = kYoung / (2 * (1 + kPoisson));
    const double dmat[6][6] = {{lam + 2 * mu, lam, lam, 0, 0, 0},
                               {lam, lam + 2 * mu, lam, 0, 0, 0},
                               {lam, lam, lam + 2 * mu, 0, 0, 0},
                               {0, 0, 0, mu, 0, 0},
                               {0, 0, 0, 0, mu, 0},
                               {0, 0, 0, 0, 0, mu}};
    ElementMatrix ke{};
    const double g = 1.0 / std::sqrt(3.0);
    const double det = (h / 2) * (h / 2) * (h / 2);
    for (int gp = 0; gp < 8; ++gp) {
        const double xi[3] = {(gp & 1) ? g : -g, (gp & 2) ? g : -g, (gp & 4) ? g : -g};
        double bmat[6][24] = {};
        for (int a = 0; a < 8; ++a) {
            const double s[3] = {(a & 1) ? 1.0 : -1.0, (a & 2) ? 1.0 : -1.0, (a & 4) ? 1.0 : -1.0};
            double dn[3];
            for (int d = 0; d < 3; ++d) {
                const int e1 = (d + 1) % 3, e2 = (d + 2) % 3;
                dn[d] = s[d] * (1 + s[e1] * xi[e1]) * (1 + s[e2] * xi[e2]) / 8 * (2 / h);
            }
            const int c = 3 * a;
            bmat[0][c] = dn[0];
            bmat[1][c + 1] = dn[1];
            bmat[2][c + 2] = dn[2];
            bmat[3][c] = dn[1];
            bmat[3][c + 1] = dn[0];
            bmat[4][c + 1] = dn[2];
            bmat[4][c + 2] = dn[1];
            bmat[5][c] = dn[2];
            bmat[5][c + 2] = dn[0];
        }
        for (int r = 0; r < 24; ++r) {
            for (int c = r; c < 24; ++c) {
                double v = 0.0;
                for (int i = 0; i < 6; ++i) {
                    for (int j = 0; j < 6; ++j) v += bmat[i][r] * dmat[i][j] * bmat[j][c];
                }
                ke[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)] += v * det;
            }
        }
    }
    double vmax = 0.0;
    for (const auto& row : ke) {
        for (double v : row) vmax = std::max(vmax, std::abs(v));
    }
    for (std::size_t r = 0; r < 24; ++r) {
        for (std::size_t c = r; c < 24; ++c) {
            if (std::abs(ke[r][c]) < 1e-12 * vmax) ke[r][c] = 0.0;
            ke[c][r] = ke[r][c];
        }
    }
    return ke;
}

}  // namespace

StructuredProblem make_solid3d(Box box, const GridWindow& window) {
    if (box.ny < 2 || box.nz < 2) {
        throw InvalidInput(
            fmt::format("--problem solid3d needs at least 2 nodes in y and z, got grid {}x{}x{}",
                        box.nx, box.ny, box.nz));
    }
    const ElementMatrix ke = q1_stiffness(kH);
    StructuredProblem p;
    Assembly rows(box, Stencil::named("3d27"), 3, window);
    // The stencil offset that local node lb is from local node la: the same in every element.
    std::array<std::array<int, 8>, 8> offset_of{};
    for (int la = 0; la < 8; ++la) {
        for (int lb = 0; lb < 8; ++lb) {
            const Offset o{(lb & 1) - (la & 1), ((lb >> 1) & 1) - ((la >> 1) & 1),
                           ((lb >> 2) & 1) - ((la >> 2) & 1)};
            offset_of[static_cast<std::size_t>(la)][static_cast<std::size_t>(lb)] =
                rows.stencil().find(o);
        }
    }
    // The elements with a node among the stored rows' cells, in the whole grid's order: element
    // (ex, ey, ez) has the nodes ex - 1 .. ex, ey .. ey + 1, ez .. ez + 1.
    const CellRange stored = rows.cells(0);
    const int ex0 = stored.lo[0], ex1 = std::min(box.nx, stored.hi[0] + 1);
    const int ey0 = std::max(0, stored.lo[1] - 1), ey1 = std::min(box.ny - 1, stored.hi[1]);
    const int ez0 = std::max(0, stored.lo[2] - 1), ez1 = std::min(box.nz - 1, stored.hi[2]);
    for (int ez = ez0; ez < ez1; ++ez) {
        for (int ey = ey0; ey < ey1; ++ey) {
            for (int ex = ex0; ex < ex1; ++ex) {
                for (int la = 0; la < 8; ++la) {
                    const int ax = ex + (la & 1) - 1, ay = ey + ((la >> 1) & 1),
                              az = ez + ((la >> 2) & 1);
                    if (ax < 0) continue;  // clamped node
                    const std::int64_t cell = cell_index(box, ax, ay, az);
                    for (int lb = 0; lb < 8; ++lb) {
                        if (ex + (lb & 1) - 1 < 0) continue;  // clamped node
                        const int d =
                            offset_of[static_cast<std::size_t>(la)][static_cast<std::size_t>(lb)];
                        for (int ca = 0; ca < 3; ++ca) {
                            for (int cb = 0; cb < 3; ++cb) {
                                rows.value(d, cell, ca, cb) +=
                                    ke[static_cast<std::size_t>(3 * la + ca)]
                                      [static_cast<std::size_t>(3 * lb + cb)];
                            }
                        }
                    }
                }
            }
        }
    }
    // Entries where element contributions cancel (exactly zero in exact arithmetic) keep a
    // round-off residue ~1e-16 of the largest entry; store them as the zeros they are. The
    // matrix stays bitwise symmetric (mirror entries are sums of the same terms, same order).
    // A window's largest entry is the grid's whenever it holds an interior node (the material
    // is uniform); otherwise it is still above 1e-4 of it (a node's diagonal gathers at least
    // one of its eight elements), so the same residues fall below the threshold and the same
    // entries, at least 1e-3 of the largest, stay.
    double vmax = 0.0;
    for (double v : rows.stored().values()) vmax = std::max(vmax, std::abs(v));
    for (double& v : rows.stored().values()) {
        if (std::abs(v) < 1e-12 * vmax) v = 0.0;
    }
    finish(p, rows, smooth_solution(box, 3));
    p.solver = SolverKind::cg;
    return p;
}

}  // namespace mpmg
