// What to solve, as each path needs it: a structured problem (built-in, or a Matrix Market file
// on --grid) or a CSR problem (a Matrix Market file, or a built-in one converted for AMG).
#pragma once

#include <string>
#include <vector>

#include "io/problems.hpp"
#include "mpmg/csr_matrix.hpp"
#include "mpmg/options.hpp"

namespace mpmg {

struct CsrProblem {
    std::string name;
    CsrMatrix a;
    std::vector<double> b;
    std::vector<double> x_exact;  ///< empty when unknown (a --rhs was given)
    SolverKind solver = SolverKind::cg;
};

/// --matrix A.mtx [--rhs b.mtx] --grid NX,NY,NZ[,R]: the file's matrix on the structured path.
StructuredProblem load_structured(const ProblemOptions& po);

/// --matrix A.mtx [--rhs b.mtx], or a built-in problem as CSR (for --method amg).
CsrProblem load_csr(const ProblemOptions& po);

}  // namespace mpmg
