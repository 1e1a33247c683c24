// Stencil: offsets kept sorted and unique, find() (a table lookup) against a search of the
// offsets for every offset of the 5x5x5 neighbourhood, on every named stencil and an odd one.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "mpmg/errors.hpp"
#include "mpmg/sgdia_matrix.hpp"

namespace mpmg {
namespace {

void expect_find_matches_search(const Stencil& s) {
    for (int dz = -2; dz <= 2; ++dz) {
        for (int dy = -2; dy <= 2; ++dy) {
            for (int dx = -2; dx <= 2; ++dx) {
                const Offset o{dx, dy, dz};
                const auto it = std::find(s.offsets().begin(), s.offsets().end(), o);
                const int want =
                    it == s.offsets().end() ? -1 : static_cast<int>(it - s.offsets().begin());
                EXPECT_EQ(s.find(o), want) << dx << "," << dy << "," << dz;
            }
        }
    }
}

TEST(Stencil, FindIsTheIndexOfTheOffsetOrMinusOne) {
    for (const char* name : {"3d7", "3d15", "3d19", "3d27"}) {
        SCOPED_TRACE(name);
        const Stencil s = Stencil::named(name);
        expect_find_matches_search(s);
        EXPECT_EQ(s.name(), name);
        EXPECT_EQ(s[s.center()], (Offset{0, 0, 0}));
    }
    // Unsorted, with a duplicate: sorted by (dz, dy, dx), the duplicate dropped.
    const Stencil odd({Offset{1, 1, 1}, Offset{0, 0, 0}, Offset{-1, 0, 0}, Offset{1, 1, 1}});
    ASSERT_EQ(odd.size(), 3);
    EXPECT_EQ(odd[0], (Offset{-1, 0, 0}));
    EXPECT_EQ(odd[2], (Offset{1, 1, 1}));
    expect_find_matches_search(odd);
    EXPECT_EQ(Stencil().find(Offset{0, 0, 0}), -1);
}

TEST(Stencil, RejectsOffsetsOutsideTheNeighbourhoodAndAMissingCentre) {
    EXPECT_THROW(Stencil({Offset{0, 0, 0}, Offset{2, 0, 0}}), InvalidInput);
    EXPECT_THROW(Stencil({Offset{1, 0, 0}}), InvalidInput);
    EXPECT_THROW(Stencil::named("3d9"), InvalidInput);
}

}  // namespace
}  // namespace mpmg
