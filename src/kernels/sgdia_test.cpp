#include "kernels/sgdia.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "kernels/reference/sgdia_reference.hpp"
#include "kernels/sgdia_test_util.hpp"

namespace mpmg {
namespace {

using testing::expect_close;
using testing::max_abs;
using testing::random_matrix;
using testing::random_vector;
using testing::to_double_vector;

using Case = testing::GridCase;
using testing::describe;

// Odd sizes, a degenerate direction, blocks r = 2, 3, 4 (unrolled loops) and 5 (the general
// loop), and lines longer than one accumulator chunk (512 values: 600 scalar cells, 200 cells of
// r = 3).
const Case kCases[] = {
    {"3d7", 1, {7, 5, 6}},  {"3d15", 1, {7, 5, 6}},   {"3d19", 1, {13, 1, 4}},
    {"3d27", 1, {7, 5, 6}}, {"3d27", 1, {13, 1, 4}},  {"3d7", 3, {7, 5, 6}},
    {"3d27", 3, {5, 4, 3}}, {"3d19", 1, {600, 2, 2}}, {"3d27", 3, {200, 1, 2}},
    {"3d7", 2, {7, 5, 6}},  {"3d27", 4, {5, 4, 3}},   {"3d7", 5, {4, 3, 3}},
    {"3d27", 3, {6, 7, 5}},  // 35 lines: groups of 16 whole lines and a remainder
};

template <class P>
class SgDiaKernels : public ::testing::Test {};
TYPED_TEST_SUITE(SgDiaKernels, testing::SupportedPairs);

TYPED_TEST(SgDiaKernels, SpmvAndResidualMatchReference) {
    using S = typename TypeParam::Storage;
    using C = typename TypeParam::Compute;
    unsigned seed = 11;
    for (const Case& cs : kCases) {
        SCOPED_TRACE(describe(cs));
        const auto a = random_matrix<S>(cs.box, Stencil::named(cs.stencil), cs.block, ++seed);
        const kernels::SgDiaGeom g = kernels::geometry(a);
        const std::int64_t n = a.rows(), half_lines = g.lines() / 2;
        const auto x = random_vector<C>(n, ++seed);
        const auto b = random_vector<C>(n, ++seed);
        const auto xd = to_double_vector(x), bd = to_double_vector(b);

        std::vector<C> y(static_cast<std::size_t>(n)), r(y.size());
        kernels::spmv(g, a.values().data(), x.data(), y.data(), 0, half_lines);
        kernels::spmv(g, a.values().data(), x.data(), y.data(), half_lines, g.lines());
        kernels::residual(g, a.values().data(), b.data(), x.data(), r.data(), 0, g.lines());

        // Blocks are taken a group of whole lines at a time: the same bits as line by line.
        std::vector<C> y1(y.size());
        for (std::int64_t l = 0; l < g.lines(); ++l) {
            kernels::spmv(g, a.values().data(), x.data(), y1.data(), l, l + 1);
        }
        ASSERT_EQ(y1, y);

        std::vector<double> y_ref(y.size()), r_ref(y.size());
        reference::spmv(a, xd.data(), y_ref.data());
        reference::residual(a, bd.data(), xd.data(), r_ref.data());
        const auto tol_y = testing::row_tolerance<C>(a, xd);
        const auto tol_r = testing::row_tolerance<C>(a, xd, &bd);
        expect_close(y, y_ref, &tol_y);
        expect_close(r, r_ref, &tol_r);
    }
}

// -U x (scalar: the SIMD kernels; blocks: the plain loops), and that it is the residual after
// one forward sweep from zero.
TYPED_TEST(SgDiaKernels, UpperResidualMatchesReference) {
    using S = typename TypeParam::Storage;
    using C = typename TypeParam::Compute;
    unsigned seed = 31;
    for (const Case& cs : kCases) {
        SCOPED_TRACE(describe(cs));
        const auto a = random_matrix<S>(cs.box, Stencil::named(cs.stencil), cs.block, ++seed);
        const auto x = random_vector<C>(a.rows(), ++seed);
        const auto b = random_vector<C>(a.rows(), ++seed);
        testing::expect_upper_residual(a, x, b);
    }
}

TYPED_TEST(SgDiaKernels, JacobiMatchesReference) {
    using S = typename TypeParam::Storage;
    using C = typename TypeParam::Compute;
    unsigned seed = 101;
    for (const Case& cs : kCases) {
        SCOPED_TRACE(describe(cs));
        const auto a = random_matrix<S>(cs.box, Stencil::named(cs.stencil), cs.block, ++seed);
        const kernels::SgDiaGeom g = kernels::geometry(a);
        const std::int64_t n = a.rows();
        const auto x = random_vector<C>(n, ++seed);
        const auto b = random_vector<C>(n, ++seed);
        const auto xd = to_double_vector(x), bd = to_double_vector(b);

        std::vector<C> x_new(static_cast<std::size_t>(n));
        kernels::jacobi(g, a.values().data(), b.data(), x.data(), x_new.data(), C(0.8), 0,
                        g.lines());
        std::vector<double> ref(x_new.size());
        reference::jacobi(a, bd.data(), xd.data(), ref.data(), static_cast<double>(C(0.8)));
        const double tol = testing::smoother_tolerance<C>(a, bd, max_abs(xd));
        expect_close(x_new, ref, nullptr, tol);
    }
}

TYPED_TEST(SgDiaKernels, GaussSeidelLinesMatchReferenceSweep) {
    using S = typename TypeParam::Storage;
    using C = typename TypeParam::Compute;
    unsigned seed = 201;
    for (const Case& cs : kCases) {
        for (const bool forward : {true, false}) {
            SCOPED_TRACE(describe(cs) + (forward ? " forward" : " backward"));
            const auto a = random_matrix<S>(cs.box, Stencil::named(cs.stencil), cs.block, ++seed);
            const kernels::SgDiaGeom g = kernels::geometry(a);
            const std::int64_t n = a.rows(), lines = g.lines();
            auto x = random_vector<C>(n, ++seed);
            const auto b = random_vector<C>(n, ++seed);
            auto ref = to_double_vector(x);
            const double max_x0 = max_abs(ref);
            const auto bd = to_double_vector(b);

            for (std::int64_t l = 0; l < lines; ++l) {
                kernels::gs_line(g, a.values().data(), b.data(), x.data(),
                                 forward ? l : lines - 1 - l, forward);
            }
            reference::gs_sweep(a, bd.data(), ref.data(), forward);
            const double tol =
                testing::smoother_tolerance<C>(a, bd, std::max(max_x0, max_abs(ref)));
            expect_close(x, ref, nullptr, tol);
        }
    }
}

// 1D Laplacian tridiag(-1, 2, -1) on 3x1x1: every number below is exact in every format.
template <class S>
SgDiaMatrix<S> laplacian_3() {
    SgDiaMatrix<S> a(Box{3, 1, 1}, Stencil({{-1, 0, 0}, {0, 0, 0}, {1, 0, 0}}));
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double left[] = {nan, -1, -1}, centre[] = {2, 2, 2}, right[] = {-1, -1, nan};
    for (int c = 0; c < 3; ++c) {
        a.value(0, c, 0, 0) = from_double<S>(left[c]);
        a.value(1, c, 0, 0) = from_double<S>(centre[c]);
        a.value(2, c, 0, 0) = from_double<S>(right[c]);
    }
    return a;
}

TYPED_TEST(SgDiaKernels, HandCheckedLaplacian) {
    using S = typename TypeParam::Storage;
    using C = typename TypeParam::Compute;
    const auto a = laplacian_3<S>();
    const kernels::SgDiaGeom g = kernels::geometry(a);
    const S* v = a.values().data();

    const std::vector<C> x = {1, 2, 3}, b = {1, 0, 1};
    std::vector<C> y(3);
    kernels::spmv(g, v, x.data(), y.data(), 0, 1);
    EXPECT_EQ(y, (std::vector<C>{0, 0, 4}));
    kernels::residual(g, v, b.data(), x.data(), y.data(), 0, 1);
    EXPECT_EQ(y, (std::vector<C>{1, 0, -3}));

    std::vector<C> z = {0, 0, 0};
    kernels::gs_line(g, v, b.data(), z.data(), 0, true);  // (1/2, 1/4, 5/8)
    EXPECT_EQ(z, (std::vector<C>{0.5, 0.25, 0.625}));
    z = {0, 0, 0};
    kernels::gs_line(g, v, b.data(), z.data(), 0, false);
    EXPECT_EQ(z, (std::vector<C>{0.625, 0.25, 0.5}));

    const std::vector<C> zero = {0, 0, 0};
    kernels::jacobi(g, v, b.data(), zero.data(), z.data(), C(1), 0, 1);
    EXPECT_EQ(z, (std::vector<C>{0.5, 0, 0.5}));
    kernels::jacobi(g, v, b.data(), x.data(), z.data(), C(0.5), 0, 1);  // x + (r / 2) / 2
    EXPECT_EQ(z, (std::vector<C>{1.25, 2, 2.25}));
}

}  // namespace
}  // namespace mpmg
