// hypre's Struct interface for an SG-DIA matrix (internal to the hypre side of the benchmark).
#pragma once

#include <HYPRE_struct_mv.h>

#include <array>
#include <cstdint>
#include <vector>

#include "hypre/hypre_solvers.hpp"
#include "mpmg/sgdia_matrix.hpp"

namespace mpmg::bench::hypre {

/// Grid, stencil, matrix and two vectors (b, x; both zero) of hypre's Struct interface, built
/// from `a` (FP64, scalar); owns and destroys them.
class StructSystem {
public:
    explicit StructSystem(const SgDiaMatrix<double>& a);
    ~StructSystem();
    StructSystem(const StructSystem&) = delete;
    StructSystem& operator=(const StructSystem&) = delete;

    HYPRE_StructMatrix matrix() const { return a_; }
    HYPRE_StructVector b() const { return b_; }
    HYPRE_StructVector x() const { return x_; }
    /// Sets / reads a vector over the whole box, values in mpmg's cell order.
    void set(HYPRE_StructVector v, const std::vector<double>& values);
    std::vector<double> get(HYPRE_StructVector v, std::int64_t cells);

private:
    HYPRE_StructVector make_vector();

    std::array<HYPRE_Int, 3> lower_{}, upper_{};
    HYPRE_StructGrid grid_ = nullptr;
    HYPRE_StructStencil stencil_ = nullptr;
    HYPRE_StructMatrix a_ = nullptr;
    HYPRE_StructVector b_ = nullptr, x_ = nullptr;
};

/// PCG / GMRES + PFMG / SMG (Struct interface).
Result solve_struct(const StructuredProblem& p, Preconditioner pre, const Settings& s);

}  // namespace mpmg::bench::hypre
