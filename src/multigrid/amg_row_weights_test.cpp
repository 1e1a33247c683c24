// Row weights in the AMG hierarchy (unstructured/row_weights.hpp): a row-scaled nonsymmetric
// matrix converges about as fast as the unscaled one with them and not without them; symmetric
// matrices and --row-weights none keep A's rows; the FP32 cycle weights r as the FP64 one does.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "multigrid/amg_hierarchy.hpp"
#include "multigrid/amg_test_util.hpp"
#include "unstructured/csr_test_util.hpp"
#include "unstructured/row_weights.hpp"

namespace mpmg {
namespace {

using csr_test::convection_diffusion;
using csr_test::rough_scales;

MultigridOptions options(RowWeightsKind k) {
    MultigridOptions mg;
    mg.smoother = SmootherKind::symgs;
    mg.row_weights = k;
    return mg;
}

TEST(AmgRowWeights, RowScaledConvectionDiffusionConverges) {
    const CsrMatrix a0 = convection_diffusion(96, 1.0);
    CsrMatrix a = a0;
    weight_rows(a, rough_scales(a.rows, 4.0, 2024));
    const PrecisionPlan plan = parse_precision("K64P64D64");
    const auto base =
        amg_test::solve(a0, plan, options(RowWeightsKind::automatic), true, 1e-8, 300);
    const auto with = amg_test::solve(a, plan, options(RowWeightsKind::automatic), true, 1e-8, 300);
    const auto without = amg_test::solve(a, plan, options(RowWeightsKind::none), true, 1e-8, 300);
    ASSERT_EQ(base.result.status, SolveStatus::converged) << base.notes;
    ASSERT_EQ(with.result.status, SolveStatus::converged) << with.notes;
    EXPECT_LE(with.result.iterations, base.result.iterations * 3 / 2 + 2)
        << base.result.iterations << " unscaled; " << with.notes;
    EXPECT_NE(with.notes.find("rows weighted"), std::string::npos) << with.notes;
    // Without weights the coarse levels sum equations 8 decades apart.
    EXPECT_GT(without.result.iterations, 3 * with.result.iterations) << without.notes;
    EXPECT_EQ(without.notes.find("rows weighted"), std::string::npos) << without.notes;
}

TEST(AmgRowWeights, SymmetricMatricesAndNoneKeepTheRows) {
    const PrecisionPlan plan = parse_precision("K64P64D64");
    const AmgHierarchy poisson(convection_diffusion(40, 0.0), options(RowWeightsKind::automatic),
                               plan);
    EXPECT_TRUE(poisson.row_weights().empty());
    CsrMatrix a = convection_diffusion(40, 1.0);
    weight_rows(a, rough_scales(a.rows, 4.0, 2024));
    EXPECT_FALSE(AmgHierarchy(a, options(RowWeightsKind::automatic), plan).row_weights().empty());
    EXPECT_TRUE(AmgHierarchy(a, options(RowWeightsKind::none), plan).row_weights().empty());
    // One level (solved directly): nothing to coarsen, nothing to weight.
    MultigridOptions one = options(RowWeightsKind::automatic);
    one.max_coarse_rows = static_cast<int>(a.rows);
    EXPECT_TRUE(AmgHierarchy(a, one, plan).row_weights().empty());
}

TEST(AmgRowWeights, Fp32CycleWeightsLikeFp64) {
    CsrMatrix a = convection_diffusion(48, 1.0);
    weight_rows(a, rough_scales(a.rows, 3.0, 2024));
    AmgHierarchy h(a, options(RowWeightsKind::automatic), parse_precision("K64P64D64"));
    ASSERT_FALSE(h.row_weights().empty());
    const std::size_t n = static_cast<std::size_t>(a.rows);
    std::vector<double> r(n), z(n);
    std::vector<float> rf(n), zf(n);
    for (std::size_t i = 0; i < n; ++i) {
        r[i] = std::sin(0.37 * static_cast<double>(i));
        rf[i] = static_cast<float>(r[i]);
    }
    h.apply(r.data(), z.data());
    h.apply(rf.data(), zf.data());
    double num = 0.0, den = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        num += (z[i] - zf[i]) * (z[i] - zf[i]);
        den += z[i] * z[i];
    }
    EXPECT_LT(std::sqrt(num / den), 1e-5);
    EXPECT_GT(den, 0.0);
}

}  // namespace
}  // namespace mpmg
