#include "unstructured/rcm.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <random>

#include <unistd.h>

#include "io/matrix_market.hpp"
#include "mpmg/solver.hpp"
#include "unstructured/csr_test_util.hpp"

namespace mpmg {
namespace {

namespace fs = std::filesystem;

// A randomly renumbered 2D Poisson matrix: its rows span almost all columns.
CsrMatrix shuffled_poisson(int n, std::vector<std::int64_t>* shuffle = nullptr) {
    const CsrMatrix a = csr_test::poisson(n, 2);
    std::vector<std::int64_t> perm(static_cast<std::size_t>(a.rows));
    std::iota(perm.begin(), perm.end(), 0);
    std::mt19937_64 gen(7);
    std::shuffle(perm.begin(), perm.end(), gen);
    if (shuffle != nullptr) *shuffle = perm;
    return permute(a, perm);
}

TEST(Rcm, PermuteIsSymmetricRenumbering) {
    const CsrMatrix a = csr_test::random_csr(50, 4, 3, false);
    std::vector<std::int64_t> perm(50);
    std::iota(perm.begin(), perm.end(), 0);
    std::reverse(perm.begin(), perm.end());
    const CsrMatrix b = permute(a, perm);
    ASSERT_EQ(b.nnz(), a.nnz());
    std::vector<double> x(50), y(50), xp(50), yp(50);
    for (int i = 0; i < 50; ++i) x[static_cast<std::size_t>(i)] = 1.0 + 0.1 * i;
    for (int i = 0; i < 50; ++i)
        xp[static_cast<std::size_t>(i)] = x[static_cast<std::size_t>(perm[i])];
    a.multiply(x.data(), y.data());
    b.multiply(xp.data(), yp.data());
    for (int i = 0; i < 50; ++i) {
        // Same products, summed in another column order: equal to rounding.
        EXPECT_NEAR(yp[static_cast<std::size_t>(i)], y[static_cast<std::size_t>(perm[i])], 1e-14);
    }
    for (std::int64_t i = 0; i < b.rows; ++i) {
        EXPECT_TRUE(std::is_sorted(b.col.begin() + b.row_ptr[i], b.col.begin() + b.row_ptr[i + 1]));
    }
}

TEST(Rcm, OrderIsAPermutationThatShrinksTheBandwidth) {
    const CsrMatrix a = shuffled_poisson(300);  // 90000 rows
    ASSERT_GE(max_row_span(a), 65536);
    const std::vector<std::int64_t> perm = rcm_order(a);
    std::vector<std::int64_t> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < sorted.size(); ++i)
        ASSERT_EQ(sorted[i], static_cast<std::int64_t>(i));
    // A 300 x 300 grid ordered by BFS fronts (diagonals of the grid): bandwidth ~2 * 300.
    EXPECT_LE(max_row_span(permute(a, perm)), 2 * 2 * 300 + 1);
}

// A pattern the caller knows to be symmetric is searched as it is, without the symmetrised
// copy: the same order. A pattern that is not quite symmetric still gives a permutation.
TEST(Rcm, SymmetricPatternAsItIsGivesTheSameOrder) {
    const CsrMatrix a = shuffled_poisson(60);
    EXPECT_EQ(rcm_order(a, true), rcm_order(a));
    CsrMatrix one_way = a;  // the mirrors of row 0's off-diagonal entries taken out
    for (std::int64_t k = a.row_ptr[0]; k < a.row_ptr[1]; ++k) {
        const std::int64_t j = a.col[k];
        if (j == 0) continue;
        for (std::int64_t q = one_way.row_ptr[j]; q < one_way.row_ptr[j + 1]; ++q) {
            if (one_way.col[q] == 0) one_way.col[q] = j;  // now a second diagonal entry
        }
    }
    std::vector<std::int64_t> perm = rcm_order(one_way, true);
    std::sort(perm.begin(), perm.end());
    for (std::size_t i = 0; i < perm.size(); ++i) EXPECT_EQ(perm[i], static_cast<std::int64_t>(i));
}

TEST(Rcm, DisconnectedComponentsAndIsolatedRows) {
    // Two decoupled Poisson blocks and a diagonal-only row in between.
    const CsrMatrix p = csr_test::poisson(4, 2);
    CsrMatrix a;
    a.rows = a.cols = 2 * p.rows + 1;
    for (int part = 0; part < 2; ++part) {
        const std::int64_t off = part == 0 ? 0 : p.rows + 1;
        for (std::int64_t i = 0; i < p.rows; ++i) {
            for (std::int64_t k = p.row_ptr[i]; k < p.row_ptr[i + 1]; ++k) {
                a.col.push_back(p.col[k] + off);
                a.val.push_back(p.val[k]);
            }
            a.row_ptr.push_back(a.nnz());
        }
        if (part == 0) {
            a.col.push_back(p.rows);
            a.val.push_back(1.0);
            a.row_ptr.push_back(a.nnz());
        }
    }
    std::vector<std::int64_t> perm = rcm_order(a);
    ASSERT_EQ(perm.size(), static_cast<std::size_t>(a.rows));
    std::sort(perm.begin(), perm.end());
    for (std::size_t i = 0; i < perm.size(); ++i) EXPECT_EQ(perm[i], static_cast<std::int64_t>(i));
}

TEST(Rcm, ReorderedAmgSolveReturnsXInTheCallersOrderWithCompactIndices) {
    const CsrMatrix a = shuffled_poisson(260);  // 67600 rows: spans >= 65536 columns
    ASSERT_GE(max_row_span(a), 65536);
    const fs::path dir = fs::temp_directory_path() / ("mpmg_rcm_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string file = (dir / "shuffled.mtx").string();
    write_matrix_market(file, a);
    SolverOptions o;
    o.problem.matrix = file;
    o.precision = parse_precision("K64P32D16");
    o.multigrid.smoother = SmootherKind::jacobi;
    const SolveResult given = solve(o);
    o.multigrid.reorder = ReorderKind::rcm;
    const SolveResult rcm = solve(o);
    fs::remove_all(dir);
    ASSERT_TRUE(given.converged) << given.message;
    ASSERT_TRUE(rcm.converged) << rcm.message;
    EXPECT_TRUE(given.reordered.empty());
    EXPECT_EQ(rcm.reordered, "rcm");
    // b = A 1: both solutions are 1 in the caller's numbering.
    ASSERT_TRUE(rcm.error_vs_exact.has_value());
    EXPECT_LT(*rcm.error_vs_exact, 1e-7);
    EXPECT_LT(*given.error_vs_exact, 1e-7);
    EXPECT_LE(std::abs(rcm.iterations - given.iterations), 3);
    // The finest level is FP16: only the renumbered one fits 16-bit column offsets.
    ASSERT_EQ(rcm.levels[0].storage, Precision::fp16);
    EXPECT_NE(rcm.levels[0].note.find("uint16"), std::string::npos) << rcm.levels[0].note;
    EXPECT_EQ(given.levels[0].note.find("uint16"), std::string::npos) << given.levels[0].note;
}

}  // namespace
}  // namespace mpmg

