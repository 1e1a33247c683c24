// The r x r block SIMD kernels (r = 2, 3, 4) on every Highway target this CPU supports and the
// build generated, each forced in turn, for every supported (storage, compute) pair, against the
// scalar FP64 references; plus the operations of structured/sgdia_ops on the block layout
// (thread-count independence, the wavefront sweep bitwise equal to the sequential one).
#include "kernels/sgdia_block.hpp"

#include <gtest/gtest.h>
#include <hwy/targets.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "kernels/reference/sgdia_reference.hpp"
#include "kernels/sgdia_simd.hpp"
#include "kernels/sgdia_test_util.hpp"
#include "structured/sgdia_ops.hpp"

namespace mpmg {
namespace {

using testing::expect_close;
using testing::max_abs;
using testing::random_matrix;
using testing::random_vector;
using testing::to_double_vector;

/// Restores dynamic dispatch to the CPU's best target when the test ends.
struct TargetGuard {
    ~TargetGuard() { hwy::SetSupportedTargetsForTest(0); }
};

/// Sets the OpenMP thread count for one scope and restores it after.
class Threads {
public:
    explicit Threads(int n) : saved_(omp_get_max_threads()) { omp_set_num_threads(n); }
    ~Threads() { omp_set_num_threads(saved_); }
    Threads(const Threads&) = delete;
    Threads& operator=(const Threads&) = delete;

private:
    int saved_;
};

struct Case {
    const char* stencil;
    Box box;
};
// Lines shorter than one vector (all scalar), just longer (overlapping last vector), exactly one
// vector and a multiple of it (both ends edge vectors; for FP32 on AVX2 8 lanes, FP64 4), longer
// than two Gauss-Seidel chunks of 64 cells with a remainder, longer than one accumulator chunk of
// 256 cells, a degenerate direction, every stencil, and a lower-half stencil (no dx = +1 offset:
// the backward sweep has no trailing neighbour).
const Case kCases[] = {{"3d27", {7, 5, 6}}, {"3d7", {19, 3, 4}},     {"3d19", {2, 3, 3}},
                       {"3d15", {1, 4, 3}}, {"3d7", {150, 2, 2}},    {"3d27", {33, 4, 3}},
                       {"3d7", {11, 2, 2}}, {"lower27", {21, 4, 3}}, {"3d27", {8, 3, 3}},
                       {"3d19", {4, 3, 3}}, {"3d7", {16, 3, 2}},     {"3d7", {300, 2, 2}}};

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

template <class S, class C>
void check_pair(unsigned seed) {
    for (const int r : {2, 3, 4}) {
        for (const Case& cs : kCases) {
            SCOPED_TRACE(std::string(cs.stencil) + " r=" + std::to_string(r) +
                         " nx=" + std::to_string(cs.box.nx));
            const auto a = random_matrix<S>(cs.box, make_stencil(cs.stencil), r, ++seed);
            const kernels::BlockSoa<S, C> blk(a);
            ASSERT_EQ(blk.singular_blocks(), 0);
            ASSERT_EQ(blk.rows(), a.rows());
            const std::int64_t lines = blk.geom().lines(), half_lines = lines / 2;
            const std::int64_t n = a.rows();
            const auto x = random_vector<C>(n, ++seed);
            const auto b = random_vector<C>(n, ++seed);
            const auto xd = to_double_vector(x), bd = to_double_vector(b);

            std::vector<C> y(static_cast<std::size_t>(n)), res(y.size()), xn(y.size());
            kernels::block_spmv(blk, x.data(), y.data(), 0, half_lines);
            kernels::block_spmv(blk, x.data(), y.data(), half_lines, lines);
            kernels::block_residual(blk, b.data(), x.data(), res.data(), 0, lines);
            kernels::block_jacobi(blk, b.data(), x.data(), xn.data(), C(0.8), 0, lines);
            std::vector<double> y_ref(y.size()), r_ref(y.size()), j_ref(y.size());
            reference::spmv(a, xd.data(), y_ref.data());
            reference::residual(a, bd.data(), xd.data(), r_ref.data());
            reference::jacobi(a, bd.data(), xd.data(), j_ref.data(), static_cast<double>(C(0.8)));
            const auto tol_y = testing::row_tolerance<C>(a, xd);
            const auto tol_r = testing::row_tolerance<C>(a, xd, &bd);
            expect_close(y, y_ref, &tol_y);
            expect_close(res, r_ref, &tol_r);
            expect_close(xn, j_ref, nullptr, testing::smoother_tolerance<C>(a, bd, max_abs(xd)));

            for (const bool forward : {true, false}) {
                SCOPED_TRACE(forward ? "forward" : "backward");
                auto xs = x;
                auto ref = xd;
                for (std::int64_t l = 0; l < lines; ++l) {
                    kernels::block_gs_line(blk, b.data(), xs.data(), forward ? l : lines - 1 - l,
                                           forward);
                }
                reference::gs_sweep(a, bd.data(), ref.data(), forward);
                const double tol =
                    testing::smoother_tolerance<C>(a, bd, std::max(max_abs(xd), max_abs(ref)));
                expect_close(xs, ref, nullptr, tol);

                // From zero, skipping the not-yet-updated half: as the reference from zero, and
                // those x values are not read at all (from NaN it gives the same bits).
                std::vector<C> from_zero(xs.size(), C{0});
                std::vector<C> from_nan(xs.size(), std::numeric_limits<C>::quiet_NaN());
                for (std::int64_t l = 0; l < lines; ++l) {
                    const std::int64_t line = forward ? l : lines - 1 - l;
                    kernels::block_gs_line(blk, b.data(), from_zero.data(), line, forward, true);
                    kernels::block_gs_line(blk, b.data(), from_nan.data(), line, forward, true);
                }
                std::vector<double> ref0(xs.size(), 0.0);
                reference::gs_sweep(a, bd.data(), ref0.data(), forward);
                expect_close(from_zero, ref0, nullptr,
                             testing::smoother_tolerance<C>(a, bd, max_abs(ref0)));
                EXPECT_EQ(from_nan, from_zero);
            }
        }
    }
}

TEST(SgDiaBlock, EveryTargetMatchesReference) {
    TargetGuard guard;
    const std::vector<std::int64_t> targets = hwy::SupportedAndGeneratedTargets();
    ASSERT_FALSE(targets.empty());
    for (const std::int64_t t : targets) {
        hwy::SetSupportedTargetsForTest(t);
        SCOPED_TRACE(hwy::TargetName(t));
        ASSERT_STREQ(kernels::simd::target_name(), hwy::TargetName(t));
        check_pair<double, double>(1);
        check_pair<float, double>(2);
        check_pair<half, double>(3);
        check_pair<bfloat16, double>(4);
        check_pair<float, float>(5);
        check_pair<half, float>(6);
        check_pair<bfloat16, float>(7);
    }
}

/// Every entry of `got` as `want`: NaN where it is NaN, the same infinity where it is infinite
/// (with `same_inf`; else just non-finite), within tol[e] elsewhere. Returns the count of
/// non-finite entries of `want`.
template <class C>
int expect_matches_non_finite(const std::vector<C>& got, const std::vector<double>& want,
                              const std::vector<double>& tol, bool same_inf) {
    int non_finite = 0;
    for (std::size_t e = 0; e < got.size(); ++e) {
        const double v = static_cast<double>(got[e]);
        if (std::isnan(want[e])) {
            EXPECT_TRUE(same_inf ? std::isnan(v) : !std::isfinite(v)) << "row " << e << ": " << v;
        } else if (std::isinf(want[e])) {
            if (same_inf) {
                EXPECT_EQ(v, want[e]) << "row " << e;
            } else {
                EXPECT_FALSE(std::isfinite(v)) << "row " << e << ": " << v;
            }
        } else {
            EXPECT_NEAR(v, want[e], tol[e]) << "row " << e;
            continue;
        }
        ++non_finite;
    }
    return non_finite;
}

/// FP16 Inf, NaN (quiet, signalling, payloads) and subnormals reach the block kernels as they
/// are in the scalar cells 0 and nx-1 (and, for comparison, a vector cell), on every target:
/// the runtime guard relies on a non-finite value coming out non-finite, and Highway's own
/// emulation of the conversion (no F16C) turned them into finite values.
template <class C>
void check_fp16_special_values(int r, unsigned seed) {
    const Box box{19, 3, 4};  // cell 0, vector cells 1 .. 17 (and a tail), cell 18
    const Stencil st = Stencil::named("3d7");
    auto a = random_matrix<half>(box, st, r, seed);
    const int ctr = st.center();
    const auto cell = [&](int i, int j, int k) {
        return i + box.nx * (j + std::int64_t{box.ny} * k);
    };
    const auto bits = [](std::uint16_t b) { return half{b}; };
    // The first off-centre offset of cell c whose neighbour is inside the box.
    const auto off = [&](std::int64_t c) {
        for (int d = 0; d < st.size(); ++d) {
            if (d != ctr && a.neighbour_inside(c, d)) return d;
        }
        return ctr;
    };
    // One special value per row (component r-1 of the cell).
    const std::int64_t specials[] = {cell(5, 1, 1), cell(0, 1, 2), cell(18, 2, 1), cell(0, 0, 3),
                                     cell(18, 0, 0)};
    const std::uint16_t special_bits[] = {0x7C00, 0xFC00, 0x7E01, 0x7C01, 0xFFFF};
    for (int s = 0; s < 5; ++s) {
        a.value(off(specials[s]), specials[s], r - 1, s % r) = bits(special_bits[s]);
    }
    // Rows of subnormals only (component 0: every in-box entry), in cells 0, nx-1 and a vector
    // cell.
    for (const std::int64_t c : {cell(7, 2, 2), cell(0, 0, 1), cell(18, 1, 3)}) {
        const std::uint16_t sub[] = {0x03FF, 0x0001, 0x8200, 0x0155, 0x8001, 0x02AA, 0x0100};
        for (int d = 0; d < st.size(); ++d) {
            for (int rb = 0; rb < r; ++rb) {
                if (a.neighbour_inside(c, d)) a.value(d, c, 0, rb) = bits(sub[(d + rb) % 7]);
            }
        }
    }
    const kernels::BlockSoa<half, C> blk(a);
    const auto x = random_vector<C>(a.rows(), seed + 1);
    const auto xd = to_double_vector(x);
    std::vector<C> y(x.size());
    std::vector<double> y_ref(x.size());
    kernels::block_spmv(blk, x.data(), y.data(), 0, blk.geom().lines());
    reference::spmv(a, xd.data(), y_ref.data());
    EXPECT_EQ(expect_matches_non_finite(y, y_ref, testing::row_tolerance<C>(a, xd), true), 5);
}

/// Gauss-Seidel: an infinity or NaN in the trailing neighbour's block (converted in the scalar
/// cell) of the last cell of the sweep makes that cell non-finite, as in the reference.
template <class C>
void check_fp16_special_trailing(int r, bool forward, unsigned seed) {
    const Box box{19, 3, 4};
    const Stencil st = Stencil::named("3d7");
    auto a = random_matrix<half>(box, st, r, seed);
    const std::int64_t last = forward ? box.cells() - 1 : 0;  // cell nx-1 / cell 0
    int trail = -1;
    for (int d = 0; d < st.size(); ++d) {
        const Offset& o = st.offsets()[static_cast<std::size_t>(d)];
        if (o.dy == 0 && o.dz == 0 && o.dx == (forward ? -1 : 1)) trail = d;
    }
    ASSERT_GE(trail, 0);
    a.value(trail, last, r - 1, 0) = half{static_cast<std::uint16_t>(forward ? 0x7C00 : 0x7E01)};
    const kernels::BlockSoa<half, C> blk(a);
    const auto x = random_vector<C>(a.rows(), seed + 1);
    const auto b = random_vector<C>(a.rows(), seed + 2);
    auto ref = to_double_vector(x);
    const auto bd = to_double_vector(b);
    auto xs = x;
    const std::int64_t lines = blk.geom().lines();
    for (std::int64_t l = 0; l < lines; ++l) {
        kernels::block_gs_line(blk, b.data(), xs.data(), forward ? l : lines - 1 - l, forward);
    }
    reference::gs_sweep(a, bd.data(), ref.data(), forward);
    std::vector<double> tol(ref.size(), 0.0);
    double max_ref = max_abs(to_double_vector(x));
    for (double v : ref) max_ref = std::isfinite(v) ? std::max(max_ref, std::fabs(v)) : max_ref;
    const double t = testing::smoother_tolerance<C>(a, bd, max_ref);
    std::fill(tol.begin(), tol.end(), t);
    EXPECT_GT(expect_matches_non_finite(xs, ref, tol, false), 0);
    for (int ra = 0; ra < r; ++ra) {
        EXPECT_FALSE(
            std::isfinite(static_cast<double>(xs[static_cast<std::size_t>(last * r + ra)])))
            << "component " << ra;
    }
}

TEST(SgDiaBlock, Fp16SpecialValuesOnEveryTarget) {
    TargetGuard guard;
    for (const std::int64_t t : hwy::SupportedAndGeneratedTargets()) {
        hwy::SetSupportedTargetsForTest(t);
        SCOPED_TRACE(hwy::TargetName(t));
        for (const int r : {2, 3, 4}) {
            SCOPED_TRACE("r=" + std::to_string(r));
            check_fp16_special_values<float>(r, 11);
            check_fp16_special_values<double>(r, 12);
            for (const bool forward : {true, false}) {
                SCOPED_TRACE(forward ? "forward" : "backward");
                check_fp16_special_trailing<float>(r, forward, 13);
                check_fp16_special_trailing<double>(r, forward, 14);
            }
        }
    }
}

TEST(SgDiaBlock, SingularCentreBlockIsCounted) {
    auto a = random_matrix<double>(Box{5, 2, 2}, Stencil::named("3d7"), 3, 9);
    const int ctr = a.stencil().center();
    for (int q = 0; q < 3; ++q) a.value(ctr, 7, 1, q) = 0.0;  // a zero row: singular
    const kernels::BlockSoa<double, double> blk(a);
    EXPECT_EQ(blk.singular_blocks(), 1);
}

template <class P>
class SgDiaBlockOps : public ::testing::Test {};
TYPED_TEST_SUITE(SgDiaBlockOps, testing::SupportedPairs);

// 65x8x8 cells is above the serial cut-off of sgdia_ops (4096 cells): the parallel paths run.
TYPED_TEST(SgDiaBlockOps, ThreadCountIndependentAndWavefrontEqualsSequentialSweep) {
    using S = typename TypeParam::Storage;
    using C = typename TypeParam::Compute;
    unsigned seed = 501;
    for (const int r : {2, 3, 4}) {
        SCOPED_TRACE("r=" + std::to_string(r));
        const auto a = random_matrix<S>(Box{65, 8, 8}, Stencil::named("3d27"), r, ++seed);
        const kernels::BlockSoa<S, C> blk(a);
        const std::int64_t lines = blk.geom().lines();
        const auto x0 = random_vector<C>(a.rows(), ++seed);
        const auto b = random_vector<C>(a.rows(), ++seed);
        std::vector<C> y1, r1, j1;
        for (int threads = 1; threads <= 2; ++threads) {
            const Threads scope(threads);
            std::vector<C> y(x0.size()), res(x0.size()), xj(x0.size());
            spmv(blk, x0.data(), y.data());
            residual(blk, b.data(), x0.data(), res.data());
            jacobi(blk, b.data(), x0.data(), xj.data(), C(0.7));
            if (threads == 1) {
                y1 = y, r1 = res, j1 = xj;
            } else {
                EXPECT_EQ(y, y1);
                EXPECT_EQ(res, r1);
                EXPECT_EQ(xj, j1);
            }
        }
        for (const bool zero_guess : {false, true}) {
            for (const bool forward : {true, false}) {
                SCOPED_TRACE(forward ? "forward" : "backward");
                const std::vector<C> start = zero_guess ? std::vector<C>(x0.size(), C{0}) : x0;
                std::vector<C> sequential = start;
                for (std::int64_t l = 0; l < lines; ++l) {
                    kernels::block_gs_line(blk, b.data(), sequential.data(),
                                           forward ? l : lines - 1 - l, forward, zero_guess);
                }
                for (int threads = 1; threads <= 2; ++threads) {
                    const Threads scope(threads);
                    std::vector<C> x = start;
                    gs_sweep(blk, b.data(), x.data(), forward, zero_guess);
                    EXPECT_EQ(x, sequential) << threads << " threads";
                }
            }
        }
    }
}

}  // namespace
// The block order (GsOrder::blocks) on the block layout: bitwise the sequential sweep in its
// order P (structured/gs_order.hpp), from x0 both ways and from zero forward.
TYPED_TEST(SgDiaBlockOps, BlockOrderEqualsTheSequentialSweepInItsOrder) {
    using S = typename TypeParam::Storage;
    using C = typename TypeParam::Compute;
    unsigned seed = 701;
    for (const int r : {2, 3}) {
        SCOPED_TRACE("r=" + std::to_string(r));
        const auto a = random_matrix<S>(Box{65, 8, 8}, Stencil::named("3d27"), r, ++seed);
        const kernels::BlockSoa<S, C> blk(a);
        const auto x0 = random_vector<C>(a.rows(), ++seed);
        const auto b = random_vector<C>(a.rows(), ++seed);
        const int nz = 8, slabs = 2;
        for (const bool zero_guess : {false, true}) {
            for (const bool forward : {true, false}) {
                if (zero_guess && !forward) continue;  // runs the wavefront
                SCOPED_TRACE(std::string(forward ? "forward" : "backward") +
                             (zero_guess ? " from zero" : ""));
                const std::vector<C> start = zero_guess ? std::vector<C>(x0.size(), C{0}) : x0;
                // P: slab 0, slab 1 without its lowest plane, then that plane (reversed
                // backward); the deferred plane with the full kernel.
                const int q = gs_block_first(nz, slabs, 1);
                std::vector<std::pair<PlaneRange, bool>> order = {{PlaneRange{0, q}, false},
                                                                  {PlaneRange{q + 1, nz}, false},
                                                                  {PlaneRange{q, q + 1}, true}};
                if (!forward) std::reverse(order.begin(), order.end());
                std::vector<C> sequential = start;
                {
                    const Threads one(1);
                    for (const auto& [planes, deferred] : order) {
                        gs_sweep(blk, b.data(), sequential.data(), forward, zero_guess && !deferred,
                                 planes);
                    }
                }
                const Threads two(2);
                std::vector<C> x = start;
                EXPECT_EQ(
                    gs_sweep(blk, b.data(), x.data(), forward, zero_guess, {}, GsOrder::blocks),
                    slabs);
                EXPECT_EQ(x, sequential);
            }
        }
    }
}

}  // namespace mpmg
