// The K-cycle (--cycle K, AMG path): one level's Krylov steps (Level::k_correction) against a
// scalar FP64 reference of the same two steps, for a symmetric level (flexible CG) and a
// nonsymmetric one (GCR), in FP64 and with FP16 storage; and whole solves, where it must take
// far fewer iterations than the V-cycle on a Poisson matrix and be refused where it does not
// apply.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/float16.hpp"
#include "io/matrix_market.hpp"
#include "mpmg/errors.hpp"
#include "mpmg/solver.hpp"
#include "mpmg_paths.hpp"
#include "multigrid/amg_level.hpp"
#include "multigrid/amg_precision.hpp"
#include "multigrid/cycle.hpp"
#include "unstructured/csr_test_util.hpp"

namespace mpmg {
namespace {

using csr_test::convection_diffusion;

double dot(const std::vector<double>& x, const std::vector<double>& y) {
    double s = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
    return s;
}

/// B r = (D + L)^{-1} r: one forward Gauss-Seidel sweep from zero.
std::vector<double> forward_gs(const CsrMatrix& a, const std::vector<double>& r) {
    std::vector<double> u(r.size(), 0.0);
    for (std::int64_t i = 0; i < a.rows; ++i) {
        double s = r[static_cast<std::size_t>(i)], d = 0.0;
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            const std::int64_t j = a.col[p];
            if (j < i) s -= a.val[p] * u[static_cast<std::size_t>(j)];
            if (j == i) d = a.val[p];
        }
        u[static_cast<std::size_t>(i)] = s / d;
    }
    return u;
}

/// The K-cycle's two Krylov steps on A u = r preconditioned by B, in FP64 (Notay and
/// Vassilevski 2008: flexible CG when A is symmetric, else GCR); the second step only when the
/// first left more than a quarter of ||r||.
std::vector<double> reference_k(const CsrMatrix& a, const std::vector<double>& r, bool symmetric,
                                int* cycles) {
    const std::size_t n = r.size();
    const std::vector<double> c1 = forward_gs(a, r);
    std::vector<double> v1(n), v2(n), rt(n), u(n);
    a.multiply(c1.data(), v1.data());
    const double rho1 = symmetric ? dot(c1, v1) : dot(v1, v1);
    const double alpha1 = (symmetric ? dot(c1, r) : dot(v1, r)) / rho1;
    for (std::size_t i = 0; i < n; ++i) rt[i] = r[i] - alpha1 * v1[i];
    *cycles = 1;
    if (dot(rt, rt) <= 0.0625 * dot(r, r)) {
        for (std::size_t i = 0; i < n; ++i) u[i] = alpha1 * c1[i];
        return u;
    }
    *cycles = 2;
    const std::vector<double> c2 = forward_gs(a, rt);
    a.multiply(c2.data(), v2.data());
    // Directly from the definitions: d2 = c2 - g c1 made A-orthogonal (CG) or A d2 orthogonal
    // to A c1 (GCR) to the first direction, then the step along d2 from rt.
    const double g = symmetric ? dot(c2, v1) / rho1 : dot(v2, v1) / rho1;
    std::vector<double> d2(n), w2(n);
    for (std::size_t i = 0; i < n; ++i) {
        d2[i] = c2[i] - g * c1[i];
        w2[i] = v2[i] - g * v1[i];
    }
    const double alpha2 = symmetric ? dot(d2, rt) / dot(d2, w2) : dot(w2, rt) / dot(w2, w2);
    for (std::size_t i = 0; i < n; ++i) u[i] = alpha1 * c1[i] + alpha2 * d2[i];
    return u;
}

/// A SymGS AMG level of `a` (not equilibrated: the references work in A's own variables) that
/// takes the K-cycle's Krylov steps.
std::unique_ptr<Level> k_level(const CsrMatrix& a, LevelPrecision precision) {
    MultigridOptions mg;
    mg.smoother = SmootherKind::symgs;
    const AmgStorageDecision dec = decide_amg_storage(a, precision, mg, false, 1);
    EXPECT_FALSE(dec.scaled) << dec.note;
    AmgLevelSetup setup;
    setup.precision = dec.precision;
    setup.matrix = &dec.matrix();
    setup.smoother = dec.smoother;
    setup.k_cycle = true;
    LevelReport rep;
    return make_amg_level(1, setup, rep);
}

TEST(AmgKCycle, KrylovStepsMatchAnFp64Reference) {
    struct Case {
        const char* name;
        double convection;
        Precision storage, compute;
        double tol;
    };
    const Case cases[] = {
        {"symmetric fp64", 0.0, Precision::fp64, Precision::fp64, 1e-12},
        {"nonsymmetric fp64", 3.0, Precision::fp64, Precision::fp64, 1e-12},
        {"symmetric fp16/fp32", 0.0, Precision::fp16, Precision::fp32, 2e-3},
        {"nonsymmetric fp16/fp32", 3.0, Precision::fp16, Precision::fp32, 2e-3},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        const CsrMatrix a = convection_diffusion(12, c.convection);
        const std::unique_ptr<Level> lev =
            k_level(a, LevelPrecision{.compute = c.compute, .storage = c.storage});
        ASSERT_EQ(lev->compute(), c.compute);

        std::vector<double> r(static_cast<std::size_t>(a.rows));
        for (std::size_t i = 0; i < r.size(); ++i) {
            r[i] = 1.0 + 0.1 * std::sin(0.37 * static_cast<double>(i));  // smooth: GS is weak
        }
        int cycles = 0, expected_cycles = 0;
        lev->set_rhs(r.data());
        lev->k_correction([&] {
            ++cycles;
            lev->smooth(1, true);
        });
        std::vector<double> z(r.size());
        lev->get_solution(z.data());
        const std::vector<double> ref = reference_k(a, r, c.convection == 0.0, &expected_cycles);
        EXPECT_EQ(cycles, expected_cycles);
        EXPECT_EQ(cycles, 2) << "one Gauss-Seidel sweep leaves more than a quarter";
        double err = 0.0, scale = 0.0;
        for (std::size_t i = 0; i < z.size(); ++i) {
            err = std::max(err, std::abs(z[i] - ref[i]));
            scale = std::max(scale, std::abs(ref[i]));
        }
        EXPECT_LE(err, c.tol * scale);
    }
}

// A preconditioner that solves the level exactly (Gauss-Seidel on a diagonal matrix) leaves no
// residual after the first step: the second cycle is not run, and u is that first step.
TEST(AmgKCycle, OneStepWhenTheFirstIsEnough) {
    CsrMatrix a;
    a.rows = a.cols = 50;
    for (std::int64_t i = 0; i < a.rows; ++i) {
        a.col.push_back(i);
        a.val.push_back(1.0 + static_cast<double>(i));
        a.row_ptr.push_back(a.nnz());
    }
    const std::unique_ptr<Level> lev = k_level(a, LevelPrecision{});
    const std::vector<double> r(50, 2.0);
    int cycles = 0;
    lev->set_rhs(r.data());
    lev->k_correction([&] {
        ++cycles;
        lev->smooth(1, true);
    });
    std::vector<double> z(50);
    lev->get_solution(z.data());
    EXPECT_EQ(cycles, 1);
    for (std::size_t i = 0; i < z.size(); ++i) {
        EXPECT_NEAR(z[i], 2.0 / (1.0 + static_cast<double>(i)), 1e-14) << i;
    }
}

// A high-contrast chain (coefficients near 1000 and 1 alternating, a weak tie to the boundary
// at both ends) has the constant w = 1 as a near-null vector: A w is zero but at the ends, far
// below the rounding of FP16's entries near 2000 (spacing 1), which left the FP16 copy's
// (w, Ã w) several times A's. The steps of a level stored in FP16 must still see A's energy:
// with c1 = w and r = A w, the first step is exactly alpha1 = 1 and u = w, as in FP64.
TEST(AmgKCycle, Fp16LevelKeepsTheEnergyOfANearNullVector) {
    const std::int64_t n = 400;
    std::vector<double> k(static_cast<std::size_t>(n + 1));
    for (std::int64_t e = 0; e <= n; ++e) {
        const double wiggle = 0.37 * std::sin(1.3 * static_cast<double>(e));
        k[static_cast<std::size_t>(e)] = e == 0 || e == n ? 1e-2 : (e % 2 ? 1000.3 : 1.0) + wiggle;
    }
    std::vector<std::vector<std::pair<std::int64_t, double>>> rows(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        const double kl = k[static_cast<std::size_t>(i)], kr = k[static_cast<std::size_t>(i + 1)];
        auto& row = rows[static_cast<std::size_t>(i)];
        if (i > 0) row.emplace_back(i - 1, -kl);
        row.emplace_back(i, kl + kr);
        if (i + 1 < n) row.emplace_back(i + 1, -kr);
    }
    const CsrMatrix a = csr_test::from_rows(n, rows);
    const std::vector<double> w(static_cast<std::size_t>(n), 1.0);
    std::vector<double> r(w.size());
    a.multiply(w.data(), r.data());  // A w: 1e-2 at both ends, rounding elsewhere

    // What FP16 alone makes of (w, A w) = 2e-2: the test needs a matrix where it is far off.
    double energy16 = 0.0;
    for (double v : a.val) energy16 += to_double(from_double<half>(v));
    ASSERT_GT(std::abs(energy16 - 2e-2), 0.5) << energy16;

    for (const Precision storage : {Precision::fp16, Precision::bf16, Precision::fp32}) {
        SCOPED_TRACE(to_string(storage));
        const std::unique_ptr<Level> lev =
            k_level(a, LevelPrecision{.compute = Precision::fp64, .storage = storage});
        lev->set_rhs(r.data());
        int cycles = 0;
        lev->k_correction([&] {
            ++cycles;
            lev->add_correction(w);  // c1 = w
        });
        std::vector<double> z(w.size());
        lev->get_solution(z.data());
        EXPECT_EQ(cycles, 1) << "the first step leaves no residual";
        for (std::size_t i = 0; i < z.size(); ++i) ASSERT_NEAR(z[i], 1.0, 1e-6) << i;
    }
}

class KCycleSolve : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ =
            std::filesystem::temp_directory_path() / ("mpmg_kcycle_" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    std::string write(const CsrMatrix& a, const std::string& name) {
        const std::string path = (dir_ / name).string();
        write_matrix_market(path, a);
        return path;
    }
    std::filesystem::path dir_;
};

// On a 160 x 160 Poisson matrix the V-cycle of pairwise aggregation needs ever more iterations
// as levels are added; the K-cycle keeps them low. Measured (rtol 1e-8): CG 30 -> 15, FP64 and
// auto. Flexible CG is what the varying preconditioner needs.
TEST_F(KCycleSolve, TakesFarFewerIterationsThanTheVCycleOnPoisson) {
    const std::string path = write(convection_diffusion(160, 0.0), "poisson.mtx");
    for (const char* precision : {"K64P64D64", "auto"}) {
        SCOPED_TRACE(precision);
        int its[2] = {0, 0};
        for (const CycleKind cycle : {CycleKind::v, CycleKind::k}) {
            SolverOptions o;
            o.problem.matrix = path;
            o.precision = parse_precision(precision);
            o.multigrid.cycle = cycle;
            o.rtol = 1e-8;
            const SolveResult r = solve(o);
            ASSERT_TRUE(r.converged) << r.message;
            EXPECT_TRUE(r.guard_events.empty());
            EXPECT_GE(r.levels.size(), 3u);
            its[cycle == CycleKind::k] = r.iterations;
        }
        EXPECT_LE(its[1] * 10, its[0] * 6) << "V " << its[0] << ", K " << its[1];
    }
}

// K keeps the V-cycle's pairwise hierarchy: on a power network, where pairs of pairs coarsen
// badly (AGMG's hierarchy took 79 iterations), it takes the V-cycle's 13.
TEST(KCycleShared, PowerNetworkKeepsTheVCycleIterations) {
    int its[2] = {0, 0};
    for (const CycleKind cycle : {CycleKind::v, CycleKind::k}) {
        SolverOptions o;
        o.problem.matrix = std::string(MPMG_SHARED_DATA) + "/1138_bus.mtx.gz";
        o.multigrid.cycle = cycle;
        const SolveResult r = solve(o);
        ASSERT_TRUE(r.converged) << r.message;
        its[cycle == CycleKind::k] = r.iterations;
    }
    EXPECT_LE(its[1], its[0] + 2) << "V " << its[0] << ", K " << its[1];
}

// Convection-diffusion, 120 x 120: 6 levels, so GCR steps run on levels 2 and 4. GMRES takes
// 18 iterations against the V-cycle's 23 (measured, 2 threads).
TEST_F(KCycleSolve, NonsymmetricGmresConverges) {
    SolverOptions o;
    o.problem.matrix = write(convection_diffusion(120, 3.0), "convdiff.mtx");
    o.multigrid.cycle = CycleKind::k;
    const SolveResult r = solve(o);
    ASSERT_TRUE(r.converged) << r.message;
    EXPECT_LE(r.iterations, 30);
    EXPECT_GE(r.levels.size(), 5u) << "the steps need a level 2 that is not the coarsest";
    o.multigrid.cycle = CycleKind::v;
    const SolveResult v = solve(o);
    ASSERT_TRUE(v.converged) << v.message;
    EXPECT_LT(r.iterations, v.iterations);
}

TEST(KCycleOptions, StructuredPathRefusesIt) {
    SolverOptions o;
    o.problem.name = "laplace27";
    o.problem.n = 12;
    o.multigrid.cycle = CycleKind::k;
    try {
        (void)solve(o);
        FAIL() << "expected Unsupported";
    } catch (const Unsupported& e) {
        EXPECT_NE(std::string(e.what()).find("--cycle K"), std::string::npos) << e.what();
    }
    EXPECT_EQ(parse_cycle("K", "--cycle"), CycleKind::k);
    EXPECT_EQ(to_string(CycleKind::k), "K");
}

TEST(KCycleOptions, AutoIsKOnlyForALargeAmgMatrix) {
    EXPECT_EQ(SolverOptions{}.multigrid.cycle, CycleKind::automatic);
    EXPECT_EQ(parse_cycle("auto", "--cycle"), CycleKind::automatic);
    EXPECT_EQ(resolve_cycle(CycleKind::automatic, false, 1'000'000), CycleKind::v);
    EXPECT_EQ(resolve_cycle(CycleKind::automatic, true, kKCycleRows - 1), CycleKind::v);
    EXPECT_EQ(resolve_cycle(CycleKind::automatic, true, kKCycleRows), CycleKind::k);
    EXPECT_EQ(resolve_cycle(CycleKind::automatic, true, kKCycleRows, kKCycleMaxSpread),
              CycleKind::k);
    EXPECT_EQ(resolve_cycle(CycleKind::automatic, true, kKCycleRows, 2 * kKCycleMaxSpread),
              CycleKind::v);
    for (const CycleKind c : {CycleKind::v, CycleKind::w, CycleKind::f, CycleKind::k}) {
        EXPECT_EQ(resolve_cycle(c, true, kKCycleRows), c);
        EXPECT_EQ(resolve_cycle(c, true, 10), c);
    }
}

TEST(KCycleOptions, DiagonalExtremesSkipZerosAndFollowTheFirstRow) {
    // Rows 10 and 11 of a larger matrix (columns global): diagonals -4 and 0.5, one zero row.
    const CsrMatrix a =
        csr_test::from_rows(3, std::vector<std::vector<std::pair<std::int64_t, double>>>{
                                   {{9, 1.0}, {10, -4.0}}, {{11, 0.5}, {12, 3.0}}, {{12, 0.0}}});
    const DiagonalExtremes e = diagonal_extremes(a, 10);
    EXPECT_EQ(e.smallest, 0.5);
    EXPECT_EQ(e.largest, 4.0);
    EXPECT_EQ(e.spread(), 8.0);
    EXPECT_EQ(diagonal_extremes(a, 0).spread(), 1.0);  // no diagonal entry in those columns
}

/// 5-point diffusion on n x n, Dirichlet, coefficient c on the black squares of a 10 x 10
/// checkerboard and 1 on the white (harmonic means across faces).
CsrMatrix checkerboard(int n, double c) {
    const auto k = [&](int x, int y) { return (x * 10 / n + y * 10 / n) % 2 == 0 ? c : 1.0; };
    std::vector<std::vector<std::pair<std::int64_t, double>>> rows(std::size_t(n) * n);
    for (int y = 0; y < n; ++y) {
        for (int x = 0; x < n; ++x) {
            const std::int64_t i = std::int64_t{y} * n + x;
            auto& row = rows[static_cast<std::size_t>(i)];
            double diag = 0.0;
            for (const auto& [qx, qy] : {std::pair{x, y - 1}, {x - 1, y}, {x + 1, y}, {x, y + 1}}) {
                const bool inside = qx >= 0 && qx < n && qy >= 0 && qy < n;
                const double kq = inside ? k(qx, qy) : k(x, y);  // Dirichlet: the cell's own
                const double w = 2.0 * k(x, y) * kq / (k(x, y) + kq);
                diag += inside ? w : 2.0 * k(x, y);
                if (inside) row.emplace_back(std::int64_t{qy} * n + qx, -w);
            }
            row.emplace_back(i, diag);
            std::sort(row.begin(), row.end());
        }
    }
    return csr_test::from_rows(std::int64_t{n} * n, rows);
}

// Coefficient jumps spread A's diagonal, and from some contrast on the K-cycle loses: `auto`
// keeps V for a 10^6 checkerboard (diagonal spread 1.5e6; measured at 400 x 400: V 152 CG
// iterations, K not converged in 200) and takes K for 10^3 (1.5e3; V 99, K 32) and 10^2 (V 64,
// K 21).
TEST_F(KCycleSolve, AutoKeepsTheVCycleAcrossStrongJumps) {
    for (const double c : {1e6, 1e3, 1e2}) {
        SCOPED_TRACE(c);
        const CsrMatrix a = checkerboard(250, c);
        SolverOptions o;
        o.problem.matrix = write(a, "checkerboard.mtx");
        const SolveResult r = solve(o);
        ASSERT_TRUE(r.converged) << r.message;
        EXPECT_EQ(r.options.multigrid.cycle, c > kKCycleMaxSpread ? CycleKind::v : CycleKind::k);
    }
}

// The default cycle on a 250 x 250 Poisson matrix (62,500 rows, 8 levels): the K-cycle, in the
// file path and in Solver, with the iterations it saves (measured: CG 19 against the V-cycle's
// 45 at rtol 1e-10); a built-in structured problem and CSR on a grid resolve it to V.
TEST_F(KCycleSolve, AutoTakesItOnALargeAmgMatrix) {
    const CsrMatrix a = convection_diffusion(250, 0.0);
    ASSERT_GE(a.rows, kKCycleRows);
    SolverOptions o;
    o.problem.matrix = write(a, "poisson250.mtx");
    const SolveResult r = solve(o);
    ASSERT_TRUE(r.converged) << r.message;
    EXPECT_EQ(r.options.multigrid.cycle, CycleKind::k);
    o.multigrid.cycle = CycleKind::v;
    const SolveResult v = solve(o);
    ASSERT_TRUE(v.converged) << v.message;
    EXPECT_LE(r.iterations * 2, v.iterations) << "auto " << r.iterations << ", V " << v.iterations;

    Solver solver{SolverOptions{}};
    solver.setup(a);
    std::vector<double> b(static_cast<std::size_t>(a.rows), 1.0), x(b.size(), 0.0);
    const SolveResult s = solver.solve(b, x);
    ASSERT_TRUE(s.converged) << s.message;
    EXPECT_EQ(s.options.multigrid.cycle, CycleKind::k);

    SolverOptions grid;
    grid.problem.grid = {250, 250, 1};
    Solver on_grid{grid};
    on_grid.setup(a);
    const SolveResult g = on_grid.solve(b, x);
    ASSERT_TRUE(g.converged) << g.message;
    EXPECT_EQ(g.options.multigrid.cycle, CycleKind::v);

    SolverOptions built_in;
    built_in.problem.name = "laplace27";
    built_in.problem.n = 40;  // 64,000 rows
    const SolveResult bi = solve(built_in);
    ASSERT_TRUE(bi.converged) << bi.message;
    EXPECT_EQ(bi.options.multigrid.cycle, CycleKind::v);
}

}  // namespace
}  // namespace mpmg

namespace mpmg {
namespace {

// FP16 storage must not cost the K-cycle its iterations across jumps: on a 10^3 checkerboard
// the FP16 levels' rounding made coarse levels indefinite, and the K-cycle took 4x the
// iterations of FP32 storage, until its steps added back the rounding of the row sums
// (measured at 400 x 400: 109 CG iterations before, 22-23 after and with FP32 storage).
TEST_F(KCycleSolve, Fp16StorageKeepsItsIterationsAcrossJumps) {
    SolverOptions o;
    o.problem.matrix = write(checkerboard(250, 1e3), "checkerboard.mtx");
    o.multigrid.cycle = CycleKind::k;
    const SolveResult half = solve(o);
    ASSERT_TRUE(half.converged) << half.message;
    ASSERT_EQ(half.levels.at(2).storage, Precision::fp16);
    o.precision = parse_precision("K64P32D32");
    const SolveResult single = solve(o);
    ASSERT_TRUE(single.converged) << single.message;
    EXPECT_LE(half.iterations, single.iterations + 3)
        << "FP16 " << half.iterations << ", FP32 " << single.iterations;
}

}  // namespace
}  // namespace mpmg
