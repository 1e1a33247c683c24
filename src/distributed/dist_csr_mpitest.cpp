// The row-distributed CSR matrix of the AMG path (dist_csr.hpp) against the whole matrix: the
// product, the rows with global columns, the gathered matrix, and the Galerkin rows of a
// decoupled aggregation against the serial galerkin_product with the same aggregates. Run by
// ctest under mpirun (tests/mpi_unit_main.cpp).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <vector>

#include "distributed/dist_csr.hpp"
#include "distributed/mpi_test_util.hpp"
#include "io/problems.hpp"
#include "structured/coarsen.hpp"
#include "unstructured/pgm.hpp"
#include "unstructured/spgemm.hpp"

namespace mpmg::dist {
namespace {

using testing::rank;
using testing::size;

CsrMatrix problem(const char* name, int n) {
    ProblemOptions po;
    po.name = name;
    po.n = n;
    return to_csr(make_problem(po).a);
}

// Largest |a_ij - b_ij| relative to max |b_ij| over the union of the patterns (a missing
// entry counts as 0); -1 when the shapes differ.
double difference(const CsrMatrix& a, const CsrMatrix& b) {
    if (a.rows != b.rows || a.cols != b.cols) return -1.0;
    double worst = 0.0, scale = 0.0;
    for (double v : b.val) scale = std::max(scale, std::abs(v));
    for (std::int64_t i = 0; i < a.rows; ++i) {
        std::vector<double> row(static_cast<std::size_t>(a.cols), 0.0);
        for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) row[a.col[k]] += a.val[k];
        for (std::int64_t k = b.row_ptr[i]; k < b.row_ptr[i + 1]; ++k) row[b.col[k]] -= b.val[k];
        for (double v : row) worst = std::max(worst, std::abs(v));
    }
    return worst / scale;
}

class DistCsrTest : public ::testing::TestWithParam<const char*> {};

TEST_P(DistCsrTest, ProductRowsAndGatherMatchTheWholeMatrix) {
    const CsrMatrix a = problem(GetParam(), 9);
    const RowPartition p(a.row_ptr, size());
    const DistCsr d(a, p.first(rank()), p, MPI_COMM_WORLD);
    std::vector<double> x(static_cast<std::size_t>(a.rows)), y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37 * static_cast<double>(i) + 1.0);
    a.multiply(x.data(), y.data());
    std::vector<double> mine(static_cast<std::size_t>(d.local_rows()));
    d.multiply(x.data() + p.first(rank()), mine.data());
    double scale = 0.0;
    for (double v : y) scale = std::max(scale, std::abs(v));
    for (std::int64_t i = 0; i < d.local_rows(); ++i) {
        EXPECT_NEAR(mine[static_cast<std::size_t>(i)],
                    y[static_cast<std::size_t>(p.first(rank()) + i)], 1e-13 * scale)
            << "row " << p.first(rank()) + i;
    }
    const CsrMatrix whole = gather_rows(d.rows_with_global_columns(), p, MPI_COMM_WORLD);
    if (rank() == 0) {
        EXPECT_EQ(whole.row_ptr, a.row_ptr);
        EXPECT_EQ(whole.col, a.col);
        EXPECT_EQ(whole.val, a.val);
    }
}

