// Conjugate gradients, typed over K = double and float: convergence with and without Jacobi,
// recurrence residual against the true one, breakdown on a non-SPD operator or preconditioner.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "krylov/krylov.hpp"
#include "krylov/krylov_test_problems.hpp"

namespace mpmg {
namespace {

using namespace krylov_test;

template <class K>
class KrylovCg : public ::testing::Test {};
using Precisions = ::testing::Types<double, float>;
TYPED_TEST_SUITE(KrylovCg, Precisions);

TYPED_TEST(KrylovCg, ConvergesWithoutAndWithJacobi) {
    using K = TypeParam;
    const Sparse a = spd_problem();
    SparseOp<K> op(a);
    const std::vector<K> b = rhs<K>(a.n);
    KrylovOptions opt;
    opt.rtol = tol<K>();

    std::vector<K> x(a.n, K(0));
    const KrylovResult plain = cg<K>(op, nullptr, b.data(), x.data(), opt);
    ASSERT_EQ(plain.status, SolveStatus::converged) << plain.message;
    EXPECT_EQ(plain.preconditioner_seconds, 0.0);
    EXPECT_LE(plain.relative_residual, opt.rtol);
    const double true_plain = true_relres(a, b, x);
    EXPECT_LE(true_plain, 10 * opt.rtol);

    Jacobi<K> m(a);
    std::vector<K> y(a.n, K(0));
    const KrylovResult jac = cg<K>(op, &m, b.data(), y.data(), opt);
    ASSERT_EQ(jac.status, SolveStatus::converged) << jac.message;
    EXPECT_LE(true_relres(a, b, y), 10 * opt.rtol);
    // The varying diagonal makes Jacobi worth something.
    EXPECT_LT(jac.iterations, plain.iterations);
    // CG in exact arithmetic finishes within n steps; here far fewer.
    EXPECT_LT(plain.iterations, 100);
}

/// z = w_k D^{-1} r with per-row weights w_k in [0.3, 3] that change at every application: an
/// SPD preconditioner, but a different one each time, like a K-cycle's inner Krylov steps.
template <class K>
class VaryingJacobi : public Preconditioner<K> {
public:
    explicit VaryingJacobi(const Sparse& a) : a_(a) {}
    void apply(const K* r, K* z) override {
        ++calls;
        for (std::int64_t i = 0; i < a_.n; ++i) {
            const double w = 1.65 + 1.35 * std::sin(0.9 * static_cast<double>(i * calls) + calls);
            z[i] = static_cast<K>(w / a_.diag(i) * static_cast<double>(r[i]));
        }
    }
    int calls = 0;

private:
    const Sparse& a_;
};

// Flexible CG makes each direction A-orthogonal to the last one itself, so a preconditioner
// that varies between applications does not spoil it; the (r, z) recurrence of plain CG
// assumes one fixed preconditioner and does not converge in 1000 iterations here (flexible:
// 65 in FP64, 32 in FP32). With a fixed one the two are the same method.
TYPED_TEST(KrylovCg, FlexibleCopesWithAVaryingPreconditioner) {
    using K = TypeParam;
    const Sparse a = spd_problem();
    SparseOp<K> op(a);
    const std::vector<K> b = rhs<K>(a.n);
    int its[2] = {0, 0};
    for (const bool flexible : {false, true}) {
        KrylovOptions opt;
        opt.rtol = tol<K>();
        opt.max_iter = 1000;
        opt.flexible = flexible;
        VaryingJacobi<K> m(a);
        std::vector<K> x(a.n, K(0));
        const KrylovResult r = cg<K>(op, &m, b.data(), x.data(), opt);
        if (flexible) {
            ASSERT_EQ(r.status, SolveStatus::converged) << r.message;
            EXPECT_LE(true_relres(a, b, x), 10 * opt.rtol);
        }
        its[flexible] = r.status == SolveStatus::converged ? r.iterations : opt.max_iter + 1;

        Jacobi<K> fixed(a);
        std::vector<K> y(a.n, K(0));
        const KrylovResult f = cg<K>(op, &fixed, b.data(), y.data(), opt);
        opt.flexible = false;
        std::vector<K> y0(a.n, K(0));
        Jacobi<K> fixed0(a);
        const KrylovResult f0 = cg<K>(op, &fixed0, b.data(), y0.data(), opt);
        EXPECT_NEAR(f.iterations, f0.iterations, 1);
    }
    EXPECT_LT(its[1] * 4, its[0] * 3) << "plain " << its[0] << ", flexible " << its[1];
}

TYPED_TEST(KrylovCg, RecurrenceResidualTracksTheTrueOne) {
    using K = TypeParam;
    const Sparse a = spd_problem();
    SparseOp<K> op(a);
    const std::vector<K> b = rhs<K>(a.n);
    Jacobi<K> m(a);
    std::vector<K> x(a.n, K(0));
    KrylovOptions opt;
    opt.rtol = 1e-4;  // well above float's attainable accuracy: the two must agree
    const KrylovResult r = cg<K>(op, &m, b.data(), x.data(), opt);
    ASSERT_EQ(r.status, SolveStatus::converged) << r.message;
    EXPECT_NEAR(r.relative_residual, true_relres(a, b, x), 0.05 * r.relative_residual);
}

TYPED_TEST(KrylovCg, IndefiniteOperatorBreaksDown) {
    using K = TypeParam;
    // diag(1, -2, 1, -2, ...) with b = 1: p^T A p = -n/2 < 0 in the first iteration.
    const Sparse a = diagonal(64, [](std::int64_t i) { return i % 2 == 0 ? 1.0 : -2.0; });
    SparseOp<K> op(a);
    const std::vector<K> b(a.n, K(1));
    std::vector<K> x(a.n, K(0));
    const KrylovResult r = cg<K>(op, nullptr, b.data(), x.data(), KrylovOptions{});
    EXPECT_EQ(r.status, SolveStatus::breakdown);
    EXPECT_NE(r.message.find("cg: iteration 1: p^T A p"), std::string::npos) << r.message;
    EXPECT_EQ(r.iterations, 0);
    EXPECT_EQ(r.history.size(), 1u);
    for (K v : x) ASSERT_EQ(v, K(0));
}

TYPED_TEST(KrylovCg, NegativePreconditionerBreaksDown) {
    using K = TypeParam;
    const Sparse a = spd_problem();
    SparseOp<K> op(a);
    const std::vector<K> b = rhs<K>(a.n);
    Jacobi<K> m(a, /*nan_at=*/0, /*sign=*/-1.0);
    std::vector<K> x(a.n, K(0));
    const KrylovResult r = cg<K>(op, &m, b.data(), x.data(), KrylovOptions{});
    EXPECT_EQ(r.status, SolveStatus::breakdown);
    EXPECT_NE(r.message.find("(r, z)"), std::string::npos) << r.message;
    EXPECT_EQ(r.iterations, 0);
}

TYPED_TEST(KrylovCg, NonFiniteOperatorStopsAtIterationOne) {
    using K = TypeParam;
    // An operator whose output is Inf: p^T A p is not finite.
    const Sparse a =
        diagonal(16, [](std::int64_t) { return std::numeric_limits<double>::infinity(); });
    SparseOp<K> op(a);
    const std::vector<K> b(a.n, K(1));
    std::vector<K> x(a.n, K(0));
    const KrylovResult r = cg<K>(op, nullptr, b.data(), x.data(), KrylovOptions{});
    EXPECT_EQ(r.status, SolveStatus::non_finite);
    EXPECT_NE(r.message.find("cg: iteration 1: p^T A p = inf"), std::string::npos) << r.message;
    EXPECT_EQ(r.iterations, 0);
    for (K v : x) ASSERT_EQ(v, K(0));
}

}  // namespace
}  // namespace mpmg
