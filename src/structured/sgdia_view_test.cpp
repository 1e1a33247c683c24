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

namespace mpmg {
namespace {

using testing::random_vector;

/// A random matrix on `box` with every entry finite (those whose neighbour lies outside the box
/// too), and symmetric bit for bit across inside pairs when `symmetric`: a process's rows with
/// a margin, whose own rows' entries to the margin are couplings, not zeros.
SgDiaMatrix<double> finite_rows(Box box, const Stencil& st, int r, bool symmetric, unsigned seed) {
    SgDiaMatrix<double> a = testing::random_matrix<double>(box, st, r, seed);
    const std::vector<double> fill = random_vector<double>(a.diag_values(), seed + 1);
    for (int d = 0; d < st.size(); ++d) {
        for (std::int64_t e = 0; e < a.diag_values(); ++e) {
            double& v = a.diagonal(d)[e];
            if (std::isnan(v)) v = fill[static_cast<std::size_t>(e)];
        }
    }
    if (!symmetric) return a;
    const int nd = st.size();
    for (int d = st.center() + 1; d < nd; ++d) {
        const Offset& o = st[d];
        const std::int64_t shift =
            o.dx + std::int64_t{box.nx} * (o.dy + std::int64_t{box.ny} * o.dz);
        a.for_each_inside(d, [&](std::int64_t c) {
            for (int p = 0; p < r; ++p) {
                for (int q = 0; q < r; ++q)
                    a.value(nd - 1 - d, c + shift, q, p) = a.value(d, c, p, q);
            }
        });
    }
    for (std::int64_t c = 0; c < box.cells(); ++c) {  // centre blocks symmetric
        for (int p = 0; p < r; ++p) {
            for (int q = 0; q < p; ++q)
                a.value(st.center(), c, p, q) = a.value(st.center(), c, q, p);
        }
    }
    return a;
}

/// The planes k0 .. k0 + nz - 1 of `rows` copied, entries to cells outside them zero.
SgDiaMatrix<double> copied_planes(const SgDiaMatrix<double>& rows, int k0, int nz) {
    const Box b{rows.box().nx, rows.box().ny, nz};
    SgDiaMatrix<double> m(b, rows.stencil(), rows.block());
    const std::int64_t first = std::int64_t{k0} * b.nx * b.ny * rows.block() * rows.block();
    for (int d = 0; d < rows.stencil().size(); ++d) {
        std::memcpy(m.diagonal(d), rows.diagonal(d) + first,
                    static_cast<std::size_t>(m.diag_values()) * sizeof(double));
    }
    zero_outside_box(m);
    return m;
}

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