namespace mpmg {
namespace {

TEST(CsrTranspose, LargeMatrixOnThreadsEqualsTheDefinition) {
    // Above the threshold where transpose() splits rows over threads: every entry lands once,
    // rows sorted, and (A^T)^T = A exactly.
    const CsrMatrix a = csr_test::random_csr(60000, 6, 11, false);
    ASSERT_GT(a.nnz(), std::int64_t{1} << 18);
    const CsrMatrix t = a.transpose();
    ASSERT_EQ(t.nnz(), a.nnz());
    for (std::int64_t i = 0; i < t.rows; ++i) {
        ASSERT_TRUE(std::is_sorted(t.col.begin() + t.row_ptr[i], t.col.begin() + t.row_ptr[i + 1]));
    }
    const CsrMatrix back = t.transpose();
    EXPECT_EQ(back.row_ptr, a.row_ptr);
    EXPECT_EQ(back.col, a.col);
    EXPECT_EQ(back.val, a.val);
    // y = A^T x against the scatter of A's rows.
    std::vector<double> x(60000), y(60000), ref(60000, 0.0);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.01 * static_cast<double>(i));
    t.multiply(x.data(), y.data());
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            ref[static_cast<std::size_t>(a.col[p])] += a.val[p] * x[static_cast<std::size_t>(i)];
        }
    }
    for (std::size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], ref[i], 1e-12);
}

}  // namespace
}  // namespace mpmg
