#include "structured/from_csr.hpp"

#include <gtest/gtest.h>

#include "io/problems.hpp"
#include "mpmg/errors.hpp"
#include "structured/coarsen.hpp"

namespace mpmg {
namespace {

TEST(FromCsr, RoundTripsAStructuredMatrix) {
    const SgDiaMatrix<double> a = laplace27(Box{5, 4, 3});
    const SgDiaMatrix<double> back = sgdia_from_csr(to_csr(a), a.box(), 1, "a.mtx");
    EXPECT_EQ(back.stencil().name(), "3d27");
    const CsrMatrix x = to_csr(a), y = to_csr(back);
    EXPECT_EQ(x.col, y.col);
    EXPECT_EQ(x.val, y.val);
}

TEST(FromCsr, RecognisesBlocksAndSmallerStencils) {
    SgDiaMatrix<double> a(Box{3, 3, 2}, Stencil::named("3d7"), 2);
    for (int d = 0; d < a.stencil().size(); ++d) {
        for (std::int64_t c = 0; c < a.box().cells(); ++c) {
            if (!a.neighbour_inside(c, d)) continue;
            for (int i = 0; i < 2; ++i) {
                for (int j = 0; j < 2; ++j) {
                    a.value(d, c, i, j) = d == a.stencil().center() ? (i == j ? 8.0 : 1.0) : -0.5;
                }
            }
        }
    }
    const SgDiaMatrix<double> back = sgdia_from_csr(to_csr(a), a.box(), 2, "b.mtx");
    EXPECT_EQ(back.stencil().name(), "3d7");
    EXPECT_EQ(back.block(), 2);
    EXPECT_EQ(to_csr(back).val, to_csr(a).val);
}

TEST(FromCsr, RejectsMatricesThatDoNotFitTheGrid) {
    const CsrMatrix csr = to_csr(laplace27(Box{4, 4, 4}));
    try {
        sgdia_from_csr(csr, Box{4, 4, 5}, 1, "m.mtx");
        FAIL();
    } catch (const InvalidInput& e) {
        EXPECT_NE(std::string(e.what()).find("m.mtx: 64 rows do not fit"), std::string::npos)
            << e.what();
    }
    // On a 8x2x4 grid the 4x4x4 Laplacian couples cells two apart in j.
    try {
        sgdia_from_csr(csr, Box{8, 2, 4}, 1, "m.mtx");
        FAIL();
    } catch (const InvalidInput& e) {
        EXPECT_NE(std::string(e.what()).find("beyond the 27-point"), std::string::npos) << e.what();
        EXPECT_EQ(std::string(e.what()).find("unknowns per cell"), std::string::npos) << e.what();
    }
    // A 2-unknown matrix ordered unknown by unknown (all of the first, then all of the second)
    // read as cell by cell: the message says which order --grid NX,NY,NZ,R reads.
    const CsrMatrix two = to_csr(laplace27(Box{4, 4, 8}));  // as 4x4x4 x 2, field by field
    try {
        sgdia_from_csr(two, Box{4, 4, 4}, 2, "f.mtx");
        FAIL();
    } catch (const InvalidInput& e) {
        EXPECT_NE(std::string(e.what()).find("with 2 unknowns per cell the rows go cell by cell"),
                  std::string::npos)
            << e.what();
    }
}

/// The tridiagonal matrix of a chain of `n` unknowns (2 on the diagonal, -1 beside it).
CsrMatrix chain(std::int64_t n) {
    CsrMatrix a;
    a.rows = a.cols = n;
    for (std::int64_t i = 0; i < n; ++i) {
        for (std::int64_t j = i - 1; j <= i + 1; ++j) {
            if (j < 0 || j >= n) continue;
            a.col.push_back(j);
            a.val.push_back(j == i ? 2.0 : -1.0);
        }
        a.row_ptr.push_back(a.nnz());
    }
    return a;
}

// A chain numbered through a 4x4x4 grid couples the last cell of each x-line with the first of
// the next: a distance of one cell, but across the grid's edge, so not on the grid.
TEST(FromCsr, RejectsCouplingsAcrossTheGridsEdge) {
    try {
        sgdia_from_csr(chain(64), Box{4, 4, 4}, 1, "c.mtx");
        FAIL();
    } catch (const InvalidInput& e) {
        EXPECT_NE(std::string(e.what()).find("entry (4, 5) couples cell (3,0,0) with cell (0,1,0)"),
                  std::string::npos)
            << e.what();
    }
}

// Grids with extents of 1 and 2, where the distances of several offsets coincide: the chain
// lies along the one direction of extent > 1, and every entry finds its offset.
TEST(FromCsr, ExtentsOfOneAndTwo) {
    for (const Box box : {Box{1, 1, 9}, Box{1, 9, 1}, Box{9, 1, 1}}) {
        const SgDiaMatrix<double> a = sgdia_from_csr(chain(9), box, 1, "c.mtx");
        EXPECT_EQ(a.stencil().size(), 3);
        EXPECT_EQ(to_csr(a).val, chain(9).val);
    }
    const SgDiaMatrix<double> l = laplace27(Box{2, 1, 2});
    EXPECT_EQ(to_csr(sgdia_from_csr(to_csr(l), l.box(), 1, "l.mtx")).val, to_csr(l).val);
}

}  // namespace
}  // namespace mpmg
