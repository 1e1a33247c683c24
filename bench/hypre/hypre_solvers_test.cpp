// The hypre side of `mpmg bench vs-hypre`: hypre's Struct and IJ assemblies of mpmg's SG-DIA
// matrices multiply like mpmg's own SpMV, and every hypre solver converges on small problems
// (checked with the true residual computed by mpmg in FP64).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "hypre/hypre_solvers.hpp"
#include "io/problems.hpp"
#include "mpmg/errors.hpp"
#include "structured/sgdia_ops.hpp"

namespace mpmg::bench::hypre {
namespace {

StructuredProblem problem(const std::string& name, std::array<int, 3> grid) {
    ProblemOptions po;
    po.name = name;
    po.grid = grid;
    return make_problem(po);
}

std::vector<double> random_vector(std::int64_t n, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> v(static_cast<std::size_t>(n));
    for (double& x : v) x = u(rng);
    return v;
}

double max_abs(const std::vector<double>& v) {
    double m = 0.0;
    for (double x : v) m = std::max(m, std::abs(x));
    return m;
}

double true_relres(const StructuredProblem& p, const std::vector<double>& x) {
    std::vector<double> r(p.b.size());
    residual(p.a, p.b.data(), x.data(), r.data());
    double rr = 0.0, bb = 0.0;
    for (std::size_t i = 0; i < r.size(); ++i) {
        rr += r[i] * r[i];
        bb += p.b[i] * p.b[i];
    }
    return std::sqrt(rr / bb);
}

class HypreMatvec : public ::testing::TestWithParam<std::string> {};

// A non-cubic box catches a swapped axis or a wrong stencil offset; oil is nonsymmetric.
TEST_P(HypreMatvec, StructAndIjEqualMpmgSpmv) {
    const StructuredProblem p = problem(GetParam(), {7, 6, 5});
    const std::vector<double> x = random_vector(p.a.rows(), 7);
    std::vector<double> y(x.size());
    spmv(p.a, x.data(), y.data());
    const double tol = 1e-14 * max_abs(y) * p.a.stencil().size();
    const std::vector<double> ys = struct_matvec(p.a, x);
    const std::vector<double> yi = ij_matvec(p.a, x);
    ASSERT_EQ(ys.size(), y.size());
    ASSERT_EQ(yi.size(), y.size());
    for (std::size_t i = 0; i < y.size(); ++i) {
        ASSERT_NEAR(ys[i], y[i], tol) << "Struct, row " << i;
        ASSERT_NEAR(yi[i], y[i], tol) << "IJ, row " << i;
    }
}

INSTANTIATE_TEST_SUITE_P(Problems, HypreMatvec,
                         ::testing::Values("laplace27", "laplace27e8", "rhd", "oil"));

class HypreSolve : public ::testing::TestWithParam<std::tuple<std::string, Preconditioner>> {};

TEST_P(HypreSolve, ConvergesWithTheTrueResidual) {
    const auto& [name, pre] = GetParam();
    const StructuredProblem p = problem(name, {12, 12, 12});
    Settings s;
    s.krylov = p.solver;
    s.rtol = 1e-8;
    s.max_iter = 200;
    const Result r = solve(p, pre, s);
    EXPECT_GT(r.iterations, 0);
    EXPECT_LT(r.iterations, s.max_iter);
    EXPECT_LE(r.relres, s.rtol);
    EXPECT_GE(r.setup_s, 0.0);
    ASSERT_EQ(r.x.size(), p.b.size());
    // The recursively updated residual and the true one agree to a few digits.
    EXPECT_LE(true_relres(p, r.x), 10 * s.rtol) << name << " " << hypre::name(pre);
}

INSTANTIATE_TEST_SUITE_P(
    Solvers, HypreSolve,
    ::testing::Combine(::testing::Values("laplace27", "laplace27e8", "rhd", "oil"),
                       ::testing::Values(Preconditioner::pfmg, Preconditioner::smg,
                                         Preconditioner::boomeramg,
                                         Preconditioner::boomeramg_default)));

TEST(HypreSolve, RejectsBlockProblems) {
    const StructuredProblem p = problem("rhd3t", {6, 6, 6});
    EXPECT_THROW(solve(p, Preconditioner::pfmg, Settings{}), Unsupported);
}

}  // namespace
}  // namespace mpmg::bench::hypre
