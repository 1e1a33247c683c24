#include "distributed/partition.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "mpmg/errors.hpp"

namespace mpmg::dist {
namespace {

// Every cell of the grid belongs to exactly one process.
void expect_covers(const Partition& p) {
    const Box g = p.global();
    std::vector<int> owner(static_cast<std::size_t>(g.cells()), -1);
    for (int r = 0; r < p.size(); ++r) {
        const Box b = p.box(r);
        const auto lo = p.lo(r);
        for (int k = 0; k < b.nz; ++k)
            for (int j = 0; j < b.ny; ++j)
                for (int i = 0; i < b.nx; ++i) {
                    const auto c = static_cast<std::size_t>(
                        (std::int64_t{k + lo[2]} * g.ny + (j + lo[1])) * g.nx + (i + lo[0]));
                    EXPECT_EQ(owner[c], -1);
                    owner[c] = r;
                }
    }
    for (int o : owner) EXPECT_GE(o, 0);
}

TEST(Partition, TwoAndThreeProcessesSplitZUnevenly) {
    const Partition p2(Box{16, 16, 16}, 2, 1);
    EXPECT_EQ(p2.dims(), (std::array<int, 3>{1, 1, 2}));
    EXPECT_EQ(p2.local(), (Box{16, 16, 8}));
    EXPECT_EQ(p2.lo(), (std::array<int, 3>{0, 0, 8}));
    const Partition p3(Box{16, 16, 16}, 3, 2);
    EXPECT_EQ(p3.dims(), (std::array<int, 3>{1, 1, 3}));
    EXPECT_EQ(p3.box(0).nz + p3.box(1).nz + p3.box(2).nz, 16);
    EXPECT_EQ(p3.box(0).nz, 6);
    expect_covers(p3);
    const Partition p8(Box{16, 16, 16}, 8, 5);
    EXPECT_EQ(p8.dims(), (std::array<int, 3>{2, 2, 2}));
    expect_covers(p8);
}

TEST(Partition, AvoidsCuttingTheStronglyCoupledDirection) {
    const Partition p(Box{16, 16, 16}, 2, 0, {1.0, 1.0, 100.0});
    EXPECT_EQ(p.dims(), (std::array<int, 3>{1, 2, 1}));
}

// Coarse cell I belongs to the owner of fine cell 2I+1: cuts halve (rounding down).
TEST(Partition, CoarseningKeepsInjectionLocal) {
    const Partition p(Box{8, 8, 11}, 3, 0);  // z cuts 0, 4, 8, 11
    const Partition c = p.coarsened(2);
    EXPECT_EQ(c.global(), (Box{8, 8, 5}));
    for (int r = 0; r < 3; ++r) {
        const int flo = p.lo(r)[2], fhi = flo + p.box(r).nz;
        const int clo = c.lo(r)[2], chi = clo + c.box(r).nz;
        for (int I = 0; I < 5; ++I) {
            const bool fine_owner = 2 * I + 1 >= flo && 2 * I + 1 < fhi;
            EXPECT_EQ(I >= clo && I < chi, fine_owner) << "rank " << r << " I " << I;
        }
    }
    expect_covers(c);
}

TEST(Partition, RejectsMoreProcessesThanCells) {
    EXPECT_THROW(Partition(Box{1, 1, 2}, 3, 0), InvalidInput);
}

// merged(): ceil(dims / 2) processes per direction; every block of the partition lies inside
// the merged block merged_rank() names, whose holder is the block at even coordinates; the
// merged blocks cover the grid once.
TEST(Partition, MergedBlocksAreUnionsOfUpToEightBlocks) {
    for (const int size : {2, 3, 4, 6, 8, 12, 27, 64}) {
        SCOPED_TRACE(size);
        const Partition p(Box{40, 36, 96}, size, 0);
        const Partition m = p.merged(0);
        for (std::size_t d = 0; d < 3; ++d) EXPECT_EQ(m.dims()[d], (p.dims()[d] + 1) / 2);
        expect_covers(m);
        std::vector<std::int64_t> cells(static_cast<std::size_t>(m.size()), 0);
        for (int r = 0; r < p.size(); ++r) {
            const int q = p.merged_rank(r);
            ASSERT_GE(q, 0);
            ASSERT_LT(q, m.size());
            const auto lo = p.lo(r), mlo = m.lo(q);
            const Box b = p.box(r), mb = m.box(q);
            for (int d = 0; d < 3; ++d) {
                const auto k = static_cast<std::size_t>(d);
                EXPECT_GE(lo[k], mlo[k]);
                EXPECT_LE(lo[k] + b.extent(d), mlo[k] + mb.extent(d));
            }
            cells[static_cast<std::size_t>(q)] += b.cells();
            const auto c = p.coord(r);
            const bool even = c[0] % 2 == 0 && c[1] % 2 == 0 && c[2] % 2 == 0;
            EXPECT_EQ(p.holder(q) == r, even);
            const std::vector<int> members = p.members(q);
            EXPECT_EQ(members.front(), p.holder(q));
            EXPECT_EQ(std::count(members.begin(), members.end(), r), 1);
        }
        for (int q = 0; q < m.size(); ++q) {
            EXPECT_EQ(cells[static_cast<std::size_t>(q)], m.box(q).cells());
            EXPECT_EQ(p.merged_rank(p.holder(q)), q);
        }
    }
}

TEST(Partition, FromCutsIsTheCallersProcessGrid) {
    const Box grid{10, 7, 5};
    const std::array<std::vector<int>, 3> cuts{std::vector<int>{0, 1, 10}, {0, 7}, {0, 2, 3, 5}};
    for (int r = 0; r < 6; ++r) {
        const Partition p = Partition::from_cuts(grid, cuts, r);
        EXPECT_EQ(p.dims(), (std::array<int, 3>{2, 1, 3}));
        EXPECT_EQ(p.size(), 6);
        const auto c = p.coord(r);  // x fastest
        EXPECT_EQ(c, (std::array<int, 3>{r % 2, 0, r / 2}));
        EXPECT_EQ(p.lo(), (std::array<int, 3>{cuts[0][static_cast<std::size_t>(c[0])], 0,
                                              cuts[2][static_cast<std::size_t>(c[2])]}));
        EXPECT_EQ(p.local().nx, c[0] == 0 ? 1 : 9);
        EXPECT_EQ(p.local().nz, c[2] == 1 ? 1 : 2);
    }
    EXPECT_EQ(Partition::from_cuts(grid, cuts, 0).min_extent(), 1);
    // Cuts that do not rise from 0 to the extent, and a rank outside the process grid.
    EXPECT_THROW(Partition::from_cuts(grid, {std::vector<int>{0, 10}, {0, 7}, {0, 3, 3, 5}}, 0),
                 InvalidInput);
    EXPECT_THROW(Partition::from_cuts(grid, {std::vector<int>{1, 10}, {0, 7}, {0, 5}}, 0),
                 InvalidInput);
    EXPECT_THROW(Partition::from_cuts(grid, {std::vector<int>{0, 9}, {0, 7}, {0, 5}}, 0),
                 InvalidInput);
    EXPECT_THROW(Partition::from_cuts(grid, cuts, 6), InvalidInput);
}

}  // namespace
}  // namespace mpmg::dist
