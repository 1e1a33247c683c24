#include "structured/coarsen.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/float16.hpp"
#include "structured/coarsen_test_util.hpp"

namespace mpmg {
namespace {

using test::constant;
using test::random27;
using test::relative_difference;

/// P^T A P from CSR, computed independently of the structured Galerkin step.
CsrMatrix triple_product(const SgDiaMatrix<double>& a, const Transfer& t) {
    const CsrMatrix p = t.prolongation_csr();
    return multiply(p.transpose(), multiply(to_csr(a), p));
}

std::vector<int> step_dirs(const Transfer& t) {
    std::vector<int> dirs;
    for (const DirectionalTransfer& s : t.steps()) dirs.push_back(s.dir);
    return dirs;
}

/// The structured Galerkin operator of `a` equals the CSR triple product to 1e-12 relative.
void expect_galerkin(const SgDiaMatrix<double>& a, const CoarseningOptions& opt,
                     const std::string& what) {
    const std::optional<CoarseLevel> c = coarsen(a, opt);
    ASSERT_TRUE(c.has_value()) << what;
    EXPECT_EQ(c->a.box(), c->transfer.coarse()) << what;
    EXPECT_EQ(a.box(), c->transfer.fine()) << what;
    EXPECT_LT(relative_difference(to_csr(c->a), triple_product(a, c->transfer)), 1e-12) << what;
}

/// Scales the couplings of `a` along direction `dir` by `factor`, so that direction dominates.
SgDiaMatrix<double> emphasise(SgDiaMatrix<double> a, int dir, double factor) {
    for (int d = 0; d < a.stencil().size(); ++d) {
        const Offset& o = a.stencil()[d];
        const int along = dir == 0 ? o.dx : dir == 1 ? o.dy : o.dz;
        if (along == 0) continue;
        double* v = a.diagonal(d);
        for (std::int64_t q = 0; q < a.diag_values(); ++q) v[q] *= factor;
    }
    return a;
}

TEST(Coarsen, GalerkinMatchesCsrTripleProduct) {
    for (const bool op_dep : {false, true}) {
        CoarseningOptions full;
        full.semi_threshold = 0.0;
        full.operator_dependent = op_dep;
        const std::string tag = op_dep ? " operator-dependent" : " linear";
        expect_galerkin(random27({7, 6, 5}, 1, false, 1), full, "7x6x5 r=1 full" + tag);
        expect_galerkin(random27({3, 3, 4}, 2, false, 2), full, "3x3x4 r=2 full" + tag);
        // Lines long enough for cells that every term covers (the SIMD block sums; r x r
        // values per cell of 4, 9 (vectors overlapping) and 16).
        expect_galerkin(random27({12, 5, 4}, 2, false, 3), full, "12x5x4 r=2 full" + tag);
        expect_galerkin(random27({11, 6, 5}, 3, false, 4), full, "11x6x5 r=3 full" + tag);
        expect_galerkin(random27({10, 4, 5}, 4, false, 5), full, "10x4x5 r=4 full" + tag);
        CoarseningOptions single = full;
        single.semi_threshold = 0.9;
        for (int dir = 0; dir < 3; ++dir) {
            for (const int r : {1, 2, 3}) {
                const Box box = r == 1 ? Box{7, 6, 5} : r == 2 ? Box{3, 3, 4} : Box{10, 7, 6};
                const SgDiaMatrix<double> a =
                    emphasise(random27(box, r, false, 10u + static_cast<unsigned>(dir)), dir, 20);
                const std::optional<CoarseLevel> c = coarsen(a, single);
                ASSERT_TRUE(c.has_value());
                EXPECT_EQ(step_dirs(c->transfer), std::vector<int>{dir});
                expect_galerkin(a, single,
                                "dir " + std::to_string(dir) + " r=" + std::to_string(r) + tag);
            }
        }
    }
}

TEST(Coarsen, OperatorDependentWeightsForLaplaceAreLinear) {
    // Interior rows of the 27-point Laplacian collapse to (-9, 18, -9): weights 1/2 exactly.
    const SgDiaMatrix<double> a =
        constant({8, 8, 8}, Stencil::full27(), 26.0, [](const Offset&) { return -1.0; });
    CoarseningOptions opt;
    opt.operator_dependent = true;
    const std::optional<CoarseLevel> c = coarsen(a, opt);
    ASSERT_TRUE(c.has_value());
    const DirectionalTransfer& s = c->transfer.steps()[0];
    const std::int64_t interior = 2 + 8 * (3 + 8 * 3);  // (2,3,3), even along x
    EXPECT_DOUBLE_EQ(s.left(interior), 0.5);
    EXPECT_DOUBLE_EQ(s.right(interior), 0.5);
    EXPECT_LT(s.right(0), 0.5);  // corner: out-of-box neighbours make the centre plane heavier
}

TEST(Coarsen, LaplaceChoosesAllDirections) {
    const SgDiaMatrix<double> a =
        constant({8, 8, 8}, Stencil::full27(), 26.0, [](const Offset&) { return -1.0; });
    const std::optional<CoarseLevel> c = coarsen(a, CoarseningOptions{});
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(step_dirs(c->transfer), (std::vector<int>{0, 1, 2}));
    EXPECT_EQ(c->a.box(), (Box{4, 4, 4}));
    EXPECT_EQ(c->a.stencil().size(), 27);
    EXPECT_LT(relative_difference(to_csr(c->a), triple_product(a, c->transfer)), 1e-12);
}

TEST(Coarsen, AnisotropicChoosesOnlyStrongDirection) {
    const SgDiaMatrix<double> a =
        constant({8, 8, 8}, Stencil::named("3d7"), 2004.0,
                 [](const Offset& o) { return o.dz != 0 ? -1000.0 : -1.0; });
    const std::optional<CoarseLevel> c = coarsen(a, CoarseningOptions{});
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(step_dirs(c->transfer), std::vector<int>{2});
    EXPECT_EQ(c->a.box(), (Box{8, 8, 4}));
    // Coarsening along z only keeps the stencil within the x-y 5-point pattern times {-1,0,1}.
    EXPECT_EQ(c->a.stencil().size(), 15);
    EXPECT_LT(relative_difference(to_csr(c->a), triple_product(a, c->transfer)), 1e-12);
}

TEST(Coarsen, StrongestDirectionTooThinFallsBackToOthers) {
    // z is strongest but one cell thick: x and y (equal) are coarsened instead.
    const SgDiaMatrix<double> a =
        constant({8, 8, 1}, Stencil::named("3d7"), 2004.0,
                 [](const Offset& o) { return o.dz != 0 ? -1000.0 : -1.0; });
    const std::optional<CoarseLevel> c = coarsen(a, CoarseningOptions{});
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(step_dirs(c->transfer), (std::vector<int>{0, 1}));
    EXPECT_EQ(c->a.box(), (Box{4, 4, 1}));
}

TEST(Coarsen, OddSizeAndThinGrid) {
    CoarseningOptions full;
    full.semi_threshold = 0.0;
    const SgDiaMatrix<double> odd = random27({9, 9, 9}, 1, true, 7);
    const std::optional<CoarseLevel> c = coarsen(odd, full);
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c->a.box(), (Box{4, 4, 4}));
    expect_galerkin(odd, full, "9^3");

