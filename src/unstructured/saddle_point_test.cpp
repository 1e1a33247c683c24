// The saddle-point block preconditioner: which matrices split, M z = r with its blocks (one
// level each: the blocks solved exactly), and GMRES on a constrained Laplacian that one AMG on
// the whole matrix does not solve.
#include "unstructured/saddle_point.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "api/guarded_solve.hpp"
#include "krylov/krylov.hpp"
#include "mpmg/options.hpp"
#include "multigrid/amg_test_util.hpp"
#include "unstructured/csr_test_util.hpp"
#include "unstructured/csr_typed.hpp"

namespace mpmg {
namespace {

/// [[L, B^T], [B, 0]]: L the n x n 5-point Laplacian (n^2 rows), B m = n^2 / 2 - 1 rows, row k
/// coupling cells 2k, 2k + 1, 2k + 2 with 1, -2, 1 (rows overlap, so B B^T is not diagonal),
/// the constraint rows after the cells (`interleave`: each after its cell 2k + 1 instead).
CsrMatrix constrained_laplacian(int n, bool interleave) {
    const CsrMatrix l = csr_test::poisson(n, 2);
    const std::int64_t nu = l.rows, m = nu / 2 - 1;
    // The position of cell i and of constraint k in the final order.
    std::vector<std::int64_t> cell(static_cast<std::size_t>(nu)), con(static_cast<std::size_t>(m));
    std::int64_t next = 0;
    for (std::int64_t i = 0; i < nu; ++i) {
        cell[static_cast<std::size_t>(i)] = next++;
        if (interleave && i % 2 == 1 && (i - 1) / 2 < m)
            con[static_cast<std::size_t>((i - 1) / 2)] = next++;
    }
    if (!interleave) {
        for (std::int64_t k = 0; k < m; ++k) con[static_cast<std::size_t>(k)] = next++;
    }
    std::vector<std::vector<std::pair<std::int64_t, double>>> rows(static_cast<std::size_t>(next));
    for (std::int64_t i = 0; i < nu; ++i) {
        auto& r = rows[static_cast<std::size_t>(cell[static_cast<std::size_t>(i)])];
        for (std::int64_t q = l.row_ptr[static_cast<std::size_t>(i)];
             q < l.row_ptr[static_cast<std::size_t>(i) + 1]; ++q) {
            r.emplace_back(cell[static_cast<std::size_t>(l.col[static_cast<std::size_t>(q)])],
                           l.val[static_cast<std::size_t>(q)]);
        }
    }
    for (std::int64_t k = 0; k < m; ++k) {
        const std::int64_t c = con[static_cast<std::size_t>(k)];
        const double w[3] = {1.0, -2.0, 1.0};
        for (int t = 0; t < 3; ++t) {
            const std::int64_t i = cell[static_cast<std::size_t>(2 * k + t)];
            rows[static_cast<std::size_t>(c)].emplace_back(i, w[t]);
            rows[static_cast<std::size_t>(i)].emplace_back(c, w[t]);
        }
    }
    for (auto& r : rows) std::sort(r.begin(), r.end());
    return csr_test::from_rows(next, rows);
}

TEST(SaddlePoint, SplitsOnlyConstraintsCoupledToTheOthers) {
    const CsrMatrix k = constrained_laplacian(8, true);
    const std::optional<SaddleSplit> s = saddle_split(k);
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->u.size(), 64u);
    EXPECT_EQ(s->p.size(), 31u);
    EXPECT_EQ(s->p.front(), 2);                                       // after cell 1
    EXPECT_FALSE(saddle_split(csr_test::poisson(8, 2)).has_value());  // no zero diagonal
    // A zero-diagonal row coupled only to another such row: not this saddle point.
    const CsrMatrix lone = csr_test::from_rows(
        4, std::vector<std::vector<std::pair<std::int64_t, double>>>{
               {{0, 2.0}, {1, -1.0}}, {{0, -1.0}, {1, 2.0}}, {{3, 1.0}}, {{2, 1.0}}});
    EXPECT_FALSE(saddle_split(lone).has_value());
    // More constraints than the others.
    const CsrMatrix few =
        csr_test::from_rows(3, std::vector<std::vector<std::pair<std::int64_t, double>>>{
                                   {{0, 2.0}, {1, 1.0}, {2, 1.0}}, {{0, 1.0}}, {{0, 1.0}}});
    EXPECT_FALSE(saddle_split(few).has_value());
}

// With one level per block (LU: A and S^ solved exactly), z = M^-1 r satisfies A z_u + E z_p =
// r_u and -S^ z_p = r_p, S^ = B diag(A)^-1 E, in both orders of the rows and in float.
TEST(SaddlePoint, ApplySolvesTheBlockTriangularSystem) {
    MultigridOptions mg;
    mg.max_levels = 1;
    mg.coarse_solver = CoarseSolverKind::direct;
    mg.smoother = SmootherKind::symgs;
    const PrecisionPlan plan = parse_precision("K64P64D64");
    for (const bool interleave : {false, true}) {
        SCOPED_TRACE(interleave);
        const CsrMatrix k = constrained_laplacian(10, interleave);
        const SaddleSplit s = *saddle_split(k);
        SaddlePointPreconditioner m(k, s, mg, plan, AmgSettings{});
        const CsrMatrix& a = m.a_block();
        const CsrMatrix& schur = m.schur_block();
        // S^ from its definition, entry by entry: sum over cells of b_pi e_iq / a_ii.
        std::vector<double> d = diagonal_of(a);
        std::mt19937 gen(3);
        std::uniform_real_distribution<double> u(-1.0, 1.0);
        std::vector<double> r(static_cast<std::size_t>(k.rows));
        for (double& v : r) v = u(gen);
        std::vector<double> z(r.size());
        m.apply(r.data(), z.data());
        std::vector<double> zu, zp, ru, rp;
        for (const std::int64_t i : s.u) {
            zu.push_back(z[static_cast<std::size_t>(i)]);
            ru.push_back(r[static_cast<std::size_t>(i)]);
        }
        for (const std::int64_t i : s.p) {
            zp.push_back(z[static_cast<std::size_t>(i)]);
            rp.push_back(r[static_cast<std::size_t>(i)]);
        }
        std::vector<double> sz(zp.size());
        schur.multiply(zp.data(), sz.data());
        for (std::size_t i = 0; i < zp.size(); ++i) EXPECT_NEAR(-sz[i], rp[i], 1e-10) << i;
        // A z_u + E z_p: E's entries read from K itself.
        std::vector<double> az(zu.size());
        a.multiply(zu.data(), az.data());
        for (std::size_t r0 = 0; r0 < s.u.size(); ++r0) {
            const auto i = static_cast<std::size_t>(s.u[r0]);
            double e = 0.0;
            for (std::int64_t q = k.row_ptr[i]; q < k.row_ptr[i + 1]; ++q) {
                const auto j = static_cast<std::size_t>(k.col[static_cast<std::size_t>(q)]);
                if (std::find(s.p.begin(), s.p.end(), static_cast<std::int64_t>(j)) != s.p.end()) {
                    e += k.val[static_cast<std::size_t>(q)] * z[j];
                }
            }
            EXPECT_NEAR(az[r0] + e, ru[r0], 1e-10) << r0;
        }
        // S^'s diagonal from its definition.
        const std::vector<double> sd = diagonal_of(schur);
        for (std::size_t c = 0; c < s.p.size(); ++c) {
            const auto row = static_cast<std::size_t>(s.p[c]);
            double want = 0.0;
            for (std::int64_t q = k.row_ptr[row]; q < k.row_ptr[row + 1]; ++q) {
                const std::int64_t j = k.col[static_cast<std::size_t>(q)];
                const auto it = std::find(s.u.begin(), s.u.end(), j);
                if (it == s.u.end()) continue;
                const double b = k.val[static_cast<std::size_t>(q)];
                want += b * b / d[static_cast<std::size_t>(it - s.u.begin())];
            }
            EXPECT_NEAR(sd[c], want, 1e-12 * want) << c;
        }
        // float: the same z to FP32 rounding.
        std::vector<float> rf(r.begin(), r.end()), zf(r.size());
        m.apply(rf.data(), zf.data());
        for (std::size_t i = 0; i < z.size(); ++i)
            EXPECT_NEAR(zf[i], z[i], 1e-4 * (1.0 + std::fabs(z[i])));
    }
}

// GMRES with the block preconditioner (V-cycles in FP16 storage) solves the constrained 40 x 40
// Laplacian to 1e-10; one AMG on the whole matrix (l1-Jacobi) does not in 200 iterations.
TEST(SaddlePoint, GmresConvergesWhereOneAmgDoesNot) {
    const CsrMatrix k = constrained_laplacian(40, true);
    const SaddleSplit s = *saddle_split(k);
    MultigridOptions mg;
    mg.smoother = SmootherKind::symgs;
    mg.cycle = CycleKind::v;
    const PrecisionPlan plan = parse_precision("K64P32D16");
    Built<SaddlePointPreconditioner> m(k, s, mg, plan, AmgSettings{});
    Adapter<double> pre(m);
    const amg_test::CsrOperator op(k);
    std::vector<double> x1(static_cast<std::size_t>(k.rows), 1.0), b(x1.size()), x(x1.size(), 0.0);
    k.multiply(x1.data(), b.data());
    KrylovOptions opt;
    opt.rtol = 1e-10;
    opt.max_iter = 200;
    const KrylovResult r = gmres<double>(op, &pre, b.data(), x.data(), opt);
    EXPECT_EQ(r.status, SolveStatus::converged) << r.message;
    EXPECT_LT(r.iterations, 100);
    double err = 0.0;
    for (double v : x) err = std::max(err, std::fabs(v - 1.0));
    EXPECT_LT(err, 1e-6);
    // One hierarchy on all of K, with the smoother `auto` takes for a zero diagonal.
    MultigridOptions whole = mg;
    whole.smoother = SmootherKind::l1_jacobi;
    AmgHierarchy h(k, whole, plan);
    amg_test::AmgPreconditioner one(h);
    std::vector<double> y(x1.size(), 0.0);
    const KrylovResult w = gmres<double>(op, &one, b.data(), y.data(), opt);
    EXPECT_NE(w.status, SolveStatus::converged) << w.iterations << " iterations";
}

}  // namespace
}  // namespace mpmg
