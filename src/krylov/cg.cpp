// Preconditioned conjugate gradients in iterative precision K. Iteration k applies the
// preconditioner once (z = M^{-1} r_{k-1}), so iterations == preconditioner applications. Every
// scalar is checked before x is touched, so a solve that stops hands back the last finite
// iterate. The history is the recurrence residual ||r_k|| / ||b||.
//
// Passes over the vectors, fused where the order of operations allows (the same values, bit
// for bit, as the textbook sequence): x += alpha_k p_k waits for the next iteration's update
// of p, which reads p_k anyway (x and p in one pass; settled before any return), and the
// operator forms (p, A p) while it writes A p where it can (LinearOperator::apply_dot).
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "core/prefault.hpp"
#include "krylov/krylov.hpp"
#include "krylov/result_helpers.hpp"
#include "krylov/vector_ops.hpp"

namespace mpmg {

namespace {

using namespace krylov_ops;

/// Checks (r, z) of iteration k; returns false (and fills res) when the solve must stop.
bool check_rz(KrylovResult& res, int k, double rz) {
    if (!std::isfinite(rz)) {
        stop(res, SolveStatus::non_finite,
             fmt::format("cg: iteration {}: (r, z) = {} — the preconditioner output is not finite",
                         k, rz));
        return false;
    }
    if (rz <= 0.0) {
        stop(res, SolveStatus::breakdown,
             fmt::format("cg: iteration {}: (r, z) = {:.3e} <= 0 — the preconditioner is not "
                         "symmetric positive definite",
                         k, rz));
        return false;
    }
    return true;
}

/// Checks p^T A p and alpha of iteration k; returns false (and fills res) when the solve must
/// stop.
bool check_pap(KrylovResult& res, int k, double pap, double alpha) {
    if (!std::isfinite(pap)) {
        stop(res, SolveStatus::non_finite,
             fmt::format("cg: iteration {}: p^T A p = {} — the operator output is not finite", k,
                         pap));
        return false;
    }
    if (pap <= 0.0) {
        stop(res, SolveStatus::breakdown,
             fmt::format("cg: iteration {}: p^T A p = {:.3e} <= 0 — the operator is not "
                         "symmetric positive definite",
                         k, pap));
        return false;
    }
    if (!std::isfinite(alpha)) {
        stop(res, SolveStatus::non_finite,
             fmt::format("cg: iteration {}: alpha = (r, z) / p^T A p = {} — p^T A p = {:.3e} "
                         "underflows",
                         k, alpha, pap));
        return false;
    }
    return true;
}

}  // namespace

template <class K>
KrylovResult cg(const LinearOperator<K>& a, Preconditioner<K>* m, const K* b, K* x,
                const KrylovOptions& opt) {
    const std::int64_t n = a.size();
    // Prefaulted: in a fresh process these are new pages (core/prefault.hpp).
    const auto un = static_cast<std::size_t>(n);
    std::vector<K> r = prefaulted<K>(un), p = prefaulted<K>(un), q = prefaulted<K>(un);
    std::vector<K> zbuf = prefaulted<K>(m != nullptr ? un : 0);
    K* z = m != nullptr ? zbuf.data() : r.data();  // M = I: z aliases r
    KrylovResult res;
    double bnorm = 0.0;
    if (!begin("cg", a, b, x, r.data(), opt, res, &bnorm)) return res;

    double rz_old = 1.0, pap_old = 1.0;
    const bool flexible = opt.flexible && m != nullptr;
    double pending = 0.0;  // x += pending p is still to be done (0: nothing pending)
    const auto settle = [&] {
        if (pending != 0.0) axpy(n, pending, p.data(), x);
        pending = 0.0;
    };
    for (int k = 1; k <= opt.max_iter; ++k) {
        if (m != nullptr) apply_timed(*m, r.data(), z, &res.preconditioner_seconds);
        const double rz = dot(a, r.data(), z);
        if (!check_rz(res, k, rz)) {
            settle();
            return res;
        }
        if (k == 1) {
            copy(n, z, p.data());
        } else {  // x += alpha_{k-1} p_{k-1}, then p = z + beta p: one pass
            // rz_old > 0 and pap_old > 0, both finite; q still holds A p_{k-1}
            const double beta = flexible ? -dot(a, z, q.data()) / pap_old : rz / rz_old;
            axpy_xpby(n, pending, z, beta, p.data(), x);
            pending = 0.0;
        }
        rz_old = rz;
        const double pap = apply_dot(a, p.data(), q.data());
        pap_old = pap;
        const double alpha = rz / pap;
        if (!check_pap(res, k, pap, alpha)) return res;
        const double rel = std::sqrt(axpy_dot(a, -alpha, q.data(), r.data(), r.data())) / bnorm;
        if (!std::isfinite(rel)) {  // x is the last finite iterate: alpha p was never added
            return stop(res, SolveStatus::non_finite,
                        fmt::format("cg: iteration {}: ||r|| / ||b|| = {} — the update overflows "
                                    "precision K",
                                    k, rel));
        }
        pending = alpha;
        if (!record(res, "cg", k, rel, opt.rtol)) {
            settle();
            return res;
        }
    }
    settle();
    return out_of_iterations(res, "cg", opt.max_iter, opt.rtol);
}

template KrylovResult cg<double>(const LinearOperator<double>& a, Preconditioner<double>* m,
                                 const double* b, double* x, const KrylovOptions& opt);
template KrylovResult cg<float>(const LinearOperator<float>& a, Preconditioner<float>* m,
                                const float* b, float* x, const KrylovOptions& opt);

}  // namespace mpmg
