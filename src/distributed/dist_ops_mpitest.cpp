// DistTransfer (dist_ops.hpp) against the serial Transfer of the whole grid: each process's
// share of P coarse and of R fine, with the partition cut along x (whose steps work on whole
// lines, halo values at the line ends) and as the default split chooses. Run by ctest under
// mpirun (tests/mpi_unit_main.cpp).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "distributed/dist_ops.hpp"
#include "distributed/mpi_test_util.hpp"
#include "io/problems.hpp"
#include "structured/coarsen.hpp"

namespace mpmg::dist {
namespace {

using testing::rank;
using testing::size;

std::vector<double> pattern(std::int64_t n, double shift) {
    std::vector<double> v(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        v[static_cast<std::size_t>(i)] = std::sin(0.37 * static_cast<double>(i) + shift) - 0.1;
    }
    return v;
}

// Largest |a - b| over the largest |b| (0 when b is all zero and a equals it).
double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
    EXPECT_EQ(a.size(), b.size());
    double diff = 0.0, scale = 0.0;
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
        diff = std::max(diff, std::fabs(a[i] - b[i]));
        scale = std::max(scale, std::fabs(b[i]));
    }
    return scale > 0.0 ? diff / scale : diff;
}

// f(box, serial transfer, partition, distributed transfer) for laplace27's first coarsening on
// three boxes, each split as the default chooses and cut along x (the line direction).
template <class F>
void for_each_transfer_case(F&& f) {
    const std::array<double, 3> along_x{1.0, 100.0, 100.0};
    const std::array<double, 3> even{1.0, 1.0, 1.0};
    for (const Box& box : {Box{29, 9, 7}, Box{24, 10, 11}, Box{13, 11, 17}}) {
        for (const auto& strength : {along_x, even}) {
            SCOPED_TRACE(::testing::Message() << box.nx << "x" << box.ny << "x" << box.nz
                                              << (strength == along_x ? " cut along x" : ""));
            const SgDiaMatrix<double> a = laplace27(box);
            const std::optional<CoarseLevel> c = coarsen(a, CoarseningOptions{});
            ASSERT_TRUE(c.has_value());
            const Partition p(box, size(), rank(), strength);
            DistTransfer t(c->transfer, p, MPI_COMM_WORLD);
            if (!t.valid()) continue;  // a process without coarse cells (not these tests' case)
            f(box, c->transfer, p, t);
        }
    }
}

TEST(DistTransferLinear, InterpolatesAndRestrictsAsTheSerialTransfer) {
    for_each_transfer_case(
        [](const Box& box, const Transfer& serial, const Partition& p, DistTransfer& t) {
            const Box cg = serial.coarse();
            const std::vector<double> coarse = pattern(cg.cells(), 0.3);
            const std::vector<double> fine = pattern(box.cells(), 1.1);

            std::vector<double> serial_fine(static_cast<std::size_t>(box.cells()), 0.0);
            serial.interpolate_add(coarse.data(), serial_fine.data());
            std::vector<double> dist_fine;
            t.interpolate(extract_local(coarse, t.coarse(), 1), dist_fine);
            EXPECT_LE(relative_difference(dist_fine, extract_local(serial_fine, p, 1)), 1e-15);

            std::vector<double> serial_coarse(static_cast<std::size_t>(cg.cells()), 0.0);
            serial.restrict_to(fine.data(), serial_coarse.data());
            std::vector<double> dist_coarse;
            t.restrict_to(extract_local(fine, p, 1), dist_coarse);
            EXPECT_LE(relative_difference(dist_coarse, extract_local(serial_coarse, t.coarse(), 1)),
                      1e-15);
        });
}

// A distributed level's own unscaled vectors, read and corrected in place
// (DistHierarchy::cycle): restricting an FP32 block gives the bits of restricting its FP64
// copy, and interpolate_add into an FP32 or FP64 block the bits of interpolate() followed by
// adding each value rounded (Level::add_correction). Boxes and splits as above: the x steps'
// whole-line paths with halo values at the line ends, and the plane-wise steps.
TEST(DistTransferLinear, ReadsAndCorrectsALevelsOwnBlockAsItsFp64Copy) {
    for_each_transfer_case(
        [](const Box& box, const Transfer& serial, const Partition& p, DistTransfer& t) {
            const std::vector<double> coarse =
                extract_local(pattern(serial.coarse().cells(), 0.3), t.coarse(), 1);
            const std::vector<double> fine = extract_local(pattern(box.cells(), 1.1), p, 1);

            std::vector<float> fine_f(fine.size());
            std::transform(fine.begin(), fine.end(), fine_f.begin(),
                           [](double v) { return static_cast<float>(v); });
            const std::vector<double> fine_fd(fine_f.begin(), fine_f.end());
            std::vector<double> from_copy, in_place;
            t.restrict_to(fine_fd, from_copy);
            t.restrict_to(fine_f.data(), in_place);
            EXPECT_EQ(in_place, from_copy);
            t.restrict_to(fine.data(), in_place);
            t.restrict_to(fine, from_copy);
            EXPECT_EQ(in_place, from_copy);

            std::vector<double> e;
            t.interpolate(coarse, e);
            ASSERT_EQ(e.size(), fine.size());
            std::vector<float> u_f = fine_f, want_f = fine_f;
            std::vector<double> u_d = fine, want_d = fine;
            for (std::size_t i = 0; i < e.size(); ++i) {
                want_f[i] += static_cast<float>(e[i]);
                want_d[i] += e[i];
            }
            t.interpolate_add(coarse, u_f.data());
            t.interpolate_add(coarse, u_d.data());
            EXPECT_EQ(u_f, want_f);
            EXPECT_EQ(u_d, want_d);
        });
}

}  // namespace
}  // namespace mpmg::dist
