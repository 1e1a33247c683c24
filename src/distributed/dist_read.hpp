// A structured problem read from a Matrix Market file by all processes together (issue #8:
// `mpirun -np N mpmg solve --matrix A.mtx --grid NX,NY,NZ[,R]`). Each process reads only its
// share of the file's lines (MatrixMarketPart) and sends every entry to the process that owns
// its row; no process holds the whole matrix or the whole file.
#pragma once

#include <optional>

#include "distributed/partition.hpp"
#include "io/problems.hpp"

namespace mpmg::dist {

/// When this process is one of several started by mpirun (distributed()) and po.matrix can be
/// read in parts (a plain coordinate file): reads it on grid po.grid with po.components
/// unknowns per cell, chooses the partition (`part`; weighed by the operator's direction
/// strengths, measured on a first split, as for a built-in problem) and returns this process's
/// rows with the distributed setup's margin (StructuredProblem::window), b on them (from
/// po.rhs, read whole, or A 1 as load_structured() makes it) and x_exact whole. The errors,
/// their order and the solver chosen (CG when A is symmetric) are those of load_structured();
/// every process throws the same error. Otherwise returns nothing (the file is then read whole
/// on every process).
std::optional<StructuredProblem> load_structured(const ProblemOptions& po,
                                                 std::optional<Partition>& part);

}  // namespace mpmg::dist
