// Right-preconditioned restarted GMRES(restart) in iterative precision K: x = x0 + M^{-1} V y.
// The Krylov basis V and its preconditioned images Z = M^{-1} V are stored in K (keeping Z makes
// iterations == preconditioner applications and tolerates a preconditioner that is only
// approximately linear, as a mixed-precision multigrid cycle is: the flexible form, A Z = V H,
// holds whatever vectors Z holds); the Hessenberg matrix, the Givens rotations and the
// least-squares solve are in double. The history holds the Givens residual estimate inside a
// cycle and the true residual ||b - A x|| / ||b|| at the end of every cycle, so the final value
// is a true one.
//
// Orthogonalisation: classical Gram-Schmidt twice, with the second pass delayed into the next
// iteration (DCGS2: Swirydowicz, Langou, Ananthan, Yang, Thomas, "Low synchronization
// Gram-Schmidt and GMRES algorithms", NLAA 2021). Iteration j reads the basis twice:
//   pass 1  (v_i, q_j), (q_j, q_j), (v_i, w), (q_j, w), (w, w) for i < j, where q_j is the
//           vector the last iteration projected once and w = A z_j; this completes
//           q_j = sum_i c_i v_i + alpha v_j (the second projection, alpha by Pythagoras) and
//           gives w's coefficients against v_0..v_j without touching v_j;
//   pass 2  v_j = (q_j - sum c_i v_i) / alpha and w <- (w - sum h_i v_i) s in one sweep: w
//           becomes q_{j+1}, its scale s from Pythagoras, ||q_{j+1}|| measured on the way.
// Modified Gram-Schmidt (the textbook loop this replaced) read the basis four times per
// iteration (update and next product fused); DCGS2 keeps the orthogonality of Gram-Schmidt
// twice and reads it twice. That decides GMRES's cost off the preconditioner: oil n = 140, 54
// iterations, spent 2.7 s of its 6.1 s K64P32D16 solve outside the preconditioner, mostly
// orthogonalising. The block passes stream slower per byte than single vectors on one core
// (22-28 GB/s against 35-45 on the Zen 5 VM, kernels/vector_simd.cpp), so the time fell by
// about a third, not a half: 16 basis vectors of 2.7M doubles, 31 ms against 47 ms for MGS's
// fused passes alone (a throwaway driver); oil's "other" 2.9 -> 2.2 s in bench e2e.
// Column j of H is final only when pass 1 of iteration j + 1 has completed q_{j+1}; the
// iteration's stop test uses the estimate with q_{j+1} taken as orthogonal (it differs from
// the final one by the second projection, O(eps / cancellation)), and a cycle's last column is
// completed by one extra pass 1 before the update.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/prefault.hpp"
#include "krylov/krylov.hpp"
#include "krylov/result_helpers.hpp"
#include "krylov/vector_ops.hpp"
#include "mpmg/errors.hpp"

