// The row weights of a nonsymmetric AMG hierarchy (row_weights.hpp): they undo a row scaling,
// leave a matrix whose columns already cancel alone, stay positive and finite, and report the
// cancellation a scalar FP64 reference computes.
#include "unstructured/row_weights.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "unstructured/csr_test_util.hpp"

namespace mpmg {
namespace {

using csr_test::convection_diffusion;
using csr_test::rough_scales;

/// ||A^T w|| / || |A|^T |w| ||, by scattering the rows (no transpose).
double reference_cancellation(const CsrMatrix& a, const std::vector<double>& w) {
    std::vector<double> y(static_cast<std::size_t>(a.cols), 0.0), ya(y.size(), 0.0);
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            const double t = w[static_cast<std::size_t>(i)] * a.val[k];
            y[static_cast<std::size_t>(a.col[k])] += t;
            ya[static_cast<std::size_t>(a.col[k])] += std::abs(t);
        }
    }
    double num = 0.0, den = 0.0;
    for (std::size_t j = 0; j < y.size(); ++j) {
        num += y[j] * y[j];
        den += ya[j] * ya[j];
    }
    return std::sqrt(num / den);
}

double spread(const std::vector<double>& v) {
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    return *hi / *lo;
}

TEST(RowWeights, UndoARowScaling) {
    const CsrMatrix a0 = convection_diffusion(40, 1.0);
    const std::vector<double> s = rough_scales(a0.rows, 6.0, 12345);
    CsrMatrix a = a0;
    weight_rows(a, s);
    const RowWeights rw = row_weights(a);
    ASSERT_EQ(rw.w.size(), s.size());
    EXPECT_TRUE(rw.from_row_max);
    EXPECT_GT(rw.sweeps, 0);
    EXPECT_LT(rw.cancellation, rw.cancellation_ones / 10.0);
    EXPECT_NEAR(rw.cancellation, reference_cancellation(a, rw.w), 1e-12);
    EXPECT_NEAR(rw.cancellation_ones, reference_cancellation(a, std::vector<double>(s.size(), 1.0)),
                1e-12);
    // W S varies little where S spans 12 decades: the weights undo the scaling.
    std::vector<double> ws(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) ws[i] = rw.w[i] * s[i];
    EXPECT_GT(spread(s), 1e10);
    EXPECT_LT(spread(ws), 1e3);
}

TEST(RowWeights, KeepAMatrixWhoseColumnsCancel) {
    // Periodic 1D upwind convection-diffusion: every column sums to zero, so constants are an
    // exact left null vector and nothing can do better.
    const int n = 1000;
    CsrMatrix a;
    a.rows = a.cols = n;
    for (int i = 0; i < n; ++i) {
        std::vector<std::pair<std::int64_t, double>> row{
            {(i + n - 1) % n, -1.5}, {i, 2.5}, {(i + 1) % n, -1.0}};
        std::sort(row.begin(), row.end());
        for (const auto& [j, v] : row) {
            a.col.push_back(j);
            a.val.push_back(v);
        }
        a.row_ptr.push_back(a.nnz());
    }
    const RowWeights rw = row_weights(a);
    EXPECT_TRUE(rw.w.empty());
    EXPECT_LT(rw.cancellation_ones, 1e-14);
    EXPECT_EQ(rw.cancellation, rw.cancellation_ones);
}

TEST(RowWeights, NeedANonzeroDiagonal) {
    CsrMatrix a = convection_diffusion(10, 1.0);
    weight_rows(a, rough_scales(a.rows, 4.0, 12345));
    for (std::int64_t k = a.row_ptr[7]; k < a.row_ptr[8]; ++k) {
        if (a.col[k] == 7) a.val[k] = 0.0;
    }
    EXPECT_TRUE(row_weights(a).w.empty());
}

TEST(RowWeights, StayPositiveAndFiniteWithMixedSigns) {
    // Off-diagonal entries of both signs make the Jacobi update push some w_i below zero;
    // the clamp keeps every weight within a factor of its previous value.
    CsrMatrix a = convection_diffusion(30, 2.0);
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            if (a.col[k] != i && (i + a.col[k]) % 7 == 0) a.val[k] = -0.5 * a.val[k];
        }
    }
    weight_rows(a, rough_scales(a.rows, 5.0, 12345));
    const RowWeights rw = row_weights(a);
    ASSERT_FALSE(rw.w.empty()) << rw.cancellation_ones << " " << rw.cancellation;
    for (const double w : rw.w) {
        EXPECT_TRUE(std::isfinite(w));
        EXPECT_GT(w, 0.0);
    }
    EXPECT_NEAR(rw.cancellation, reference_cancellation(a, rw.w), 1e-12);
}

}  // namespace
}  // namespace mpmg
