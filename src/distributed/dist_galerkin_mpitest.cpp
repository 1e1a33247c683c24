// Distributed Galerkin coarsening (dist_galerkin.hpp) against the serial coarsen() of the whole
// operator: every process's coarse rows, ghost rows included, bit for bit, level after level.
// Run by ctest under mpirun (tests/mpi_unit_main.cpp).
#include <gtest/gtest.h>
#include <mpi.h>

#include <bit>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "distributed/dist_galerkin.hpp"
#include "distributed/mpi_test_util.hpp"
#include "io/problems.hpp"
#include "multigrid/truncate.hpp"

namespace mpmg::dist {
namespace {

using testing::rank;
using testing::size;

/// Entries of `g` (whose neighbour lies inside g's box) that differ in any bit from the same
/// entries of the whole operator `whole`, and entries to cells outside g's box that are not
/// zero. Also fails when the stencils differ.
std::int64_t differences(const GhostedRows& g, const SgDiaMatrix<double>& whole) {
    EXPECT_EQ(g.a.stencil().offsets(), whole.stencil().offsets());
    EXPECT_EQ(g.a.block(), whole.block());
    if (g.a.stencil().offsets() != whole.stencil().offsets()) return -1;
    const Box& b = g.a.box();
    const Box& w = whole.box();
    const int r = g.a.block();
    std::int64_t bad = 0;
    for (int d = 0; d < g.a.stencil().size(); ++d) {
        const Offset& o = g.a.stencil()[d];
        for (int k = 0; k < b.nz; ++k) {
            for (int j = 0; j < b.ny; ++j) {
                for (int i = 0; i < b.nx; ++i) {
                    const std::int64_t c = (std::int64_t{k} * b.ny + j) * b.nx + i;
                    const bool inside = i + o.dx >= 0 && i + o.dx < b.nx && j + o.dy >= 0 &&
                                        j + o.dy < b.ny && k + o.dz >= 0 && k + o.dz < b.nz;
                    const std::int64_t wc =
                        (std::int64_t{k + g.lo[2]} * w.ny + (j + g.lo[1])) * w.nx + i + g.lo[0];
                    for (int x = 0; x < r; ++x) {
                        for (int y = 0; y < r; ++y) {
                            const double v = g.a.value(d, c, x, y);
                            const double want = inside ? whole.value(d, wc, x, y) : 0.0;
                            if (std::bit_cast<std::uint64_t>(v) !=
                                std::bit_cast<std::uint64_t>(want)) {
                                ++bad;
                            }
                        }
                    }
                }
            }
        }
    }
    return bad;
}

/// Weights of `w` (this process's region of a step) that differ in any bit from the serial
/// step's whole-grid weights `s`.
std::int64_t weight_differences(const StepWeights& w, const DirectionalTransfer& s) {
    std::int64_t bad = 0;
    const Box& b = w.box;
    for (int k = 0; k < b.nz; ++k) {
        for (int j = 0; j < b.ny; ++j) {
            for (int i = 0; i < b.nx; ++i) {
                const std::array<int, 3> g{i + w.lo[0], j + w.lo[1], k + w.lo[2]};
                const std::int64_t sc = (std::int64_t{g[2]} * s.fine.ny + g[1]) * s.fine.nx + g[0];
                const std::size_t at = w.at(g);
                bad += std::bit_cast<std::uint64_t>(w.left[at]) !=
                       std::bit_cast<std::uint64_t>(s.left(sc));
                bad += std::bit_cast<std::uint64_t>(w.right[at]) !=
                       std::bit_cast<std::uint64_t>(s.right(sc));
            }
        }
    }
    return bad;
}

struct Case {
    std::string problem;
    int n;
    bool operator_weights = false;
};

std::string describe(const Case& c) {
    return c.problem + " n=" + std::to_string(c.n) + (c.operator_weights ? " operator" : "");
}
void PrintTo(const Case& c, std::ostream* os) { *os << describe(c); }

class DistGalerkin : public ::testing::TestWithParam<Case> {};

// Level after level: the processes' coarse rows (own and ghost) are the rows of the serial
// coarse operator, the coarse stencil and the transfer's steps are the serial ones.
TEST_P(DistGalerkin, CoarseRowsAreTheSerialOperatorsBitForBit) {
    const Case& c = GetParam();
    ProblemOptions po;
    po.name = c.problem;
    po.n = c.n;
    const StructuredProblem prob = make_problem(po);
    const CoarseningOptions opt{.operator_dependent = c.operator_weights};
    Partition p(prob.a.box(), size(), rank(), direction_strengths(prob.a));
    GhostedRows g = ghosted_from_global(prob.a, p, kGalerkinMargin);
    ASSERT_EQ(differences(g, prob.a), 0);
    SgDiaMatrix<double> serial_holder;
    const SgDiaMatrix<double>* serial = &prob.a;
    int levels = 0;
    for (;;) {
        std::optional<CoarseLevel> s = coarsen(*serial, opt);
        std::optional<DistCoarseLevel> dc = coarsen(g, p, opt, kGalerkinMargin, MPI_COMM_WORLD);
        if (!dc) break;
        ASSERT_TRUE(s.has_value());
        SCOPED_TRACE("coarse level " + std::to_string(levels + 1));
        EXPECT_EQ(dc->coarse.global(), s->a.box());
        ASSERT_EQ(dc->transfer.steps().size(), s->transfer.steps().size());
        // Operator-dependent weights: this process's region of each step, to the bit.
        ASSERT_EQ(dc->weights.size(), c.operator_weights ? s->transfer.steps().size() : 0);
        Partition step_p = p;
        for (std::size_t i = 0; i < s->transfer.steps().size(); ++i) {
            const DirectionalTransfer& st = s->transfer.steps()[i];
            EXPECT_EQ(dc->transfer.steps()[i].dir, st.dir);
            EXPECT_EQ(dc->transfer.steps()[i].fine, st.fine);
            EXPECT_EQ(dc->transfer.steps()[i].coarse, st.coarse);
            if (c.operator_weights) {
                ASSERT_FALSE(st.w_left.empty());
                const auto [lo, box] = weight_region(step_p, st.dir);
                const StepWeights& w = dc->weights[i];
                ASSERT_EQ(w.lo, lo);
                ASSERT_EQ(w.box, box);
                ASSERT_EQ(w.left.size(), static_cast<std::size_t>(box.cells()));
                EXPECT_EQ(weight_differences(w, st), 0) << "step " << i;
            }
            step_p = step_p.coarsened(st.dir);
        }
        EXPECT_EQ(differences(dc->rows, s->a), 0);
        serial_holder = std::move(s->a);
        serial = &serial_holder;
        g = std::move(dc->rows);
        p = dc->coarse;
        ++levels;
    }
    EXPECT_GE(levels, 2) << "too few distributed levels to test";
}

INSTANTIATE_TEST_SUITE_P(Problems, DistGalerkin,
                         ::testing::Values(Case{"laplace27", 19}, Case{"laplace27", 32},
                                           Case{"rhd", 21}, Case{"weather", 20}, Case{"oil", 18},
                                           Case{"rhd3t", 16}, Case{"solid3d", 15},
                                           Case{"oil4c", 16}, Case{"jump7", 21, true},
                                           Case{"rhd", 21, true}, Case{"weather", 20, true},
                                           Case{"oil4c", 16, true}, Case{"solid3d", 15, true}),
                         [](const auto& param_info) {
                             std::string s = describe(param_info.param);
                             for (char& ch : s) {
                                 if (ch == ' ' || ch == '=') ch = '_';
                             }
                             return s;
                         });

// Ghost rows filled from their owners equal those taken from the whole operator (each
// process's ghost rows are overwritten first, so only the exchange can restore them).
TEST(DistGalerkinGhosts, FilledFromTheOwnersAsFromTheWholeOperator) {
    const SgDiaMatrix<double> a = laplace27(Box{13, 11, 17});
    const Partition p(a.box(), size(), rank());
    for (int margin : {1, 2, 3}) {
        SCOPED_TRACE(margin);
        const GhostedRows want = ghosted_from_global(a, p, margin);
        GhostedRows g = want;
        // Keep only the own rows, then fill the rest from the other processes.
        const auto lo = p.lo();
        const Box own = p.local();
        for (int d = 0; d < g.a.stencil().size(); ++d) {
            for (int k = 0; k < g.a.box().nz; ++k) {
                for (int j = 0; j < g.a.box().ny; ++j) {
                    for (int i = 0; i < g.a.box().nx; ++i) {
                        const int gi = i + g.lo[0], gj = j + g.lo[1], gk = k + g.lo[2];
                        const bool mine = gi >= lo[0] && gi < lo[0] + own.nx && gj >= lo[1] &&
                                          gj < lo[1] + own.ny && gk >= lo[2] && gk < lo[2] + own.nz;
                        if (!mine) {
                            g.a.value(d, (std::int64_t{k} * g.a.box().ny + j) * g.a.box().nx + i, 0,
                                      0) = -7.0;
                        }
                    }
                }
            }
        }
        fill_ghost_rows(g, p, margin, MPI_COMM_WORLD);
        EXPECT_EQ(differences(g, a), 0);
    }
}

// What the Krylov operator and level 0 take from a process's rows without making its FP64
// block equals what they took from the block: the exact FP16 copy (of A and of A / c), the
// sampled scale, and the whole operator's nonzeros.
TEST(DistOwnBlock, ReadFromTheRowsAsFromTheBlock) {
    for (const char* name : {"laplace27", "laplace27e8", "rhd", "oil4c", "solid3d"}) {
        SCOPED_TRACE(name);
        ProblemOptions po;
        po.name = name;
        po.n = 13;
        const StructuredProblem prob = make_problem(po);
        const Partition p(prob.a.box(), size(), rank(), direction_strengths(prob.a));
        const GhostedRows g = ghosted_from_global(prob.a, p, kGalerkinMargin);
        const SgDiaMatrix<double> block = own_block(g, p);
        EXPECT_EQ(global_nnz(g, p, MPI_COMM_WORLD), prob.a.nnz());
        const double c = sampled_scale(block);
        EXPECT_EQ(std::bit_cast<std::uint64_t>(own_block_sampled_scale(g, p)),
                  std::bit_cast<std::uint64_t>(c));
        for (double scale : {1.0, c}) {
            SCOPED_TRACE(scale);
            SgDiaMatrix<half> want(block.box(), block.stencil(), block.block());
            SgDiaMatrix<half> got(block.box(), block.stencil(), block.block());
            const bool holds = holds_multiple(block, scale, want);
            EXPECT_EQ(own_block_holds_multiple(g, p, scale, got), holds);
            if (!holds) continue;
            ASSERT_EQ(got.values().size(), want.values().size());
            std::int64_t bad = 0;
            for (std::size_t k = 0; k < got.values().size(); ++k) {
                bad += got.values()[k].bits != want.values()[k].bits;
            }
            EXPECT_EQ(bad, 0);
        }
    }
}

// keep_own_values cuts a vector on the rows' box down to the own cells in place, with the
// values own_values copies out: for margins 1-3 (rows reaching the grid's edge on some sides
// and not on others), block sizes 1 and 3, and the default and an x-first split (own lines
// that do not start at the box's first cell).
TEST(DistOwnBlock, KeepOwnValuesCutsInPlaceAsOwnValuesCopies) {
    for (const std::array<double, 3>& strength :
         {std::array<double, 3>{1.0, 1.0, 1.0}, std::array<double, 3>{1.0, 100.0, 100.0}}) {
        for (int r : {1, 3}) {
            for (int margin : {1, 2, 3}) {
                SCOPED_TRACE(::testing::Message() << "r " << r << " margin " << margin
                                                  << (strength[1] > 1.0 ? " cut along x" : ""));
                const Box box{13, 11, 17};
                const SgDiaMatrix<double> a(box, Stencil::full27(), r);
                const Partition p(box, size(), rank(), strength);
                const GhostedRows g = ghosted_from_global(a, p, margin);
                std::vector<double> v(static_cast<std::size_t>(g.a.box().cells() * r));
                for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.5 + static_cast<double>(i);
                const std::vector<double> want = own_values(v, g, p);
                const double* before = v.data();
                keep_own_values(v, g, p);
                EXPECT_EQ(v, want);
                EXPECT_EQ(v.data(), before);  // kept its allocation
            }
        }
    }
}

}  // namespace
}  // namespace mpmg::dist
