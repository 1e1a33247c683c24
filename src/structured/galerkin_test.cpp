// galerkin_steps (all directional steps at once, plane by plane) against galerkin_step applied
// step by step: bitwise equal operators for every set of directions, block sizes and odd and
// even extents, on one and two threads; and no result where the step-by-step path would prune
// an intermediate offset.
#include "structured/galerkin.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <cstring>
#include <string>
#include <vector>

#include "structured/coarsen_test_util.hpp"

namespace mpmg {
namespace {

SgDiaMatrix<double> step_by_step(const SgDiaMatrix<double>& a,
                                 const std::vector<DirectionalTransfer>& steps) {
    SgDiaMatrix<double> cur = a;
    for (const DirectionalTransfer& s : steps) cur = galerkin_step(cur, s);
    return cur;
}

void expect_bitwise_equal(const SgDiaMatrix<double>& x, const SgDiaMatrix<double>& y) {
    ASSERT_EQ(x.box(), y.box());
    ASSERT_EQ(x.stencil().offsets(), y.stencil().offsets());
    ASSERT_EQ(x.values().size(), y.values().size());
    EXPECT_EQ(std::memcmp(x.values().data(), y.values().data(), x.values().size() * 8), 0);
}

TEST(Galerkin, StepsAtOnceEqualStepByStep) {
    const std::vector<std::vector<int>> dir_sets = {{0, 1, 2}, {0, 1}, {0, 2}, {1, 2}};
    const int threads = omp_get_max_threads();
    for (const Box& box : {Box{9, 8, 7}, Box{6, 7, 10}, Box{4, 5, 3}}) {
        for (int r : {1, 2}) {
            const SgDiaMatrix<double> a =
                test::random27(box, r, false, 3u + static_cast<unsigned>(r));
            for (const std::vector<int>& dirs : dir_sets) {
                const auto steps = linear_steps(box, dirs, r);
                const SgDiaMatrix<double> want = step_by_step(a, steps);
                for (int t : {1, 2}) {
                    SCOPED_TRACE(std::to_string(box.nx) + "x" + std::to_string(box.ny) + "x" +
                                 std::to_string(box.nz) + " r=" + std::to_string(r) + " dirs=" +
                                 std::to_string(dirs.size()) + " threads=" + std::to_string(t));
                    omp_set_num_threads(t);
                    const auto got = galerkin_steps(a, steps);
                    ASSERT_TRUE(got.has_value());
                    expect_bitwise_equal(*got, want);
                }
            }
        }
    }
    omp_set_num_threads(threads);
}

// Constant (1/2) weights on a scalar operator take the per-output line sums
// (kernels::weighted_sum); explicit weight arrays that hold 1/2 take the general read-modify-
// write loops. Both must give the same bits: same products, added in the same order.
TEST(Galerkin, LineSumsEqualTheGeneralLoopsBitForBit) {
    for (const Box& box :
         {Box{9, 8, 7}, Box{6, 7, 10}, Box{4, 5, 3}, Box{33, 2, 5}, Box{12, 13, 11}}) {
        for (const char* st : {"3d7", "3d19", "3d27"}) {
            SgDiaMatrix<double> a =
                test::random27(box, 1, false, 5u + static_cast<unsigned>(box.nx));
            if (std::string(st) != "3d27") {  // keep the stencil's offsets only
                SgDiaMatrix<double> b(box, Stencil::named(st), 1);
                for (int d = 0; d < b.stencil().size(); ++d) {
                    const double* v = a.diagonal(a.stencil().find(b.stencil()[d]));
                    std::copy(v, v + a.diag_values(), b.diagonal(d));
                }
                a = std::move(b);
            }
            for (int dir = 0; dir < 3; ++dir) {
                SCOPED_TRACE(std::string(st) + " " + std::to_string(box.nx) + "x" +
                             std::to_string(box.ny) + "x" + std::to_string(box.nz) +
                             " dir=" + std::to_string(dir));
                DirectionalTransfer s = linear_steps(box, {dir}, 1).front();
                const SgDiaMatrix<double> sums = galerkin_step(a, s);
                s.w_left.assign(static_cast<std::size_t>(box.cells()), 0.5);
                s.w_right = s.w_left;
                expect_bitwise_equal(sums, galerkin_step(a, s));
            }
        }
    }
}

TEST(Galerkin, StepsAtOnceDeclineWhenAnIntermediateOffsetIsZero) {
    // Two cells along x coarsen to one: the x step's offsets with dx != 0 have no neighbour
    // inside, and step by step they are pruned before the y step.
    const SgDiaMatrix<double> a = test::random27(Box{2, 8, 8}, 1, false, 5);
    const auto steps = linear_steps(a.box(), {0, 1, 2}, 1);
    EXPECT_FALSE(galerkin_steps(a, steps).has_value());
    EXPECT_EQ(step_by_step(a, steps).stencil().size(), 9);  // the pruned result
}

}  // namespace
}  // namespace mpmg
