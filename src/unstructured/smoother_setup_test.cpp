// The point smoothers' setup on a zero diagonal entry: the message tells a saddle-point row
// (other entries in it: try a smoother that divides by the row's l1 norm) from a zero row of A
// (singular: no smoother helps).
#include <gtest/gtest.h>

#include <string>

#include "mpmg/errors.hpp"
#include "unstructured/csr_test_util.hpp"
#include "unstructured/smoother_setup.hpp"

namespace mpmg {
namespace {

/// setup's NumericalError message ("" when none).
std::string setup_error(const CsrMatrix& a, SmootherKind kind, int level) {
    try {
        smoother_setup(a, kind, 0.8, level, 32);
    } catch (const NumericalError& e) {
        return e.what();
    }
    return "";
}

/// The 2D Poisson matrix on 6 x 6 with row 7's diagonal zeroed, or the whole row.
CsrMatrix with_zero(bool whole_row) {
    CsrMatrix a = csr_test::poisson(6, 2);
    for (std::int64_t k = a.row_ptr[7]; k < a.row_ptr[8]; ++k) {
        if (whole_row || a.col[k] == 7) a.val[k] = 0.0;
    }
    return a;
}

TEST(SmootherSetup, ZeroDiagonalSaysWhetherTheRowIsZero) {
    for (const SmootherKind kind : {SmootherKind::symgs, SmootherKind::jacobi}) {
        SCOPED_TRACE(to_string(kind));
        const std::string saddle = setup_error(with_zero(false), kind, 0);
        EXPECT_NE(saddle.find("AMG level 0: diagonal 0 at row 7; the "), std::string::npos)
            << saddle;
        EXPECT_NE(saddle.find("try --smoother l1-jacobi or chebyshev"), std::string::npos)
            << saddle;
        const std::string zero = setup_error(with_zero(true), kind, 0);
        EXPECT_NE(zero.find("(the row is zero: A is singular)"), std::string::npos) << zero;
        EXPECT_EQ(zero.find("try --smoother"), std::string::npos) << zero;
        // A coarse level's zero row is the hierarchy's, not A's.
        const std::string coarse = setup_error(with_zero(true), kind, 2);
        EXPECT_NE(coarse.find("AMG level 2: diagonal 0 at row 7"), std::string::npos) << coarse;
        EXPECT_NE(coarse.find("(the row is zero)"), std::string::npos) << coarse;
        EXPECT_EQ(coarse.find("A is singular"), std::string::npos) << coarse;
    }
    // l1-Jacobi divides by the row's l1 norm: only a zero row stops it.
    EXPECT_EQ(setup_error(with_zero(false), SmootherKind::l1_jacobi, 0), "");
    const std::string l1 = setup_error(with_zero(true), SmootherKind::l1_jacobi, 0);
    EXPECT_NE(l1.find("AMG level 0: l1 diagonal 0 at row 7"), std::string::npos) << l1;
    EXPECT_NE(l1.find("(the row is zero: A is singular)"), std::string::npos) << l1;
}

}  // namespace
}  // namespace mpmg
