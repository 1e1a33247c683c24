// Preconditioned Richardson, typed over K = double and float: convergence with Jacobi and with
// no preconditioner, divergence and stagnation reported as stagnated.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "krylov/krylov.hpp"
#include "krylov/krylov_test_problems.hpp"

namespace mpmg {
namespace {

using namespace krylov_test;

template <class K>
class KrylovRichardson : public ::testing::Test {};
using Precisions = ::testing::Types<double, float>;
TYPED_TEST_SUITE(KrylovRichardson, Precisions);

TYPED_TEST(KrylovRichardson, JacobiConvergesOnADominantMatrix) {
    using K = TypeParam;
    // Diagonal 8, off-diagonal row sum 4: the Jacobi iteration contracts by at least 1/2.
    const Sparse a = grid2d(16, 0.0, [](std::int64_t) { return 4.0; });
    SparseOp<K> op(a);
    const std::vector<K> b = rhs<K>(a.n);
    Jacobi<K> m(a);
    std::vector<K> x(a.n, K(0));
    KrylovOptions opt;
    opt.rtol = tol<K>();
    const KrylovResult r = richardson<K>(op, &m, b.data(), x.data(), opt);
    ASSERT_EQ(r.status, SolveStatus::converged) << r.message;
    EXPECT_LE(r.iterations, 40);
    EXPECT_EQ(m.calls, r.iterations);
    // The history is the explicit residual: it is the true one and it decreases.
    EXPECT_NEAR(r.relative_residual, true_relres(a, b, x), 0.1 * r.relative_residual);
    for (std::size_t k = 1; k < r.history.size(); ++k) {
        EXPECT_LT(r.history[k], r.history[k - 1]) << "k = " << k;
    }
}

TYPED_TEST(KrylovRichardson, UnitStepWithoutPreconditioner) {
    using K = TypeParam;
    // A = 0.1 (-Laplacian) + 0.5 I has its spectrum in (0.5, 1.3): I - A contracts.
    Sparse a = grid2d(10, 0.0, [](std::int64_t) { return 0.0; });
    for (std::int64_t i = 0; i < a.n; ++i) {
        for (std::int64_t p = a.ptr[i]; p < a.ptr[i + 1]; ++p) {
            a.val[p] = 0.1 * a.val[p] + (a.col[p] == i ? 0.5 : 0.0);
        }
    }
    SparseOp<K> op(a);
    const std::vector<K> b = rhs<K>(a.n);
    std::vector<K> x(a.n, K(0));
    KrylovOptions opt;
    opt.rtol = tol<K>();
    const KrylovResult r = richardson<K>(op, nullptr, b.data(), x.data(), opt);
    ASSERT_EQ(r.status, SolveStatus::converged) << r.message;
    EXPECT_EQ(r.preconditioner_seconds, 0.0);
    EXPECT_LE(true_relres(a, b, x), 10 * opt.rtol);
}

TYPED_TEST(KrylovRichardson, DivergenceIsReported) {
    using K = TypeParam;
    // A = 3 I: the error is multiplied by -2 every iteration.
    const Sparse a = diagonal(32, [](std::int64_t) { return 3.0; });
    SparseOp<K> op(a);
    const std::vector<K> b(a.n, K(1));
    std::vector<K> x(a.n, K(0));
    const KrylovResult r = richardson<K>(op, nullptr, b.data(), x.data(), KrylovOptions{});
    EXPECT_EQ(r.status, SolveStatus::stagnated);
    EXPECT_LT(r.iterations, 20);
    EXPECT_NE(r.message.find("diverges"), std::string::npos) << r.message;
    EXPECT_TRUE(all_finite(x));
}

TYPED_TEST(KrylovRichardson, StagnationIsReported) {
    using K = TypeParam;
    // A = 2 I: the error changes sign each iteration and never shrinks.
    const Sparse a = diagonal(32, [](std::int64_t) { return 2.0; });
    SparseOp<K> op(a);
    const std::vector<K> b(a.n, K(1));
    std::vector<K> x(a.n, K(0));
    const KrylovResult r = richardson<K>(op, nullptr, b.data(), x.data(), KrylovOptions{});
    EXPECT_EQ(r.status, SolveStatus::stagnated);
    EXPECT_EQ(r.iterations, 50);
    EXPECT_NE(r.message.find("stagnates"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace mpmg
