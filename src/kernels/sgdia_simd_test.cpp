// The r = 1 SG-DIA kernels on every Highway target this CPU supports and the build generated
// (AVX2, SSE4, EMU128/scalar, ...): each target is forced in turn with
// hwy::SetSupportedTargetsForTest, so the fallbacks are checked too, against the FP64 reference.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/every_target_test_util.hpp"
#include "kernels/reference/sgdia_reference.hpp"
#include "kernels/sgdia.hpp"
#include "kernels/sgdia_simd.hpp"
#include "kernels/sgdia_test_util.hpp"

namespace mpmg {
namespace {

using testing::expect_close;
using testing::max_abs;
using testing::random_matrix;
using testing::random_vector;
using testing::to_double_vector;

struct Case {
    const char* stencil;
    Box box;
};
// Lines shorter than, equal to and longer than two vectors; a degenerate direction; long lines;
// a lower-half stencil; more lines than one chunk of a grouped product (8192 cells: 13 lines of
// 600), ending mid-plane; 3d27 interior lines (Gauss-Seidel in dz groups, segments of 1024
// cells) of one segment, of two full segments (2050: 2048 vector cells) and of one and a part;
// Gauss-Seidel lines of exactly one vector (AVX2: 8 FP32, 4 FP64 lanes; SSE4 half that: both
// edges in one vector), of a multiple of it (the last full vector is the far edge) and of one
// more cell (the overlapping far vector meets the first).
const Case kCases[] = {
    {"3d27", {7, 5, 6}},   {"3d7", {19, 3, 4}},   {"3d19", {2, 3, 3}},    {"3d15", {1, 4, 3}},
    {"3d27", {37, 1, 2}},  {"3d7", {600, 2, 2}},  {"3d27", {33, 4, 3}},   {"lower27", {21, 4, 3}},
    {"3d27", {600, 5, 6}}, {"3d19", {601, 3, 5}}, {"3d27", {2050, 3, 3}}, {"3d27", {1500, 4, 3}},
    {"3d27", {8, 3, 3}},   {"3d7", {16, 3, 2}},   {"3d27", {9, 2, 3}},    {"lower27", {4, 3, 3}},
    {"3d27", {24, 3, 4}},
};
// 3d19 and 3d27 Gauss-Seidel take runs of whole lines of a plane, up to 16384 cells
// (gs_lines_dir): a plane in runs of 14 and 2 lines of 1100, and lines of 8200, too long for
// two in a run (3d27's dz groups go segment by segment). Two type pairs only (about 10 s for all
// seven).
const Case kLongCases[] = {
    {"3d27", {1100, 16, 2}}, {"3d19", {1100, 16, 2}}, {"3d27", {8200, 3, 3}}};

Stencil make_stencil(const std::string& name) {
    if (name != "lower27") return Stencil::named(name);
    std::vector<Offset> lower;
    const Stencil full = Stencil::full27();
    for (const Offset& o : full.offsets()) {
        lower.push_back(o);
        if (o == Offset{0, 0, 0}) break;
    }
    return Stencil(lower);
}

template <class S, class C, std::size_t N>
void check_pair(unsigned seed, const Case (&cases)[N]) {
    for (const Case& cs : cases) {
        SCOPED_TRACE(std::string(cs.stencil) + " nx=" + std::to_string(cs.box.nx));
        const auto a = random_matrix<S>(cs.box, make_stencil(cs.stencil), 1, ++seed);
        const kernels::SgDiaGeom g = kernels::geometry(a);
        const S* v = a.values().data();
        const std::int64_t n = a.rows();
        const auto x = random_vector<C>(n, ++seed);
        const auto b = random_vector<C>(n, ++seed);
        const auto xd = to_double_vector(x), bd = to_double_vector(b);

        std::vector<C> y(static_cast<std::size_t>(n)), r(y.size()), xn(y.size());
        kernels::spmv(g, v, x.data(), y.data(), 0, g.lines());
        kernels::residual(g, v, b.data(), x.data(), r.data(), 0, g.lines());
        kernels::jacobi(g, v, b.data(), x.data(), xn.data(), C(0.8), 0, g.lines());
        std::vector<double> y_ref(y.size()), r_ref(y.size()), j_ref(y.size());
        reference::spmv(a, xd.data(), y_ref.data());
        reference::residual(a, bd.data(), xd.data(), r_ref.data());
        reference::jacobi(a, bd.data(), xd.data(), j_ref.data(), static_cast<double>(C(0.8)));
        const auto tol_y = testing::row_tolerance<C>(a, xd);
        const auto tol_r = testing::row_tolerance<C>(a, xd, &bd);
        expect_close(y, y_ref, &tol_y);
        expect_close(r, r_ref, &tol_r);
        expect_close(xn, j_ref, nullptr, testing::smoother_tolerance<C>(a, bd, max_abs(xd)));

        testing::expect_upper_residual(a, x, b);

        for (const bool forward : {true, false}) {
            auto xs = x;
            auto ref = xd;
            for (std::int64_t l = 0; l < g.lines(); ++l) {
                kernels::gs_line(g, v, b.data(), xs.data(), forward ? l : g.lines() - 1 - l,
                                 forward);
            }
            reference::gs_sweep(a, bd.data(), ref.data(), forward);
            const double tol =
                testing::smoother_tolerance<C>(a, bd, std::max(max_abs(xd), max_abs(ref)));
            expect_close(xs, ref, nullptr, tol);
            // All lines in one call (the offsets collected once per face of the box and moved
            // along) give the per-line calls' bits.
            auto xl = x;
            kernels::gs_lines(g, v, b.data(), xl.data(), 0, g.lines(), forward);
            EXPECT_EQ(xl, xs) << (forward ? "forward" : "backward") << " in one call";
        }
    }
}

TEST(SgDiaSimd, EveryTargetMatchesReference) {
    testing::on_every_target([&](std::int64_t t) {
        ASSERT_STREQ(kernels::simd::target_name(), hwy::TargetName(t));
        check_pair<double, double>(1, kCases);
        check_pair<float, double>(2, kCases);
        check_pair<half, double>(3, kCases);
        check_pair<bfloat16, double>(4, kCases);
        check_pair<float, float>(5, kCases);
        check_pair<half, float>(6, kCases);
        check_pair<bfloat16, float>(7, kCases);
    });
}

TEST(SgDiaSimd, GaussSeidelRunsOfLongLinesOnEveryTarget) {
    testing::on_every_target([&](std::int64_t /*t*/) {
        check_pair<double, double>(8, kLongCases);
        check_pair<half, float>(9, kLongCases);
    });
}

/// FP16 Inf, NaN (quiet, signalling, with payloads) and subnormals stored inside the box reach
/// the product as they are, in the vector cells and in the scalar boundary cells, on every
/// target: the runtime guard relies on a non-finite value coming out non-finite (Highway's own
/// emulation of the conversion, used without F16C, turned them into finite values).
template <class C>
void check_fp16_special_values(unsigned seed) {
    const Box box{19, 3, 4};  // cell 0, vector cells 1 .. 17 (and a tail), cell 18
    auto a = testing::random_matrix<half>(box, Stencil::named("3d7"), 1, seed);
    const int ctr = a.stencil().center();
    const auto cell = [&](int i, int j, int k) {
        return i + box.nx * (j + std::int64_t{box.ny} * k);
    };
    const auto bits = [](std::uint16_t b) { return half{b}; };
    // One special value per row; (i, j, k) and the stored bits.
    a.value(ctr, cell(5, 1, 1), 0, 0) = bits(0x7C00);   // +Inf, vector cell
    a.value(ctr, cell(0, 1, 2), 0, 0) = bits(0xFC00);   // -Inf, scalar cell 0
    a.value(ctr, cell(18, 2, 1), 0, 0) = bits(0x7E01);  // quiet NaN with payload, cell nx-1
    a.value(1, cell(9, 1, 2), 0, 0) = bits(0x7C01);     // signalling NaN, off-centre
    a.value(ctr, cell(12, 0, 3), 0, 0) = bits(0xFFFF);  // negative NaN, all payload bits
    // Rows of subnormals only: every in-box entry of the row (largest, smallest, negative).
    for (const std::int64_t c : {cell(7, 2, 2), cell(0, 0, 1), cell(18, 1, 3)}) {
        const std::uint16_t sub[] = {0x03FF, 0x0001, 0x8200, 0x0155, 0x8001, 0x02AA, 0x0100};
        for (int d = 0; d < a.stencil().size(); ++d) {
            if (a.neighbour_inside(c, d)) a.value(d, c, 0, 0) = bits(sub[d % 7]);
        }
    }
    const kernels::SgDiaGeom g = kernels::geometry(a);
    const auto x = random_vector<C>(a.rows(), seed + 1);
    const auto xd = to_double_vector(x);
    std::vector<C> y(x.size());
    std::vector<double> y_ref(x.size());
    kernels::spmv(g, a.values().data(), x.data(), y.data(), 0, g.lines());
    reference::spmv(a, xd.data(), y_ref.data());
    const auto tol = testing::row_tolerance<C>(a, xd);
    int non_finite = 0;
    for (std::size_t e = 0; e < y.size(); ++e) {
        const double got = static_cast<double>(y[e]);
        if (std::isnan(y_ref[e])) {
            EXPECT_TRUE(std::isnan(got)) << "row " << e << ": " << got;
        } else if (std::isinf(y_ref[e])) {
            EXPECT_EQ(got, y_ref[e]) << "row " << e;
        } else {
            EXPECT_NEAR(got, y_ref[e], tol[e]) << "row " << e;
            continue;
        }
        ++non_finite;
    }
    EXPECT_EQ(non_finite, 5);
}

TEST(SgDiaSimd, Fp16SpecialValuesOnEveryTarget) {
    testing::on_every_target([&](std::int64_t /*t*/) {
        check_fp16_special_values<float>(11);
        check_fp16_special_values<double>(12);
    });
}

}  // namespace
}  // namespace mpmg