namespace mpmg {

namespace {

using namespace krylov_ops;

/// A full restart cycle must reduce the relative residual by at least this fraction.
constexpr double kMinCycleReduction = 1e-5;

/// A full restart cycle after the first whose rate, kept up, would need more than this many
/// times the iterations left of max_iter to reach rtol is too slow to go on with. GMRES(m)'s
/// later cycles rarely gain more than the one before, so the margin only has to cover a rate
/// that varies between cycles: sherman5 with the default AMG cycle (SymGS) gained 0.228 ->
/// 0.206 -> 0.201 -> 0.199 in its 2nd to 4th cycles, which projects about 6000 more iterations
/// against 140 left; the guard then rebuilds with another smoother instead of spending them.
constexpr double kSlowMargin = 3.0;

/// Work space allocated once per solve: nothing is allocated per iteration.
template <class K>
struct GmresWork {
    GmresWork(std::int64_t n_in, int mr_in, bool preconditioned)
        : n(n_in),
          mr(mr_in),
          v(new K[static_cast<std::size_t>(n_in) * static_cast<std::size_t>(mr_in + 1)]),
          z(preconditioned ? new K[static_cast<std::size_t>(n_in) * static_cast<std::size_t>(mr_in)]
                           : nullptr),
          u(static_cast<std::size_t>(n_in)),
          h(static_cast<std::size_t>((mr_in + 1) * mr_in)),
          t(static_cast<std::size_t>(mr_in * mr_in)),
          cs(static_cast<std::size_t>(mr_in)),
          sn(static_cast<std::size_t>(mr_in)),
          g(static_cast<std::size_t>(mr_in + 1)),
          y(static_cast<std::size_t>(mr_in)),
          hp(static_cast<std::size_t>(mr_in + 1)),
          c(static_cast<std::size_t>(mr_in + 1)),
          ctot(static_cast<std::size_t>(mr_in + 1)),
          dots(static_cast<std::size_t>(2 * (mr_in + 1) + 1)),
          basis(static_cast<std::size_t>(mr_in + 1)) {
        prefault(vcol(0), column_bytes());
    }

    std::size_t column_bytes() const { return static_cast<std::size_t>(n) * sizeof(K); }
    /// Faults in v_{j+1} and z_j before their first write, once per column as the cycles first
    /// reach it (core/prefault.hpp): a cycle that ends early still never touches the rest.
    void prefault_column(int j) {
        if (j < prefaulted) return;
        prefault(vcol(j + 1), column_bytes());
        if (z) prefault(zcol(j), column_bytes());
        prefaulted = j + 1;
    }

    K* vcol(int i) { return v.get() + static_cast<std::int64_t>(i) * n; }
    K* zcol(int i) { return z ? z.get() + static_cast<std::int64_t>(i) * n : vcol(i); }
    double& hij(int i, int j) { return h[static_cast<std::size_t>(j * (mr + 1) + i)]; }
    double& tij(int i, int j) { return t[static_cast<std::size_t>(j * mr + i)]; }
    double& at(std::vector<double>& s, int i) { return s[static_cast<std::size_t>(i)]; }
    /// basis[0..m) = the first m columns of v (v_0..v_{m-1}, the last one possibly pending).
    const K* const* columns(int m) {
        for (int i = 0; i < m; ++i) basis[static_cast<std::size_t>(i)] = vcol(i);
        return basis.data();
    }

    /// basis[0..m) = z_0..z_{m-1}.
    const K* const* zcolumns(int m) {
        for (int i = 0; i < m; ++i) basis[static_cast<std::size_t>(i)] = zcol(i);
        return basis.data();
    }

