// DistHierarchy (dist_hierarchy.hpp) against the serial Hierarchy of the whole grid, with the
// Jacobi smoother, whose sweep does not depend on the order of the cells: a distributed V, W or
// F cycle then equals the serial one up to rounding, whichever processes run each level. On a grid
// long in z, four processes (1 x 1 x 4) take the coarse levels whose blocks get small onto
// the two holders of the merged partition (a nested hierarchy) and then onto rank 0; two and
// three processes take them onto rank 0 directly. Run by ctest under mpirun
// (tests/mpi_unit_main.cpp).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "distributed/dist_galerkin.hpp"
#include "distributed/dist_hierarchy.hpp"
#include "distributed/mpi_test_util.hpp"
#include "io/problems.hpp"
#include "multigrid/hierarchy.hpp"
#include "structured/coarsen.hpp"

namespace mpmg::dist {
namespace {

using testing::rank;
using testing::size;

// max |got - want| / max |want|.
double relative_max_diff(const std::vector<double>& got, const std::vector<double>& want) {
    double diff = 0.0, scale = 0.0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        diff = std::max(diff, std::fabs(got[i] - want[i]));
        scale = std::max(scale, std::fabs(want[i]));
    }
    return diff / scale;
}

TEST(DistHierarchyCycle, EqualsTheSerialCycleWhereverTheCoarseLevelsRun) {
    const Box box{16, 16, 256};
    const SgDiaMatrix<double> a = laplace27(box);
    MultigridOptions mg;
    mg.smoother = SmootherKind::jacobi;
    mg.max_coarse_rows = 64;
    struct Case {
        const char* precision;
        CycleKind cycle;
    };
    // W and F visit the merged levels more than once per cycle, from the solution they hold.
    for (const Case c : {Case{"K64P64D64", CycleKind::v}, Case{"K64P32D32", CycleKind::v},
                         Case{"K64P64D64", CycleKind::w}, Case{"K64P64D64", CycleKind::f}}) {
        SCOPED_TRACE(fmt::format("{} cycle {}", c.precision, static_cast<int>(c.cycle)));
        mg.cycle = c.cycle;
        const PrecisionPlan plan = parse_precision(c.precision);
        const Partition p(box, size(), rank());
        const GhostedRows rows0 = ghosted_from_global(a, p, kGalerkinMargin);
        DistHierarchy dist(rows0, p, mg, plan, MPI_COMM_WORLD);
        Hierarchy serial(a, mg, plan);
        ASSERT_EQ(dist.report().size(), serial.report().size());
        for (std::size_t l = 0; l < serial.report().size(); ++l) {
            EXPECT_EQ(dist.report()[l].rows, serial.report()[l].rows) << l;
            EXPECT_EQ(dist.report()[l].nnz, serial.report()[l].nnz) << l;
        }
        if (rank() == 0) {
            // 16 x 16 x 256 over 1 x 1 x P: level 2 (4 x 4 x 64) has blocks of 4 x 4 x 16 on
            // four processes, too small, and of 4 x 4 x 32 merged onto two, large enough.
            const std::vector<int> ranks = dist.level_ranks();
            ASSERT_EQ(ranks.size(), serial.report().size());
            EXPECT_EQ(ranks.front(), size());
            if (size() == 4) {
                EXPECT_EQ(ranks[2], 2) << "level 2 runs on the merged partition's two holders";
            }
            EXPECT_EQ(ranks.back(), 1);
        }
        std::vector<double> r(static_cast<std::size_t>(a.rows()));
        for (std::size_t i = 0; i < r.size(); ++i) {
            r[i] = std::sin(0.37 * static_cast<double>(i)) + 0.2;
        }
        std::vector<double> z(r.size());
        serial.apply(r.data(), z.data());
        const std::vector<double> mine_r = extract_local(r, p, 1);
        const std::vector<double> want = extract_local(z, p, 1);
        std::vector<double> got(mine_r.size());
        dist.apply(mine_r.data(), got.data());
        const double tol = plan.level(0).compute == Precision::fp64 ? 1e-12 : 1e-5;
        EXPECT_LE(relative_max_diff(got, want), tol) << "rank " << rank();
    }
}

// Symmetric Gauss-Seidel on a z-split (1 x 1 x P) level is exact in one global order: the
// lowest plane of every process but the bottom one comes last (level.cpp z_ordered_sweep). One
// level smoothed once each way from zero equals that order's forward and backward (point-block)
// sweeps, done here cell by cell on the whole matrix; the hybrid sweep (neighbours' values from
// before the sweep) differs from it by the size of the update.
void check_z_order(const SgDiaMatrix<double>& a) {
    const Box box = a.box();
    const int rb = a.block();
    const CsrMatrix c = to_csr(a);
    MultigridOptions mg;
    mg.smoother = SmootherKind::symgs;
    mg.scaling = ScalingKind::none;
    mg.max_levels = 1;
    mg.coarse_solver = CoarseSolverKind::smoother;
    mg.coarse_sweeps = 1;
    const PrecisionPlan plan = parse_precision("K64P64D64");
    const Partition p(box, size(), rank());
    ASSERT_EQ(p.dims()[0] * p.dims()[1], 1);
    const GhostedRows rows0 = ghosted_from_global(a, p, kGalerkinMargin);
    DistHierarchy dist(rows0, p, mg, plan, MPI_COMM_WORLD);
    // The order: the bottom process's planes, every other process's planes but its lowest,
    // then those lowest planes.
    std::vector<int> planes, deferred;
    for (int r = 0; r < size(); ++r) {
        const int k0 = p.lo(r)[2], k1 = k0 + p.box(r).nz;
        for (int k = r == 0 ? k0 : k0 + 1; k < k1; ++k) planes.push_back(k);
        if (r > 0) deferred.push_back(k0);
    }
    planes.insert(planes.end(), deferred.begin(), deferred.end());
    std::vector<double> r(static_cast<std::size_t>(c.rows));
    for (std::size_t i = 0; i < r.size(); ++i) r[i] = std::sin(0.37 * static_cast<double>(i)) + 0.2;
    std::vector<double> x(r.size(), 0.0);
    // Cell `cell`'s unknowns from its diagonal block and the others' current values (Gaussian
    // elimination with partial pivoting on the r x r block).
    const auto relax = [&](std::int64_t cell) {
        double d[4][5] = {};
        for (int ra = 0; ra < rb; ++ra) {
            const std::int64_t i = cell * rb + ra;
            d[ra][rb] = r[static_cast<std::size_t>(i)];
            for (std::int64_t q = c.row_ptr[i]; q < c.row_ptr[i + 1]; ++q) {
                const std::int64_t j = c.col[q];
                if (j / rb == cell) {
                    d[ra][j % rb] = c.val[q];
                } else {
                    d[ra][rb] -= c.val[q] * x[static_cast<std::size_t>(j)];
                }
            }
        }
        for (int k = 0; k < rb; ++k) {
            int piv = k;
            for (int i = k + 1; i < rb; ++i) {
                if (std::fabs(d[i][k]) > std::fabs(d[piv][k])) piv = i;
            }
            std::swap(d[k], d[piv]);
            for (int i = k + 1; i < rb; ++i) {
                const double m = d[i][k] / d[k][k];
                for (int j = k; j <= rb; ++j) d[i][j] -= m * d[k][j];
            }
        }
        for (int k = rb - 1; k >= 0; --k) {
            double v = d[k][rb];
            for (int j = k + 1; j < rb; ++j)
                v -= d[k][j] * x[static_cast<std::size_t>(cell * rb + j)];
            x[static_cast<std::size_t>(cell * rb + k)] = v / d[k][k];
        }
    };
    const std::int64_t per_plane = std::int64_t{box.nx} * box.ny;
    for (int k : planes) {
        for (std::int64_t i = k * per_plane; i < (k + 1) * per_plane; ++i) relax(i);
    }
    for (auto k = planes.rbegin(); k != planes.rend(); ++k) {
        for (std::int64_t i = (*k + 1) * per_plane; i-- > *k * per_plane;) relax(i);
    }
    const std::vector<double> want = extract_local(x, p, rb);
    const std::vector<double> mine_r = extract_local(r, p, rb);
    std::vector<double> got(mine_r.size());
    dist.apply(mine_r.data(), got.data());
    EXPECT_LE(relative_max_diff(got, want), 1e-12) << "rank " << rank() << " of " << size();
}

TEST(DistHierarchyCycle, ZSplitSymGsIsExactInTheDeferredPlaneOrder) {
    check_z_order(laplace27(Box{9, 7, 48}));        // 756 cells per block and more on up to 4 ranks
    check_z_order(make_rhd3t(Box{8, 8, 40}, 3).a);  // 3 x 3 blocks (the block SIMD kernels)
}

}  // namespace
}  // namespace mpmg::dist
