// What mpmg::Solver keeps of a setup on several processes (api/reusable_solver.cpp): A's
// operator for the Krylov solver and the builder of the distributed hierarchy, whichever way the
// processes gave A (RowBlockSystem: each its rows, the AMG path; GridBlockSystem: each its box of
// a structured grid). Every call that communicates is collective over the Solver's processes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "api/guarded_solve.hpp"
#include "krylov/krylov.hpp"
#include "mpmg/solver.hpp"

namespace mpmg::dist {

class DistSystem {
public:
    virtual ~DistSystem() = default;
    /// The rows of b and x this process holds, and A's.
    virtual std::int64_t local_rows() const = 0;
    virtual std::int64_t global_rows() const = 0;
    virtual std::int64_t global_nnz() const = 0;
    /// A's operator in K = FP64 or FP32: one of them is set.
    virtual const LinearOperator<double>* op64() const = 0;
    virtual const LinearOperator<float>* op32() const = 0;
    /// The distributed hierarchy for a plan and options (the guard's builder), and the guard's
    /// fallbacks.
    virtual const BuildFn& build() const = 0;
    virtual const GuardFallbacks& fallbacks() const = 0;
    /// What the operator's products read, into `out`, where it is not K's storage.
    virtual void report(SolveResult& /*out*/) const {}
    /// The partition of a hierarchy of `levels` levels, with the communication since the last
    /// reset_comm().
    virtual PartitionInfo partition(std::size_t levels) const = 0;
    virtual void reset_comm() const = 0;
};

}  // namespace mpmg::dist
