// hypre's IJ interface (ParCSR) for an SG-DIA matrix (internal to the hypre side of the
// benchmark).
#pragma once

#include <HYPRE.h>
#include <HYPRE_IJ_mv.h>
#include <HYPRE_parcsr_mv.h>

#include <cstdint>
#include <vector>

#include "hypre/hypre_solvers.hpp"
#include "mpmg/sgdia_matrix.hpp"

namespace mpmg::bench::hypre {

/// IJ matrix and two IJ vectors (b, x; both zero) built from `a` row by row: row c holds the
/// entries of every SG-DIA offset whose neighbour lies inside the box (a.nnz() in all), column
/// c + dx + nx (dy + ny dz); owns and destroys them.
class IjSystem {
public:
    explicit IjSystem(const SgDiaMatrix<double>& a);
    ~IjSystem();
    IjSystem(const IjSystem&) = delete;
    IjSystem& operator=(const IjSystem&) = delete;

    HYPRE_ParCSRMatrix matrix() const { return par_a_; }
    HYPRE_ParVector b() const { return par_b_; }
    HYPRE_ParVector x() const { return par_x_; }
    void set(HYPRE_IJVector v, const std::vector<double>& values);
    std::vector<double> get(HYPRE_IJVector v) const;
    HYPRE_IJVector ij_b() const { return b_; }
    HYPRE_IJVector ij_x() const { return x_; }

private:
    HYPRE_IJVector make_vector(HYPRE_ParVector& par);

    HYPRE_BigInt rows_ = 0;
    std::vector<HYPRE_BigInt> index_;  ///< 0 .. rows-1
    HYPRE_IJMatrix a_ = nullptr;
    HYPRE_IJVector b_ = nullptr, x_ = nullptr;
    HYPRE_ParCSRMatrix par_a_ = nullptr;
    HYPRE_ParVector par_b_ = nullptr, par_x_ = nullptr;
};

/// ParCSR PCG / GMRES + BoomerAMG (IJ interface).
Result solve_ij(const StructuredProblem& p, Preconditioner pre, const Settings& s);

}  // namespace mpmg::bench::hypre
