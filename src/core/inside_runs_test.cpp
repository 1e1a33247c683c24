// for_each_inside_run: the runs of a range of cells are exactly its cells whose neighbour lies
// inside the box (SgDiaMatrix::neighbour_inside), in increasing order, each once; the whole-box
// runs keep their shape (one per plane for offsets that do not move along x).
#include "core/inside_runs.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "mpmg/sgdia_matrix.hpp"

namespace mpmg {
namespace {

std::vector<std::int64_t> cells_of_runs(const Box& b, const Stencil& st, int d, std::int64_t c0,
                                        std::int64_t c1) {
    std::vector<std::int64_t> out;
    for_each_inside_run(b, st, d, c0, c1, [&](std::int64_t first, std::int64_t n) {
        EXPECT_GT(n, 0);
        for (std::int64_t c = first; c < first + n; ++c) out.push_back(c);
    });
    return out;
}

TEST(InsideRuns, ARangeGivesItsCellsWithTheNeighbourInside) {
    for (const Box& b : {Box{5, 4, 3}, Box{1, 3, 2}, Box{4, 1, 1}, Box{3, 2, 4}}) {
        const SgDiaMatrix<double> m(b, Stencil::named("3d27"), 1);
        const std::int64_t cells = b.cells();
        for (int d = 0; d < m.stencil().size(); ++d) {
            // Every range: empty, single cells, lines, planes, across them, the whole box.
            for (std::int64_t c0 = 0; c0 <= cells; ++c0) {
                for (std::int64_t c1 = c0; c1 <= cells; ++c1) {
                    std::vector<std::int64_t> want;
                    for (std::int64_t c = c0; c < c1; ++c) {
                        if (m.neighbour_inside(c, d)) want.push_back(c);
                    }
                    ASSERT_EQ(cells_of_runs(b, m.stencil(), d, c0, c1), want)
                        << "offset " << d << ", cells [" << c0 << ", " << c1 << ")";
                }
            }
        }
    }
}

TEST(InsideRuns, OffsetsAlongYAndZRunOncePerPlane) {
    const Box b{5, 4, 3};
    const Stencil st = Stencil::named("3d7");
    int runs = 0;
    for_each_inside_run(b, st, st.find(Offset{0, 1, 0}), [&](std::int64_t first, std::int64_t n) {
        EXPECT_EQ(first % 20, 0);
        EXPECT_EQ(n, 15);  // the plane's first three lines
        ++runs;
    });
    EXPECT_EQ(runs, 3);
    runs = 0;
    for_each_inside_run(b, st, st.find(Offset{1, 0, 0}), [&](std::int64_t, std::int64_t n) {
        EXPECT_EQ(n, 4);
        ++runs;
    });
    EXPECT_EQ(runs, 12);  // one per line
}

}  // namespace
}  // namespace mpmg
