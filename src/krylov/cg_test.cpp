// Conjugate gradients, typed over K = double and float: convergence with and without Jacobi,
// recurrence residual against the true one, breakdown on a non-SPD operator or preconditioner.
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
