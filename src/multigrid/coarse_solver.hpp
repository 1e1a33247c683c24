// Direct solve on the coarsest level: dense LU with partial pivoting (LAPACK dgetrf/dgetrs) in
// FP64, whatever the level's compute precision (the coarsest level is tiny).
#pragma once

#include <cstdint>
#include <vector>

#include "mpmg/sgdia_matrix.hpp"

namespace mpmg {

class CoarseSolver {
public:
    CoarseSolver() = default;
    /// Factorises A. Throws NumericalError naming the zero pivot when A is singular.
    explicit CoarseSolver(const SgDiaMatrix<double>& a);
    std::int64_t rows() const { return n_; }
    /// x = A^{-1} b, in place on `x` which holds b on entry.
    void solve(double* x) const;

private:
    std::int64_t n_ = 0;
    std::vector<double> lu_;  // column-major
    std::vector<int> pivots_;
};

}  // namespace mpmg
