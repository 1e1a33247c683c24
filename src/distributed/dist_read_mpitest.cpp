// The AMG path's read in parts (dist_read.hpp, load_csr) against the whole read of the same
// file (api/problem_input.hpp, load_csr): the rows every process holds, gathered, are the whole
// matrix to the bit (duplicates summed in the file's order, mirrors of symmetric storage,
// explicit zeros dropped after the symmetry test), b and x_exact are the same, and so is the
// solver chosen; a bad file gives every process the whole read's error. Run by ctest under
// mpirun (tests/mpi_unit_main.cpp) on 2, 3 and 4 processes, so the parts' cuts move.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "api/problem_input.hpp"
#include "distributed/dist_csr.hpp"
#include "distributed/dist_read.hpp"
#include "distributed/mpi_test_util.hpp"
#include "mpmg/errors.hpp"
#include "temp_dir.hpp"

namespace mpmg::dist {
namespace {

namespace fs = std::filesystem;
using testing::rank;

/// A folder every process names alike (rank 0's process id).
fs::path shared_dir() {
    static const mpmg::test::TempDir dir = [] {
        long pid = rank() == 0 ? static_cast<long>(::getpid()) : 0;
        MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
        return mpmg::test::TempDir("mpmg_dist_read_", pid, rank() == 0);
    }();
    static const bool made = [] {  // by rank 0, before any process uses it
        MPI_Barrier(MPI_COMM_WORLD);
        return true;
    }();
    (void)made;
    return dir.path();
}

/// Rank 0 writes `text` to `name` in the shared folder; every process gets its path.
std::string write(const std::string& name, const std::string& text) {
    const fs::path path = shared_dir() / name;
    if (rank() == 0) std::ofstream(path) << text;
    MPI_Barrier(MPI_COMM_WORLD);
    return path.string();
}

struct Line {
    std::int64_t i, j;  // one-based
    double v;
};

/// A coordinate file with `banner`'s symmetry and field, comments and blank lines among the
/// entries; entry line `bad` (zero-based) reads "1 1 abc", and the size line declares
/// `declared` entries (-1: as many as there are).
std::string mtx(const std::string& banner, std::int64_t rows, std::int64_t cols,
                const std::vector<Line>& lines, bool pattern = false, std::int64_t bad = -1,
                std::int64_t declared = -1) {
    std::string text = "%%MatrixMarket matrix coordinate " + banner + "\n% a test matrix\n";
    text += std::to_string(rows) + " " + std::to_string(cols) + " " +
            std::to_string(declared >= 0 ? declared : static_cast<std::int64_t>(lines.size())) +
            "\n";
    for (std::size_t k = 0; k < lines.size(); ++k) {
        char line[96];
        if (static_cast<std::int64_t>(k) == bad) {
            std::snprintf(line, sizeof line, "1 1 abc\n");
        } else if (pattern) {
            std::snprintf(line, sizeof line, "%lld %lld\n", static_cast<long long>(lines[k].i),
                          static_cast<long long>(lines[k].j));
        } else {
            std::snprintf(line, sizeof line, "%lld %lld %.17g\n",
                          static_cast<long long>(lines[k].i), static_cast<long long>(lines[k].j),
                          lines[k].v);
        }
        text += line;
        if (k % 37 == 5) text += "% a comment\n\n";
    }
    return text;
}

/// Random entries of an n x n matrix (a nonzero diagonal, every row some neighbours, entries
/// given two or three times far apart in the file, a few stored zeros, one empty row).
std::vector<Line> random_lines(std::int64_t n, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_int_distribution<std::int64_t> col(1, n);
    std::uniform_real_distribution<double> val(-1.0, 1.0);
    std::vector<Line> lines;
    for (std::int64_t i = 1; i <= n; ++i) {
        if (i == n / 2) continue;  // an empty row
        lines.push_back({i, i, 4.0 + val(gen)});
        for (int k = 0; k < 4; ++k) lines.push_back({i, col(gen), val(gen) / 3.0});
        if (i % 11 == 0) lines.push_back({i, col(gen), 0.0});
    }
    // Entries given two and three times: three values summed in another order differ in the
    // last bits.
    const std::size_t first = lines.size();
    for (std::size_t k = 0; k < first; k += 5) {
        lines.push_back({lines[k].i, lines[k].j, val(gen)});
        if (k % 2 == 0) lines.push_back({lines[k].i, lines[k].j, val(gen) * 1e3});
    }
    std::shuffle(lines.begin(), lines.end(), gen);
    return lines;
}

/// The lower triangle (i >= j) of a symmetric random matrix, duplicates included.
std::vector<Line> lower_lines(std::int64_t n, unsigned seed) {
    std::vector<Line> lines;
    for (const Line& l : random_lines(n, seed)) {
        lines.push_back(l.i >= l.j ? l : Line{l.j, l.i, l.v});
    }
    return lines;
}

/// The whole read and the read in parts of the same file agree bit for bit; both know A = A^T
/// exactly when `exactly_symmetric` (a file stored symmetric, its sums finite).
void expect_same(const std::string& path, const std::string& rhs = "",
                 bool exactly_symmetric = false) {
    SCOPED_TRACE(path);
    ProblemOptions po;
    po.matrix = path;
    po.rhs = rhs;
    const CsrProblem whole = mpmg::load_csr(po);
    std::optional<CsrRows> rows = dist::load_csr(po);
    ASSERT_TRUE(rows.has_value());
    EXPECT_EQ(rows->name, whole.name);
    EXPECT_EQ(rows->solver, whole.solver);
    EXPECT_EQ(whole.exactly_symmetric, exactly_symmetric);
    EXPECT_EQ(rows->exactly_symmetric, exactly_symmetric);
    if (exactly_symmetric) {
        EXPECT_TRUE(is_symmetric(whole.a, false, 0.0));  // what the flag spares measuring
    }
    EXPECT_EQ(rows->nnz, whole.a.nnz());
    EXPECT_EQ(rows->x_exact, whole.x_exact);
    ASSERT_EQ(rows->rows.global_rows(), whole.a.rows);
    ASSERT_EQ(rows->mine.rows, rows->rows.rows(rank()));
    ASSERT_EQ(rows->b.size(), static_cast<std::size_t>(rows->mine.rows));
    const CsrMatrix gathered = gather_rows(rows->mine, rows->rows, MPI_COMM_WORLD);
    const auto first = static_cast<std::size_t>(rows->rows.first(rank()));
    for (std::size_t i = 0; i < rows->b.size(); ++i) {
        EXPECT_EQ(rows->b[i], whole.b[first + i]) << "row " << first + i;
    }
    if (rank() == 0) {
        EXPECT_EQ(gathered.rows, whole.a.rows);
        EXPECT_EQ(gathered.cols, whole.a.cols);
        EXPECT_EQ(gathered.row_ptr, whole.a.row_ptr);
        EXPECT_EQ(gathered.col, whole.a.col);
        EXPECT_EQ(gathered.val, whole.a.val);  // to the bit: the same sums in the same order
    }
}

TEST(LoadCsr, RowsAreTheWholeReadsToTheBit) {
    // Nonsymmetric, general storage: GMRES; and the same file gzipped (cut by the bytes of its
    // decompressed text).
    const std::string general =
        write("general.mtx", mtx("real general", 301, 301, random_lines(301, 1)));
    expect_same(general);
    if (rank() == 0) {
        EXPECT_EQ(std::system(("gzip -kf " + general).c_str()), 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    expect_same(general + ".gz");
    // Symmetric storage, mirrored by the reader, duplicates in the lower triangle: CG.
    expect_same(write("symmetric.mtx", mtx("real symmetric", 257, 257, lower_lines(257, 2))), "",
                true);
    // Skew-symmetric storage (mirrors negated; the diagonal stays): not symmetric.
    std::vector<Line> skew;
    for (const Line& l : lower_lines(190, 3)) {
        if (l.i != l.j) skew.push_back(l);
    }
    expect_same(write("skew.mtx", mtx("real skew-symmetric", 190, 190, skew)));
    // A pattern file (values 1) in symmetric storage.
    expect_same(write("pattern.mtx", mtx("pattern symmetric", 150, 150, lower_lines(150, 4), true)),
                "", true);
    // Rows summing to zero (1 is in the null space): b = A x with x_i = 1 + (i mod 10) / 10
    // and no exact solution.
    std::vector<Line> laplacian;
    for (std::int64_t i = 1; i <= 200; ++i) {
        laplacian.push_back({i, i, i == 1 || i == 200 ? 1.0 : 2.0});
        if (i > 1) laplacian.push_back({i, i - 1, -1.0});
        if (i < 200) laplacian.push_back({i, i + 1, -1.0});
    }
    const std::string neumann = write("neumann.mtx", mtx("real general", 200, 200, laplacian));
    expect_same(neumann);
    // A right-hand side from a file.
    std::string b = "%%MatrixMarket matrix array real general\n200 1\n";
    for (int i = 0; i < 200; ++i) b += std::to_string(0.5 * i - 3.0) + "\n";
    expect_same(neumann, write("b.mtx", b));
}

// Symmetric values within 1e-12 max |a| are symmetric (CG); beyond it, or a stored zero
// without its mirror, they are not (GMRES), as is_symmetric decides on the whole matrix.
TEST(LoadCsr, TheSymmetryTestIsTheWholeMatrixOnes) {
    const auto with = [](double mirror, bool zero_pair) {
        std::vector<Line> lines;
        for (std::int64_t i = 1; i <= 120; ++i) {
            lines.push_back({i, i, 3.0});
            if (i > 1) lines.push_back({i, i - 1, -1.0});
            if (i < 120) lines.push_back({i, i + 1, i == 7 ? mirror : -1.0});
        }
        lines.push_back({2, 119, 0.0});  // far apart: different processes hold the rows
        if (zero_pair) lines.push_back({119, 2, 0.0});
        return lines;
    };
    int k = 0;
    for (const double mirror : {-1.0, -1.0 + 1e-13, -1.0 + 1e-9}) {
        for (const bool zero_pair : {true, false}) {
            const std::string path = write("sym" + std::to_string(k++) + ".mtx",
                                           mtx("real general", 120, 120, with(mirror, zero_pair)));
            ProblemOptions po;
            po.matrix = path;
            const bool close = std::fabs(mirror + 1.0) <= 1e-12 * 3.0;  // max |a| = 3
            const SolverKind expected = close && zero_pair ? SolverKind::cg : SolverKind::gmres;
            EXPECT_EQ(mpmg::load_csr(po).solver, expected) << path;
            expect_same(path);
        }
    }
}

// Every process throws the whole read's error, whichever part holds the bad line.
TEST(LoadCsr, BadFilesGiveTheWholeReadsError) {
    const std::vector<Line> lines = random_lines(200, 5);
    const auto n = static_cast<std::int64_t>(lines.size());
    std::vector<std::string> paths;
    for (const std::int64_t at : {std::int64_t{3}, n / 2, n - 1}) {
        paths.push_back(write("bad" + std::to_string(at) + ".mtx",
                              mtx("real general", 200, 200, lines, false, at)));
    }
    paths.push_back(write("short.mtx", mtx("real general", 200, 200, lines, false, -1, n + 1)));
    paths.push_back(write("long.mtx", mtx("real general", 200, 200, lines, false, -1, n - 1)));
    paths.push_back(write("wide.mtx", mtx("real general", 200, 201, lines)));
    paths.push_back(
        write("index.mtx", mtx("real general", 200, 200, {{1, 1, 1.0}, {3, 250, 2.0}})));
    // Repeated entries that sum beyond the doubles, on the last process's rows (and a mirror on
    // the first's): the first in row order is named.
    std::vector<Line> overflow = lower_lines(257, 2);
    overflow.push_back({250, 3, 1e308});
    overflow.push_back({250, 3, 1e308});
    paths.push_back(write("overflow.mtx", mtx("real symmetric", 257, 257, overflow)));
    for (const std::string& path : paths) {
        SCOPED_TRACE(path);
        ProblemOptions po;
        po.matrix = path;
        std::string whole_error, parts_error;
        try {
            (void)mpmg::load_csr(po);
        } catch (const InvalidInput& e) {
            whole_error = e.what();
        }
        try {
            (void)dist::load_csr(po);
        } catch (const InvalidInput& e) {
            parts_error = e.what();
        }
        EXPECT_FALSE(whole_error.empty());
        EXPECT_EQ(parts_error, whole_error);
        if (path == paths.back()) {
            EXPECT_NE(parts_error.find("overflow.mtx: the entries given for (3, 250) sum to inf"),
                      std::string::npos)
                << parts_error;
        }
    }
}

}  // namespace
}  // namespace mpmg::dist
