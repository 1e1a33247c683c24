// A block preconditioner for saddle-point matrices on the AMG path.
//
// A matrix whose rows with a zero diagonal (constraints: a Stokes or mixed finite-element
// pressure, Lagrange multipliers) split it, after a symmetric permutation, as
//
//     K = [ A   E ]    u: the rows with a nonzero diagonal
//         [ B   C ]    p: the rows with a zero diagonal (E = B^T when K is symmetric)
//
// has no smoother that one AMG on K can rely on: Gauss-Seidel divides by the zero diagonal, and
// l1-Jacobi with pairwise aggregates of K mixes the two kinds of unknowns (a 100^2 Laplacian with
// 2,500 constraint rows: GMRES 200 iterations to 4e-4). The block upper triangular preconditioner
//
//     M = [ A   E   ]    with  S^ = B diag(A)^-1 E - C,
//         [ 0   -S^ ]
//
// applies A^-1 and S^-1 by one AMG cycle each: z_p = -S^-1 r_p, then z_u = A^-1 (r_u - E z_p).
// With exact blocks, S^ = B A^-1 E - C (the negated Schur complement), K M^-1 has the minimal
// polynomial (x - 1)^2 and GMRES ends in two iterations (Murphy, Golub, Wathen, "A note on
// preconditioning for indefinite linear systems", SISC 2000; Elman, Silvester, Wathen, "Finite
// Elements and Fast Iterative Solvers", §9.2); diag(A) in place of A in S^ is SIMPLE's choice
// (Patankar; Elman et al. §9.3.2). M is not symmetric: the Krylov method is GMRES.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "mpmg/csr_matrix.hpp"
#include "mpmg/options.hpp"
#include "mpmg/precision.hpp"
#include "multigrid/amg_hierarchy.hpp"
#include "multigrid/level.hpp"

namespace mpmg {

/// The rows of a saddle-point matrix by kind, each list ascending.
struct SaddleSplit {
    std::vector<std::int64_t> u;  ///< rows whose diagonal entry is nonzero
    std::vector<std::int64_t> p;  ///< rows whose diagonal entry is zero or absent
    /// Rows of p coupled to one row of u only: constraints that pin an unknown (Dirichlet
    /// values imposed by multipliers), which one AMG on the whole matrix handles better.
    std::int64_t pins = 0;
};

/// The split of square `a` when it is a saddle point the block preconditioner takes: some rows
/// have a zero (or no) diagonal entry, at most as many as the others, and each of them couples
/// to at least one row with a nonzero diagonal (else S^ has an empty row); std::nullopt
/// otherwise (no zero diagonal, or constraints among themselves only).
std::optional<SaddleSplit> saddle_split(const CsrMatrix& a);

class SaddlePointPreconditioner {
public:
    /// Extracts A, B, E and C of `k` by `split`, forms S^ = B diag(A)^-1 E - C, and
    /// builds an AMG hierarchy on each (mg and plan as for one hierarchy; both scalar, block
    /// size 1; settings' kept aggregates, which are K's, are not used). `k` is not referenced
    /// afterwards. Throws what AmgHierarchy throws, naming the block.
    SaddlePointPreconditioner(const CsrMatrix& k, const SaddleSplit& split,
                              const MultigridOptions& mg, const PrecisionPlan& plan,
                              const AmgSettings& settings);
    /// z = M^-1 r (K double or float).
    template <class K>
    void apply(const K* r, K* z);
    /// The levels of A's hierarchy, then S^'s, each note saying which.
    const std::vector<LevelReport>& report() const { return report_; }
    double grid_complexity() const { return grid_complexity_; }
    double operator_complexity() const { return operator_complexity_; }
    /// A's and S^'s rows and nonzeros (the two hierarchies' level 0).
    const CsrMatrix& a_block() const { return a_; }
    const CsrMatrix& schur_block() const { return schur_; }

private:
    SaddleSplit split_;
    CsrMatrix a_, e_, schur_;  // e_: u rows x p columns; the hierarchies' level 0: a_, schur_
    std::unique_ptr<AmgHierarchy> ha_, hs_;
    std::vector<LevelReport> report_;
    double grid_complexity_ = 1.0, operator_complexity_ = 1.0;
    std::vector<double> du_[3], dp_[2];  // work vectors: r_u, t, z_u / r_p, z_p
    std::vector<float> fu_[3], fp_[2];
};

}  // namespace mpmg
