// Built-in problems (DESIGN.md "Problem suite"): deterministic structured matrices with a
// right-hand side b = A * x_exact, so that the error against the exact solution is reported.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "mpmg/options.hpp"
#include "mpmg/sgdia_matrix.hpp"

namespace mpmg {

/// The cells lo .. lo + box - 1 of a grid; an empty box stands for the whole grid.
struct GridWindow {
    std::array<int, 3> lo{};
    Box box;
    bool whole() const { return box.cells() == 0; }
};

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
    /// The cells whose rows `a` and `b` hold (make_problem_rows); empty: the whole grid.
    GridWindow window;
    /// Every value of `a` is zero or a normal FP64 number (no Inf, NaN or subnormal), as the
    /// solve's input pass found it (api/solve.cpp prepare_input); false: not known.
    bool a_normal = false;
};

/// Names of the built-in problems.
std::vector<std::string> problem_names();

/// Builds problem `opt.name` on the grid opt.grid (or n^3). Throws InvalidInput for an unknown
/// name (listing the valid ones) or a grid the problem cannot use.
StructuredProblem make_problem(const ProblemOptions& opt);
/// make_problem of `name` on the n^3 grid, the other options at their defaults.
StructuredProblem make_problem(const std::string& name, int n);

/// The grid of make_problem(opt) (opt.grid, or n^3).
Box problem_grid(const ProblemOptions& opt);

/// make_problem's rows of the cells of `window` (inside the grid) only: what a process of a
/// distributed solve generates, its block with a margin. a is on window.box (entries to cells
/// outside the window zero), b covers the window's cells, x_exact the whole grid; every value
/// is bit for bit make_problem's, except b on the window's outermost cells (not on the grid's
/// boundary), whose rows lack the entries to cells outside the window. Only the window's rows
/// are stored, while the generators still visit the whole grid.
StructuredProblem make_problem_rows(const ProblemOptions& opt, const GridWindow& window);

/// The generators behind make_problem, one per problem (docs/problems.md describes each). All
/// are deterministic functions of the box and the seed (SplitMix64; seeds matter for oil,
/// oil4c, rhd, rhd3t and weather; jump7 uses its fixed seed 20240611 as DESIGN.md defines).
/// With `window`, the rows of its cells only (make_problem_rows).
StructuredProblem make_jump7(Box box, const GridWindow& window = {});
StructuredProblem make_rhd(Box box, std::uint64_t seed, const GridWindow& window = {});
StructuredProblem make_rhd3t(Box box, std::uint64_t seed, const GridWindow& window = {});
StructuredProblem make_oil(Box box, std::uint64_t seed, const GridWindow& window = {});
StructuredProblem make_oil4c(Box box, std::uint64_t seed, const GridWindow& window = {});
StructuredProblem make_weather(Box box, std::uint64_t seed, const GridWindow& window = {});
StructuredProblem make_solid3d(Box box, const GridWindow& window = {});

/// The HPCG / hypre 27-point operator: 26 on the diagonal, -1 for each of the 26 neighbours
/// inside the grid (homogeneous Dirichlet), all times `scale`. Matches hypre's Struct assembly.
SgDiaMatrix<double> laplace27(Box box, double scale = 1.0);

}  // namespace mpmg
