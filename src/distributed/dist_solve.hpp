// The distributed structured solve (issue #8): the entry point solve() calls first.
#pragma once

#include <chrono>
#include <optional>

#include "distributed/partition.hpp"
#include "io/problems.hpp"
#include "mpmg/solver.hpp"

namespace mpmg::dist {

/// When this process is one of several started by mpirun (MPI initialised, world size > 1):
/// chooses the partition of built-in problem `opt` and generates this process's rows of it
/// (make_problem_rows: its block with the distributed setup's margin; the partition weighs the
/// directions by the whole operator's coupling strengths, measured on a first split), sets
/// `part` and returns them. Otherwise, and always in a build without MPI, returns nothing.
std::optional<StructuredProblem> generate(const ProblemOptions& opt,
                                          std::optional<Partition>& part);

/// When this process is one of several started by mpirun (MPI initialised, world size > 1),
/// solves `p` distributed over MPI_COMM_WORLD, fills `out` like the serial structured solve (x
/// whole on every process, rows and nnz of the whole operator) plus out.partition, and returns
/// true. `p` is the whole problem (the same on every process; `part` empty: chosen here) or
/// this process's rows from generate() with its `part`. A distributed solve may release p.a;
/// p.x_exact stays. out.total_s is the time since `started` when the solve ends, with x in
/// blocks over the processes (assembling it whole afterwards is not timed). Otherwise, and
/// always in a build without MPI, returns false and does nothing.
bool solve_structured(StructuredProblem& p, const std::optional<Partition>& part,
                      const SolverOptions& o, SolveResult& out,
                      std::chrono::steady_clock::time_point started);

}  // namespace mpmg::dist