    std::int64_t n;
    int mr;  ///< columns per cycle: min(restart, max_iter)
    // The basis and its images are not zero-filled (each column is written before it is read:
    // v_0 by the residual, v_{j+1} by A z_j, z_j by M): a cycle that ends early never touches
    // its later columns, and no pass clears memory about to be overwritten.
    std::unique_ptr<K[]> v;  ///< Krylov basis v_0..v_mr, column-major; column j holds q_j first
    std::unique_ptr<K[]> z;  ///< z_j = M^{-1} q_j (null when M = I: z_j is q_j)
    std::vector<K> u;        ///< the cycle's correction Z y
    std::vector<double> h;   ///< Hessenberg (mr+1) x mr, reduced to R by the rotations
    std::vector<double> t;   ///< q_j = sum_i t(i, j) v_i (upper triangular; for M = I)
    std::vector<double> cs, sn, g, y;
    std::vector<double> hp;    ///< the pending column: A z_{j-1} = sum_i hp_i v_i + beta q_j
    double beta = 0.0;         ///< its scale
    int committed = 0;         ///< columns of H final and rotated
    std::vector<double> c;     ///< the last pass 1's coefficients of q_j on v_0..v_{j-1}
    std::vector<double> ctot;  ///< all of them (more than one pass 1 only when q_j was lost)
    double alpha = 0.0;        ///< q_j = sum ctot_i v_i + alpha v_j
    std::vector<double> dots;  ///< pass 1's products
    std::vector<const K*> basis;
    std::vector<double> scratch;  ///< per-thread partial sums of the block kernels
    int prefaulted = 0;           ///< columns j < prefaulted went through prefault_column
    std::string lost;             ///< why the last cycle ended on a lost q_j (empty: it did not)
};

/// Iteration j's outcome: ok; happy (column j ends the cycle exactly); lost (q_j could not be
/// completed, so column j - 1 ended the cycle as a happy breakdown and iteration j did not
/// count); stop (res says why).
enum class Step { ok, happy, lost, stop };

/// complete()'s outcome: q_j completed; lost (no direction left after two more projections:
/// alpha = 0); failed (res says why).
enum class Completion { done, lost, failed };

/// Applies the earlier rotations to column j, then the new one that zeroes h(j+1, j), and
/// updates the rotated right-hand side g. Returns false (and fills res) on breakdown.
template <class K>
void apply_rotations(GmresWork<K>& w, int j) {
    for (int i = 0; i < j; ++i) {
        const double t = w.at(w.cs, i) * w.hij(i, j) + w.at(w.sn, i) * w.hij(i + 1, j);
        w.hij(i + 1, j) = -w.at(w.sn, i) * w.hij(i, j) + w.at(w.cs, i) * w.hij(i + 1, j);
        w.hij(i, j) = t;
    }
}

template <class K>
bool rotate(GmresWork<K>& w, int j, int k, KrylovResult& res) {
    apply_rotations(w, j);
    const double d = std::hypot(w.hij(j, j), w.hij(j + 1, j));
    if (!std::isfinite(d) || d == 0.0) {
        stop(res, d == 0.0 ? SolveStatus::breakdown : SolveStatus::non_finite,
             fmt::format("gmres: iteration {}: Givens norm of Hessenberg column {} = {} — "
                         "A M^-1 is singular or overflows on the Krylov space",
                         k, j, d));
        return false;
    }
    w.at(w.cs, j) = w.hij(j, j) / d;
    w.at(w.sn, j) = w.hij(j + 1, j) / d;
    w.hij(j, j) = d;
    w.hij(j + 1, j) = 0.0;
    w.at(w.g, j + 1) = -w.at(w.sn, j) * w.at(w.g, j);
    w.at(w.g, j) = w.at(w.cs, j) * w.at(w.g, j);
    ++w.committed;
    return true;
}

/// |g_{j+1}| with column j of H as it stands: the rotations so far applied to it in place, the
/// new one only computed (the column is rewritten when it is committed).
template <class K>
double tentative_residual(GmresWork<K>& w, int j) {
    apply_rotations(w, j);
    const double d = std::hypot(w.hij(j, j), w.hij(j + 1, j));
    return d > 0.0 ? std::abs(w.hij(j + 1, j) / d * w.at(w.g, j)) : std::abs(w.at(w.g, j));
}

/// Checks w.dots[from, from + count); false (and res filled) when one is not finite.
template <class K>
bool finite_dots(GmresWork<K>& w, int from, int count, int k, KrylovResult& res) {
    for (int i = from; i < from + count; ++i) {
        if (!std::isfinite(w.at(w.dots, i))) {
            stop(res, SolveStatus::non_finite,
                 fmt::format("gmres: iteration {}: an inner product of the Arnoldi vectors is {} "
                             "— the preconditioner output or the operator is not finite",
                             k, w.at(w.dots, i)));
            return false;
        }
    }
    return true;
}

/// Pass 1: completes q_j against v_0..v_{j-1} (w.ctot, w.c, w.alpha) and, when target is not
/// null, leaves its products in w.dots: (v_i, target) at j + 1 + i, (q_j, target) at 2j + 1,
/// (target, target) at 2j + 2 (not checked here). q_j that lost more than half its norm to the
/// basis (one projection was not enough: a cancellation near eps) is projected again
/// explicitly, at most twice more. A q_j still in the span after that is lost: the remainder
/// it was made from, w - V h, was rounding, a few ulps of ||w||, which the happy-breakdown
/// test of the iteration before (<= eps ||w||) can miss. With an exact preconditioner on a 2 x 2
/// A it lay along v_0 itself. alpha = 0 then, and w.lost says why. Fails (and fills res) on a
/// non-finite product of q_j.
template <class K>
Completion complete(const LinearOperator<K>& a, GmresWork<K>& w, int j, K* target, int k,
                    KrylovResult& res) {
    std::fill(w.ctot.begin(), w.ctot.begin() + j, 0.0);
    for (int round = 0;; ++round) {
        multi_dot(a, j + 1, w.columns(j + 1), w.vcol(j), target, w.dots.data(), w.scratch);
        // q_j's own products (the target's are checked by the caller, after q_j has completed
        // the last column: a non-finite A z_j still leaves every earlier iteration usable).
        if (!finite_dots(w, 0, j + 1, k, res)) return Completion::failed;
        double cc = 0.0;
        for (int i = 0; i < j; ++i) {
            w.at(w.c, i) = w.at(w.dots, i);
            w.at(w.ctot, i) += w.at(w.c, i);
            cc += w.at(w.c, i) * w.at(w.c, i);
        }
        const double qq = w.at(w.dots, j);
        const double alpha2 = qq - cc;
        if (alpha2 > 0.5 * qq) {
            w.alpha = std::sqrt(alpha2);
            return Completion::done;
        }
        if (round == 2 || !(qq > 0.0)) {
            const std::string why = fmt::format(
                "gmres: iteration {}: Krylov vector {} lies in the span of the earlier ones "
                "(orthogonalisation lost)",
                k, j);
            if (j == 0) {  // v_0 = r / ||r|| itself: not a remainder of rounding
                stop(res, SolveStatus::breakdown, why);
                return Completion::failed;
            }
            w.alpha = 0.0;
            w.lost = why;
            return Completion::lost;
        }
        gs_update(a, j, w.columns(j), w.c.data(), 1.0, w.vcol(j), nullptr, 1.0,
                  static_cast<K*>(nullptr), w.scratch);
    }
}

/// Commits column j - 1 of H now that q_j = sum ctot_i v_i + alpha v_j is complete: A z_{j-1} =
/// sum_i (hp_i + beta ctot_i) v_i + beta alpha v_j. Returns the exact |g_j|, or a negative value
/// (res filled) on breakdown.
template <class K>
double commit_pending(GmresWork<K>& w, int j, int k, KrylovResult& res) {
    for (int i = 0; i < j; ++i) w.hij(i, j - 1) = w.at(w.hp, i) + w.beta * w.at(w.ctot, i);
    w.hij(j, j - 1) = w.beta * w.alpha;
    if (!rotate(w, j - 1, k, res)) return -1.0;
    return std::abs(w.at(w.g, j));
}

/// Iteration k, column j: z_j = M^{-1} q_j, w = A z_j, pass 1 (which also commits column j - 1
/// and replaces the last history entry with its exact estimate), pass 2 (v_j final, w projected
/// into q_{j+1}). On Step::ok, *est is the tentative relative residual of this iteration.
template <class K>
Step arnoldi_step(const LinearOperator<K>& a, Preconditioner<K>* m, GmresWork<K>& w, int j, int k,
                  double bnorm, KrylovResult& res, double* est) {
    constexpr double eps = std::numeric_limits<K>::epsilon();
    w.prefault_column(j);
    if (m != nullptr) apply_timed(*m, w.vcol(j), w.zcol(j), &res.preconditioner_seconds);
    K* next = w.vcol(j + 1);
    a.apply(w.zcol(j), next);
    const Completion done = complete(a, w, j, next, k, res);
    if (done == Completion::failed) return Step::stop;
    if (done == Completion::lost) {
        // Column j - 1 with h(j, j - 1) = 0: A z_{j-1} lay in the span of v_0..v_{j-1}.
        const double gj = commit_pending(w, j, k - 1, res);
        if (gj < 0.0) return Step::stop;
        res.history.back() = gj / bnorm;
        return Step::lost;
    }
    for (int i = 0; i < j; ++i) w.tij(i, j) = w.at(w.ctot, i);
    w.tij(j, j) = w.alpha;
    if (j > 0) {
        const double gj = commit_pending(w, j, k - 1, res);
        if (gj < 0.0) return Step::stop;
        res.history.back() = gj / bnorm;
    }
    if (!finite_dots(w, j + 1, j + 2, k, res)) return Step::stop;  // (v_i, w), (q_j, w), (w, w)
    // w's coefficients on v_0..v_j: (v_j, w) = ((q_j, w) - sum c_i (v_i, w)) / alpha.
    const double* b = w.dots.data() + j + 1;
    double hj = b[j];
    for (int i = 0; i < j; ++i) hj -= w.at(w.c, i) * b[i];
    hj /= w.alpha;
    double hh = hj * hj;
    for (int i = 0; i < j; ++i) {
        w.at(w.hp, i) = b[i];
        hh += b[i] * b[i];
    }
    w.at(w.hp, j) = hj;
    const double ww = w.at(w.dots, 2 * j + 2);
    const double norm0 = std::sqrt(ww);
    // ||w - V h||^2 = ||w||^2 - ||h||^2 while V is orthonormal; trusted unless the cancellation
    // is within a few eps of ||w||^2, where w is scaled by 1 / ||w|| and measured instead
    // (w = 0, a singular operator, is left as it is and ends in the breakdown below).
    const double rem2 = ww - hh;
    double s = rem2 > 64.0 * eps * ww ? 1.0 / std::sqrt(rem2) : norm0 > 0.0 ? 1.0 / norm0 : 1.0;
    const double nu2 = gs_update(a, j, w.columns(j), w.c.data(), 1.0 / w.alpha, w.vcol(j),
                                 w.hp.data(), s, next, w.scratch);
    const double hnext = std::sqrt(nu2) / s;  // ||w - V_j h||
    if (!std::isfinite(hnext) || !std::isfinite(s)) {
        stop(res, SolveStatus::non_finite,
             fmt::format("gmres: iteration {}: Hessenberg h({}, {}) = {} is not finite", k, j + 1,
                         j, hnext));
        return Step::stop;
    }
    // Column j as it stands with q_{j+1} taken as orthogonal: final on a happy breakdown (no
    // q_{j+1} follows), else the tentative estimate's, rewritten when q_{j+1} completes it.
    for (int i = 0; i <= j; ++i) w.hij(i, j) = w.at(w.hp, i);
    w.hij(j + 1, j) = hnext;
    // Happy breakdown: A M^-1 q_j lies in the Krylov space, the cycle's solution is exact.
    if (hnext <= eps * norm0) {
        if (!rotate(w, j, k, res)) return Step::stop;
        return Step::happy;
    }
    const double nu = std::sqrt(nu2);
    if (nu < 0.5 || nu > 2.0) {  // the untrusted scale: q_{j+1} to unit norm
        scale_copy(w.n, 1.0 / nu, next, next);
        s /= nu;
    }
    w.beta = 1.0 / s;
    *est = tentative_residual(w, j) / bnorm;
    return Step::ok;
}

/// x <- x + Z y with R y = g over the first cols columns; then r = b - A x into v_0 and returns
/// ||r|| / ||b||. A non-finite y or residual leaves x at the cycle's start, sets status
/// non_finite and returns that x's true relative residual, prev.
template <class K>
double update_and_residual(const LinearOperator<K>& a, const K* b, K* x, GmresWork<K>& w, int cols,
                           int k, double bnorm, double prev, KrylovResult& res) {
    const std::int64_t n = w.n;
    for (int i = cols - 1; i >= 0; --i) {
        double s = w.at(w.g, i);
        for (int l = i + 1; l < cols; ++l) s -= w.hij(i, l) * w.at(w.y, l);
        w.at(w.y, i) = s / w.hij(i, i);
        if (!std::isfinite(w.at(w.y, i))) {
            stop(res, SolveStatus::non_finite,
                 fmt::format("gmres: iteration {}: least-squares coefficient y[{}] = {} is not "
                             "finite",
                             k, i, w.at(w.y, i)));
            return prev;
        }
    }
    // u = Z y in one pass over Z; with M = I, Z = Q = V T, so u = V (T y).
    if (!w.z) {
        for (int i = 0; i < cols; ++i) {
            double t = 0.0;
            for (int l = i; l < cols; ++l) t += w.tij(i, l) * w.at(w.y, l);
            w.at(w.c, i) = -t;
        }
    } else {
        for (int i = 0; i < cols; ++i) w.at(w.c, i) = -w.at(w.y, i);
    }
    set_zero(n, w.u.data());
    gs_update(a, cols, !w.z ? w.columns(cols) : w.zcolumns(cols), w.c.data(), 1.0, w.u.data(),
              nullptr, 1.0, static_cast<K*>(nullptr), w.scratch);
    axpy(n, 1.0, w.u.data(), x);
    residual(a, b, x, w.vcol(0), false);
    const double rel = norm2(a, w.vcol(0)) / bnorm;
    if (!std::isfinite(rel)) {
        axpy(n, -1.0, w.u.data(), x);  // back to the last finite iterate
        stop(res, SolveStatus::non_finite,
             fmt::format("gmres: iteration {}: true residual ||b - A x|| / ||b|| = {} — the "
                         "update overflows precision K",
                         k, rel));
        return prev;
    }
    return rel;
}

/// Runs one restart cycle from v_0 = r / beta. Returns the number of columns of H completed;
/// sets *k to the total iteration count. res.status != max_iterations means the cycle failed.
template <class K>
int run_cycle(const LinearOperator<K>& a, Preconditioner<K>* m, GmresWork<K>& w, double beta,
              double bnorm, const KrylovOptions& opt, int* k, KrylovResult& res) {
    scale_copy(w.n, 1.0 / beta, w.vcol(0), w.vcol(0));
    std::fill(w.g.begin(), w.g.end(), 0.0);
    w.at(w.g, 0) = beta;
    w.committed = 0;
    w.lost.clear();
    for (int j = 0; j < w.mr && *k < opt.max_iter; ++j) {
        double est = 0.0;
        const Step step = arnoldi_step(a, m, w, j, *k + 1, bnorm, res, &est);
        if (step == Step::stop) break;
        if (step == Step::lost) {
            res.relative_residual = res.history.back();
            break;
        }
        ++*k;
        res.iterations = *k;
        if (step == Step::happy) {
            est = std::abs(w.at(w.g, j + 1)) / bnorm;
            res.history.push_back(est);
            res.relative_residual = est;
            break;
        }
        res.history.push_back(est);
        res.relative_residual = est;
        if (est <= opt.rtol || j + 1 == w.mr || *k == opt.max_iter) {
            // The cycle ends: complete q_{j+1} (no further product) and commit column j (with
            // h(j + 1, j) = 0 when q_{j+1} is lost).
            if (complete(a, w, j + 1, static_cast<K*>(nullptr), *k, res) == Completion::failed) {
                break;
            }
            const double g = commit_pending(w, j + 1, *k, res);
            if (g < 0.0) break;
            res.history.back() = g / bnorm;
            res.relative_residual = g / bnorm;
            break;
        }
    }
    return w.committed;
}

}  // namespace

template <class K>
KrylovResult gmres(const LinearOperator<K>& a, Preconditioner<K>* m, const K* b, K* x,
                   const KrylovOptions& opt) {
    if (opt.restart < 1) {
        throw InvalidInput(
            fmt::format("gmres: restart = {} must be at least 1; the default is 30", opt.restart));
    }
    const std::int64_t n = a.size();
    GmresWork<K> w(n, std::max(1, std::min(opt.restart, opt.max_iter)), m != nullptr);
    KrylovResult res;
    double bnorm = 0.0;
    if (!begin("gmres", a, b, x, w.vcol(0), opt, res, &bnorm)) return res;

    int k = 0, full_cycles = 0;
    double rel = res.history.front();
    while (k < opt.max_iter) {
        res.status = SolveStatus::max_iterations;  // the cycle changes it only on failure
        const int cols = run_cycle(a, m, w, rel * bnorm, bnorm, opt, &k, res);
        const bool full = cols == w.mr;
        const double prev = rel;
        rel = update_and_residual(a, b, x, w, cols, k, bnorm, prev, res);
        res.history.back() = rel;
        res.relative_residual = rel;
        if (res.status != SolveStatus::max_iterations) return res;
        if (rel <= opt.rtol) {
            res.status = SolveStatus::converged;
            return res;
        }
        // A cycle ended on a lost q_j restarts from the true residual, unless it gained nothing:
        // then the basis, not rounding, was what failed.
        if (!w.lost.empty() && !full && rel >= prev * (1.0 - kMinCycleReduction)) {
            return stop(res, SolveStatus::breakdown, w.lost);
        }
        // A full restart cycle that gains less than kMinCycleReduction has stalled: GMRES(m)
        // restarted from the same residual would need ~1e5 cycles per decade. BentPipe2D100
        // with smoothed aggregation and SymGS gained 1e-7 per cycle for 200 iterations before
        // this rule (the guard now rebuilds with l1-Jacobi and converges).
        if (rel > kDivergenceFactor * res.history.front() ||
            (full && rel >= prev * (1.0 - kMinCycleReduction))) {
            return stop(res, SolveStatus::stagnated,
                        fmt::format("gmres: iteration {}: true relative residual {:.3e} after a "
                                    "restart cycle (before it {:.3e}, initially {:.3e}) — the "
                                    "iteration stagnates; increase restart or improve the "
                                    "preconditioner",
                                    k, rel, prev, res.history.front()));
        }
        const int left = opt.max_iter - k;
        if (full && ++full_cycles >= 2 && opt.stop_when_too_slow && left >= w.mr &&
            opt.rtol > 0.0 && rel < prev) {
            const double needed = std::log(rel / opt.rtol) / std::log(prev / rel) * w.mr;
            if (needed > kSlowMargin * left) {
                res.too_slow = true;
                return stop(res, SolveStatus::stagnated,
                            fmt::format("gmres: iteration {}: true relative residual {:.3e} after "
                                        "a restart cycle that reduced it {:.3g}x (before it "
                                        "{:.3e}); at that rate reaching rtol = {:.1e} takes about "
                                        "{:.0f} more iterations, {} are left of max_iter — the "
                                        "iteration is too slow; improve the preconditioner or "
                                        "raise max_iter",
                                        k, rel, prev / rel, prev, opt.rtol, needed, left));
            }
        }
    }
    return out_of_iterations(res, "gmres", opt.max_iter, opt.rtol);
}

template KrylovResult gmres<double>(const LinearOperator<double>& a, Preconditioner<double>* m,
                                    const double* b, double* x, const KrylovOptions& opt);
template KrylovResult gmres<float>(const LinearOperator<float>& a, Preconditioner<float>* m,
                                   const float* b, float* x, const KrylovOptions& opt);

}  // namespace mpmg
