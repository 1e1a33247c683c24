#include "structured/sgdia_ops.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/reference/sgdia_reference.hpp"
#include "kernels/sgdia.hpp"
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

// 65x8x8 = 4160 cells is above the serial cut-off (4096), so the parallel paths run, with up
// to 4 lines per wavefront and only 22 fronts (each front ends in a barrier, which is slow on a
// loaded 2-core CI machine); 7x5x6 runs serially.
const Case kCases[] = {
    {"3d27", 1, {65, 8, 8}},
    {"3d7", 2, {65, 8, 8}},
    {"3d19", 1, {7, 5, 6}},
};
// Gauss-Seidel: grids above the cut-off (the wavefront code does not depend on r; the block
// line kernel is tested in kernels/sgdia_test.cpp), the block case serially; 65x40x4 and
// 30x70x3 have many lines per plane for the pipelined wavefront, 7x5x6 lines without a full
// vector.
const Case kSweepCases[] = {
    {"3d27", 1, {65, 8, 8}}, {"3d27", 1, {65, 40, 4}}, {"3d19", 1, {30, 70, 3}},
    {"3d7", 2, {7, 5, 6}},   {"3d19", 1, {7, 5, 6}},
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

template <class P>
class SgDiaOps : public ::testing::Test {};
TYPED_TEST_SUITE(SgDiaOps, testing::SupportedPairs);

// spmv_dot: y bit for bit spmv's (times the scale, as a multiply of each value), and the
// returned (x, y) equal to a sum in another order up to rounding, on 1 to 3 threads.
TYPED_TEST(SgDiaOps, ProductWithDotIsTheProductAndItsDot) {
    using S = typename TypeParam::Storage;
    using C = typename TypeParam::Compute;
    unsigned seed = 31;
    for (const Case& cs : kCases) {
        SCOPED_TRACE(describe(cs));
        const auto a = random_matrix<S>(cs.box, Stencil::named(cs.stencil), cs.block, ++seed);
        const auto n = static_cast<std::size_t>(a.rows());
        const auto x = random_vector<C>(a.rows(), ++seed);
        std::vector<C> want(n), got(n);
        spmv(a, x.data(), want.data());
        for (const double scale : {1.0, 3.0}) {
            std::vector<C> scaled = want;
            for (C& v : scaled) v *= static_cast<C>(scale);
            long double exact = 0.0L, size = 0.0L;
            for (std::size_t i = 0; i < n; ++i) {
                exact += static_cast<long double>(x[i]) * scaled[i];
                size += std::fabs(static_cast<long double>(x[i]) * scaled[i]);
            }
            for (int threads = 1; threads <= 3; ++threads) {
                const Threads scope(threads);
                const double d = spmv_dot(a, x.data(), got.data(), false, scale);
                EXPECT_EQ(got, scaled) << threads << " threads, scale " << scale;
                EXPECT_NEAR(d, static_cast<double>(exact), 1e-14 * static_cast<double>(size))
                    << threads << " threads, scale " << scale;
            }
        }
    }
}

TYPED_TEST(SgDiaOps, ProductsMatchReferenceAndAreThreadCountIndependent) {
    using S = typename TypeParam::Storage;
    using C = typename TypeParam::Compute;
    unsigned seed = 7;
    for (const Case& cs : kCases) {
        SCOPED_TRACE(describe(cs));
        const auto a = random_matrix<S>(cs.box, Stencil::named(cs.stencil), cs.block, ++seed);
        const auto n = static_cast<std::size_t>(a.rows());
        const auto x = random_vector<C>(a.rows(), ++seed);
        const auto b = random_vector<C>(a.rows(), ++seed);
        const auto xd = to_double_vector(x), bd = to_double_vector(b);

        std::vector<std::vector<C>> y(3, std::vector<C>(n)), r = y, xj = y;
        for (int threads = 1; threads <= 3; ++threads) {
            const Threads scope(threads);
            const auto t = static_cast<std::size_t>(threads - 1);
            spmv(a, x.data(), y[t].data());
            residual(a, b.data(), x.data(), r[t].data());
            jacobi(a, b.data(), x.data(), xj[t].data(), C(0.7));
        }
        EXPECT_EQ(y[0], y[1]);
        EXPECT_EQ(y[0], y[2]);
        EXPECT_EQ(r[0], r[1]);
        EXPECT_EQ(r[0], r[2]);
        EXPECT_EQ(xj[0], xj[1]);
        EXPECT_EQ(xj[0], xj[2]);

        std::vector<double> y_ref(n), r_ref(n), xj_ref(n);
        reference::spmv(a, xd.data(), y_ref.data());
        reference::residual(a, bd.data(), xd.data(), r_ref.data());
        reference::jacobi(a, bd.data(), xd.data(), xj_ref.data(), static_cast<double>(C(0.7)));
        const auto tol_y = testing::row_tolerance<C>(a, xd);
        const auto tol_r = testing::row_tolerance<C>(a, xd, &bd);
        expect_close(y[1], y_ref, &tol_y);
        expect_close(r[1], r_ref, &tol_r);
        expect_close(xj[1], xj_ref, nullptr, testing::smoother_tolerance<C>(a, bd, max_abs(xd)));
    }
}

// A plane's residual into a buffer of that plane (the restriction's source, restrict_planes):
// bit for bit the plane's values of residual and upper_residual on the whole vector, for
// scalar and block grids (the SIMD and the block kernels), planes at both faces and inside.
TYPED_TEST(SgDiaOps, PlaneResidualIsThePlaneOfTheWholeResidual) {
    using S = typename TypeParam::Storage;
    using C = typename TypeParam::Compute;
    unsigned seed = 61;
    for (const Case& cs : kCases) {
        SCOPED_TRACE(describe(cs));
        const auto a = random_matrix<S>(cs.box, Stencil::named(cs.stencil), cs.block, ++seed);
        const auto x = random_vector<C>(a.rows(), ++seed);
        const auto b = random_vector<C>(a.rows(), ++seed);
        const auto n = static_cast<std::size_t>(a.rows());
        const std::size_t plane = static_cast<std::size_t>(cs.box.nx) * cs.box.ny * cs.block;
        std::vector<C> full(n), upper(n);
        residual(a, b.data(), x.data(), full.data());
        upper_residual(a, x.data(), upper.data());
        // One value past the plane stays as it was: the plane's own values only.
        std::vector<C> buf(plane + 1);
        for (int z = 0; z < cs.box.nz; ++z) {
            for (const bool up : {false, true}) {
                std::fill(buf.begin(), buf.end(), C{-9});
                plane_residual(SgDiaView<S>(a), b.data(), x.data(), buf.data(), z, up);
                const std::vector<C>& whole = up ? upper : full;
                for (std::size_t q = 0; q < plane; ++q) {
                    ASSERT_EQ(buf[q], whole[z * plane + q])
                        << (up ? "upper" : "full") << ", plane " << z << ", value " << q;
                }
                EXPECT_EQ(buf[plane], C{-9});
            }
        }
    }
}

// The wavefront sweep must equal the sequential lexicographic sweep bitwise, for any thread
// count (same line kernel, same values read; 1 and 2 threads: more would oversubscribe the
// 2-core CI machine and make each barrier cost a scheduler slice), and the FP64 reference within C
// rounding.
TYPED_TEST(SgDiaOps, WavefrontGaussSeidelEqualsSequentialSweep) {
    using S = typename TypeParam::Storage;
    using C = typename TypeParam::Compute;
    unsigned seed = 301;
    for (const Case& cs : kSweepCases) {
        for (const bool forward : {true, false}) {
            SCOPED_TRACE(describe(cs) + (forward ? " forward" : " backward"));
            const auto a = random_matrix<S>(cs.box, Stencil::named(cs.stencil), cs.block, ++seed);
            const auto x0 = random_vector<C>(a.rows(), ++seed);
            const auto b = random_vector<C>(a.rows(), ++seed);

            // Sequential: the line kernel over lines in lexicographic order.
            const kernels::SgDiaGeom g = kernels::geometry(a);
            std::vector<C> sequential = x0;
            for (std::int64_t l = 0; l < g.lines(); ++l) {
                kernels::gs_line(g, a.values().data(), b.data(), sequential.data(),
                                 forward ? l : g.lines() - 1 - l, forward);
            }
            for (int threads = 1; threads <= 2; ++threads) {
                const Threads scope(threads);
                std::vector<C> x = x0;
                gs_sweep(a, b.data(), x.data(), forward);
                EXPECT_EQ(x, sequential) << threads << " threads";
            }

            auto ref = to_double_vector(x0);
            const double max_x0 = max_abs(ref);
            const auto bd = to_double_vector(b);
            reference::gs_sweep(a, bd.data(), ref.data(), forward);
            expect_close(sequential, ref, nullptr,
                         testing::smoother_tolerance<C>(a, bd, std::max(max_x0, max_abs(ref))));
        }
    }
}

// A sweep that takes a change of x plane by plane just before it reads each plane (a coarse
// correction, gs_sweep_prepared) gives bit for bit the change on all of x and then the sweep,
// and asks for every plane once: on one thread (plane by plane), on two in the block order
// (slabs) and in the wavefront (everything first). A plane read before its change would hold
// other values.
TYPED_TEST(SgDiaOps, SweepTakingEachPlaneJustInTimeEqualsChangeThenSweep) {
    using S = typename TypeParam::Storage;
    using C = typename TypeParam::Compute;
    unsigned seed = 351;
    for (const Case& cs : kSweepCases) {
        const auto a = random_matrix<S>(cs.box, Stencil::named(cs.stencil), cs.block, ++seed);
        const auto x0 = random_vector<C>(a.rows(), ++seed);
        const auto b = random_vector<C>(a.rows(), ++seed);
        const auto delta = random_vector<C>(a.rows(), ++seed);
        const std::size_t plane = static_cast<std::size_t>(cs.box.nx) * cs.box.ny * cs.block;
        for (const bool forward : {true, false}) {
            for (const GsOrder order : {GsOrder::blocks, GsOrder::wavefront}) {
                for (int threads = 1; threads <= 2; ++threads) {
                    SCOPED_TRACE(describe(cs) + (forward ? " forward, " : " backward, ") +
                                 (order == GsOrder::blocks ? "blocks, " : "wavefront, ") +
                                 std::to_string(threads) + " threads");
                    const Threads scope(threads);
                    std::vector<C> want = x0;
                    for (std::size_t q = 0; q < want.size(); ++q) want[q] += delta[q];
                    const int want_slabs =
                        gs_sweep(a, b.data(), want.data(), forward, false, {}, order);
                    std::vector<C> x = x0;
                    std::vector<int> asked(static_cast<std::size_t>(cs.box.nz), 0);
                    const std::function<void(int, int)> prepare = [&](int z0, int z1) {
                        for (int z = z0; z < z1; ++z) {
#pragma omp atomic
                            ++asked[static_cast<std::size_t>(z)];
                            for (std::size_t q = z * plane; q < (z + 1) * plane; ++q)
                                x[q] += delta[q];
                        }
                    };
                    const int slabs = gs_sweep_prepared(SgDiaView<S>(a), b.data(), x.data(),
                                                        forward, order, prepare);
                    EXPECT_EQ(slabs, want_slabs);
                    EXPECT_EQ(x, want);
                    for (int z = 0; z < cs.box.nz; ++z)
                        EXPECT_EQ(asked[static_cast<std::size_t>(z)], 1) << "plane " << z;
                }
            }
        }
    }
}

// A sweep from x = 0 that skips the not-yet-updated half of the stencil (zero_guess) must
// agree with the full sweep from x = 0 and with the FP64 reference within C rounding. For
// scalar stencils (the SIMD path) it must not read those x values at all: started from NaN
// it gives exactly what it gives from zero.
TYPED_TEST(SgDiaOps, ZeroGuessGaussSeidelEqualsFullSweepFromZero) {
    using S = typename TypeParam::Storage;
    using C = typename TypeParam::Compute;
    unsigned seed = 401;
    for (const Case& cs : kSweepCases) {
        for (const bool forward : {true, false}) {
            SCOPED_TRACE(describe(cs) + (forward ? " forward" : " backward"));
            const auto a = random_matrix<S>(cs.box, Stencil::named(cs.stencil), cs.block, ++seed);
            const auto b = random_vector<C>(a.rows(), ++seed);
            const std::vector<C> zero(static_cast<std::size_t>(a.rows()), C{0});
            std::vector<C> full = zero, skipped = zero;
            gs_sweep(a, b.data(), full.data(), forward);
            for (int threads = 1; threads <= 2; ++threads) {
                const Threads scope(threads);
                skipped = zero;
                gs_sweep(a, b.data(), skipped.data(), forward, true);
                auto ref = to_double_vector(zero);
                const auto bd = to_double_vector(b);
                reference::gs_sweep(a, bd.data(), ref.data(), forward);
                const double tol = testing::smoother_tolerance<C>(a, bd, max_abs(ref));
                expect_close(skipped, ref, nullptr, tol);
                expect_close(full, ref, nullptr, tol);
                if (cs.block == 1) {
                    std::vector<C> from_nan(zero.size(), std::numeric_limits<C>::quiet_NaN());
                    gs_sweep(a, b.data(), from_nan.data(), forward, true);
                    EXPECT_EQ(from_nan, skipped) << threads << " threads";
                }
            }
        }
    }
}

/// The plane ranges of the block order's sequential equivalent P (structured/gs_order.hpp) for
/// nz planes and `slabs` slabs, in sweep order, each with whether it is a deferred plane.
std::vector<std::pair<PlaneRange, bool>> block_order_ranges(int nz, int slabs, bool forward) {
    std::vector<std::pair<PlaneRange, bool>> p;
    for (int t = 0; t < slabs; ++t) {
        const int q0 = gs_block_first(nz, slabs, t), q1 = gs_block_first(nz, slabs, t + 1);
        p.push_back({PlaneRange{t == 0 ? q0 : q0 + 1, q1}, false});
    }
    for (int t = 1; t < slabs; ++t) {
        const int q0 = gs_block_first(nz, slabs, t);
        p.push_back({PlaneRange{q0, q0 + 1}, true});
    }
    if (!forward) std::reverse(p.begin(), p.end());
    return p;
}

// The block order (GsOrder::blocks) on 2 and 3 threads is, bit for bit, the sequential sweep
// in its order P: the slabs' planes but their lowest, then the lowest planes (reversed
// backward). From zero (forward), the slabs run the zero-guess kernel and the deferred planes
// the full one; started from NaN it gives the same bits, so it reads no value it has not
// written or zeroed, and it agrees with the full sweep in P from zero within rounding.
TYPED_TEST(SgDiaOps, BlockOrderGaussSeidelEqualsTheSequentialSweepInItsOrder) {
    using S = typename TypeParam::Storage;
    using C = typename TypeParam::Compute;
    unsigned seed = 601;
    const Case cases[] = {
        {"3d27", 1, {65, 8, 8}}, {"3d27", 1, {65, 40, 4}}, {"3d7", 2, {40, 30, 7}}};
    for (const Case& cs : cases) {
        const auto a = random_matrix<S>(cs.box, Stencil::named(cs.stencil), cs.block, ++seed);
        const auto x0 = random_vector<C>(a.rows(), ++seed);
        const auto b = random_vector<C>(a.rows(), ++seed);
        const std::vector<C> zero(x0.size(), C{0});
        for (int threads = 2; threads <= 3; ++threads) {
            if (cs.box.nz < 2 * threads) continue;
            for (const bool zero_guess : {false, true}) {
                for (const bool forward : {true, false}) {
                    if (zero_guess && !forward) continue;  // runs the wavefront
                    SCOPED_TRACE(describe(cs) + ", " + std::to_string(threads) + " threads" +
                                 (forward ? " forward" : " backward") +
                                 (zero_guess ? " from zero" : ""));
                    std::vector<C> sequential = zero_guess ? zero : x0, full = zero;
                    {
                        const Threads one(1);
                        for (const auto& [planes, deferred] :
                             block_order_ranges(cs.box.nz, threads, forward)) {
                            gs_sweep(a, b.data(), sequential.data(), forward,
                                     zero_guess && !deferred, planes);
                            gs_sweep(a, b.data(), full.data(), forward, false, planes);
                        }
                    }
                    const Threads scope(threads);
                    std::vector<C> x =
                        zero_guess && cs.block == 1
                            ? std::vector<C>(x0.size(), std::numeric_limits<C>::quiet_NaN())
                            : (zero_guess ? zero : x0);
                    EXPECT_EQ(
                        gs_sweep(a, b.data(), x.data(), forward, zero_guess, {}, GsOrder::blocks),
                        threads);
                    EXPECT_EQ(x, sequential);
                    if (zero_guess) {
                        const auto bd = to_double_vector(b);
                        const auto fd = to_double_vector(full);
                        expect_close(x, fd, nullptr,
                                     testing::smoother_tolerance<C>(a, bd, max_abs(fd)));
                    }
                    // The wavefront (the default) still gives the lexicographic sweep.
                    std::vector<C> w = zero_guess ? zero : x0, lex = w;
                    gs_sweep(a, b.data(), w.data(), forward, zero_guess);
                    {
                        const Threads one(1);
                        gs_sweep(a, b.data(), lex.data(), forward, zero_guess);
                    }
                    EXPECT_EQ(w, lex);
                }
            }
        }
    }
}

}  // namespace
}  // namespace mpmg
