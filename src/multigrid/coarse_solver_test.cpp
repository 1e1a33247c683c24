// The coarsest-level direct solver: exact on regular matrices, the pseudo-inverse on
// rank-deficient ones (pure Neumann), a clear error on a singular pivot in the middle.
#include "multigrid/coarse_solver.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "mpmg/errors.hpp"

namespace mpmg {
namespace {

/// 1D Laplacian with the given diagonal shift; Neumann ends (rows sum to `shift`), optionally
/// with a convection term making it nonsymmetric.
CsrMatrix chain(std::int64_t n, double shift, double convection = 0.0) {
    CsrMatrix a;
    a.rows = a.cols = n;
    for (std::int64_t i = 0; i < n; ++i) {
        double diag = shift;
        if (i > 0) {
            a.col.push_back(i - 1);
            a.val.push_back(-1.0 - convection);
            diag += 1.0 + convection;
        }
        const std::size_t at = a.col.size();
        a.col.push_back(i);
        a.val.push_back(0.0);
        if (i + 1 < n) {
            a.col.push_back(i + 1);
            a.val.push_back(-1.0 + convection);
            diag += 1.0 - convection;
        }
        a.val[at] = diag;
        a.row_ptr.push_back(static_cast<std::int64_t>(a.col.size()));
    }
    return a;
}

std::vector<double> random_vector(std::int64_t n, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> v(static_cast<std::size_t>(n));
    for (double& x : v) x = u(gen);
    return v;
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
    double m = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
    return m;
}

TEST(CoarseSolver, SolvesRegularSystemExactly) {
    const CsrMatrix a = chain(50, 0.1, 0.3);
    const std::vector<double> x0 = random_vector(50, 1);
    std::vector<double> x(50);
    a.multiply(x0.data(), x.data());
    CoarseSolver(a).solve(x.data());
    EXPECT_LT(max_abs_diff(x, x0), 1e-10);
}

TEST(CoarseSolver, PureNeumannGetsTheMinimumNormSolution) {
    const std::int64_t n = 40;
    const CsrMatrix a = chain(n, 0.0);  // null space: constants
    const CoarseSolver s(a);
    std::vector<double> x0 = random_vector(n, 2);
    double mean = 0.0;
    for (double v : x0) mean += v / n;
    for (double& v : x0) v -= mean;  // the minimum-norm solution of A x = A x0
    std::vector<double> b(static_cast<std::size_t>(n));
    a.multiply(x0.data(), b.data());
    // A null-space component in b (FP32 rounding of a consistent b does this) is ignored, not
    // amplified by 1 / pivot.
    std::vector<double> x = b;
    for (double& v : x) v += 1e-7;
    s.solve(x.data());
    EXPECT_LT(max_abs_diff(x, x0), 1e-8);
    // Symmetric A: the pseudo-inverse is symmetric, <M u, v> = <u, M v>.
    std::vector<double> u = random_vector(n, 3), v = random_vector(n, 4), mu = u, mv = v;
    s.solve(mu.data());
    s.solve(mv.data());
    double uv = 0.0, vu = 0.0;
    for (std::int64_t i = 0; i < n; ++i) {
        uv += mu[static_cast<std::size_t>(i)] * v[static_cast<std::size_t>(i)];
        vu += u[static_cast<std::size_t>(i)] * mv[static_cast<std::size_t>(i)];
    }
    EXPECT_NEAR(uv, vu, 1e-9 * std::fabs(uv));
}

TEST(CoarseSolver, NonsymmetricRankDeficientStaysBounded) {
    const std::int64_t n = 30;
    const CsrMatrix a = chain(n, 0.0, 0.4);  // columns... rows sum to zero: A 1 = 0
    const CoarseSolver s(a);
    const std::vector<double> x0 = random_vector(n, 5);
    std::vector<double> b(static_cast<std::size_t>(n)), x(b.size()), ax(b.size());
    a.multiply(x0.data(), b.data());
    x = b;
    s.solve(x.data());
    a.multiply(x.data(), ax.data());
    EXPECT_LT(max_abs_diff(ax, b), 1e-9);  // a solution of the consistent system
    double sum = 0.0;
    for (double v : x) sum += v;
    EXPECT_LT(std::fabs(sum), 1e-9);  // orthogonal to the right null vector (constants)
}

TEST(CoarseSolver, ZeroMatrixIsAnError) {
    CsrMatrix a;
    a.rows = a.cols = 3;
    for (std::int64_t i = 0; i < 3; ++i) {
        a.col.push_back(i);
        a.val.push_back(0.0);
        a.row_ptr.push_back(i + 1);
    }
    EXPECT_THROW(CoarseSolver{a}, NumericalError);
}

}  // namespace
}  // namespace mpmg
