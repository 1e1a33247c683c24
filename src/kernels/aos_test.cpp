#include "kernels/aos.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/reference/sgdia_reference.hpp"
#include "kernels/sgdia_test_util.hpp"

namespace mpmg {
namespace {

using testing::expect_close;
using testing::max_abs;

template <class S, class C>
void check_aos(const char* stencil, Box box, unsigned seed) {
    SCOPED_TRACE(std::string(stencil) + " nx=" + std::to_string(box.nx));
    const auto a = testing::random_matrix<S>(box, Stencil::named(stencil), 1, seed);
    const kernels::SgDiaGeom g = kernels::geometry(a);
    std::vector<S> aos(a.values().size());
    kernels::aos_from_soa(g, a.values().data(), aos.data());
    const auto x = testing::random_vector<C>(a.rows(), seed + 1);
    const auto b = testing::random_vector<C>(a.rows(), seed + 2);
    const auto xd = testing::to_double_vector(x), bd = testing::to_double_vector(b);

    std::vector<C> y(x.size());
    kernels::spmv_aos(g, aos.data(), x.data(), y.data(), 0, g.lines());
    std::vector<double> y_ref(y.size());
    reference::spmv(a, xd.data(), y_ref.data());
    const auto tol_y = testing::row_tolerance<C>(a, xd);
    expect_close(y, y_ref, &tol_y);

    auto xs = x;
    auto ref = xd;
    for (std::int64_t l = 0; l < g.lines(); ++l)
        kernels::gs_forward_aos(g, aos.data(), b.data(), xs.data(), l);
    reference::gs_sweep(a, bd.data(), ref.data(), true);
    expect_close(xs, ref, nullptr,
                 testing::smoother_tolerance<C>(a, bd, std::max(max_abs(xd), max_abs(ref))));
}

TEST(AosKernels, MatchReference) {
    for (const char* st : {"3d7", "3d19", "3d27"}) {
        for (const Box box : {Box{7, 5, 6}, Box{1, 3, 2}, Box{2, 1, 3}}) {
            check_aos<double, double>(st, box, 1);
            check_aos<float, float>(st, box, 2);
            check_aos<half, float>(st, box, 3);
        }
    }
}

}  // namespace
}  // namespace mpmg
