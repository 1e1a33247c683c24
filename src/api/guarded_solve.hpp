// The runtime guard (DESIGN.md Safety §5) around a preconditioned Krylov solve, shared by the
// structured and the AMG path: build the preconditioner, solve, and on a non-finite value,
// breakdown or stagnation rebuild it with a wider precision plan and continue from the last
// finite iterate.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "krylov/krylov.hpp"
#include "mpmg/solver.hpp"
#include "multigrid/level.hpp"

namespace mpmg {

/// Krylov products before a structured operator (serial or distributed) makes an exact FP16
/// copy of A that level 0 does not share (ski rental: wait about as many products as the copy
/// costs). Measured on laplace27 n = 128, one thread: an FP64-compute 3d27 product costs 47 ms
/// from FP64 values and 19-22 ms from FP16; the FP16 copy costs ~170 ms (68 ms of conversion
/// and the first touch of 113 MB at ~0.9 ms per MB): about 6 products' savings.
constexpr int kProductsBeforeHalfCopy = 6;

// A built multigrid preconditioner of either path, as the guard needs it.
class BuiltPreconditioner {
public:
    virtual ~BuiltPreconditioner() = default;
    virtual void apply(const double* r, double* z) = 0;
    virtual void apply(const float* r, float* z) = 0;
    virtual const std::vector<LevelReport>& report() const = 0;
    virtual double grid_complexity() const = 0;
    virtual double operator_complexity() const = 0;
};

template <class H>
class Built final : public BuiltPreconditioner {
public:
    template <class... Args>
    explicit Built(Args&&... args) : h_(std::forward<Args>(args)...) {}
    void apply(const double* r, double* z) override { h_.apply(r, z); }
    void apply(const float* r, float* z) override { h_.apply(r, z); }
    const std::vector<LevelReport>& report() const override { return h_.report(); }
    double grid_complexity() const override { return h_.grid_complexity(); }
    double operator_complexity() const override { return h_.operator_complexity(); }

private:
    H h_;
};

/// Builds the preconditioner for a precision plan.
using BuildFn =
    std::function<std::unique_ptr<BuiltPreconditioner>(const PrecisionPlan&, SmootherKind)>;

template <class K>
class Adapter final : public Preconditioner<K> {
public:
    explicit Adapter(BuiltPreconditioner& m) : m_(m) {}
    void apply(const K* r, K* z) override { m_.apply(r, z); }

private:
    BuiltPreconditioner& m_;
};

/// Solves A x = b (b in FP64) in precision K; fills status, iterations, history, message,
/// guard events, levels, complexities, setup and preconditioner times, and x of `out`. When
/// FP64 everywhere still fails, the guard's last step rebuilds with the `robust` smoother.
template <class K>
void run_guarded(const LinearOperator<K>& a, const std::vector<double>& b, const BuildFn& build,
                 const SolverOptions& o, SmootherKind robust, SolveResult& out);

}  // namespace mpmg
