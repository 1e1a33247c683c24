// Built-in problems (DESIGN.md "Problem suite"): deterministic structured matrices with a
// right-hand side b = A * x_exact, so that the error against the exact solution is reported.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mpmg/options.hpp"
#include "mpmg/sgdia_matrix.hpp"

namespace mpmg {

struct StructuredProblem {
    std::string name;
    SgDiaMatrix<double> a;
    std::vector<double> b;
    std::vector<double> x_exact;         ///< empty when unknown
    SolverKind solver = SolverKind::cg;  ///< the Krylov method the problem calls for
    /// The smoother that gave the lower time to solution (SymGS vs ILU(0), docs/problems.md).
    SmootherKind smoother = SmootherKind::symgs;
    /// Interpolation weights that solved it faster (docs/problems.md).
    InterpolationKind interpolation = InterpolationKind::linear;
};

/// Names of the built-in problems.
std::vector<std::string> problem_names();

/// Builds problem `opt.name` on the grid opt.grid (or n^3). Throws InvalidInput for an unknown
/// name (listing the valid ones) or a grid the problem cannot use.
StructuredProblem make_problem(const ProblemOptions& opt);

/// The generators behind make_problem, one per problem (docs/problems.md describes each). All
/// are deterministic functions of the box and the seed (SplitMix64; seeds matter for oil,
/// oil4c, rhd, rhd3t and weather; jump7 uses its fixed seed 20240611 as DESIGN.md defines).
StructuredProblem make_jump7(Box box);
StructuredProblem make_rhd(Box box, std::uint64_t seed);
StructuredProblem make_rhd3t(Box box, std::uint64_t seed);
StructuredProblem make_oil(Box box, std::uint64_t seed);
StructuredProblem make_oil4c(Box box, std::uint64_t seed);
StructuredProblem make_weather(Box box, std::uint64_t seed);
StructuredProblem make_solid3d(Box box);

/// The HPCG / hypre 27-point operator: 26 on the diagonal, -1 for each of the 26 neighbours
/// inside the grid (homogeneous Dirichlet), all times `scale`. Matches hypre's Struct assembly.
SgDiaMatrix<double> laplace27(Box box, double scale = 1.0);

}  // namespace mpmg
