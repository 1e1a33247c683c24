// Restarted GMRES, typed over K = double and float: nonsymmetric convection-diffusion with and
// without Jacobi, a restart shorter than the iteration count, the final residual being the true
// one, happy breakdown, and the option checks.
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "krylov/krylov.hpp"
#include "krylov/krylov_test_problems.hpp"
#include "krylov/vector_ops.hpp"

namespace mpmg {
namespace {

using namespace krylov_test;

template <class K>
class KrylovGmres : public ::testing::Test {};
using Precisions = ::testing::Types<double, float>;
TYPED_TEST_SUITE(KrylovGmres, Precisions);

// The fused Gram-Schmidt passes against one dot / axpy per column: parallel (n above
// kParallelMin) and more columns than one block_dot pass takes.
TYPED_TEST(KrylovGmres, BlockGramSchmidtOpsMatchColumnByColumn) {
    using K = TypeParam;
    for (const auto& [n, m] :
         {std::pair<std::int64_t, int>{20000, 5}, {100, krylov_ops::kMaxBlockDot + 6}}) {
        SCOPED_TRACE(std::to_string(n) + " x " + std::to_string(m));
        std::vector<K> v(static_cast<std::size_t>(n * m)), w(static_cast<std::size_t>(n));
        for (std::size_t e = 0; e < v.size(); ++e) v[e] = K(std::sin(0.37 * double(e) + 1.0));
        for (std::size_t e = 0; e < w.size(); ++e) w[e] = K(std::cos(0.11 * double(e)));
        std::vector<double> h(static_cast<std::size_t>(m));
        krylov_ops::block_dot(n, m, v.data(), w.data(), h.data());
        std::vector<K> w2 = w, w3 = w;
        krylov_ops::block_subtract(n, m, v.data(), h.data(), w2.data());
        for (int i = 0; i < m; ++i) {
            const K* vi = v.data() + i * n;
            const double ref = krylov_ops::dot(n, vi, w.data());
            ASSERT_NEAR(h[i], ref, 1e-12 * double(n)) << "column " << i;
            krylov_ops::axpy(n, -h[i], vi, w3.data());
        }
        const double eps = std::is_same_v<K, float> ? 1e-5 : 1e-12;
        for (std::int64_t r = 0; r < n; ++r) ASSERT_NEAR(w2[r], w3[r], eps * m) << "row " << r;
    }
}

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

TYPED_TEST(KrylovGmres, CompleteStagnationIsReported) {
    using K = TypeParam;
    // Cyclic shift with b = e_0: GMRES(m) for m < n makes no progress at all.
    Sparse a;
    a.n = 12;
    for (std::int64_t i = 0; i < a.n; ++i) {
        a.add((i + a.n - 1) % a.n, 1.0);
        a.end_row();
    }
    SparseOp<K> op(a);
    std::vector<K> b(a.n, K(0));
    b[0] = K(1);
    std::vector<K> x(a.n, K(0));
    KrylovOptions opt;
    opt.restart = 4;
    const KrylovResult r = gmres<K>(op, nullptr, b.data(), x.data(), opt);
    EXPECT_EQ(r.status, SolveStatus::stagnated) << r.message;
    EXPECT_EQ(r.iterations, 4);
    EXPECT_NE(r.message.find("stagnates"), std::string::npos) << r.message;
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
