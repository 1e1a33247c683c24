// A pure-Neumann (singular, consistent) system from a file: the default right-hand side is not
// A * 1 (rounding noise when 1 spans the null space), the coarsest level applies the
// pseudo-inverse, and FP32/FP16 preconditioners converge like FP64 instead of diverging.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "io/matrix_market.hpp"
#include "mpmg/solver.hpp"

namespace mpmg {
namespace {

namespace fs = std::filesystem;

/// 7-point Laplacian on an n^3 grid with Neumann boundaries: every row sums to zero.
CsrMatrix neumann7(int n) {
    CsrMatrix a;
    a.rows = a.cols = std::int64_t{n} * n * n;
    const auto id = [n](int i, int j, int k) {
        return i + std::int64_t{n} * (j + std::int64_t{n} * k);
    };
    for (int k = 0; k < n; ++k) {
        for (int j = 0; j < n; ++j) {
            for (int i = 0; i < n; ++i) {
                const int nb[6][3] = {{i, j, k - 1}, {i, j - 1, k}, {i - 1, j, k},
                                      {i + 1, j, k}, {i, j + 1, k}, {i, j, k + 1}};
                double diag = 0.0;
                std::size_t at = 0;
                for (int q = 0; q < 6; ++q) {
                    const int* c = nb[q];
                    if (q == 3) {  // the diagonal sits between the lower and upper neighbours
                        at = a.col.size();
                        a.col.push_back(id(i, j, k));
                        a.val.push_back(0.0);
                    }
                    if (c[0] < 0 || c[1] < 0 || c[2] < 0 || c[0] >= n || c[1] >= n || c[2] >= n) {
                        continue;
                    }
                    a.col.push_back(id(c[0], c[1], c[2]));
                    a.val.push_back(-1.0);
                    diag += 1.0;
                }
                a.val[at] = diag;
                a.row_ptr.push_back(static_cast<std::int64_t>(a.col.size()));
            }
        }
    }
    return a;
}

TEST(SingularNeumann, FileWithoutRhsConvergesInEveryPrecision) {
    const fs::path dir = fs::temp_directory_path() / ("mpmg_neumann_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string path = (dir / "neumann.mtx").string();
    write_matrix_market(path, neumann7(14));
    int dp_iterations = 0;
    for (const char* precision : {"K64P64D64", "K64P32D32", "auto"}) {
        SCOPED_TRACE(precision);
        SolverOptions o;
        o.problem.matrix = path;
        o.method = MethodKind::amg;
        o.precision = parse_precision(precision);
        o.rtol = 1e-10;
        o.max_iter = 200;
        const SolveResult r = solve(o);
        ASSERT_TRUE(r.converged) << r.message;
        EXPECT_TRUE(r.guard_events.empty());
        EXPECT_FALSE(r.error_vs_exact.has_value());  // the solution is not unique
        for (double v : r.x) ASSERT_TRUE(std::isfinite(v));
        if (dp_iterations == 0) dp_iterations = r.iterations;
        EXPECT_LE(r.iterations, dp_iterations + 2);
    }
    fs::remove_all(dir);
}

}  // namespace
}  // namespace mpmg
