#include "multigrid/amg_hierarchy.hpp"

#include <gtest/gtest.h>

#include "io/matrix_market.hpp"
#include "multigrid/amg_test_util.hpp"
#include "unstructured/csr_test_util.hpp"

namespace mpmg {
namespace {

struct Config {
    const char* name;
    const char* work;
    const char* matrix;
};
// FGCS'23 §4.2 notation (working precision, matrix precision).
constexpr Config kConfigs[] = {{"(DP)", "DP", ""},
                               {"(DP-SP)", "DP-SP", ""},
                               {"(DP-SP, DP-SP-HP)", "DP-SP", "DP-SP-HP"},
                               {"(DP-SP, HP)", "DP-SP", "HP"}};

MultigridOptions paper_options(SmootherKind s = SmootherKind::jacobi) {
    MultigridOptions mg;
    mg.smoother = s;
    mg.jacobi_weight = 0.9;  // FGCS'23 §4.2
    mg.max_coarse_rows = 64;
    return mg;
}

TEST(AmgHierarchy, ReportDescribesLevels) {
    const CsrMatrix a = csr_test::poisson(32, 2);
    AmgHierarchy h(a, paper_options(), parse_ginkgo_precision("DP-SP", "DP-SP-HP"));
    ASSERT_GE(h.num_levels(), 4);
    const auto& rep = h.report();
    EXPECT_EQ(rep[0].rows, a.rows);
    EXPECT_EQ(rep[0].stencil, "csr");
    EXPECT_EQ(rep[0].box.nx, a.rows);
    EXPECT_EQ(rep[0].storage, Precision::fp64);
    EXPECT_EQ(rep[1].storage, Precision::fp32);
    EXPECT_EQ(rep[1].compute, Precision::fp32);
    EXPECT_EQ(rep[2].storage, Precision::fp16);
    EXPECT_LE(rep.back().rows, 64);
    EXPECT_EQ(rep.back().solve, "direct (LU, fp64)");
    for (const auto& r : rep) EXPECT_EQ(r.counts.overflow, 0);
    EXPECT_GT(h.grid_complexity(), 1.5);
    EXPECT_LT(h.grid_complexity(), 2.2);
    EXPECT_GT(h.operator_complexity(), 1.0);
}

// Level 0 is the caller's matrix itself unless it has explicit zeros to drop (or rows to
// weigh): A with zeros stored among its entries builds the hierarchy of A, cycle for cycle,
// and neither A is changed.
TEST(AmgHierarchy, StoredZerosGiveTheHierarchyOfTheMatrixWithout) {
    const CsrMatrix a = csr_test::poisson(20, 2);
    CsrMatrix z;  // a with a zero stored two columns right of every diagonal that has room
    z.rows = a.rows;
    z.cols = a.cols;
    for (std::int64_t i = 0; i < a.rows; ++i) {
        const std::int64_t zero_at = i + 2 < a.cols ? i + 2 : -1;
        bool placed = zero_at < 0;
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            if (!placed && a.col[p] > zero_at) {
                z.col.push_back(zero_at);
                z.val.push_back(0.0);
                placed = true;
            }
            if (a.col[p] == zero_at) placed = true;  // already an entry there
            z.col.push_back(a.col[p]);
            z.val.push_back(a.val[p]);
        }
        if (!placed) {
            z.col.push_back(zero_at);
            z.val.push_back(0.0);
        }
        z.row_ptr.push_back(z.nnz());
    }
    ASSERT_GT(z.nnz(), a.nnz());
    const CsrMatrix a_before = a, z_before = z;
    const PrecisionPlan plan = parse_ginkgo_precision("DP-SP", "HP");
    AmgHierarchy ha(a, paper_options(SmootherKind::symgs), plan);
    AmgHierarchy hz(z, paper_options(SmootherKind::symgs), plan);
    ASSERT_EQ(ha.num_levels(), hz.num_levels());
    for (int l = 0; l < ha.num_levels(); ++l) {
        EXPECT_EQ(ha.report()[l].nnz, hz.report()[l].nnz) << l;
        EXPECT_EQ(ha.report()[l].rows, hz.report()[l].rows) << l;
    }
    std::vector<double> r(static_cast<std::size_t>(a.rows)), za(r.size()), zz(r.size());
    for (std::size_t i = 0; i < r.size(); ++i) r[i] = 1.0 + static_cast<double>(i % 7);
    ha.apply(r.data(), za.data());
    hz.apply(r.data(), zz.data());
    EXPECT_EQ(za, zz);
    EXPECT_EQ(a.col, a_before.col);
    EXPECT_EQ(a.val, a_before.val);
    EXPECT_EQ(z.col, z_before.col);
    EXPECT_EQ(z.val, z_before.val);
}

TEST(AmgHierarchy, ScaledPoissonIsEquilibratedForHalf) {
    const CsrMatrix a = csr_test::poisson(24, 2, 1e6);  // far outside FP16 range
    AmgHierarchy h(a, paper_options(), parse_ginkgo_precision("DP-SP", "HP"));
    for (const auto& r : h.report()) {
        if (r.solve != "smoother") continue;
        EXPECT_EQ(r.storage, Precision::fp16) << r.note;
        EXPECT_TRUE(r.scaled) << r.note;
        EXPECT_EQ(r.counts.overflow, 0);
    }
    const auto run =
        amg_test::solve(a, parse_ginkgo_precision("DP-SP", "HP"), paper_options(), false);
    EXPECT_TRUE(run.finite);
    EXPECT_EQ(run.result.status, SolveStatus::converged) << run.notes;
}

TEST(AmgHierarchy, InvertedDiagonalOutOfRangeKeepsComputePrecision) {
    // a_ii = 1e-5 is representable in FP16 (subnormal), its inverse 1e5 overflows.
    const CsrMatrix a = csr_test::poisson(20, 2, 2.5e-6);
    MultigridOptions mg = paper_options();
    mg.scaling = ScalingKind::none;
    AmgHierarchy h(a, mg, parse_ginkgo_precision("DP", "HP"));
    EXPECT_EQ(h.report()[0].storage, Precision::fp64);
    EXPECT_NE(h.report()[0].note.find("inverted diagonal"), std::string::npos)
        << h.report()[0].note;
}

struct Case {
    const char* matrix;  // shared data name, or "poisson2d"/"poisson3d"
    SmootherKind smoother;
    int max_dp_iterations;  // (DP) must converge within this
};

CsrMatrix load(const std::string& name) {
    if (name == "poisson2d") return csr_test::poisson(64, 2);
    if (name == "poisson3d") return csr_test::poisson(16, 3);
    return read_matrix_market(csr_test::shared_matrix(name));
}

class AmgCg : public ::testing::TestWithParam<Case> {};

TEST_P(AmgCg, ConvergesInEveryConfigurationWithoutNaN) {
    const Case c = GetParam();
    const CsrMatrix a = load(c.matrix);
    int dp = 0;
    for (const Config& cfg : kConfigs) {
        const auto run = amg_test::solve(a, parse_ginkgo_precision(cfg.work, cfg.matrix),
                                         paper_options(c.smoother), false);
        EXPECT_TRUE(run.finite) << cfg.name;
        EXPECT_EQ(run.result.status, SolveStatus::converged)
            << c.matrix << " " << cfg.name << " " << run.result.message << " " << run.notes;
        if (dp == 0) dp = run.result.iterations;
        EXPECT_LE(run.result.iterations, 2 * dp + 5) << c.matrix << " " << cfg.name;
    }
    EXPECT_LE(dp, c.max_dp_iterations) << c.matrix;
}

INSTANTIATE_TEST_SUITE_P(Amg, AmgCg,
                         ::testing::Values(Case{"poisson2d", SmootherKind::jacobi, 40},
                                           Case{"poisson3d", SmootherKind::jacobi, 30},
                                           Case{"poisson2d", SmootherKind::symgs, 30},
                                           Case{"poisson3d", SmootherKind::l1_jacobi, 40},
                                           Case{"poisson2d", SmootherKind::chebyshev, 40},
                                           Case{"gr_30_30", SmootherKind::jacobi, 30},
                                           Case{"nos4", SmootherKind::jacobi, 60},
                                           Case{"1138_bus", SmootherKind::jacobi, 150},
                                           Case{"pyamg_airfoil", SmootherKind::jacobi, 40}));

TEST(AmgGmres, NonsymmetricWithJacobi) {
    for (const char* name : {"pde2961", "BentPipe2D100"}) {
        const CsrMatrix a = load(name);
        for (const Config& cfg : {kConfigs[0], kConfigs[3]}) {
            const auto run = amg_test::solve(a, parse_ginkgo_precision(cfg.work, cfg.matrix),
                                             paper_options(), true, 1e-8, 300);
            EXPECT_TRUE(run.finite);
            EXPECT_EQ(run.result.status, SolveStatus::converged)
                << name << " " << cfg.name << " " << run.result.message << " " << run.notes;
        }
    }
}

TEST(AmgHierarchy, WAndFCyclesConverge) {
    const CsrMatrix a = csr_test::poisson(48, 2);
    for (CycleKind k : {CycleKind::w, CycleKind::f}) {
        MultigridOptions mg = paper_options();
        mg.cycle = k;
        const auto run = amg_test::solve(a, parse_ginkgo_precision("DP-SP", "HP"), mg, false);
        EXPECT_EQ(run.result.status, SolveStatus::converged);
        EXPECT_LE(run.result.iterations, 30);
    }
}

TEST(AmgHierarchy, BeamCoarseningDoesNotStallOnDirichletRows) {
    // mfem_beam_o3_r1: eliminated Dirichlet rows are diagonal-only with their couplings stored
    // as zeros. Dropped zeros and isolated rows left out of the aggregation, the hierarchy
    // reaches the LU-sized coarsest level instead of stopping where only those rows remain.
    const CsrMatrix a = read_matrix_market(csr_test::shared_matrix("mfem/mfem_beam_o3_r1"));
    const MultigridOptions mg = paper_options();
    const AmgHierarchy h(a, mg, parse_precision("K64P64D64"));
    const auto& rep = h.report();
    EXPECT_LT(rep.front().nnz, a.nnz() / 2) << "explicit zeros are dropped";
    EXPECT_NE(rep.front().note.find("isolated (left out)"), std::string::npos) << rep.front().note;
    EXPECT_LE(rep.back().rows, 64) << h.num_levels() << " levels";
    EXPECT_EQ(rep.back().solve.rfind("direct", 0), 0u);
    const amg_test::Run run = amg_test::solve(a, parse_precision("K64P64D64"), mg, false, 1e-10);
    EXPECT_EQ(run.result.status, SolveStatus::converged) << run.notes;
    EXPECT_LE(run.result.iterations, 30) << run.notes;
}

}  // namespace
}  // namespace mpmg
