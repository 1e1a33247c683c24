// Krylov solvers in iterative precision K (double or float). Inner products and norms are
// accumulated in double and every one is checked for finiteness (STYLE.md: errors and numerics).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mpmg/solve_status.hpp"

namespace mpmg {

/// y = A x in precision K.
template <class K>
class LinearOperator {
public:
    virtual ~LinearOperator() = default;
    virtual std::int64_t size() const = 0;
    virtual void apply(const K* x, K* y) const = 0;
    /// y = A x and *local_dot = this process's part of (x, y), formed while y is written (in
    /// cache), returning true; false (y written, no dot) when the operator cannot: the caller
    /// then takes the dot itself (krylov_ops::apply_dot).
    virtual bool apply_dot(const K* x, K* y, double* local_dot) const {
        (void)local_dot;
        apply(x, y);
        return false;
    }
    /// The sum over all processes of a local partial inner product (distributed operators
    /// reduce over MPI; a serial operator returns `local`). The solvers call it on every inner
    /// product and norm, so each process sees the same scalars and takes the same branches.
    virtual double global_sum(double local) const { return local; }
    /// values[i] <- global_sum(values[i]) for i < count; a distributed operator reduces them
    /// in one message (GMRES's block Gram-Schmidt sums up to 2 (restart + 1) + 1 products at once).
    virtual void global_sums(double* values, int count) const {
        for (int i = 0; i < count; ++i) values[i] = global_sum(values[i]);
    }
};

/// z = M^{-1} r in precision K. May produce non-finite values (the solver detects them).
template <class K>
class Preconditioner {
public:
    virtual ~Preconditioner() = default;
    virtual void apply(const K* r, K* z) = 0;
};

struct KrylovOptions {
    double rtol = 1e-10;             ///< stop when ||b - A x|| / ||b|| <= rtol
    int max_iter = 500;              ///< iterations (preconditioner applications)
    int restart = 30;                ///< GMRES restart length
    bool zero_initial_guess = true;  ///< x is zero on entry: skips the first A x
    /// GMRES: stop (stagnated) after a restart cycle whose rate projects far more iterations
    /// than max_iter leaves, while a full cycle is left to spend on something better. The
    /// runtime guard asks for this; a caller that wants exactly max_iter iterations does not.
    bool stop_when_too_slow = false;
    /// CG: the preconditioner varies between applications (a K-cycle's inner Krylov steps),
    /// so each direction is made A-orthogonal to the last one explicitly (flexible CG, Notay
    /// 2000: beta = -(z, A p) / (p, A p)) instead of by the (r, z) recurrence.
    bool flexible = false;
};

struct KrylovResult {
    SolveStatus status = SolveStatus::max_iterations;
    int iterations = 0;
    double relative_residual = 0.0;       ///< final ||r|| / ||b||
    std::vector<double> history;          ///< ||r_k|| / ||b||, k = 0..iterations
    std::string message;                  ///< for anything but converged: what and where
    double preconditioner_seconds = 0.0;  ///< wall time inside Preconditioner::apply
    /// Stagnated by KrylovOptions::stop_when_too_slow: progressing, but too slowly for max_iter.
    bool too_slow = false;
};

/// Preconditioned conjugate gradients (A and M symmetric positive definite).
template <class K>
KrylovResult cg(const LinearOperator<K>& a, Preconditioner<K>* m, const K* b, K* x,
                const KrylovOptions& opt);

/// Right-preconditioned (flexible) restarted GMRES(restart): classical Gram-Schmidt twice with
/// the second projection delayed (DCGS2, gmres.cpp) and Givens rotations.
template <class K>
KrylovResult gmres(const LinearOperator<K>& a, Preconditioner<K>* m, const K* b, K* x,
                   const KrylovOptions& opt);

/// Stationary iteration x <- x + M^{-1}(b - A x) (ICPP'24 Algorithm 2).
template <class K>
KrylovResult richardson(const LinearOperator<K>& a, Preconditioner<K>* m, const K* b, K* x,
                        const KrylovOptions& opt);

}  // namespace mpmg
