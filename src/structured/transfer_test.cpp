#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "mpmg/errors.hpp"

#include "structured/coarsen.hpp"
#include "structured/coarsen_test_util.hpp"

namespace mpmg {
namespace {

using test::random_vector;

/// Transfers worth checking: one step per direction, full coarsening (3 steps, odd extents),
/// two steps with block 2, and operator-dependent (non-uniform) weights.
/// The transfer of full linear coarsening (every direction halved) of a random 27-point
/// matrix on `box` with r x r blocks.
Transfer full_linear(Box box, int r) {
    CoarseningOptions full;
    full.semi_threshold = 0.0;
    return coarsen(test::random27(box, r, false, 7), full)->transfer;
}

std::vector<Transfer> transfers() {
    std::vector<Transfer> out;
    CoarseningOptions full;
    full.semi_threshold = 0.0;
    out.push_back(coarsen(test::random27({7, 6, 5}, 1, false, 3), full)->transfer);
    out.push_back(coarsen(test::random27({4, 5, 3}, 2, false, 4), full)->transfer);
    full.operator_dependent = true;
    out.push_back(coarsen(test::random27({9, 4, 6}, 1, false, 5), full)->transfer);
    out.push_back(coarsen(test::random27({5, 2, 1}, 3, false, 6), full)->transfer);
    for (int dir = 0; dir < 3; ++dir) {
        DirectionalTransfer s;
        s.dir = dir;
        s.fine = Box{5, 6, 7};
        s.coarse = s.fine;
        (dir == 0 ? s.coarse.nx : dir == 1 ? s.coarse.ny : s.coarse.nz) = s.fine.extent(dir) / 2;
        s.block = 2;
        out.push_back(Transfer({s}));
    }
    return out;
}

std::int64_t unknowns(const Box& b, const Transfer& t) { return b.cells() * t.steps()[0].block; }

template <class CC, class CF>
void check_interpolate(const Transfer& t, double tol) {
    const CsrMatrix p = t.prolongation_csr();
    const std::int64_t nf = unknowns(t.fine(), t), nc = unknowns(t.coarse(), t);
    ASSERT_EQ(p.rows, nf);
    ASSERT_EQ(p.cols, nc);
    const std::vector<double> xc = random_vector(nc, 11), y0 = random_vector(nf, 12);
    std::vector<double> expect(static_cast<std::size_t>(nf));
    p.multiply(xc.data(), expect.data());
    std::vector<CC> coarse(xc.begin(), xc.end());
    std::vector<CF> fine(y0.begin(), y0.end());
    t.interpolate_add(coarse.data(), fine.data());
    for (std::size_t q = 0; q < fine.size(); ++q) {
        EXPECT_NEAR(static_cast<double>(fine[q]), y0[q] + expect[q], tol) << q;
    }
}

template <class CF, class CC>
void check_restrict(const Transfer& t, double tol) {
    const CsrMatrix r = t.prolongation_csr().transpose();
    const std::int64_t nf = unknowns(t.fine(), t), nc = unknowns(t.coarse(), t);
    const std::vector<double> xf = random_vector(nf, 13);
    std::vector<double> expect(static_cast<std::size_t>(nc));
    r.multiply(xf.data(), expect.data());
    std::vector<CF> fine(xf.begin(), xf.end());
    std::vector<CC> coarse(static_cast<std::size_t>(nc), CC{-7});
    t.restrict_to(fine.data(), coarse.data());
    for (std::size_t q = 0; q < coarse.size(); ++q) {
        EXPECT_NEAR(static_cast<double>(coarse[q]), expect[q], tol) << q;
    }
}

TEST(CoarsenTransfer, InterpolateMatchesProlongationCsr) {
    for (const Transfer& t : transfers()) {
        check_interpolate<double, double>(t, 1e-14);
        check_interpolate<float, double>(t, 1e-6);
        check_interpolate<double, float>(t, 1e-6);
        check_interpolate<float, float>(t, 1e-6);
    }
}

TEST(CoarsenTransfer, RestrictMatchesTransposeOfProlongation) {
    for (const Transfer& t : transfers()) {
        check_restrict<double, double>(t, 1e-14);
        check_restrict<float, double>(t, 1e-5);
        check_restrict<double, float>(t, 1e-5);
        check_restrict<float, float>(t, 1e-5);
    }
}

/// The three steps of a full linear coarsening applied one at a time (each a one-step
/// Transfer: the staged code, FP64 in between), for comparison with the fused passes.
template <class CF, class CC>
std::vector<CC> restrict_staged(const Transfer& t, const std::vector<CF>& fine) {
    const auto& st = t.steps();
    const int r = st[0].block;
    std::vector<double> a(static_cast<std::size_t>(st[0].coarse.cells() * r));
    std::vector<double> b(static_cast<std::size_t>(st[1].coarse.cells() * r));
    std::vector<CC> c(static_cast<std::size_t>(st[2].coarse.cells() * r));
    Transfer({st[0]}).restrict_to(fine.data(), a.data());
    Transfer({st[1]}).restrict_to(a.data(), b.data());
    Transfer({st[2]}).restrict_to(b.data(), c.data());
    return c;
}

template <class CC, class CF>
void interpolate_staged(const Transfer& t, const std::vector<CC>& coarse, std::vector<CF>& fine) {
    const auto& st = t.steps();
    const int r = st[0].block;
    std::vector<double> b(static_cast<std::size_t>(st[2].fine.cells() * r), 0.0);
    std::vector<double> a(static_cast<std::size_t>(st[1].fine.cells() * r), 0.0);
    Transfer({st[2]}).interpolate_add(coarse.data(), b.data());
    Transfer({st[1]}).interpolate_add(b.data(), a.data());
    Transfer({st[0]}).interpolate_add(a.data(), fine.data());
}

template <class CF, class CC>
void check_fused_equals_staged(const Transfer& t) {
    const int r = t.steps()[0].block;
    const std::vector<double> xf = random_vector(t.fine().cells() * r, 21);
    const std::vector<double> xc = random_vector(t.coarse().cells() * r, 22);
    const std::vector<CF> fine(xf.begin(), xf.end());
    std::vector<CC> fused(static_cast<std::size_t>(t.coarse().cells() * r));
    t.restrict_to(fine.data(), fused.data());
    const std::vector<CC> staged = restrict_staged<CF, CC>(t, fine);
    ASSERT_EQ(fused.size(), staged.size());
    for (std::size_t q = 0; q < fused.size(); ++q) ASSERT_EQ(fused[q], staged[q]) << q;

    const std::vector<CC> coarse(xc.begin(), xc.end());
    std::vector<CF> y_fused = fine, y_staged = fine;
    t.interpolate_add(coarse.data(), y_fused.data());
    interpolate_staged(t, coarse, y_staged);
    for (std::size_t q = 0; q < y_fused.size(); ++q) ASSERT_EQ(y_fused[q], y_staged[q]) << q;
}

TEST(CoarsenTransfer, FusedTrilinearPassesEqualTheStepsOneAfterTheOther) {
    // Full linear coarsening runs fused (one pass over the fine grid); the result must be
    // bitwise that of the three directional steps. Odd and even extents, r = 1 and 2, and grids
    // large enough for the OpenMP-parallel passes (> 2^15 cells).
    for (const auto& [box, r] : {std::pair{Box{41, 34, 29}, 1}, std::pair{Box{6, 7, 5}, 1},
                                 std::pair{Box{27, 26, 25}, 2}, std::pair{Box{3, 2, 4}, 3}}) {
        const Transfer t = full_linear(box, r);
        ASSERT_EQ(t.steps().size(), 3u);
        check_fused_equals_staged<double, double>(t);
        check_fused_equals_staged<float, double>(t);
        check_fused_equals_staged<float, float>(t);
        check_fused_equals_staged<double, float>(t);
    }
}

template <class CF, class CC>
void check_scaled(const Transfer& t) {
    const std::int64_t nf = unknowns(t.fine(), t), nc = unknowns(t.coarse(), t);
    const std::vector<double> xf = random_vector(nf, 31), sf = random_vector(nf, 32);
    const std::vector<double> xc = random_vector(nc, 33);
    const std::vector<CF> fine(xf.begin(), xf.end()), scale(sf.begin(), sf.end());
    const std::vector<CC> coarse_in(xc.begin(), xc.end());
    const auto close = [](double got, double want) {
        return std::abs(got - want) <=
               4.0 * std::numeric_limits<CF>::epsilon() * (std::abs(want) + 1.0);
    };
    // Restriction of s ⊙ fine: as restricting the product formed first (rounded to CF).
    std::vector<CF> product(fine.size());
    for (std::size_t q = 0; q < fine.size(); ++q) product[q] = fine[q] * scale[q];
    std::vector<CC> got(static_cast<std::size_t>(nc)), want(got.size());
    t.restrict_to(fine.data(), got.data(), scale.data());
    t.restrict_to(product.data(), want.data());
    for (std::size_t q = 0; q < got.size(); ++q) ASSERT_EQ(got[q], want[q]) << q;
    // Interpolation: fine += s ⊙ (P coarse), P coarse rounded to CF first.
    std::vector<CF> pe(fine.size(), CF{0});
    t.interpolate_add(coarse_in.data(), pe.data());
    std::vector<CF> y = fine;
    t.interpolate_add(coarse_in.data(), y.data(), scale.data());
    for (std::size_t q = 0; q < y.size(); ++q) {
        const double expect = static_cast<double>(fine[q] + scale[q] * pe[q]);
        ASSERT_TRUE(close(static_cast<double>(y[q]), expect))
            << q << ": " << y[q] << " vs " << expect;
    }
}

TEST(CoarsenTransfer, ScaledTransfersApplyTheScaleToTheFineVector) {
    // Scaled levels restrict s ⊙ r̂ and add s ⊙ (P e): inside the fused passes of full linear
    // coarsening, through a scratch vector for the other transfers; both must equal forming
    // the product in its own pass.
    for (const Transfer& t : transfers()) {
        check_scaled<double, double>(t);
        check_scaled<float, double>(t);
        check_scaled<float, float>(t);
        check_scaled<double, float>(t);
    }
}

template <class CF, class CC>
void check_planes(const Transfer& t, bool scaled) {
    const Box& fb = t.fine();
    const int r = t.steps()[0].block;
    const std::int64_t nf = unknowns(fb, t), nc = unknowns(t.coarse(), t);
    const std::int64_t plane = std::int64_t{fb.nx} * fb.ny * r;
    const std::vector<double> xf = random_vector(nf, 41), sf = random_vector(nf, 42);
    const std::vector<CF> fine(xf.begin(), xf.end()), scale(sf.begin(), sf.end());
    const CF* s = scaled ? scale.data() : nullptr;
    std::vector<CC> want(static_cast<std::size_t>(nc)), got(want.size(), CC{-7});
    t.restrict_to(fine.data(), want.data(), s);
    // The source copies plane z and counts the calls: every plane must be asked for.
    std::vector<int> calls(static_cast<std::size_t>(fb.nz), 0);
    const std::function<void(int, CF*)> source = [&](int z, CF* out) {
        ASSERT_GE(z, 0);
        ASSERT_LT(z, fb.nz);
#pragma omp atomic
        ++calls[static_cast<std::size_t>(z)];
        std::copy_n(fine.begin() + z * plane, plane, out);
    };
    ASSERT_TRUE(t.restrict_planes(source, got.data(), s));
    for (std::size_t q = 0; q < got.size(); ++q) ASSERT_EQ(got[q], want[q]) << q;
    for (int z = 0; z < fb.nz; ++z) {
        EXPECT_GE(calls[static_cast<std::size_t>(z)], 1) << "plane " << z;
    }
}

TEST(CoarsenTransfer, RestrictionOfPlanesGivenOneByOneEqualsTheRestrictionOfTheVector) {
    // A level restricts its residual as it forms it, plane by plane, never stored whole
    // (restrict_planes): bit for bit the restriction of the whole vector, scaled or not,
    // serial and OpenMP-parallel (> 2^15 cells), odd and even extents, r = 1 and 2.
    for (const auto& [box, r] :
         {std::pair{Box{41, 34, 29}, 1}, std::pair{Box{6, 7, 5}, 1}, std::pair{Box{40, 36, 30}, 1},
          std::pair{Box{27, 26, 25}, 2}, std::pair{Box{3, 2, 4}, 3}}) {
        const Transfer t = full_linear(box, r);
        ASSERT_TRUE(t.restricts_by_planes());
        for (const bool scaled : {false, true}) {
            SCOPED_TRACE(scaled ? "scaled" : "unscaled");
            check_planes<double, double>(t, scaled);
            check_planes<float, double>(t, scaled);
            check_planes<float, float>(t, scaled);
            check_planes<double, float>(t, scaled);
        }
    }
    // Other transfers (one direction, operator-dependent weights) do not, and call nothing.
    for (const Transfer& t : transfers()) {
        if (t.restricts_by_planes()) continue;
        std::vector<float> coarse(static_cast<std::size_t>(unknowns(t.coarse(), t)));
        bool called = false;
        const std::function<void(int, float*)> source = [&](int, float*) { called = true; };
        EXPECT_FALSE(t.restrict_planes(source, coarse.data()));
        EXPECT_FALSE(called);
    }
}

template <class CC, class CF>
void check_interpolate_planes(const Transfer& t, bool scaled) {
    const Box& fb = t.fine();
    const std::int64_t nf = unknowns(fb, t), nc = unknowns(t.coarse(), t);
    const std::vector<double> y0 = random_vector(nf, 51), sf = random_vector(nf, 52);
    const std::vector<double> xc = random_vector(nc, 53);
    const std::vector<CF> start(y0.begin(), y0.end()), scale(sf.begin(), sf.end());
    const std::vector<CC> coarse(xc.begin(), xc.end());
    const CF* s = scaled ? scale.data() : nullptr;
    std::vector<CF> want = start, got = start;
    t.interpolate_add(coarse.data(), want.data(), s);
    // Top plane alone, then the rest downwards in pieces of two (the order a backward sweep
    // asks in), then nothing (an empty range).
    ASSERT_TRUE(t.interpolate_add_planes(coarse.data(), got.data(), s, fb.nz - 1, fb.nz));
    for (int z1 = fb.nz - 1; z1 > 0; z1 -= 2) {
        ASSERT_TRUE(
            t.interpolate_add_planes(coarse.data(), got.data(), s, std::max(0, z1 - 2), z1));
    }
    ASSERT_TRUE(t.interpolate_add_planes(coarse.data(), got.data(), s, 0, 0));
    for (std::size_t q = 0; q < got.size(); ++q) ASSERT_EQ(got[q], want[q]) << q;
}

TEST(CoarsenTransfer, InterpolationPlaneByPlaneEqualsTheWholeInterpolation) {
    // A backward sweep takes the correction plane by plane (interpolate_add_planes): bit for
    // bit interpolate_add, scaled or not, odd and even extents, r = 1 and 2. Other transfers
    // do not, and leave the fine vector alone.
    for (const auto& [box, r] : {std::pair{Box{41, 34, 29}, 1}, std::pair{Box{6, 7, 5}, 1},
                                 std::pair{Box{27, 26, 24}, 2}, std::pair{Box{3, 2, 4}, 3}}) {
        const Transfer t = full_linear(box, r);
        for (const bool scaled : {false, true}) {
            SCOPED_TRACE(scaled ? "scaled" : "unscaled");
            check_interpolate_planes<double, double>(t, scaled);
            check_interpolate_planes<float, double>(t, scaled);
            check_interpolate_planes<float, float>(t, scaled);
            check_interpolate_planes<double, float>(t, scaled);
        }
    }
    for (const Transfer& t : transfers()) {
        if (t.restricts_by_planes()) continue;
        const std::vector<float> coarse(static_cast<std::size_t>(unknowns(t.coarse(), t)), 1.0f);
        std::vector<float> fine(static_cast<std::size_t>(unknowns(t.fine(), t)), 2.0f);
        EXPECT_FALSE(t.interpolate_add_planes(coarse.data(), fine.data(),
                                              static_cast<const float*>(nullptr), 0, t.fine().nz));
        for (const float v : fine) ASSERT_EQ(v, 2.0f);
    }
}

TEST(CoarsenTransfer, TrilinearInterpolationIsExactOnConstantsInside) {
    // Full linear coarsening: P applied to ones is 1 at interior fine cells (and less at the
    // Dirichlet boundary, fine index 0 along a direction).
    CoarseningOptions full;
    full.semi_threshold = 0.0;
    const Transfer t = coarsen(test::random27({8, 8, 8}, 1, false, 1), full)->transfer;
    std::vector<double> ones(static_cast<std::size_t>(t.coarse().cells()), 1.0);
    std::vector<double> fine(static_cast<std::size_t>(t.fine().cells()), 0.0);
    t.interpolate_add(ones.data(), fine.data());
    EXPECT_DOUBLE_EQ(fine[static_cast<std::size_t>(3 + 8 * (4 + 8 * 5))], 1.0);
    EXPECT_DOUBLE_EQ(fine[0], 0.125);
}

TEST(CoarsenTransfer, RejectsStepsThatDoNotChain) {
    DirectionalTransfer a;
    a.dir = 0;
    a.fine = Box{8, 4, 4};
    a.coarse = Box{4, 4, 4};
    DirectionalTransfer b = a;
    b.fine = Box{8, 4, 4};
    EXPECT_THROW(Transfer({a, b}), InvalidInput);
    b.fine = a.coarse;
    b.coarse = Box{3, 4, 4};
    EXPECT_THROW(Transfer({a, b}), InvalidInput);
    b.coarse = Box{2, 4, 4};
    EXPECT_NO_THROW(Transfer({a, b}));
    EXPECT_EQ(Transfer().fine(), Box{});
}

}  // namespace
}  // namespace mpmg
