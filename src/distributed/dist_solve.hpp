// The distributed structured solve (issue #8): the entry point solve() calls first.
#pragma once

#include "io/problems.hpp"
#include "mpmg/solver.hpp"

namespace mpmg::dist {

/// When this process is one of several started by mpirun (MPI initialised, world size > 1),
/// solves `p` distributed over MPI_COMM_WORLD, fills `out` like the serial structured solve (x
/// whole on every process) plus out.partition, and returns true. Otherwise, and always in a
/// build without MPI, returns false and does nothing. Every process must pass the same problem.
/// A distributed solve may release p.a (each process keeps its rows only); p.b and p.x_exact
/// stay.
bool solve_structured(StructuredProblem& p, const SolverOptions& o, SolveResult& out);

}  // namespace mpmg::dist
