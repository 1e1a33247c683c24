// A window of planes (planes_of) read in place against a copy of the same rows with the entries
// to cells outside its box zeroed (what a distributed process's own block is, own_block): the
// SG-DIA operations must give the same bits on both, although the window's outward entries are
// the larger matrix's finite values.
#include "structured/sgdia_view.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/sgdia_test_util.hpp"
#include "structured/sgdia_ops.hpp"
#include "structured/sgdia_view_test_util.hpp"

namespace mpmg {
namespace {

using testing::copied_planes;
using testing::finite_rows;
using testing::random_vector;

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::bit_cast<std::uint64_t>(a[i]) != std::bit_cast<std::uint64_t>(b[i])) return false;
    }
    return true;
}

struct WindowCase {
    const char* stencil;
    int block;
    int threads;
};

class PlanesWindow : public ::testing::TestWithParam<WindowCase> {};

TEST_P(PlanesWindow, EveryOperationGivesTheBitsOfTheZeroedCopy) {
    const WindowCase wc = GetParam();
    const int saved = omp_get_max_threads();
    omp_set_num_threads(wc.threads);
    const Stencil st = Stencil::named(wc.stencil);
    const int r = wc.block, k0 = 2, nz = 16;
    // 40 x 12 x 16 = 7680 cells: above the serial threshold, so 2 threads run in parallel.
    const SgDiaMatrix<double> rows = finite_rows(Box{40, 12, nz + 4}, st, r, true, 7);
    const SgDiaView<double> w = planes_of(rows, k0, nz);
    const SgDiaMatrix<double> copy = copied_planes(rows, k0, nz);
    ASSERT_EQ(w.rows(), copy.rows());
    const std::int64_t n = copy.rows();
    const std::vector<double> x = random_vector<double>(n, 11), b = random_vector<double>(n, 12);
    std::vector<double> yw(n), yc(n);

    spmv(w, x.data(), yw.data());
    spmv(copy, x.data(), yc.data());
    EXPECT_TRUE(same_bits(yw, yc)) << "spmv";

    EXPECT_TRUE(exactly_symmetric(w));
    EXPECT_TRUE(exactly_symmetric(copy));
    spmv_mirrored(w, x.data(), yw.data());
    spmv(copy, x.data(), yc.data());
    EXPECT_TRUE(same_bits(yw, yc)) << "spmv_mirrored";

    const double dw = spmv_dot(w, x.data(), yw.data(), true, 1.0);
    const double dc = spmv_dot(copy, x.data(), yc.data(), true, 1.0);
    EXPECT_TRUE(same_bits(yw, yc)) << "spmv_dot";
    EXPECT_EQ(std::bit_cast<std::uint64_t>(dw), std::bit_cast<std::uint64_t>(dc));

    residual(w, b.data(), x.data(), yw.data());
    residual(copy, b.data(), x.data(), yc.data());
    EXPECT_TRUE(same_bits(yw, yc)) << "residual";

    upper_residual(w, x.data(), yw.data());
    upper_residual(copy, x.data(), yc.data());
    EXPECT_TRUE(same_bits(yw, yc)) << "upper_residual";

    jacobi(w, b.data(), x.data(), yw.data(), 0.7);
    jacobi(copy, b.data(), x.data(), yc.data(), 0.7);
    EXPECT_TRUE(same_bits(yw, yc)) << "jacobi";

    for (const GsOrder order : {GsOrder::wavefront, GsOrder::blocks}) {
        for (const bool forward : {true, false}) {
            for (const bool zero : {false, true}) {
                std::vector<double> uw = zero ? std::vector<double>(n, 0.0) : x, uc = uw;
                gs_sweep(w, b.data(), uw.data(), forward, zero, {}, order);
                gs_sweep(copy, b.data(), uc.data(), forward, zero, {}, order);
                EXPECT_TRUE(same_bits(uw, uc)) << "gs_sweep forward " << forward << " zero " << zero
                                               << " blocks " << (order == GsOrder::blocks);
            }
        }
    }
    // Part of the planes only (a distributed level's z-split sweep).
    std::vector<double> uw = x, uc = x;
    gs_sweep(w, b.data(), uw.data(), true, false, PlaneRange{1, nz - 1});
    gs_sweep(copy, b.data(), uc.data(), true, false, PlaneRange{1, nz - 1});
    EXPECT_TRUE(same_bits(uw, uc)) << "gs_sweep on planes";
    omp_set_num_threads(saved);
}

INSTANTIATE_TEST_SUITE_P(Stencils, PlanesWindow,
                         ::testing::Values(WindowCase{"3d27", 1, 1}, WindowCase{"3d27", 1, 2},
                                           WindowCase{"3d7", 1, 2}, WindowCase{"3d19", 2, 1},
                                           WindowCase{"3d7", 3, 2}),
                         [](const ::testing::TestParamInfo<WindowCase>& i) {
                             return std::string(i.param.stencil) + "_r" +
                                    std::to_string(i.param.block) + "_threads" +
                                    std::to_string(i.param.threads);
                         });

TEST(PlanesOf, SymmetryIsJudgedOnTheWindowsOwnPairsOnly) {
    const Stencil st = Stencil::named("3d27");
    SgDiaMatrix<double> rows = finite_rows(Box{9, 8, 12}, st, 1, true, 3);
    const int k0 = 3, nz = 5;
    // An entry of the window's top plane to the plane above it (outside the window): the
    // larger matrix is no longer symmetric, the window still is.
    const int up = st.find(Offset{0, 0, 1});
    const std::int64_t top = (std::int64_t{k0 + nz - 1} * 8 + 4) * 9 + 4;
    rows.value(up, top, 0, 0) += 1.0;
    EXPECT_FALSE(exactly_symmetric(rows));
    EXPECT_TRUE(exactly_symmetric(planes_of(rows, k0, nz)));
    // An entry between two of the window's cells breaks it.
    rows.value(up, top - std::int64_t{9} * 8, 0, 0) += 1.0;
    EXPECT_FALSE(exactly_symmetric(planes_of(rows, k0, nz)));
}

TEST(PlanesOf, RejectsPlanesOutsideTheMatrix) {
    const SgDiaMatrix<double> rows(Box{4, 4, 6}, Stencil::named("3d7"));
    EXPECT_THROW((void)planes_of(rows, 3, 4), std::logic_error);
    EXPECT_THROW((void)planes_of(rows, -1, 2), std::logic_error);
    EXPECT_THROW((void)planes_of(rows, 0, 0), std::logic_error);
    const SgDiaView<double> v = planes_of(rows, 2, 4);
    EXPECT_EQ(v.box.nz, 4);
    EXPECT_EQ(v.values, rows.diagonal(0) + 2 * 16);
}

}  // namespace
}  // namespace mpmg
