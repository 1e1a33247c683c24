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

}  // namespace
}  // namespace mpmg
