// Smoothed aggregation on the distributed AMG path (dist_smoothed.hpp) against the serial
// smoothed_prolongation and Galerkin product with the same aggregates: rho, P, R and the coarse
// rows, and the transfers' products. Run by ctest under mpirun (tests/mpi_unit_main.cpp).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <string>
#include <vector>

#include "distributed/dist_csr.hpp"
#include "distributed/dist_smoothed.hpp"
#include "distributed/mpi_test_util.hpp"
#include "io/problems.hpp"
#include "structured/coarsen.hpp"
#include "unstructured/drop_zeros.hpp"
#include "unstructured/pgm.hpp"
#include "unstructured/smoothed_aggregation.hpp"
#include "unstructured/spgemm.hpp"

namespace mpmg::dist {
namespace {

using testing::rank;
using testing::size;

// Largest |a_ij - b_ij| relative to max |b_ij| over the union of the patterns (a missing
// entry counts as 0); -1 when the shapes differ.
double difference(const CsrMatrix& a, const CsrMatrix& b) {
    if (a.rows != b.rows || a.cols != b.cols) return -1.0;
    double worst = 0.0, scale = 0.0;
    for (double v : b.val) scale = std::max(scale, std::abs(v));
    std::vector<double> row(static_cast<std::size_t>(a.cols), 0.0);
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) row[a.col[k]] += a.val[k];
        for (std::int64_t k = b.row_ptr[i]; k < b.row_ptr[i + 1]; ++k) row[b.col[k]] -= b.val[k];
        for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
            worst = std::max(worst, std::abs(row[a.col[k]]));
            row[a.col[k]] = 0.0;
        }
        for (std::int64_t k = b.row_ptr[i]; k < b.row_ptr[i + 1]; ++k) {
            worst = std::max(worst, std::abs(row[b.col[k]]));
            row[b.col[k]] = 0.0;
        }
    }
    return worst / scale;
}

struct Case {
    const char* problem;
    int n;
    double theta;
    bool symmetric;  // R = P^T (else the tentative P^T)
};

class DistSmoothedTest : public ::testing::TestWithParam<Case> {};

