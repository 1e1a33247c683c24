#include "unstructured/pgm.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

#include "io/matrix_market.hpp"
#include "unstructured/csr_test_util.hpp"
#include "unstructured/spgemm.hpp"

namespace mpmg {
namespace {

std::vector<std::int64_t> sizes(const Aggregation& g) {
    std::vector<std::int64_t> s(static_cast<std::size_t>(g.coarse_rows), 0);
    for (std::int64_t c : g.agg) {
        EXPECT_GE(c, 0);
        EXPECT_LT(c, g.coarse_rows);
        ++s[static_cast<std::size_t>(c)];
    }
    return s;
}

TEST(CsrPgm, PathGraphPairsNeighbours) {
    const CsrMatrix a = csr_test::poisson(1, 2);  // 1x1 grid: one isolated row, left out
    const Aggregation g1 = pgm_aggregate(a);
    EXPECT_EQ(g1.coarse_rows, 0);
    EXPECT_EQ(g1.isolated, 1);
    EXPECT_EQ(g1.agg, std::vector<std::int64_t>{-1});
    // 1D Laplacian on 8 points as a 2D grid 8 x 1 is not available; use an explicit tridiagonal.
    CsrMatrix t;
    t.rows = t.cols = 8;
    for (std::int64_t i = 0; i < 8; ++i) {
        if (i > 0) t.col.push_back(i - 1), t.val.push_back(-1.0);
        t.col.push_back(i), t.val.push_back(2.0);
        if (i < 7) t.col.push_back(i + 1), t.val.push_back(-1.0);
        t.row_ptr.push_back(t.nnz());
    }
    const Aggregation g = pgm_aggregate(t);
    EXPECT_GE(g.coarse_rows, 3);
    EXPECT_LE(g.coarse_rows, 5);
    for (std::size_t i = 1; i < 8; ++i) {  // aggregates are runs of neighbours, in order
        EXPECT_TRUE(g.agg[i] == g.agg[i - 1] || g.agg[i] == g.agg[i - 1] + 1) << i;
    }
    for (std::int64_t s : sizes(g)) EXPECT_LE(s, 4);  // a pair plus a leftover on each side
}

TEST(CsrPgm, EveryRowInExactlyOneAggregateOfAtMostTwoMatched) {
    const CsrMatrix a = csr_test::poisson(40, 2);
    const Aggregation g = pgm_aggregate(a);
    const auto s = sizes(g);
    EXPECT_EQ(static_cast<std::int64_t>(g.agg.size()), a.rows);
    EXPECT_EQ(g.matched + g.attached + g.singles, a.rows);
    EXPECT_EQ(g.matched % 2, 0);
    // Pairs from matching; a row joins an existing aggregate only after all rounds.
    const auto big = std::count_if(s.begin(), s.end(), [](std::int64_t v) { return v > 2; });
    EXPECT_LE(big, g.attached);
    EXPECT_GT(g.matched, a.rows * 8 / 10);
    EXPECT_LE(*std::max_element(s.begin(), s.end()), 2 + g.attached);
}

TEST(CsrPgm, TwoPassesGiveAggregatesOfAboutFour) {
    const CsrMatrix a = csr_test::poisson(12, 3);
    const Aggregation g1 = pgm_aggregate(a, 1);
    const Aggregation g2 = pgm_aggregate(a, 2);
    sizes(g2);
    EXPECT_LT(g2.coarse_rows, g1.coarse_rows * 6 / 10);
    EXPECT_GT(g2.coarse_rows, a.rows / 8);
}

TEST(CsrPgm, DeterministicAcrossThreadCounts) {
    const CsrMatrix a = csr_test::random_csr(8000, 5, 3, true);
    const int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    const Aggregation g1 = pgm_aggregate(a, 2);
    omp_set_num_threads(2);
    const Aggregation g2 = pgm_aggregate(a, 2);
    omp_set_num_threads(saved);
    EXPECT_EQ(g1.agg, g2.agg);
    EXPECT_EQ(g1.coarse_rows, g2.coarse_rows);
    sizes(g1);
}

// The caller's measurement of exact symmetry (the AMG hierarchy's level 0) only spares the
// measurement: told the true answer, or told false on a symmetric matrix (the transpose path),
// PGM makes the aggregates it makes without being told, for one and two passes.
TEST(CsrPgm, AggregatesAreTheSameWhetherSymmetryIsMeasuredOrGiven) {
    const CsrMatrix sym = csr_test::random_csr(3000, 6, 11, true);
    const CsrMatrix nonsym = csr_test::random_csr(3000, 6, 12, false);
    ASSERT_TRUE(is_symmetric(sym, false, 0.0));
    ASSERT_FALSE(is_symmetric(nonsym, false, 0.0));
    for (int passes : {1, 2}) {
        const Aggregation measured = pgm_aggregate(sym, passes);
        for (bool hint : {true, false}) {
            const Aggregation given = pgm_aggregate(sym, passes, 1, hint);
            EXPECT_EQ(given.agg, measured.agg) << passes << " passes, told " << hint;
            EXPECT_EQ(given.coarse_rows, measured.coarse_rows);
        }
        EXPECT_EQ(pgm_aggregate(nonsym, passes, 1, false).agg, pgm_aggregate(nonsym, passes).agg)
            << passes << " passes";
    }
}

// Beyond 2^31 rows the strength graph takes int64 columns; on small matrices, symmetric and not,
// with isolated rows, that path makes the int32 path's aggregates.
TEST(CsrPgm, Int64StrengthGraphMakesTheSameAggregates) {
    for (const bool symmetric : {true, false}) {
        SCOPED_TRACE(symmetric);
        CsrMatrix a = csr_test::random_csr(5000, 6, symmetric ? 21 : 22, symmetric);
        const Aggregation narrow = pgm_aggregate(a, 1);
        const Aggregation wide = pgm_one_pass_int64(a);
        EXPECT_EQ(wide.agg, narrow.agg);
        EXPECT_EQ(wide.coarse_rows, narrow.coarse_rows);
        EXPECT_EQ(wide.matched, narrow.matched);
        EXPECT_EQ(wide.attached, narrow.attached);
        EXPECT_EQ(wide.singles, narrow.singles);
        EXPECT_EQ(wide.isolated, narrow.isolated);
    }
}

TEST(CsrPgm, ProlongationAndRestriction) {
    const CsrMatrix a = csr_test::poisson(6, 2);
    const Aggregation g = pgm_aggregate(a);
    const CsrMatrix p = prolongation(g);
    const CsrMatrix r = restriction(g, 0.5);
    EXPECT_EQ(p.rows, a.rows);
    EXPECT_EQ(p.cols, g.coarse_rows);
    EXPECT_EQ(r.rows, g.coarse_rows);
    EXPECT_EQ(r.nnz(), a.rows);
    for (double v : r.val) EXPECT_EQ(v, 0.5);
    const CsrMatrix pt = p.transpose();
    EXPECT_EQ(pt.col, r.col);
    EXPECT_EQ(pt.row_ptr, r.row_ptr);
}

/// Whether two matrices are the same to the bit (patterns, and values' bits: -0 is not +0).
bool identical(const CsrMatrix& x, const CsrMatrix& y) {
    if (x.rows != y.rows || x.cols != y.cols || x.row_ptr != y.row_ptr || x.col != y.col) {
        return false;
    }
    for (std::size_t k = 0; k < x.val.size(); ++k) {
        if (std::bit_cast<std::uint64_t>(x.val[k]) != std::bit_cast<std::uint64_t>(y.val[k])) {
            return false;
        }
    }
    return x.val.size() == y.val.size();
}

// The direct R A P of an aggregation is the two products' R (A P) to the bit: random
// nonsymmetric matrices with values of very different sizes, explicit zeros and entries that
// cancel, random aggregates with left-out rows, scales 1/2, 1 and 0.3, on one and two threads.
TEST(CsrPgm, AggregateGalerkinIsTheTwoProductsToTheBit) {
    std::mt19937_64 rng(7);
    const int saved = omp_get_max_threads();
    for (int trial = 0; trial < 6; ++trial) {
        const std::int64_t n = trial < 3 ? 60 : 3000;  // the second half above kParallelRows
        std::vector<std::map<std::int64_t, double>> rows(static_cast<std::size_t>(n));
        std::uniform_int_distribution<std::int64_t> col(0, n - 1);
        std::uniform_real_distribution<double> mag(-8.0, 8.0);
        for (std::int64_t i = 0; i < n; ++i) {
            auto& r = rows[static_cast<std::size_t>(i)];
            r[i] = 4.0;
            for (int e = 0; e < 6; ++e) {
                const double v = std::ldexp(mag(rng), static_cast<int>(mag(rng) * 4.0));
                r[col(rng)] = e == 0 ? 0.0 : (e == 1 ? -0.0 : v);
            }
            if (i + 1 < n) {  // a pair that cancels in A P when i + 1 and i + 2 share an aggregate
                r[i + 1] = 0.1;
                if (i + 2 < n) r[i + 2] = -0.1;
            }
        }
        const CsrMatrix a = csr_test::from_rows(n, rows);
        Aggregation g;
        g.coarse_rows = n / 3;
        std::uniform_int_distribution<std::int64_t> agg(-1, g.coarse_rows - 1);
        for (std::int64_t i = 0; i < n; ++i) g.agg.push_back(i < g.coarse_rows ? i : agg(rng));
        for (const double scale : {0.5, 1.0, 0.3}) {
            const CsrMatrix want = galerkin_product(restriction(g, scale), a, prolongation(g));
            for (const int threads : {1, 2}) {
                omp_set_num_threads(threads);
                EXPECT_TRUE(identical(aggregate_galerkin(a, g, scale), want))
                    << "trial " << trial << ", scale " << scale << ", threads " << threads;
            }
        }
    }
    omp_set_num_threads(saved);
    // And PGM's aggregates of a real matrix (two passes, the default's).
    const CsrMatrix a = csr_test::poisson(40, 3);
    const Aggregation g = pgm_aggregate(a, 2);
    EXPECT_TRUE(identical(aggregate_galerkin(a, g, 0.5),
                          galerkin_product(restriction(g, 0.5), a, prolongation(g))));
}

/// The 2D Poisson matrix with every `k`-th row replaced by an eliminated Dirichlet row: only
/// its diagonal as a nonzero, its couplings (in row and column) stored as explicit zeros.
CsrMatrix with_dirichlet_rows(int n, int k) {
    CsrMatrix a = csr_test::poisson(n, 2);
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            const std::int64_t j = a.col[p];
            if ((i % k == 0 || j % k == 0) && i != j) a.val[p] = 0.0;
        }
    }
    return a;
}

