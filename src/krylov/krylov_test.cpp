// Behaviour shared by cg, gmres and richardson, typed over K = double and float: b = 0, the
// iteration limit, a nonzero initial guess, a preconditioner that turns NaN, and the count of
// preconditioner applications.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "krylov/krylov.hpp"
#include "krylov/krylov_test_problems.hpp"

namespace mpmg {
namespace {

using namespace krylov_test;

template <class K>
using SolveFn = KrylovResult (*)(const LinearOperator<K>&, Preconditioner<K>*, const K*, K*,
                                 const KrylovOptions&);

template <class K>
struct Named {
    const char* name;
    SolveFn<K> solve;
};

template <class K>
std::vector<Named<K>> solvers() {
    return {{"cg", &cg<K>}, {"gmres", &gmres<K>}, {"richardson", &richardson<K>}};
}

/// Diagonally dominant SPD matrix: Jacobi-preconditioned Richardson converges (rho <= 1/2).
Sparse dominant() {
    return grid2d(16, 0.0, [](std::int64_t i) { return 4.0 + static_cast<double>(i % 3); });
}

template <class K>
class KrylovAll : public ::testing::Test {};
using Precisions = ::testing::Types<double, float>;
TYPED_TEST_SUITE(KrylovAll, Precisions);

TYPED_TEST(KrylovAll, ZeroRhsGivesZeroAndNoIterations) {
    using K = TypeParam;
    const Sparse a = dominant();
    SparseOp<K> op(a);
    for (const auto& s : solvers<K>()) {
        SCOPED_TRACE(s.name);
        Jacobi<K> m(a);
        std::vector<K> b(a.n, K(0)), x(a.n, K(3));
        KrylovOptions opt;
        opt.zero_initial_guess = false;
        const KrylovResult r = s.solve(op, &m, b.data(), x.data(), opt);
        EXPECT_EQ(r.status, SolveStatus::converged);
        EXPECT_EQ(r.iterations, 0);
        EXPECT_EQ(r.history, std::vector<double>{0.0});
        EXPECT_EQ(r.relative_residual, 0.0);
        EXPECT_EQ(m.calls, 0);
        for (K v : x) ASSERT_EQ(v, K(0));
    }
}

TYPED_TEST(KrylovAll, ConvergesWithOneApplicationPerIteration) {
    using K = TypeParam;
    const Sparse a = dominant();
    SparseOp<K> op(a);
    const std::vector<K> b = rhs<K>(a.n);
    for (const auto& s : solvers<K>()) {
        SCOPED_TRACE(s.name);
        Jacobi<K> m(a);
        std::vector<K> x(a.n, K(0));
        KrylovOptions opt;
        opt.rtol = tol<K>();
        const KrylovResult r = s.solve(op, &m, b.data(), x.data(), opt);
        ASSERT_EQ(r.status, SolveStatus::converged) << r.message;
        EXPECT_GT(r.iterations, 1);
        EXPECT_EQ(m.calls, r.iterations);
        ASSERT_EQ(r.history.size(), static_cast<std::size_t>(r.iterations) + 1);
        EXPECT_EQ(r.history.front(), 1.0);
        EXPECT_LE(r.history.back(), opt.rtol);
        EXPECT_EQ(r.history.back(), r.relative_residual);
        EXPECT_GE(r.preconditioner_seconds, 0.0);
        EXPECT_LE(true_relres(a, b, x), 10 * opt.rtol);
    }
}

TYPED_TEST(KrylovAll, MaxIterationsKeepsHistoryConsistent) {
    using K = TypeParam;
    const Sparse a = spd_problem();
    SparseOp<K> op(a);
    const std::vector<K> b = rhs<K>(a.n);
    for (const auto& s : solvers<K>()) {
        SCOPED_TRACE(s.name);
        Jacobi<K> m(a);
        std::vector<K> x(a.n, K(0));
        KrylovOptions opt;
        opt.max_iter = 7;
        opt.restart = 3;  // gmres: two full cycles and a partial one
        const KrylovResult r = s.solve(op, &m, b.data(), x.data(), opt);
        EXPECT_EQ(r.status, SolveStatus::max_iterations) << r.message;
        EXPECT_EQ(r.iterations, 7);
        EXPECT_EQ(m.calls, 7);
        EXPECT_EQ(r.history.size(), 8u);
        EXPECT_NE(r.message.find(s.name), std::string::npos) << r.message;
        EXPECT_LT(r.relative_residual, 1.0);
        EXPECT_TRUE(all_finite(x));
    }
}

TYPED_TEST(KrylovAll, MaxIterZeroReportsTheInitialResidual) {
    using K = TypeParam;
    const Sparse a = dominant();
    SparseOp<K> op(a);
    const std::vector<K> b = rhs<K>(a.n);
    for (const auto& s : solvers<K>()) {
        SCOPED_TRACE(s.name);
        std::vector<K> x(a.n, K(0));
        KrylovOptions opt;
        opt.max_iter = 0;
        const KrylovResult r = s.solve(op, nullptr, b.data(), x.data(), opt);
        EXPECT_EQ(r.status, SolveStatus::max_iterations);
        EXPECT_EQ(r.iterations, 0);
        EXPECT_EQ(r.history, std::vector<double>{1.0});
    }
}

TYPED_TEST(KrylovAll, NonzeroInitialGuessIsUsed) {
    using K = TypeParam;
    const Sparse a = dominant();
    SparseOp<K> op(a);
    const std::vector<K> b = rhs<K>(a.n);
    for (const auto& s : solvers<K>()) {
        SCOPED_TRACE(s.name);
        Jacobi<K> m(a);
        // Start from x0 = D^{-1} b: a good guess, so the initial residual is below 1.
        std::vector<K> x(a.n);
        for (std::int64_t i = 0; i < a.n; ++i) x[i] = static_cast<K>(b[i] / a.diag(i));
        const double rel0 = true_relres(a, b, x);
        KrylovOptions opt;
        opt.rtol = tol<K>();
        opt.zero_initial_guess = false;
        const KrylovResult r = s.solve(op, &m, b.data(), x.data(), opt);
        ASSERT_EQ(r.status, SolveStatus::converged) << r.message;
        EXPECT_LT(rel0, 0.9);
        EXPECT_NEAR(r.history.front(), rel0, 1e-5 * rel0);
        EXPECT_LE(true_relres(a, b, x), 10 * opt.rtol);
    }
}

TYPED_TEST(KrylovAll, ZeroInitialGuessIgnoresWhatIsInX) {
    using K = TypeParam;
    const Sparse a = dominant();
    SparseOp<K> op(a);
    const std::vector<K> b = rhs<K>(a.n);
    for (const auto& s : solvers<K>()) {
        SCOPED_TRACE(s.name);
        Jacobi<K> m(a);
        std::vector<K> x(a.n, K(1000));  // stale contents: the solver starts from zero anyway
        KrylovOptions opt;
        opt.rtol = tol<K>();
        const KrylovResult r = s.solve(op, &m, b.data(), x.data(), opt);
        ASSERT_EQ(r.status, SolveStatus::converged) << r.message;
        EXPECT_EQ(r.history.front(), 1.0);
        EXPECT_LE(true_relres(a, b, x), 10 * opt.rtol);
    }
}

TYPED_TEST(KrylovAll, NanFromThePreconditionerStopsWithAFiniteIterate) {
    using K = TypeParam;
    const Sparse a = dominant();
    SparseOp<K> op(a);
    const std::vector<K> b = rhs<K>(a.n);
    for (const auto& s : solvers<K>()) {
        SCOPED_TRACE(s.name);
        Jacobi<K> m(a, /*nan_at=*/3);
        std::vector<K> x(a.n, K(0));
        KrylovOptions opt;
        const KrylovResult r = s.solve(op, &m, b.data(), x.data(), opt);
        EXPECT_EQ(r.status, SolveStatus::non_finite);
        EXPECT_EQ(r.iterations, 2);
        EXPECT_EQ(r.history.size(), 3u);
        EXPECT_NE(r.message.find(std::string(s.name) + ": iteration 3"), std::string::npos)
            << r.message;
        EXPECT_TRUE(all_finite(x));
        EXPECT_TRUE(std::isfinite(r.relative_residual));
        // x is the iterate after two good iterations, not the start, and its residual is the
        // one reported.
        const double rel = true_relres(a, b, x);
        EXPECT_LT(rel, 0.5);
        EXPECT_NEAR(r.relative_residual, rel, 1e-3 * rel);
    }
}

TYPED_TEST(KrylovAll, NanInTheFirstApplicationLeavesTheStart) {
    using K = TypeParam;
    const Sparse a = dominant();
    SparseOp<K> op(a);
    const std::vector<K> b = rhs<K>(a.n);
    for (const auto& s : solvers<K>()) {
        SCOPED_TRACE(s.name);
        Jacobi<K> m(a, /*nan_at=*/1);
        std::vector<K> x(a.n, K(0));
        const KrylovResult r = s.solve(op, &m, b.data(), x.data(), KrylovOptions{});
        EXPECT_EQ(r.status, SolveStatus::non_finite);
        EXPECT_EQ(r.iterations, 0);
        EXPECT_EQ(r.history, std::vector<double>{1.0});
        EXPECT_NE(r.message.find("iteration 1"), std::string::npos) << r.message;
        for (K v : x) ASSERT_EQ(v, K(0));
    }
}

TYPED_TEST(KrylovAll, RejectsANegativeIterationLimit) {
    using K = TypeParam;
    const Sparse a = dominant();
    SparseOp<K> op(a);
    const std::vector<K> b = rhs<K>(a.n);
    std::vector<K> x(a.n, K(0));
    KrylovOptions opt;
    opt.max_iter = -1;
    for (const auto& s : solvers<K>()) {
        EXPECT_ANY_THROW(s.solve(op, nullptr, b.data(), x.data(), opt)) << s.name;
    }
}

}  // namespace
}  // namespace mpmg