    const SgDiaMatrix<double> thin = random27({8, 8, 1}, 1, true, 8);
    const std::optional<CoarseLevel> t = coarsen(thin, full);
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(step_dirs(t->transfer), (std::vector<int>{0, 1}));
    EXPECT_EQ(t->a.box(), (Box{4, 4, 1}));
    expect_galerkin(thin, full, "8x8x1");

    EXPECT_FALSE(coarsen(random27({1, 1, 1}, 1, true, 9), full).has_value());
    CoarseningOptions big = full;
    big.min_extent = 10;
    EXPECT_FALSE(coarsen(odd, big).has_value());
}

TEST(Coarsen, SymmetricStaysSymmetric) {
    CoarseningOptions full;
    full.semi_threshold = 0.0;
    for (const int r : {1, 2}) {
        const SgDiaMatrix<double> a = random27({7, 6, 5}, r, true, 20u + static_cast<unsigned>(r));
        const CsrMatrix fine = to_csr(a);
        ASSERT_LT(relative_difference(fine, fine.transpose()), 1e-15);
        const std::optional<CoarseLevel> c = coarsen(a, full);
        ASSERT_TRUE(c.has_value());
        const CsrMatrix coarse = to_csr(c->a);
        EXPECT_LT(relative_difference(coarse, coarse.transpose()), 1e-13) << "r=" << r;
    }
}

TEST(Coarsen, ToCsrOfTinySevenPoint) {
    // 3x1x1 with 3d7: only the x neighbours are inside the box.
    SgDiaMatrix<double> a = constant({3, 1, 1}, Stencil::named("3d7"), 2.0,
                                     [](const Offset& o) { return o.dx != 0 ? -1.0 : -5.0; });
    const CsrMatrix m = to_csr(a);
    EXPECT_EQ(m.rows, 3);
    EXPECT_EQ(m.cols, 3);
    EXPECT_EQ(m.row_ptr, (std::vector<std::int64_t>{0, 2, 5, 7}));
    EXPECT_EQ(m.col, (std::vector<std::int64_t>{0, 1, 0, 1, 2, 1, 2}));
    EXPECT_EQ(m.val, (std::vector<double>{2, -1, -1, 2, -1, -1, 2}));
    EXPECT_EQ(m.nnz(), a.nnz());

    // Structural zeros inside the box are kept; the storage type is converted exactly.
    SgDiaMatrix<half> h(Box{3, 1, 1}, Stencil::named("3d7"), 1);
    h.value(h.stencil().center(), 1, 0, 0) = half_from_double(0.5);
    const CsrMatrix mh = to_csr(h);
    EXPECT_EQ(mh.col, m.col);
    EXPECT_EQ(mh.val, (std::vector<double>{0, 0, 0, 0.5, 0, 0, 0}));
    SgDiaMatrix<bfloat16> b(Box{3, 1, 1}, Stencil::named("3d7"), 1);
    EXPECT_EQ(to_csr(b).nnz(), 7);
    SgDiaMatrix<float> f(Box{2, 2, 1}, Stencil::full27(), 2);
    EXPECT_EQ(to_csr(f).nnz(), f.nnz());
}

}  // namespace
}  // namespace mpmg