// The coarse rows of a decoupled aggregation (PGM on each process's block) are the rows of the
// serial R A P with the same aggregates (numbered process after process), level after level.
TEST_P(DistCsrTest, GalerkinRowsAreTheSerialProduct) {
    CsrMatrix a = problem(GetParam(), 12);
    RowPartition p(a.row_ptr, size());
    CsrMatrix rows = a;  // this level's rows with global columns, starting at row `at`
    std::int64_t at = p.first(rank());
    for (int level = 0; level < 3; ++level) {
        SCOPED_TRACE(level);
        const DistCsr d(rows, at, p, MPI_COMM_WORLD);
        const Aggregation g = pgm_aggregate(d.diag(), 1);
        std::vector<std::int64_t> counts(static_cast<std::size_t>(size()));
        MPI_Allgather(&g.coarse_rows, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T,
                      MPI_COMM_WORLD);
        const RowPartition cp = RowPartition::from_counts(counts);
        const CsrMatrix mine = galerkin_rows(d, g.agg, 0.5, cp);
        const CsrMatrix coarse = gather_rows(mine, cp, MPI_COMM_WORLD);
        // The whole aggregation: every process's aggregates, offset by the coarse rows before it.
        const Aggregation all = testing::whole_aggregation(g, p, cp);
        const CsrMatrix want = galerkin_product(restriction(all, 0.5), a, prolongation(all));
        if (rank() == 0) {
            EXPECT_LE(difference(coarse, want), 1e-14);
            EXPECT_GE(difference(coarse, want), 0.0);
        }
        a = want;
        rows = mine;
        at = 0;
        p = cp;
    }
}

INSTANTIATE_TEST_SUITE_P(Problems, DistCsrTest,
                         ::testing::Values("laplace27", "rhd3t", "oil", "solid3d"));

// csr_rows sorts each row by column, stably, and sums a repeated column's values in the
// entries' order: short rows (insertion) and long ones (stable_sort) alike.
TEST(CsrRowsTest, RowsSortedAndRepeatsSummedInTheEntriesOrder) {
    for (const int length : {5, 200}) {
        SCOPED_TRACE(length);
        std::vector<CooEntry> entries;
        for (int k = 0; k < length; ++k) {  // row 7: columns length-1 .. 0, every third twice
            entries.push_back({7, length - 1 - k, 1.0 + k});
            if (k % 3 == 0) entries.push_back({7, length - 1 - k, 0.5});
        }
        // Column 1 of row 8: 1, 1e16, -1e16 in this order sum to 0 (backwards to 1).
        entries.push_back({8, 1, 1.0});
        entries.push_back({8, 0, 2.0});
        entries.push_back({8, 1, 1e16});
        entries.push_back({8, 1, -1e16});
        const CsrMatrix a = csr_rows(entries, 7, 2, 1000);
        ASSERT_EQ(a.rows, 2);
        ASSERT_EQ(a.row_ptr[1], length);
        for (int c = 0; c < length; ++c) {
            EXPECT_EQ(a.col[static_cast<std::size_t>(c)], c);
            const int k = length - 1 - c;
            EXPECT_EQ(a.val[static_cast<std::size_t>(c)], 1.0 + k + (k % 3 == 0 ? 0.5 : 0.0));
        }
        ASSERT_EQ(a.row_ptr[2] - a.row_ptr[1], 2);
        EXPECT_EQ(a.col[static_cast<std::size_t>(length)], 0);
        EXPECT_EQ(a.val[static_cast<std::size_t>(length) + 1], 0.0);
    }
}

TEST(RowPartitionTest, BlocksCoverTheRowsWithAboutEqualWeight) {
    const CsrMatrix a = problem("laplace27", 10);
    for (int parts : {1, 2, 3, 7}) {
        const RowPartition p(a.row_ptr, parts);
        ASSERT_EQ(p.size(), parts);
        EXPECT_EQ(p.first(0), 0);
        EXPECT_EQ(p.global_rows(), a.rows);
        for (int q = 0; q < parts; ++q) {
            EXPECT_GE(p.rows(q), 1);
            const double w =
                static_cast<double>(a.row_ptr[p.first(q + 1)] - a.row_ptr[p.first(q)] + p.rows(q));
            const double even = static_cast<double>(a.nnz() + a.rows) / parts;
            EXPECT_LT(std::abs(w - even), 0.05 * even) << parts << " parts, part " << q;
            for (std::int64_t r : {p.first(q), p.first(q + 1) - 1}) EXPECT_EQ(p.owner(r), q);
        }
    }
}

}  // namespace
}  // namespace mpmg::dist