TEST(CsrPgm, IsolatedRowsAreLeftOut) {
    const CsrMatrix a = with_dirichlet_rows(12, 5);  // explicit zeros: no coupling
    for (int passes : {1, 2}) {
        const Aggregation g = pgm_aggregate(a, passes);
        std::int64_t isolated = 0;
        for (std::int64_t i = 0; i < a.rows; ++i) {
            if (i % 5 == 0) {
                EXPECT_EQ(g.agg[static_cast<std::size_t>(i)], -1) << i;
                ++isolated;
            } else {
                EXPECT_GE(g.agg[static_cast<std::size_t>(i)], 0) << i;
                EXPECT_LT(g.agg[static_cast<std::size_t>(i)], g.coarse_rows) << i;
            }
        }
        EXPECT_EQ(g.isolated, isolated);
        if (passes == 1) {
            EXPECT_EQ(g.matched + g.attached + g.singles + g.isolated, a.rows);
        }
        // P has a zero row for every isolated row; R = P^T / 2 an empty column.
        const CsrMatrix p = prolongation(g);
        EXPECT_EQ(p.rows, a.rows);
        EXPECT_EQ(p.nnz(), a.rows - isolated);
        for (std::int64_t i = 0; i < a.rows; i += 5) EXPECT_EQ(p.row_ptr[i + 1], p.row_ptr[i]);
        EXPECT_EQ(restriction(g, 0.5).nnz(), a.rows - isolated);
    }
}

