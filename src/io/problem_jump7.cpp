// jump7 (DESIGN.md "Problem suite"): 7-point cell-centred diffusion with a coefficient constant
// on 8x8x8 blocks of cells, drawn from SplitMix64 seeded 20240611 in lexicographic block order,
// kappa_t = 10^(-4 + 8u); harmonic face means; a boundary face gets kappa_p; b = A * 1.
#include <cmath>

#include "io/problem_common.hpp"

namespace mpmg {

using namespace problem_detail;

StructuredProblem make_jump7(Box box, const GridWindow& window) {
    constexpr int kBlock = 8;
    const auto blocks = [](int n) { return (n + kBlock - 1) / kBlock; };
    const int nbx = blocks(box.nx), nby = blocks(box.ny), nbz = blocks(box.nz);
    SplitMix64 rng(20240611);
    std::vector<double> block_kappa(static_cast<std::size_t>(nbx) * nby * nbz);
    for (double& kappa : block_kappa) kappa = std::pow(10.0, -4.0 + 8.0 * rng.uniform());

    Assembly rows(box, Stencil::named("3d7"), 1, window);
    // On the rows' cells and their neighbours (the faces' harmonic means).
    std::vector<double> kappa(static_cast<std::size_t>(box.cells()));
    rows.cells(1).for_each([&](std::int64_t p) {
        const Ijk c = ijk(box, p);
        const int t = c.i / kBlock + nbx * (c.j / kBlock + nby * (c.k / kBlock));
        kappa[static_cast<std::size_t>(p)] = block_kappa[static_cast<std::size_t>(t)];
    });
    StructuredProblem p;
    FvDiffusion f;
    f.k[0] = f.k[1] = f.k[2] = &kappa;
    f.boundary_factor = 1.0;
    add_fv_diffusion(rows, 0, f);
    finish(p, rows, std::vector<double>(static_cast<std::size_t>(box.cells()), 1.0));
    p.solver = SolverKind::cg;
    // Weights from the operator follow the 8-decade jumps that 1/2 weights smear: n = 86,
    // 26 CG iterations instead of 158 (docs/problems.md).
    p.interpolation = InterpolationKind::operator_dependent;
    return p;
}

}  // namespace mpmg
