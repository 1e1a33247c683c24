#include "io/matrix_info.hpp"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "io/matrix_market.hpp"
#include "mpmg_paths.hpp"

namespace mpmg {
namespace {

/// CSR from zero-based (row, col, value) triplets given in row-major, column-sorted order.
CsrMatrix csr(std::int64_t rows, std::int64_t cols,
              const std::vector<std::tuple<std::int64_t, std::int64_t, double>>& t) {
    CsrMatrix a;
    a.rows = rows;
    a.cols = cols;
    a.row_ptr.assign(static_cast<std::size_t>(rows) + 1, 0);
    for (const auto& [i, j, v] : t) {
        ++a.row_ptr[static_cast<std::size_t>(i) + 1];
        a.col.push_back(j);
        a.val.push_back(v);
    }
    for (std::int64_t i = 0; i < rows; ++i) a.row_ptr[i + 1] += a.row_ptr[i];
    return a;
}

TEST(MatrixInfo, PoissonLikeMatrixIsInside) {
    const MatrixInfo m = analyse_matrix(csr(
        3, 3, {{0, 0, 4}, {0, 1, -1}, {1, 0, -1}, {1, 1, 4}, {1, 2, -1}, {2, 1, -1}, {2, 2, 2}}));
    EXPECT_EQ(m.rows, 3);
    EXPECT_EQ(m.nnz, 7);
    EXPECT_TRUE(m.square);
    EXPECT_TRUE(m.structurally_symmetric);
    EXPECT_TRUE(m.numerically_symmetric);
    EXPECT_EQ(m.min_abs_nonzero, 1.0);
    EXPECT_EQ(m.max_abs, 4.0);
    EXPECT_EQ(m.min_diag, 2.0);
    EXPECT_EQ(m.max_diag, 4.0);
    EXPECT_EQ(m.nonpositive_diag, 0);
    EXPECT_EQ(m.verdict, Fp16Verdict::inside);
    EXPECT_EQ(m.g_max, 65504.0);  // the largest scaled entry is the unit diagonal
    EXPECT_EQ(m.g, 1.0);
}

TEST(MatrixInfo, CountsFp16RangeViolations) {
    const MatrixInfo m =
        analyse_matrix(csr(2, 3, {{0, 0, 1e5}, {0, 1, 1e-5}, {0, 2, 0.0}, {1, 1, -1e-9}}));
    EXPECT_FALSE(m.square);
    EXPECT_FALSE(m.structurally_symmetric);
    EXPECT_EQ(m.explicit_zeros, 1);
    EXPECT_EQ(m.above_fp16_max, 1);
    EXPECT_EQ(m.below_fp16_min_normal, 2);
    EXPECT_EQ(m.below_fp16_min_subnormal, 1);
    EXPECT_EQ(m.min_abs_nonzero, 1e-9);
    EXPECT_EQ(m.min_diag, -1e-9);
    EXPECT_EQ(m.max_diag, 1e5);
    EXPECT_EQ(m.nonpositive_diag, 1);
    EXPECT_EQ(m.verdict, Fp16Verdict::outside);  // non-square: no diagonal scaling
}

TEST(MatrixInfo, WideRangeWithPositiveDiagonalIsScalable) {
    // a_ij / sqrt(a_ii a_jj) = 1e-2 / sqrt(1e6 * 1e-6): the scaled matrix has entries 1 and 1e-2.
    const MatrixInfo m =
        analyse_matrix(csr(2, 2, {{0, 0, 1e6}, {0, 1, 1e-2}, {1, 0, 1e-2}, {1, 1, 1e-6}}));
    EXPECT_EQ(m.verdict, Fp16Verdict::scalable) << m.verdict_reason;
    EXPECT_EQ(m.above_fp16_max, 1);
    EXPECT_EQ(m.below_fp16_min_normal, 1);
    EXPECT_DOUBLE_EQ(m.g_max, 65504.0);
    EXPECT_EQ(m.g, 1.0);
    EXPECT_EQ(m.scaled_below_fp16_min_normal, 0);
    // Tiny off-diagonal entries stay tiny after scaling: they are counted.
    const MatrixInfo t =
        analyse_matrix(csr(2, 2, {{0, 0, 1e6}, {0, 1, 1e-9}, {1, 0, 1e-9}, {1, 1, 1}}));
    EXPECT_EQ(t.verdict, Fp16Verdict::scalable);
    EXPECT_EQ(t.scaled_below_fp16_min_normal, 2);
}

TEST(MatrixInfo, DominantOffDiagonalOrBadDiagonalIsOutside) {
    // Scaled off-diagonal 1e8: G_max = 65504 / 1e8 < 1e-3.
    const MatrixInfo big = analyse_matrix(csr(2, 2, {{0, 0, 1}, {0, 1, 1e8}, {1, 1, 1}}));
    EXPECT_EQ(big.verdict, Fp16Verdict::outside);
    EXPECT_NEAR(big.g_max, 6.5504e-4, 1e-12);
    EXPECT_FALSE(big.structurally_symmetric);
    // A negative diagonal entry.
    const MatrixInfo neg = analyse_matrix(csr(2, 2, {{0, 0, 1e5}, {1, 1, -1}}));
    EXPECT_EQ(neg.verdict, Fp16Verdict::outside);
    EXPECT_EQ(neg.nonpositive_diag, 1);
    EXPECT_EQ(neg.g_max, 0.0);
    EXPECT_FALSE(neg.diagonal_negative);
    // Every diagonal entry negative: -A's verdict (-A is what mpmg solve solves), G_max of -A.
    const MatrixInfo all_neg = analyse_matrix(csr(2, 2, {{0, 0, -1e5}, {0, 1, 2}, {1, 1, -4}}));
    EXPECT_TRUE(all_neg.diagonal_negative);
    EXPECT_EQ(all_neg.verdict, Fp16Verdict::scalable) << all_neg.verdict_reason;
    EXPECT_EQ(all_neg.g_max, 65504.0);  // the scaled diagonal, 1, is the largest entry
    // A missing diagonal entry.
    const MatrixInfo miss = analyse_matrix(csr(2, 2, {{0, 0, 1e5}, {0, 1, 1}, {1, 0, 1}}));
    EXPECT_EQ(miss.verdict, Fp16Verdict::outside);
    EXPECT_EQ(miss.zero_or_missing_diag, 1);
    EXPECT_EQ(miss.min_diag, 0.0);
}

TEST(MatrixInfo, SymmetryUsesRelativeTolerance) {
    auto with_offdiag = [](double upper, double lower) {
        return analyse_matrix(csr(2, 2, {{0, 0, 1e3}, {0, 1, upper}, {1, 0, lower}, {1, 1, 1}}));
    };
    EXPECT_TRUE(with_offdiag(1.0, 1.0 + 1e-10).numerically_symmetric);  // 1e-10 <= 1e-12 * 1e3
    const MatrixInfo skew = with_offdiag(1.0, 1.0 + 1e-8);
    EXPECT_FALSE(skew.numerically_symmetric);
    EXPECT_TRUE(skew.structurally_symmetric);
    // An explicit zero opposite a missing entry: numerically but not structurally symmetric.
    const MatrixInfo z = analyse_matrix(csr(2, 2, {{0, 0, 1}, {0, 1, 0.0}, {1, 1, 1}}));
    EXPECT_TRUE(z.numerically_symmetric);
    EXPECT_FALSE(z.structurally_symmetric);
}

TEST(MatrixInfo, JsonAndReport) {
    const MatrixInfo m = analyse_matrix(csr(2, 2, {{0, 0, 1e5}, {1, 1, 2}}));
    const nlohmann::json j = to_json(m);
    EXPECT_EQ(j.at("rows"), 2);
    EXPECT_EQ(j.at("fp16_verdict"), "scalable");
    EXPECT_EQ(j.at("above_fp16_max"), 1);
    EXPECT_EQ(j.at("max_abs"), 1e5);
    EXPECT_TRUE(j.at("numerically_symmetric").get<bool>());
    const std::string text = format_info(m, "tiny");
    EXPECT_EQ(text.rfind("tiny: 2 x 2", 0), 0u) << text;
    EXPECT_NE(text.find("verdict: scalable"), std::string::npos) << text;
}

TEST(MatrixInfo, RealMatricesFromSharedData) {
    const std::string data = MPMG_SHARED_DATA;
    const MatrixInfo nos4 = analyse_matrix(read_matrix_market(data + "/nos4.mtx.gz"));
    EXPECT_EQ(nos4.verdict, Fp16Verdict::inside) << nos4.verdict_reason;
    EXPECT_TRUE(nos4.numerically_symmetric);
    EXPECT_FALSE(nos4.diagonal_negative);
    EXPECT_NEAR(nos4.max_abs, 0.435777, 1e-6);  // MANIFEST.tsv

    const MatrixInfo k01 = analyse_matrix(read_matrix_market(data + "/bcsstk01.mtx.gz"));
    EXPECT_EQ(k01.verdict, Fp16Verdict::scalable) << k01.verdict_reason;  // SPD, max 2.47e9
    EXPECT_GT(k01.above_fp16_max, 0);
    EXPECT_GE(k01.g_max, 65504.0 * (1 - 1e-12));  // SPD: |a_ij| < sqrt(a_ii a_jj)
    EXPECT_NEAR(k01.max_abs, 2.47239e9, 1e4);

    const MatrixInfo saylr3 = analyse_matrix(read_matrix_market(data + "/saylr3.mtx.gz"));
    // Negative semidefinite: every diagonal entry is negative, so the verdict is -A's (what
    // mpmg solve solves): min |a| 1.1e-5 is outside FP16's normal range, the scaling fits.
    EXPECT_TRUE(saylr3.diagonal_negative);
    EXPECT_EQ(saylr3.nonpositive_diag, 1000);
    EXPECT_EQ(saylr3.verdict, Fp16Verdict::scalable) << saylr3.verdict_reason;
    EXPECT_GE(saylr3.g_max, 65504.0 * (1 - 1e-12));  // -A is symmetric positive semidefinite
    EXPECT_EQ(saylr3.verdict_reason.rfind("for -A", 0), 0u) << saylr3.verdict_reason;

    const MatrixInfo pde = analyse_matrix(read_matrix_market(data + "/pde900.mtx.gz"));
    EXPECT_EQ(pde.verdict, Fp16Verdict::inside);
    EXPECT_TRUE(pde.structurally_symmetric);  // 5-point stencil
    EXPECT_FALSE(pde.numerically_symmetric);  // convection
    EXPECT_NEAR(pde.min_diag, 4.0, 1e-2);     // MANIFEST: diagonal 4..5.89
}

}  // namespace
}  // namespace mpmg
