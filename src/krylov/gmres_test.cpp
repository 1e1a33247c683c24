// Restarted GMRES, typed over K = double and float: nonsymmetric convection-diffusion with and
// without Jacobi, a restart shorter than the iteration count, the final residual being the true
// one, happy breakdown, and the option checks.
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "krylov/krylov.hpp"
#include "krylov/krylov_test_problems.hpp"

namespace mpmg {
namespace {

using namespace krylov_test;

template <class K>
class KrylovGmres : public ::testing::Test {};
using Precisions = ::testing::Types<double, float>;
TYPED_TEST_SUITE(KrylovGmres, Precisions);

TYPED_TEST(KrylovGmres, ConvergesOnConvectionDiffusion) {
    using K = TypeParam;
    const Sparse a = convdiff_problem();
    SparseOp<K> op(a);
    const std::vector<K> b = rhs<K>(a.n);
    KrylovOptions opt;
    opt.rtol = tol<K>();
    opt.restart = 60;
    for (const bool precondition : {false, true}) {
        SCOPED_TRACE(precondition ? "jacobi" : "identity");
        Jacobi<K> m(a);
        std::vector<K> x(a.n, K(0));
        const KrylovResult r = gmres<K>(op, precondition ? &m : nullptr, b.data(), x.data(), opt);
        ASSERT_EQ(r.status, SolveStatus::converged) << r.message;
        ASSERT_EQ(r.history.size(), static_cast<std::size_t>(r.iterations) + 1);
        EXPECT_LE(r.relative_residual, opt.rtol);
        EXPECT_LE(true_relres(a, b, x), 2 * opt.rtol);
        // The Givens estimate never grows inside a cycle.
        for (std::size_t k = 1; k < r.history.size(); ++k) {
            EXPECT_LE(r.history[k], r.history[k - 1] * (1 + 1e-6)) << "k = " << k;
        }
    }
}

TYPED_TEST(KrylovGmres, ShortRestartStillConverges) {
    using K = TypeParam;
    const Sparse a = convdiff_problem();
    SparseOp<K> op(a);
    const std::vector<K> b = rhs<K>(a.n);
    Jacobi<K> m(a);
    std::vector<K> x(a.n, K(0));
    KrylovOptions opt;
    opt.rtol = tol<K>();
    opt.restart = 8;
    opt.max_iter = 2000;
    const KrylovResult r = gmres<K>(op, &m, b.data(), x.data(), opt);
    ASSERT_EQ(r.status, SolveStatus::converged) << r.message;
    EXPECT_GT(r.iterations, 2 * opt.restart);  // several cycles ran
    EXPECT_EQ(m.calls, r.iterations);
    EXPECT_LE(true_relres(a, b, x), 2 * opt.rtol);
}

TYPED_TEST(KrylovGmres, FinalResidualIsTheTrueOne) {
    using K = TypeParam;
    const Sparse a = convdiff_problem();
    SparseOp<K> op(a);
    const std::vector<K> b = rhs<K>(a.n);
    Jacobi<K> m(a);
    KrylovOptions opt;
    opt.restart = 5;
    for (const int max_iter : {5, 12}) {  // ends on a restart and inside a cycle
        std::vector<K> x(a.n, K(0));
        opt.max_iter = max_iter;
        const KrylovResult r = gmres<K>(op, &m, b.data(), x.data(), opt);
        EXPECT_EQ(r.status, SolveStatus::max_iterations) << r.message;
        const double rel = true_relres(a, b, x);
        EXPECT_NEAR(r.relative_residual, rel, 1e-4 * rel);
        EXPECT_EQ(r.history.back(), r.relative_residual);
    }
}

// GMRES(2) without a preconditioner on diag(1..100) slows to under 10 % per restart cycle once
// the large eigenvalues are gone: far too slow to reach 1e-10 in 200 iterations. Asked to (the
// runtime guard does), it stops after its second cycle and says so; not asked, or with the
// iterations to get there, or without a full cycle left to spend elsewhere, it runs on as before.
TYPED_TEST(KrylovGmres, TooSlowStopsOnlyWhenAskedAndACycleIsLeft) {
    using K = TypeParam;
    const Sparse a = diagonal(100, [](std::int64_t i) { return static_cast<double>(i + 1); });
    SparseOp<K> op(a);
    const std::vector<K> b = rhs<K>(a.n);
    const auto run = [&](int max_iter, bool ask) {
        std::vector<K> x(a.n, K(0));
        KrylovOptions opt;
        opt.rtol = 1e-10;
        opt.restart = 2;
        opt.max_iter = max_iter;
        opt.stop_when_too_slow = ask;
        return gmres<K>(op, nullptr, b.data(), x.data(), opt);
    };
    const KrylovResult slow = run(200, true);
    EXPECT_EQ(slow.status, SolveStatus::stagnated) << slow.message;
    EXPECT_LT(slow.iterations, 100);  // at a cycle's end, with a cycle left
    EXPECT_EQ(slow.iterations % 2, 0);
    EXPECT_NE(slow.message.find("gmres: iteration " + std::to_string(slow.iterations) + ": "),
              std::string::npos)
        << slow.message;
    EXPECT_NE(slow.message.find(std::to_string(200 - slow.iterations) + " are left of max_iter"),
              std::string::npos)
        << slow.message;
    EXPECT_NE(slow.message.find("too slow"), std::string::npos) << slow.message;

    const KrylovResult unasked = run(200, false);
    EXPECT_EQ(unasked.status, SolveStatus::max_iterations) << unasked.message;
    EXPECT_EQ(unasked.iterations, 200);
    // The same iterations up to the stop.
    for (std::size_t i = 0; i < slow.history.size(); ++i) {
        EXPECT_EQ(slow.history[i], unasked.history[i]) << i;
    }
    const KrylovResult no_cycle_left = run(5, true);  // 1 left after the second cycle
    EXPECT_EQ(no_cycle_left.status, SolveStatus::max_iterations) << no_cycle_left.message;
    EXPECT_EQ(no_cycle_left.iterations, 5);
    if constexpr (std::is_same_v<K, double>) {
        // With enough iterations the same rate gets there, and nothing stops it.
        const KrylovResult patient = run(20000, true);
        EXPECT_EQ(patient.status, SolveStatus::converged) << patient.message;
    }
}

// A M^-1 v_0 = c v_0 exactly (an exact preconditioner, or A = c I): w - h v_0 is rounding, a
// few ulps of ||w|| along v_0 itself, which the happy-breakdown test (<= eps ||w||) can miss.
// The next vector is then v_0 again and cannot be completed; the iteration has converged all
// the same. (A 2 x 2 upper triangular A with the AMG path's direct solve ended "Krylov vector 1
// lies in the span of the earlier ones", exit 3, before GMRES committed such a column.)
/// z = A^-1 r by back substitution, A upper bidiagonal with d on the diagonal and u above it.
template <class K>
class UpperSolve : public Preconditioner<K> {
public:
    UpperSolve(std::int64_t n, double d, double u) : n_(n), d_(d), u_(u) {}
    void apply(const K* r, K* z) override {
        for (std::int64_t i = n_ - 1; i >= 0; --i) {
            const K above = i + 1 < n_ ? static_cast<K>(u_) * z[i + 1] : K(0);
            z[i] = (r[i] - above) / static_cast<K>(d_);
        }
    }

private:
    std::int64_t n_;
    double d_, u_;
};

TYPED_TEST(KrylovGmres, ExactPreconditionerConvergesInOneIteration) {
    using K = TypeParam;
    for (const std::int64_t n : {2, 3, 5, 40}) {
        for (const double u : {1.0, -0.5, 0.75}) {
            Sparse a;
            a.n = n;
            for (std::int64_t i = 0; i < n; ++i) {
                a.add(i, 1.0);
                if (i + 1 < n) a.add(i + 1, u);
                a.end_row();
            }
            SparseOp<K> op(a);
            UpperSolve<K> m(n, 1.0, u);
            for (int seed = 0; seed <= 30; ++seed) {
                SCOPED_TRACE(testing::Message()
                             << "n = " << n << ", u = " << u << ", seed " << seed);
                std::vector<K> b(static_cast<std::size_t>(n));
                for (std::size_t i = 0; i < b.size(); ++i) {
                    // seed 0: b = A 1
                    b[i] = seed == 0
                               ? static_cast<K>(i + 1 < b.size() ? 1.0 + u : 1.0)
                               : static_cast<K>(std::sin(0.1 * seed * static_cast<double>(i + 1)) +
                                                0.01);
                }
                std::vector<K> x(b.size(), K(0));
                KrylovOptions opt;
                opt.rtol = tol<K>();
                const KrylovResult r = gmres<K>(op, &m, b.data(), x.data(), opt);
                EXPECT_EQ(r.status, SolveStatus::converged) << r.message;
                EXPECT_EQ(r.iterations, 1);
                EXPECT_LE(true_relres(a, b, x), opt.rtol);
            }
        }
    }
}

TYPED_TEST(KrylovGmres, HappyBreakdownIsSuccess) {
    using K = TypeParam;
    // Two distinct eigenvalues: the Krylov space is exhausted after two steps.
    const Sparse a = diagonal(40, [](std::int64_t i) { return i % 2 == 0 ? 1.0 : 3.0; });
    SparseOp<K> op(a);
    const std::vector<K> b = rhs<K>(a.n);
    std::vector<K> x(a.n, K(0));
    KrylovOptions opt;
    opt.rtol = tol<K>();
    const KrylovResult r = gmres<K>(op, nullptr, b.data(), x.data(), opt);
    ASSERT_EQ(r.status, SolveStatus::converged) << r.message;
    EXPECT_LE(r.iterations, 3);
    EXPECT_LE(true_relres(a, b, x), 2 * opt.rtol);
}

// The orthogonalisation keeps the basis orthonormal, so inside a cycle the Givens estimate of
// iteration k equals the true residual of the iterate a run stopped at k returns (that run ends
// its cycle there and reports the true residual). A diagonal with eigenvalues 1 .. 1e4 needs
// ~280 iterations without restart: with one projection of classical Gram-Schmidt the basis
// loses its orthogonality, the estimate drifts from the true residual and float stops
// converging (checked: the float case fails when the second projection is dropped).
TYPED_TEST(KrylovGmres, EstimateTracksTheTrueResidual) {
    using K = TypeParam;
    const Sparse a =
        diagonal(400, [](std::int64_t i) { return std::pow(10.0, 0.01 * static_cast<double>(i)); });
    SparseOp<K> op(a);
    const std::vector<K> b = rhs<K>(a.n);
    KrylovOptions opt;
    opt.rtol = tol<K>();
    opt.restart = 400;
    opt.max_iter = 400;
    std::vector<K> x(a.n, K(0));
    const KrylovResult full = gmres<K>(op, nullptr, b.data(), x.data(), opt);
    ASSERT_EQ(full.status, SolveStatus::converged) << full.message;
    ASSERT_GT(full.iterations, 50) << "too easy to show a loss of orthogonality";
    EXPECT_LE(true_relres(a, b, x), 2 * opt.rtol);
    // Agreement to 1e-3, above the accuracy a residual in K attains here (kappa eps_K).
    const double floor = 10 * 1e4 * static_cast<double>(std::numeric_limits<K>::epsilon());
    for (const int k : {10, full.iterations / 2, full.iterations - 5}) {
        SCOPED_TRACE(k);
        KrylovOptions part = opt;
        part.max_iter = k;
        std::vector<K> xk(a.n, K(0));
        const KrylovResult r = gmres<K>(op, nullptr, b.data(), xk.data(), part);
        ASSERT_EQ(r.iterations, k);
        const double est = full.history[static_cast<std::size_t>(k)];
        const double truth = true_relres(a, b, xk);
        EXPECT_NEAR(est, truth, 1e-3 * truth + floor);
        EXPECT_NEAR(r.relative_residual, truth, 1e-3 * truth + floor);
    }
}

// A M^-1 v = 0 (here A = 0) is a breakdown, reported as such, not a non-finite value.
TYPED_TEST(KrylovGmres, ZeroOperatorIsABreakdown) {
    using K = TypeParam;
    const Sparse a = diagonal(12, [](std::int64_t) { return 0.0; });
    SparseOp<K> op(a);
    const std::vector<K> b(12, K(1));
    std::vector<K> x(12, K(0));
    const KrylovResult r = gmres<K>(op, nullptr, b.data(), x.data(), KrylovOptions{});
    EXPECT_EQ(r.status, SolveStatus::breakdown) << r.message;
    EXPECT_NE(r.message.find("singular"), std::string::npos) << r.message;
    EXPECT_TRUE(all_finite(x));
}

// A non-finite A M^-1 q_j ends the solve with every earlier iteration in x: the column that
// was still waiting for q_j's second projection is completed first. So a run whose third
// preconditioner application is NaN returns the iterate of a clean run stopped after two.
TYPED_TEST(KrylovGmres, NanKeepsEveryGoodIteration) {
    using K = TypeParam;
    const Sparse a = convdiff_problem();
    SparseOp<K> op(a);
    const std::vector<K> b = rhs<K>(a.n);
    KrylovOptions opt;
    Jacobi<K> bad(a, /*nan_at=*/3);
    std::vector<K> x(a.n, K(0));
    const KrylovResult r = gmres<K>(op, &bad, b.data(), x.data(), opt);
    ASSERT_EQ(r.status, SolveStatus::non_finite) << r.message;
    EXPECT_EQ(r.iterations, 2);
    Jacobi<K> good(a);
    std::vector<K> x2(a.n, K(0));
    opt.max_iter = 2;
    const KrylovResult r2 = gmres<K>(op, &good, b.data(), x2.data(), opt);
    EXPECT_EQ(r2.iterations, 2);
    EXPECT_EQ(x, x2);
    EXPECT_EQ(r.relative_residual, r2.relative_residual);
}

// GMRES(4) from x = 0 on the 12 x 12 cyclic shift plus `shift` I with b = e_0: without the
// shift GMRES(m) for m < n makes no progress at all; with 1e-3 each cycle gains ~1e-9 of the
// residual, some progress but hopeless (before kMinCycleReduction that ran to max_iter).
template <class K>
KrylovResult gmres_on_shifted_cycle(double shift) {
    Sparse a;
    a.n = 12;
    for (std::int64_t i = 0; i < a.n; ++i) {
        const std::int64_t j = (i + a.n - 1) % a.n;
        if (j < i) a.add(j, 1.0);
        if (shift != 0.0) a.add(i, shift);
        if (j > i) a.add(j, 1.0);
        a.end_row();
    }
    SparseOp<K> op(a);
    std::vector<K> b(a.n, K(0));
    b[0] = K(1);
    std::vector<K> x(a.n, K(0));
    KrylovOptions opt;
    opt.restart = 4;
    opt.max_iter = 400;
    return gmres<K>(op, nullptr, b.data(), x.data(), opt);
}

TYPED_TEST(KrylovGmres, CompleteStagnationIsReported) {
    const KrylovResult r = gmres_on_shifted_cycle<TypeParam>(0.0);
    EXPECT_EQ(r.status, SolveStatus::stagnated) << r.message;
    EXPECT_EQ(r.iterations, 4);
    EXPECT_NE(r.message.find("stagnates"), std::string::npos) << r.message;
}

TYPED_TEST(KrylovGmres, NearStagnationIsReported) {
    const KrylovResult r = gmres_on_shifted_cycle<TypeParam>(1e-3);
    EXPECT_EQ(r.status, SolveStatus::stagnated) << r.message;
    EXPECT_EQ(r.iterations, 4);
    EXPECT_LT(r.relative_residual, 1.0);
}

TYPED_TEST(KrylovGmres, RejectsRestartBelowOne) {
    using K = TypeParam;
    const Sparse a = convdiff_problem(4);
    SparseOp<K> op(a);
    const std::vector<K> b = rhs<K>(a.n);
    std::vector<K> x(a.n, K(0));
    KrylovOptions opt;
    opt.restart = 0;
    EXPECT_ANY_THROW(gmres<K>(op, nullptr, b.data(), x.data(), opt));
}

}  // namespace
}  // namespace mpmg