// Every process aggregates its own rows (PGM, nodes of the problem's block size); the
// distributed level must be the serial smoothed aggregation of the whole matrix with those
// aggregates, numbered process after process, up to the order of the sums. Two levels, so
// that the second starts from the first's distributed coarse rows.
TEST_P(DistSmoothedTest, LevelIsTheSerialSmoothedAggregation) {
    const Case c = GetParam();
    ProblemOptions po;
    po.name = c.problem;
    po.n = c.n;
    const StructuredProblem sp = make_problem(po);
    const int block = sp.a.block();
    CsrMatrix a = to_csr(sp.a);
    drop_zeros(a);
    // Row blocks of whole nodes (the filter lumps into a row's own node).
    std::vector<std::int64_t> counts(static_cast<std::size_t>(size()));
    const RowPartition nodes = RowPartition::equal(a.rows / block, size());
    for (int q = 0; q < size(); ++q) counts[static_cast<std::size_t>(q)] = nodes.rows(q) * block;
    RowPartition p = RowPartition::from_counts(counts);
    CsrMatrix rows = a;  // this level's rows with global columns, starting at row `at`
    std::int64_t at = p.first(rank());
    for (int level = 0; level < 2; ++level) {
        SCOPED_TRACE(level);
        const int b = level == 0 ? block : 1;
        const DistCsr d(rows, at, p, MPI_COMM_WORLD);
        const Aggregation g = pgm_aggregate(d.diag(), 2, b);
        std::vector<std::int64_t> cc(static_cast<std::size_t>(size()));
        MPI_Allgather(&g.coarse_rows, 1, MPI_INT64_T, cc.data(), 1, MPI_INT64_T, MPI_COMM_WORLD);
        const RowPartition cp = RowPartition::from_counts(cc);
        const DistSmoothedLevel sl = smoothed_level(d, g, cp, c.theta, b, c.symmetric);

        // The serial level with the same aggregates.
        const Aggregation all = testing::whole_aggregation(g, p, cp);
        const CsrMatrix pt = prolongation(all);
        SmoothedProlongation want = smoothed_prolongation(a, pt, c.theta, b);
        drop_zeros(want.p);
        const CsrMatrix want_r = c.symmetric ? want.p.transpose() : pt.transpose();
        CsrMatrix want_c = galerkin_product(want_r, a, want.p);
        drop_zeros(want_c);

        EXPECT_NEAR(sl.rho, want.rho, 1e-12 * want.rho);
        EXPECT_GT(sl.omega, 0.0);
        const CsrMatrix got_p = gather_rows(sl.p->rows_with_global_columns(), p, MPI_COMM_WORLD);
        const CsrMatrix got_r = gather_rows(sl.r->rows_with_global_columns(), cp, MPI_COMM_WORLD);
        const CsrMatrix got_c = gather_rows(sl.coarse, cp, MPI_COMM_WORLD);
        if (rank() == 0) {
            EXPECT_GE(difference(got_p, want.p), 0.0);
            EXPECT_LE(difference(got_p, want.p), 1e-12);
            EXPECT_GE(difference(got_r, want_r), 0.0);
            EXPECT_LE(difference(got_r, want_r), 1e-12);
            EXPECT_GE(difference(got_c, want_c), 0.0);
            EXPECT_LE(difference(got_c, want_c), 1e-12);
        }

        // The transfers' products with ghost values from the neighbours: P e and R r.
        std::vector<double> e(static_cast<std::size_t>(cp.global_rows()));
        std::vector<double> r(static_cast<std::size_t>(a.rows));
        for (std::size_t i = 0; i < e.size(); ++i) e[i] = std::cos(0.71 * static_cast<double>(i));
        for (std::size_t i = 0; i < r.size(); ++i) r[i] = std::sin(0.37 * static_cast<double>(i));
        std::vector<double> pe(r.size()), rr(e.size());
        want.p.multiply(e.data(), pe.data());
        want_r.multiply(r.data(), rr.data());
        std::vector<double> mine_pe(static_cast<std::size_t>(p.rows(rank())));
        std::vector<double> mine_rr(static_cast<std::size_t>(cp.rows(rank())));
        sl.p->multiply(e.data() + cp.first(rank()), mine_pe.data());
        sl.r->multiply(r.data() + p.first(rank()), mine_rr.data());
        for (std::size_t i = 0; i < mine_pe.size(); ++i) {
            const double want_pe = pe[static_cast<std::size_t>(p.first(rank())) + i];
            EXPECT_NEAR(mine_pe[i], want_pe, 1e-12 * (1.0 + std::abs(want_pe)))
                << "fine row " << p.first(rank()) + static_cast<std::int64_t>(i);
        }
        for (std::size_t i = 0; i < mine_rr.size(); ++i) {
            EXPECT_NEAR(
                mine_rr[i], rr[static_cast<std::size_t>(cp.first(rank())) + i],
                1e-12 * (1.0 + std::abs(rr[static_cast<std::size_t>(cp.first(rank())) + i])))
                << "coarse row " << cp.first(rank()) + static_cast<std::int64_t>(i);
        }

        a = want_c;
        rows = sl.coarse;
        at = 0;
        p = cp;
    }
}

INSTANTIATE_TEST_SUITE_P(Problems, DistSmoothedTest,
                         ::testing::Values(Case{"laplace27", 10, 0.0, true},
                                           Case{"laplace27", 10, 0.08, true},
                                           Case{"oil", 10, 0.08, false},
                                           Case{"solid3d", 6, 0.08, true},
                                           Case{"rhd3t", 7, 0.08, true}),
                         [](const ::testing::TestParamInfo<Case>& param) {
                             return std::string(param.param.problem) +
                                    (param.param.theta > 0.0 ? "_filtered" : "_unfiltered");
                         });

}  // namespace
}  // namespace mpmg::dist
