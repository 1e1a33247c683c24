// The coarsest-level direct solver: exact on regular matrices, the pseudo-inverse on
// rank-deficient ones (pure Neumann, empty columns), a clear error on a singular pivot in the
// middle, and the equilibration that keeps badly scaled matrices from looking singular.
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

/// a scaled as D a D, d_i = 10^(+-spread) at random (a unit conversion per unknown).
CsrMatrix symmetrically_scaled(CsrMatrix a, double spread, unsigned seed, std::vector<double>& d) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> u(-spread, spread);
    d.resize(static_cast<std::size_t>(a.rows));
    for (double& v : d) v = std::pow(10.0, u(gen));
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            a.val[p] *= d[static_cast<std::size_t>(i)] * d[static_cast<std::size_t>(a.col[p])];
        }
    }
    return a;
}

// D A D of a regular A with D over 1e+-15: its pivots spread over 1e30, which the rank test
// took for singularity ("pivot k is ... with nonzero pivots after it") before the LU was of
// the equilibrated matrix. Solved as exactly as A itself: x = D^-1 x_A.
TEST(CoarseSolver, SymmetricallyScaledMatrixIsNotSingular) {
    const std::int64_t n = 60;
    const CsrMatrix a = chain(n, 0.01);
    std::vector<double> d;
    const CsrMatrix dad = symmetrically_scaled(a, 15.0, 7, d);
    const std::vector<double> y0 = random_vector(n, 8);  // D x0 = y0
    std::vector<double> x0(y0.size()), b(y0.size());
    for (std::size_t i = 0; i < y0.size(); ++i) x0[i] = y0[i] / d[i];
    dad.multiply(x0.data(), b.data());
    std::vector<double> x = b;
    ASSERT_NO_THROW(CoarseSolver(dad).solve(x.data()));
    std::vector<double> y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] * d[i];
    EXPECT_LT(max_abs_diff(y, y0), 1e-8);  // cond(A) ~ 1e5 here
}

// An empty row and column inside A (an unknown no equation reads): its zero pivot is part of
// the null space, not a singular pivot with nonzero ones after it; a consistent b is solved,
// the free unknown 0. A subnormal entry alone in its column takes a scale near the end of the
// double range without overflowing the scaled entries to inf.
TEST(CoarseSolver, EmptyColumnAndSubnormalEntryAreSolved) {
    CsrMatrix a;
    a.rows = a.cols = 4;
    a.row_ptr = {0, 2, 2, 4, 5};
    a.col = {0, 2, 0, 2, 3};
    a.val = {4.0, 1.0, 1.0, 4.0, 1e-310};
    const std::vector<double> x0 = {1.0, 0.0, -2.0, 3.0};
    std::vector<double> b(4), x, ax(4);
    a.multiply(x0.data(), b.data());
    x = b;
    ASSERT_NO_THROW(CoarseSolver(a).solve(x.data()));
    for (double v : x) ASSERT_TRUE(std::isfinite(v));
    EXPECT_NEAR(x[0], 1.0, 1e-14);
    EXPECT_EQ(x[1], 0.0);
    EXPECT_NEAR(x[2], -2.0, 1e-14);
    EXPECT_NEAR(x[3], 3.0, 1e-12);
}

// Rows alike up to a factor of 4 keep their scale: a pure Neumann chain times 2^-40 solves as
// the chain itself, times 2^40, to the bit.
TEST(CoarseSolver, PowerOfTwoMultipleSolvesToTheBit) {
    const std::int64_t n = 40;
    const CsrMatrix a = chain(n, 0.0, 0.2);
    CsrMatrix small = a;
    for (double& v : small.val) v = std::ldexp(v, -40);
    const std::vector<double> b = random_vector(n, 9);
    std::vector<double> x = b, xs = b;
    CoarseSolver(a).solve(x.data());
    CoarseSolver(small).solve(xs.data());
    for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(std::ldexp(xs[i], -40), x[i]) << i;
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
