// The level interface the distributed hierarchy drives (residual_unscaled, add_correction):
// unscaled FP64 residuals and corrections, checked against b - A z computed in FP64 on the
// unscaled operator, for a scaled FP16 level, an unscaled FP64 level, a block level and an
// equilibrated AMG level.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "api/thread_scope.hpp"
#include "core/float16.hpp"
#include "io/problems.hpp"
#include "kernels/sgdia_test_util.hpp"
#include "mpmg/errors.hpp"
#include "multigrid/amg_level.hpp"
#include "multigrid/amg_precision.hpp"
#include "multigrid/hierarchy.hpp"
#include "multigrid/level.hpp"
#include "multigrid/scaling.hpp"
#include "multigrid/truncate.hpp"
#include "smoothers/ilu0.hpp"
#include "structured/coarsen.hpp"
#include "structured/sgdia_ops.hpp"
#include "structured/sgdia_view_test_util.hpp"

namespace mpmg {
namespace {

using testing::max_abs;

std::vector<double> random_vector(std::size_t n, unsigned seed) {
    return testing::random_vector<double>(static_cast<std::int64_t>(n), seed);
}

// After set_rhs(b) and `sweeps` pre/post sweeps, residual_unscaled equals b - A z (z the
// level's unscaled solution) within `tol` relative to max|b|; add_correction(e) adds e to z.
void expect_unscaled_interface(Level& lev, const std::vector<double>& b,
                               const std::function<void(const double*, double*)>& residual_of,
                               double tol) {
    const std::size_t n = b.size();
    lev.set_rhs(b.data());
    for (const bool pre : {true, false}) {  // -U u after the first sweep, b - A u after the second
        lev.smooth(1, pre);
        std::vector<double> r, z(n), expected(n);
        lev.residual_unscaled(r);
        lev.get_solution(z.data());
        residual_of(z.data(), expected.data());
        ASSERT_EQ(r.size(), n);
        double err = 0.0;
        for (std::size_t i = 0; i < n; ++i) err = std::max(err, std::abs(r[i] - expected[i]));
        EXPECT_LE(err, tol * max_abs(b)) << (pre ? "after the forward sweep" : "after backward");
    }
    std::vector<double> z0(n), z1(n);
    lev.get_solution(z0.data());
    const std::vector<double> e = random_vector(n, 7);
    lev.add_correction(e);
    lev.get_solution(z1.data());
    double err = 0.0;
    for (std::size_t i = 0; i < n; ++i) err = std::max(err, std::abs(z1[i] - z0[i] - e[i]));
    EXPECT_LE(err, 1e-5 * (max_abs(z0) + 1.0));
}

/// Level 0 of a's Galerkin hierarchy with the SymGS smoother in `precision` (the levels are
/// kept: the level reads its transfer from them). Needs a grid that coarsens.
struct SymgsLevel0 {
    GalerkinLevels g;
    LevelSetup setup;
    LevelReport rep;
    SymgsLevel0(const SgDiaMatrix<double>& a, const char* precision) {
        MultigridOptions mg;
        mg.smoother = SmootherKind::symgs;
        g = galerkin_levels(a, mg);
        if (g.mats.size() < 2) throw std::logic_error("SymgsLevel0: the grid does not coarsen");
        setup = level_setup(g, 0, mg, parse_precision(precision), rep);
        setup.to_coarse = &g.transfers.front();
    }
    std::unique_ptr<Level> make() { return make_level(0, setup, false, rep); }
};

void check_structured(const SgDiaMatrix<double>& a, const char* precision, double tol) {
    SymgsLevel0 l0(a, precision);
    const auto lev = l0.make();
    const std::vector<double> b = random_vector(static_cast<std::size_t>(a.rows()), 3);
    expect_unscaled_interface(
        *lev, b, [&](const double* z, double* r) { residual(a, b.data(), z, r); }, tol);
}

TEST(LevelInterface, ScaledFp16LevelGivesUnscaledResidualsAndTakesUnscaledCorrections) {
    const SgDiaMatrix<double> a = laplace27(Box{10, 9, 8}, 1e8);  // far outside FP16: scaled
    MultigridOptions mg;
    const GalerkinLevels g = galerkin_levels(a, mg);
    LevelReport rep;
    (void)level_setup(g, 0, mg, parse_precision("K64P32D16"), rep);
    ASSERT_TRUE(rep.scaled) << "the test needs a scaled level";
    check_structured(a, "K64P32D16", 2e-3);
}

TEST(LevelInterface, UnscaledFp64Level) {
    check_structured(laplace27(Box{12, 11, 10}), "K64P64D64", 1e-12);
}

TEST(LevelInterface, BlockLevel) {
    const StructuredProblem p = make_rhd3t(Box{8, 7, 6}, 1);
    check_structured(p.a, "K64P32D32", 1e-4);
}

// The storage decision refers to the level it was given where it keeps it unscaled (no copy
// of the level), and to its own equilibrated copy where it scales; the level is not changed.
TEST(LevelInterface, AmgStorageDecisionCopiesOnlyWhatItScales) {
    MultigridOptions mg;
    mg.smoother = SmootherKind::jacobi;
    const LevelPrecision half = parse_precision("K64P32D16").level(0);
    const CsrMatrix a = to_csr(laplace27(Box{6, 5, 4}, 1.0));
    const AmgStorageDecision kept = decide_amg_storage(a, half, mg, false, 0);
    EXPECT_FALSE(kept.scaled) << kept.note;
    EXPECT_EQ(&kept.matrix(), &a);
    EXPECT_EQ(kept.equilibrated.nnz(), 0);
    const CsrMatrix big = to_csr(laplace27(Box{6, 5, 4}, 1e8));
    const std::vector<double> before = big.val;
    const AmgStorageDecision scaled = decide_amg_storage(big, half, mg, false, 0);
    ASSERT_TRUE(scaled.scaled) << scaled.note;
    EXPECT_EQ(&scaled.matrix(), &scaled.equilibrated);
    EXPECT_EQ(scaled.matrix().nnz(), big.nnz());
    EXPECT_EQ(big.val, before);
}

// `auto` keeps a level FP16 cannot hold in FP32 storage with FP64 vectors, and in FP64 storage
// where FP32 cannot hold it either (a D A D with D over 1e+-40 failed as "AMG level 0: ...
// entries overflow fp32 storage"); a level FP32 holds stays in FP32.
TEST(LevelInterface, AutoStoresInFp64WhatFp32CannotHold) {
    MultigridOptions mg;
    mg.smoother = SmootherKind::jacobi;
    mg.scaling = ScalingKind::none;  // no equilibration: the values as they are
    const LevelPrecision half = parse_precision("K64P32D16").level(0);
    for (const double spread : {1e-20, 1e-60}) {
        SCOPED_TRACE(spread);
        CsrMatrix a = to_csr(laplace27(Box{6, 5, 4}, 1.0));
        for (std::int64_t i = 0; i < a.rows; i += 2) {  // every other row scaled down
            for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) a.val[p] *= spread;
        }
        const AmgStorageDecision dec = decide_amg_storage(a, half, mg, true, 0);
        EXPECT_EQ(dec.precision.compute, Precision::fp64) << dec.note;
        EXPECT_EQ(dec.precision.storage, spread < 1e-40 ? Precision::fp64 : Precision::fp32)
            << dec.note;
    }
}

TEST(LevelInterface, EquilibratedAmgLevel) {
    const CsrMatrix a = to_csr(laplace27(Box{8, 7, 6}, 1e8));
    MultigridOptions mg;
    mg.smoother = SmootherKind::jacobi;
    AmgStorageDecision dec =
        decide_amg_storage(a, parse_precision("K64P32D16").level(0), mg, false, 0);
    ASSERT_TRUE(dec.scaled) << dec.note;
    AmgLevelSetup setup;
    setup.precision = dec.precision;
    setup.matrix = &dec.matrix();
    setup.row_scale = dec.row_scale;
    setup.col_scale = dec.col_scale;
    setup.smoother = dec.smoother;
    LevelReport rep;
    const auto lev = make_amg_level(0, setup, rep);
    const std::vector<double> b = random_vector(static_cast<std::size_t>(a.rows), 5);
    expect_unscaled_interface(
        *lev, b,
        [&](const double* z, double* r) {
            a.multiply(z, r);
            for (std::size_t i = 0; i < b.size(); ++i) r[i] = b[i] - r[i];
        },
        2e-3);
}

// Exactly symmetric point levels read their upper half (LevelReport::upper_half): laplace27 in
// FP16 and FP64 and rhd scaled in FP16 (a symmetric scaling keeps equal values equal); not the
// nonsymmetric weather level, nor a block level (rhd3t), which reads every offset.
TEST(LevelUpperHalf, ExactlySymmetricPointLevelsReadTheirUpperHalf) {
    struct Case {
        const char* problem;
        const char* precision;
        bool upper_half;
    };
    const Case cases[] = {{"laplace27", "K64P32D16", true},
                          {"laplace27", "K64P64D64", true},
                          {"rhd", "K64P32D16", true},
                          {"weather", "K64P32D16", false},
                          {"rhd3t", "K64P32D16", false}};
    for (const Case& c : cases) {
        SCOPED_TRACE(std::string(c.problem) + " " + c.precision);
        ProblemOptions po;
        po.name = c.problem;
        po.n = 12;
        const SgDiaMatrix<double> a = make_problem(po).a;  // the levels read it: kept alive
        SymgsLevel0 l0(a, c.precision);
        (void)l0.make();
        EXPECT_EQ(l0.rep.upper_half, c.upper_half);
    }
}

// A level restricts its residual as it forms it, plane by plane inside the restriction's pass
// (Transfer::restrict_planes), never writing r̂ whole: the coarse right-hand side must be bit
// for bit the restriction of the residual residual_unscaled forms whole. After the forward sweep
// from zero (-U û; on 2 threads with the block order's deferred planes, which take b - A û),
// after the backward sweep (b - A û), with ILU(0), unscaled and scaled FP16. The coarse level
// is FP64 and unscaled, so its right-hand side is the restriction as it came.
TEST(LevelRestriction, ResidualRestrictedPlaneByPlaneIsTheWholeResidualRestricted) {
    struct Case {
        const char* problem;
        SmootherKind smoother;
        bool scaled;
    };
    const Case cases[] = {{"laplace27", SmootherKind::symgs, false},
                          {"laplace27e8", SmootherKind::symgs, true},
                          {"laplace27e8", SmootherKind::ilu0, true}};
    for (const Case& c : cases) {
        ProblemOptions po;
        po.name = c.problem;
        po.grid = {34, 30, 40};  // above the parallel cut-offs, deep enough for slabs
        const SgDiaMatrix<double> a = make_problem(po).a;
        MultigridOptions mg;
        mg.smoother = c.smoother;
        const GalerkinLevels g = galerkin_levels(a, mg);
        ASSERT_GE(g.mats.size(), 2u);
        const Transfer& t = g.transfers.front();
        ASSERT_TRUE(t.restricts_by_planes());
        for (const int threads : {1, 2}) {
            SCOPED_TRACE(std::string(c.problem) + " " + std::string(to_string(c.smoother)) + ", " +
                         std::to_string(threads) + " threads");
            const ThreadScope scope(threads);
            LevelReport rep0, rep1;
            LevelSetup s0 = level_setup(g, 0, mg, parse_precision("K64P32D16"), rep0);
            s0.to_coarse = &t;
            ASSERT_EQ(rep0.scaled, c.scaled);
            const LevelSetup s1 = level_setup(g, 1, mg, parse_precision("K64P64D64"), rep1);
            const auto fine = make_level(0, s0, false, rep0);
            const auto coarse = make_level(1, s1, false, rep1);
            const auto n = static_cast<std::size_t>(a.rows());
            const auto nc = static_cast<std::size_t>(coarse->rows());
            const std::vector<double> b = random_vector(n, 17);
            fine->set_rhs(b.data());
            for (const bool pre : {true, false}) {
                fine->smooth(1, pre);
                fine->restrict_residual(*coarse);
                const auto* got = static_cast<const double*>(coarse->rhs_data());
                std::vector<double> r;
                fine->residual_unscaled(r);  // FP32 values (s ⊙ r̂ rounded to FP32 when scaled)
                const std::vector<float> rf(r.begin(), r.end());
                std::vector<double> want(nc);
                t.restrict_to(rf.data(), want.data());
                for (std::size_t q = 0; q < nc; ++q) {
                    ASSERT_EQ(got[q], want[q])
                        << (pre ? "after the forward sweep" : "after the backward")
                        << ", coarse cell " << q;
                }
            }
        }
    }
}

// The way up takes the coarse correction plane by plane inside the first backward sweep
// (correct_and_smooth): bit for bit correct_from and then smooth, for one and two sweeps, on 1
// and 2 threads (the block order), unscaled and scaled FP16, and with a smoother that takes the
// two steps (Jacobi). Two levels built alike run the two ways from the same state.
TEST(LevelCorrection, CorrectionInsideTheSweepEqualsCorrectionThenSweep) {
    struct Case {
        const char* problem;
        SmootherKind smoother;
    };
    const Case cases[] = {{"laplace27", SmootherKind::symgs},
                          {"laplace27e8", SmootherKind::symgs},
                          {"laplace27e8", SmootherKind::jacobi}};
    for (const Case& c : cases) {
        ProblemOptions po;
        po.name = c.problem;
        po.grid = {34, 30, 40};
        const SgDiaMatrix<double> a = make_problem(po).a;
        MultigridOptions mg;
        mg.smoother = c.smoother;
        const GalerkinLevels g = galerkin_levels(a, mg);
        ASSERT_GE(g.mats.size(), 3u);
        ASSERT_TRUE(g.transfers.front().restricts_by_planes());
        for (const int threads : {1, 2}) {
            for (const int sweeps : {1, 2}) {
                SCOPED_TRACE(std::string(c.problem) + " " + std::string(to_string(c.smoother)) +
                             ", " + std::to_string(threads) + " threads, " +
                             std::to_string(sweeps) + " sweeps");
                const ThreadScope scope(threads);
                const PrecisionPlan precision = parse_precision("K64P32D16");
                LevelReport rep0, rep1;
                LevelSetup s0 = level_setup(g, 0, mg, precision, rep0);
                s0.to_coarse = &g.transfers[0];
                LevelSetup s1 = level_setup(g, 1, mg, precision, rep1);
                s1.to_coarse = &g.transfers[1];
                const auto n = static_cast<std::size_t>(a.rows());
                const std::vector<double> b = random_vector(n, 23);
                std::vector<double> z[2];
                for (int way = 0; way < 2; ++way) {
                    const auto fine = make_level(0, s0, false, rep0);
                    const auto coarse = make_level(1, s1, false, rep1);
                    fine->set_rhs(b.data());
                    fine->smooth(1, true);
                    fine->restrict_residual(*coarse);
                    coarse->smooth(1, true);
                    coarse->smooth(1, false);
                    if (way == 0) {
                        fine->correct_from(*coarse);
                        fine->smooth(sweeps, false);
                    } else {
                        fine->correct_and_smooth(*coarse, sweeps);
                    }
                    z[way].resize(n);
                    fine->get_solution(z[way].data());
                }
                for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(z[1][i], z[0][i]) << "cell " << i;
            }
        }
    }
}

// A scaled FP16 level whose storage decision truncates while it counts (pretruncate, the serial
// hierarchy) is the level that truncates itself after a counting pass: same counts, same
// decision, bit for bit the same smoothing; without pretruncate nothing is kept.
TEST(LevelSetupPretruncate, ScaledFp16LevelIsTheSameWithOnePassLess) {
    const SgDiaMatrix<double> a = laplace27(Box{10, 9, 8}, 1e8);  // far outside FP16: scaled
    MultigridOptions mg;
    mg.smoother = SmootherKind::symgs;
    const GalerkinLevels g = galerkin_levels(a, mg);
    const PrecisionPlan plan = parse_precision("K64P32D16");
    LevelReport rep_two, rep_one;
    LevelSetup two = level_setup(g, 0, mg, plan, rep_two);
    LevelSetup one = level_setup(g, 0, mg, plan, rep_one, /*pretruncate=*/true);
    ASSERT_TRUE(rep_one.scaled);
    EXPECT_EQ(two.truncated, nullptr);
    ASSERT_NE(one.truncated, nullptr);
    EXPECT_EQ(one.precision.storage, two.precision.storage);
    EXPECT_EQ(rep_one.note, rep_two.note);
    two.to_coarse = one.to_coarse = &g.transfers.front();
    const auto lev_two = make_level(0, two, false, rep_two);
    const auto lev_one = make_level(0, one, false, rep_one);
    EXPECT_EQ(one.truncated.use_count(), 2) << "the level holds the decision's matrix";
    EXPECT_EQ(rep_one.counts.overflow, rep_two.counts.overflow);
    EXPECT_EQ(rep_one.counts.underflow, rep_two.counts.underflow);
    EXPECT_EQ(rep_one.counts.subnormal, rep_two.counts.subnormal);
    const std::vector<double> b = random_vector(static_cast<std::size_t>(a.rows()), 4);
    std::vector<double> z_two(b.size()), z_one(b.size());
    for (auto* lev : {lev_two.get(), lev_one.get()}) {
        lev->set_rhs(b.data());
        lev->smooth(1, true);
        lev->smooth(1, false);
    }
    lev_two->get_solution(z_two.data());
    lev_one->get_solution(z_one.data());
    EXPECT_EQ(z_one, z_two);
}

// An FP64 ILU(0) level smooths with the factors of A themselves (it keeps them, no rounded
// copy): one step from zero is U^{-1} L^{-1} b, bit for bit, on a nonsymmetric problem.
TEST(LevelIlu, Fp64LevelSmoothsWithTheFactorsOfA) {
    ProblemOptions po;
    po.name = "oil";
    po.n = 10;
    const SgDiaMatrix<double> a = make_problem(po).a;
    MultigridOptions mg;
    mg.smoother = SmootherKind::ilu0;
    const GalerkinLevels g = galerkin_levels(a, mg);
    LevelReport rep;
    LevelSetup setup = level_setup(g, 0, mg, parse_precision("K64P64D64"), rep);
    ASSERT_EQ(setup.smoother, SmootherKind::ilu0);
    setup.to_coarse = &g.transfers.front();
    const auto lev = make_level(0, setup, false, rep);
    const std::vector<double> b = random_vector(static_cast<std::size_t>(a.rows()), 5);
    lev->set_rhs(b.data());
    lev->smooth(1, true);
    std::vector<double> z(b.size());
    lev->get_solution(z.data());
    const Ilu0Factors f = ilu0_factor(a);
    std::vector<double> t(b.size(), 0.0), want(b.size(), 0.0);
    gs_sweep(f.l, b.data(), t.data(), true);
    gs_sweep(f.u, t.data(), want.data(), false);
    EXPECT_EQ(z, want);
}

// The first sweep after a new right-hand side takes its own path from û = 0 (Gauss-Seidel reads
// half the stencil, ILU(0) solves straight into û, and neither clears û first): it gives the
// values of the general sweep from a û that holds zeros, here made by adding a zero correction.
// For every smoother, scaled FP16 and FP64, scalar and block grids; û held other values before
// (reading them would be an error of their size). Equal up to the order of the sums: a 3d27
// line's vectors between its two end vectors sum the general sweep's 25 fixed offsets in groups
// of equal dz, the 12 offsets of the sweep from zero in one pass (kernels/sgdia_simd.cpp), so
// where a line holds such vectors (10 cells in FP64 vectors of 4 lanes) the bits may differ.
TEST(LevelFromZero, FirstSweepEqualsTheGeneralSweepFromZeros) {
    struct Case {
        const char* problem;
        const char* precision;
        SmootherKind smoother;
    };
    const Case cases[] = {
        {"laplace27e8", "K64P32D16", SmootherKind::symgs},
        {"laplace27e8", "K64P64D64", SmootherKind::symgs},
        {"laplace27e8", "K64P32D16", SmootherKind::ilu0},
        {"oil", "K64P64D64", SmootherKind::ilu0},
        {"rhd", "K64P32D16", SmootherKind::jacobi},
        {"oil4c", "K64P32D16", SmootherKind::symgs},
        {"oil4c", "K64P32D16", SmootherKind::ilu0},
        {"rhd3t", "K64P64D64", SmootherKind::ilu0},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(std::string(c.problem) + " " + c.precision + " " +
                     std::string(to_string(c.smoother)));
        ProblemOptions po;
        po.name = c.problem;
        po.n = 10;
        const SgDiaMatrix<double> a = make_problem(po).a;
        MultigridOptions mg;
        mg.smoother = c.smoother;
        const GalerkinLevels g = galerkin_levels(a, mg);
        LevelReport rep;
        LevelSetup setup = level_setup(g, 0, mg, parse_precision(c.precision), rep);
        setup.to_coarse = &g.transfers.front();
        const auto lev = make_level(0, setup, false, rep);
        const auto n = static_cast<std::size_t>(a.rows());
        const std::vector<double> b = random_vector(n, 11), other = random_vector(n, 12);
        for (const bool pre : {true, false}) {
            lev->set_rhs(other.data());  // leaves û holding values of its own
            lev->smooth(1, true);
            lev->smooth(1, false);
            std::vector<double> own(n), general(n), zeros(n, 0.0);
            lev->set_rhs(b.data());
            lev->smooth(1, pre);
            lev->get_solution(own.data());
            lev->set_rhs(b.data());
            lev->add_correction(zeros);
            lev->smooth(1, pre);
            lev->get_solution(general.data());
            // A few roundings of the compute precision (FP64 or FP32), relative to the largest.
            const double eps = std::string(c.precision) == "K64P64D64" ? 0x1p-52 : 0x1p-23;
            double largest = 0.0;
            for (const double v : general) largest = std::max(largest, std::abs(v));
            for (std::size_t i = 0; i < n; ++i) {
                ASSERT_NEAR(own[i], general[i], 16 * eps * largest)
                    << (pre ? "forward" : "backward") << ", cell " << i;
            }
        }
    }
}

// Level 0 shares an exact FP16 copy of A (the Krylov operator's) instead of truncating its own
// when it stores FP16 unscaled: it asks its source once, holds the same matrix object and gives
// bit for bit the cycle of a hierarchy that truncated A itself. Other storages, or a scaled
// level 0, do not ask; a source without a copy (null) leaves the level to truncate A.
TEST(HierarchySharing, Level0TakesTheExactFp16CopyOnlyWhenItStoresFp16Unscaled) {
    const SgDiaMatrix<double> a = laplace27(Box{12, 11, 10});
    std::optional<ExactHalfMultiple> copy = exact_multiple(a);
    ASSERT_TRUE(copy && copy->scale == 1.0) << "Laplace's 26 and -1 are exact in FP16";
    EXPECT_FALSE(copy->facts.outside);
    const auto exact = std::make_shared<const SgDiaMatrix<half>>(std::move(copy->m));
    int asked = 0;
    const ExactHalfSource source = [&] {
        ++asked;
        return ExactHalf{exact, 1.0, copy->facts};
    };
    MultigridOptions mg;
    mg.smoother = SmootherKind::symgs;
    const PrecisionPlan fp16 = parse_precision("K64P32D16");
    Hierarchy shared(a, mg, fp16, source);
    EXPECT_EQ(asked, 1);
    EXPECT_EQ(exact.use_count(), 2) << "level 0 holds the copy";
    Hierarchy own(a, mg, fp16);
    ASSERT_EQ(shared.report().front().storage, Precision::fp16);
    EXPECT_FALSE(shared.report().front().scaled);
    EXPECT_EQ(shared.report().front().counts.subnormal, own.report().front().counts.subnormal);
    const std::vector<double> r = random_vector(static_cast<std::size_t>(a.rows()), 9);
    std::vector<double> z1(r.size()), z2(r.size()), z3(r.size());
    shared.apply(r.data(), z1.data());
    own.apply(r.data(), z2.data());
    EXPECT_EQ(z1, z2);
    Hierarchy without(a, mg, fp16, [] { return ExactHalf{}; });
    without.apply(r.data(), z3.data());
    EXPECT_EQ(z3, z2) << "a source without a copy: the level truncates A itself";
    asked = 0;
    {
        Hierarchy fp32(a, mg, parse_precision("K64P32D32"), source);
        EXPECT_EQ(asked, 0) << "an FP32 level 0 truncates A itself";
    }
    // Values exact in FP16 but above the range it stores unscaled (Laplace times 2048: 53248 >
    // FP16 max / 2): level 0 asks once whether A is c times an exact FP16 matrix; the copy
    // (c = 1) is no help to a level that must scale (a copy of A is not a copy of the scaled
    // A), so it scales A itself and does not hold the copy.
    const SgDiaMatrix<double> big = laplace27(Box{12, 11, 10}, 2048.0);
    std::optional<ExactHalfMultiple> big_copy = exact_multiple(big);
    ASSERT_TRUE(big_copy && big_copy->scale == 1.0);
    EXPECT_TRUE(big_copy->facts.outside) << "53248 > FP16 max / 2";
    const auto big_exact = std::make_shared<const SgDiaMatrix<half>>(std::move(big_copy->m));
    const ExactHalfSource big_source = [&] {
        ++asked;
        return ExactHalf{big_exact, 1.0, big_copy->facts};
    };
    Hierarchy scaled(big, mg, fp16, big_source);
    ASSERT_TRUE(scaled.report().front().scaled);
    EXPECT_EQ(asked, 1);
    EXPECT_EQ(big_exact.use_count(), 1) << "the level does not hold the copy";
    EXPECT_EQ(exact.use_count(), 2) << "held by `shared` only";
}

// A = c M with M exact in FP16 (Laplace times 1e8): exact_multiple finds c = 1e8, and level 0
// stores M itself, scaled by the scalar c, sharing the source's object. Its cycle is the cycle
// of M's hierarchy divided by c, up to the rounding of the coarse levels (A's are scaled by
// their diagonals, M's are stored as they are).
TEST(HierarchySharing, Level0StoresAnExactMultipleScaledByItsScalar) {
    const Box box{12, 11, 10};
    const SgDiaMatrix<double> big = laplace27(box, 1e8);
    std::optional<ExactHalfMultiple> multiple = exact_multiple(big);
    ASSERT_TRUE(multiple);
    EXPECT_EQ(multiple->scale, 1e8);
    const auto m = std::make_shared<const SgDiaMatrix<half>>(std::move(multiple->m));
    int asked = 0;
    const ExactHalfSource source = [&] {
        ++asked;
        return ExactHalf{m, 1e8, multiple->facts};
    };
    MultigridOptions mg;
    mg.smoother = SmootherKind::symgs;
    const PrecisionPlan fp16 = parse_precision("K64P32D16");
    Hierarchy shared(big, mg, fp16, source);
    EXPECT_EQ(asked, 1);
    EXPECT_EQ(m.use_count(), 2) << "level 0 holds the copy";
    const LevelReport& rep = shared.report().front();
    EXPECT_TRUE(rep.scaled);
    EXPECT_EQ(rep.storage, Precision::fp16);
    EXPECT_EQ(rep.counts.overflow + rep.counts.underflow + rep.counts.subnormal, 0);
    EXPECT_NE(rep.note.find("exact"), std::string::npos) << rep.note;
    const SgDiaMatrix<double> a = laplace27(box);
    Hierarchy plain(a, mg, fp16);
    const std::vector<double> r = random_vector(static_cast<std::size_t>(a.rows()), 4);
    std::vector<double> z_big(r.size()), z(r.size());
    shared.apply(r.data(), z_big.data());
    plain.apply(r.data(), z.data());
    double worst = 0.0, top = 0.0;
    for (std::size_t i = 0; i < z.size(); ++i) {
        ASSERT_TRUE(std::isfinite(z_big[i]));
        worst = std::max(worst, std::fabs(z_big[i] * 1e8 - z[i]));
        top = std::max(top, std::fabs(z[i]));
    }
    EXPECT_LT(worst, 1e-3 * top);
    // Under --scaling none the level may not scale: it neither asks nor holds the copy.
    mg.scaling = ScalingKind::none;
    asked = 0;
    Hierarchy unscaled(big, mg, fp16, source);
    EXPECT_EQ(asked, 0);
    EXPECT_EQ(m.use_count(), 2);
}

// A block level (r = 2..4) runs every product and sweep on its block layout and lets its SG-DIA
// matrix go once that is built (an FP16 block level frees half of its bytes): a block A shared
// with level 0 is held by the caller alone afterwards, and the cycle is bit for bit that of a
// hierarchy that copied A.
TEST(HierarchySharing, BlockLevelLetsItsSgDiaMatrixGo) {
    ProblemOptions po;
    po.name = "solid3d";
    po.n = 8;
    const auto a = std::make_shared<const SgDiaMatrix<double>>(make_problem(po).a);
    ASSERT_EQ(a->block(), 3);
    MultigridOptions mg;
    mg.smoother = SmootherKind::symgs;
    for (const char* precision : {"K64P64D64", "K64P32D16"}) {
        SCOPED_TRACE(precision);
        Hierarchy shared(*a, mg, parse_precision(precision), {}, a);
        EXPECT_EQ(a.use_count(), 1) << "level 0 holds only its block layout";
        Hierarchy own(*a, mg, parse_precision(precision));
        const std::vector<double> r = random_vector(static_cast<std::size_t>(a->rows()), 11);
        std::vector<double> z1(r.size()), z2(r.size());
        shared.apply(r.data(), z1.data());
        own.apply(r.data(), z2.data());
        EXPECT_EQ(z1, z2);
        EXPECT_TRUE(std::all_of(z1.begin(), z1.end(), [](double v) { return std::isfinite(v); }));
    }
}

// An FP64 level 0 reads the caller's A instead of a copy when the caller shares it (the CLI's
// solve: ~450 MB and ~0.3 s of page faults less for 3d27 at 128^3): it holds the pointer, its
// counts and cycle are bit for bit those of a level that copied A; a level 0 that stores FP32
// or is scaled does not hold it.
TEST(HierarchySharing, Fp64Level0ReadsAItself) {
    const auto a = std::make_shared<const SgDiaMatrix<double>>(laplace27(Box{12, 11, 10}));
    MultigridOptions mg;
    mg.smoother = SmootherKind::symgs;
    const PrecisionPlan fp64 = parse_precision("K64P64D64");
    Hierarchy shared(*a, mg, fp64, {}, a);
    EXPECT_EQ(a.use_count(), 2) << "level 0 holds A";
    Hierarchy own(*a, mg, fp64);
    EXPECT_EQ(a.use_count(), 2);
    EXPECT_EQ(shared.report().front().counts.subnormal, own.report().front().counts.subnormal);
    const std::vector<double> r = random_vector(static_cast<std::size_t>(a->rows()), 10);
    std::vector<double> z1(r.size()), z2(r.size());
    shared.apply(r.data(), z1.data());
    own.apply(r.data(), z2.data());
    EXPECT_EQ(z1, z2);
    {
        Hierarchy fp32(*a, mg, parse_precision("K64P32D32"), {}, a);
        EXPECT_EQ(a.use_count(), 2) << "an FP32 level 0 truncates A";
    }
    mg.scaling = ScalingKind::scale_then_setup;
    Hierarchy scaled(*a, mg, fp64, {}, a);
    EXPECT_EQ(a.use_count(), 2) << "a scaled level 0 is not A";
    const std::shared_ptr<const SgDiaMatrix<double>> other =
        std::make_shared<const SgDiaMatrix<double>>(*a);
    mg.scaling = ScalingKind::none;
    Hierarchy mismatched(*a, mg, fp64, {}, other);
    EXPECT_EQ(other.use_count(), 1) << "a pointer to another matrix is not shared";
}

// Scale-then-setup: level 0 reports the G it was scaled with, and no level scales itself, also
// in a hierarchy's tail that starts at a coarse level (the distributed hierarchy's agglomerated
// levels, galerkin_levels_from).
TEST(HierarchyScaleThenSetup, Level0CarriesTheScalingAndNoOtherLevelScales) {
    ProblemOptions po;
    po.name = "laplace27e8";
    po.n = 16;
    const StructuredProblem prob = make_problem(po);
    MultigridOptions mg;
    mg.scaling = ScalingKind::scale_then_setup;
    mg.max_coarse_rows = 8;
    const PrecisionPlan plan = parse_precision("K64P32D16");
    const LevelScaling sc = compute_scaling(prob.a, kHalfMax);
    ASSERT_TRUE(sc.ok);
    const GalerkinLevels g = galerkin_levels(prob.a, mg);
    ASSERT_GE(g.mats.size(), 3U);
    LevelReport rep0;
    (void)level_setup(g, 0, mg, plan, rep0);
    EXPECT_TRUE(rep0.scaled);
    EXPECT_EQ(rep0.scale_g, sc.g);
    EXPECT_EQ(rep0.scale_g_max, sc.g_max);
    for (std::size_t l = 1; l + 1 < g.mats.size(); ++l) {
        SCOPED_TRACE(l);
        LevelReport rep;
        EXPECT_FALSE(level_setup(g, static_cast<int>(l), mg, plan, rep).scale_in_truncation);
        EXPECT_FALSE(rep.scaled);
        GalerkinLevels tail = galerkin_levels_from(*g.mats[l], static_cast<int>(l), mg);
        LevelReport tail_rep;
        EXPECT_FALSE(level_setup(tail, 0, mg, plan, tail_rep).scale_in_truncation);
        EXPECT_FALSE(tail_rep.scaled);
    }
}

// A zero on the diagonal stops the setup of a Gauss-Seidel level with an error naming the first
// such cell in cell order (either sign of zero), in every storage that keeps the zero.
TEST(LevelDiagonalCheck, NamesTheFirstZeroDiagonalCell) {
    for (const char* precision : {"K64P64D64", "K64P32D32"}) {
        SgDiaMatrix<double> a = laplace27(Box{10, 9, 8}, 1.0);
        const int centre = a.stencil().center();
        const Box& b = a.box();
        const auto cell = [&](int x, int y, int z) {
            return x + std::int64_t{b.nx} * (y + std::int64_t{b.ny} * z);
        };
        a.value(centre, cell(4, 4, 3), 0, 0) = 0.0;
        a.value(centre, cell(1, 2, 1), 0, 0) = -0.0;
        SymgsLevel0 l0(a, precision);
        try {
            (void)l0.make();
            ADD_FAILURE() << precision << ": no error";
        } catch (const NumericalError& e) {
            EXPECT_NE(std::string(e.what()).find("level 0: diagonal -0 at cell (1, 2, 1)"),
                      std::string::npos)
                << precision << ": " << e.what();
        }
    }
}

// A level given its FP64 operator as a window (LevelSetup::fp64_view, a distributed level on a
// z-split) gives the bits of the same level built from a copy of those planes with the entries
// leaving them zeroed: read in place in FP64, truncated from the window in FP32 and FP16. A
// level that reads its operator otherwise (ILU(0)) refuses a view.
TEST(LevelInPlace, ReadsAWindowAsTheZeroedCopyBitForBit) {
    const SgDiaMatrix<double> rows =
        testing::finite_rows(Box{12, 11, 14}, Stencil::named("3d27"), 1, true, 21);
    const int k0 = 2, nz = 10;
    const SgDiaMatrix<double> copy = testing::copied_planes(rows, k0, nz);
    // The window's entries leaving it are not zero: a copy of them would differ.
    ASSERT_NE(rows.value(rows.stencil().find(Offset{0, 0, 1}),
                         (std::int64_t{k0 + nz - 1} * 11 + 5) * 12 + 5, 0, 0),
              0.0);
    for (const char* precision : {"K64P64D64", "K64P32D32", "K64P32D16"}) {
        for (const SmootherKind smoother : {SmootherKind::symgs, SmootherKind::jacobi}) {
            SCOPED_TRACE(std::string(precision) + " " + std::string(to_string(smoother)));
            MultigridOptions mg;
            mg.smoother = smoother;
            const GalerkinLevels g = galerkin_levels(copy, mg);
            ASSERT_GE(g.mats.size(), 2U);
            LevelReport rep;
            LevelSetup from_copy = level_setup(g, 0, mg, parse_precision(precision), rep);
            from_copy.to_coarse = &g.transfers.front();
            ASSERT_TRUE(from_copy.s.empty() && !from_copy.shared_half.m) << "an unscaled level";
            LevelSetup from_view = from_copy;
            from_view.source = nullptr;
            from_view.shared_fp64 = nullptr;
            from_view.fp64_view = planes_of(rows, k0, nz);
            from_view.shared_fp64_normal = true;
            LevelReport rep_copy, rep_view;
            const auto a = make_level(0, from_copy, false, rep_copy);
            const auto b = make_level(0, from_view, false, rep_view);
            EXPECT_EQ(rep_copy.counts.underflow, rep_view.counts.underflow);
            EXPECT_EQ(rep_copy.counts.subnormal, rep_view.counts.subnormal);
            EXPECT_EQ(rep_copy.counts.overflow, rep_view.counts.overflow);
            const std::vector<double> f = random_vector(static_cast<std::size_t>(copy.rows()), 5);
            std::vector<double> ra, rb, za(f.size()), zb(f.size());
            for (Level* lev : {a.get(), b.get()}) {
                lev->set_rhs(f.data());
                lev->smooth(1, true);
            }
            a->residual_unscaled(ra);
            b->residual_unscaled(rb);
            for (Level* lev : {a.get(), b.get()}) lev->smooth(1, false);
            a->get_solution(za.data());
            b->get_solution(zb.data());
            ASSERT_EQ(ra.size(), rb.size());
            for (std::size_t i = 0; i < f.size(); ++i) {
                ASSERT_EQ(std::bit_cast<std::uint64_t>(ra[i]), std::bit_cast<std::uint64_t>(rb[i]))
                    << "residual at " << i;
                ASSERT_EQ(std::bit_cast<std::uint64_t>(za[i]), std::bit_cast<std::uint64_t>(zb[i]))
                    << "solution at " << i;
            }
        }
    }
    // ILU(0) factorises every value of its operator: not from a view, in any storage.
    for (const char* precision : {"K64P64D64", "K64P32D32"}) {
        SCOPED_TRACE(precision);
        MultigridOptions mg;
        mg.smoother = SmootherKind::ilu0;
        const GalerkinLevels g = galerkin_levels(copy, mg);
        LevelReport rep;
        LevelSetup ilu = level_setup(g, 0, mg, parse_precision(precision), rep);
        ilu.to_coarse = &g.transfers.front();
        ilu.fp64_view = planes_of(rows, k0, nz);
        ilu.shared_fp64_normal = true;
        EXPECT_THROW((void)make_level(0, ilu, false, rep), std::logic_error);
    }
}

}  // namespace
}  // namespace mpmg