TEST(CsrPgm, DiagonalMatrixHasNoCoarseLevel) {
    CsrMatrix d;
    d.rows = d.cols = 5;
    for (std::int64_t i = 0; i < 5; ++i) {
        d.col.push_back(i);
        d.val.push_back(2.0);
        d.row_ptr.push_back(d.nnz());
    }
    const Aggregation g = pgm_aggregate(d);
    EXPECT_EQ(g.coarse_rows, 0);
    EXPECT_EQ(g.isolated, 5);
}

// Rows coupled outside the matrix (a distributed level's diagonal block) are never left out:
// without a neighbour in the block they stay singletons through every pass, and their nodes
// keep every component.
TEST(CsrPgm, CoupledRowsAreNeverLeftOut) {
    const CsrMatrix a = with_dirichlet_rows(12, 5);  // rows 0, 5, 10, ...: nothing off the diagonal
    std::vector<char> coupled(static_cast<std::size_t>(a.rows), 0);
    coupled[5] = 1;
    for (int passes : {1, 2}) {
        SCOPED_TRACE(passes);
        const Aggregation g = pgm_aggregate(a, passes, 1, std::nullopt, coupled);
        const Aggregation plain = pgm_aggregate(a, passes);
        EXPECT_EQ(g.isolated, plain.isolated - 1);
        EXPECT_EQ(g.agg[0], -1);
        EXPECT_EQ(g.agg[10], -1);
        const std::int64_t c = g.agg[5];
        ASSERT_GE(c, 0);
        ASSERT_LT(c, g.coarse_rows);
        EXPECT_EQ(std::count(g.agg.begin(), g.agg.end(), c), 1);  // alone
        // The other rows are aggregated as without the flags (the first pass's; the second
        // pass numbers one more coarse row, which moves its ties).
        if (passes == 1) {
            EXPECT_EQ(g.coarse_rows, plain.coarse_rows + 1);
        }
        for (std::int64_t i = 0; i < a.rows; ++i) {
            if (i != 5) {
                EXPECT_EQ(g.agg[static_cast<std::size_t>(i)] >= 0, plain.agg[i] >= 0);
            }
        }
    }
    // A diagonal matrix, every row coupled: one singleton per row.
    CsrMatrix d;
    d.rows = d.cols = 6;
    for (std::int64_t i = 0; i < d.rows; ++i) {
        d.col.push_back(i);
        d.val.push_back(2.0);
        d.row_ptr.push_back(d.nnz());
    }
    const std::vector<char> all(6, 1);
    const Aggregation g = pgm_aggregate(d, 2, 1, std::nullopt, all);
    EXPECT_EQ(g.coarse_rows, 6);
    EXPECT_EQ(g.isolated, 0);
    // Nodes of 2 rows: a node is coupled when one of its rows is; both components stay.
    std::vector<char> one(6, 0);
    one[3] = 1;  // node 1
    const Aggregation nodes = pgm_aggregate(d, 1, 2, std::nullopt, one);
    EXPECT_EQ(nodes.coarse_rows, 2);
    EXPECT_EQ(nodes.isolated, 2);
    EXPECT_EQ(nodes.agg, (std::vector<std::int64_t>{-1, -1, 0, 1, -1, -1}));
    EXPECT_THROW(pgm_aggregate(d, 1, 1, std::nullopt, std::vector<char>(5, 1)), std::logic_error);
}

TEST(CsrPgm, RealMatrixAggregates) {
    const CsrMatrix a = read_matrix_market(csr_test::shared_matrix("1138_bus"));
    const Aggregation g = pgm_aggregate(a);
    sizes(g);
    EXPECT_LT(g.coarse_rows, a.rows * 7 / 10);
}

}  // namespace
}  // namespace mpmg
