// Implicit time steps of a heat equation with mpmg::Solver, using only the public headers: the
// matrix is assembled in the application's own CSR, set up once, and every step solves from the
// last step's solution on the same hierarchy.
//
//   u_t = div(k grad u) on the unit cube, u = 0 on the boundary, backward Euler:
//   (I / dt + A) u_{n+1} = u_n / dt + f,   A the 7-point finite-volume operator of -div(k grad),
//   k = 1 in the lower half of the cube and 1000 in the upper half (a material jump).
//
// Usage: mpmg_example_heat [N] [STEPS]   (N cells per direction, default 48; 10 steps).
// Exit code 0 when every step converged and ||b - A u|| / ||b|| <= 1e-8 as checked here.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "mpmg/csr_matrix.hpp"
#include "mpmg/errors.hpp"
#include "mpmg/solver.hpp"

namespace {

double conductivity(int k, int n) { return k < n / 2 ? 1.0 : 1000.0; }

/// I / dt + A on an n^3 grid of cells (h = 1 / n), cell (i, j, k) numbered i + n (j + n k).
mpmg::CsrMatrix assemble(int n, double dt) {
    const double h2 = 1.0 / (static_cast<double>(n) * n);
    mpmg::CsrMatrix a;
    a.rows = a.cols = std::int64_t{n} * n * n;
    a.row_ptr.reserve(static_cast<std::size_t>(a.rows) + 1);
    const int di[6] = {0, 0, 0, 0, -1, 1}, dj[6] = {0, 0, -1, 1, 0, 0}, dk[6] = {-1, 1, 0, 0, 0, 0};
    for (int k = 0; k < n; ++k) {
        for (int j = 0; j < n; ++j) {
            for (int i = 0; i < n; ++i) {
                const std::int64_t row = i + std::int64_t{n} * (j + std::int64_t{n} * k);
                double centre = 1.0 / dt;
                // Neighbours in increasing column order: -z, -y, -x, centre, +x, +y, +z.
                const int order[6] = {0, 2, 4, 5, 3, 1};
                std::vector<std::pair<std::int64_t, double>> entries;
                for (int o : order) {
                    const int ii = i + di[o], jj = j + dj[o], kk = k + dk[o];
                    const bool kin = kk >= 0 && kk < n;
                    // Harmonic mean of the two cells' k on a face; a boundary face sees its own
                    // cell's k over half a cell.
                    const double kc = conductivity(k, n);
                    if (ii < 0 || ii >= n || jj < 0 || jj >= n || !kin) {
                        centre += 2.0 * kc / h2;
                        continue;
                    }
                    const double kn = conductivity(kk, n);
                    const double face = 2.0 * kc * kn / (kc + kn) / h2;
                    centre += face;
                    entries.emplace_back(ii + std::int64_t{n} * (jj + std::int64_t{n} * kk), -face);
                }
                entries.emplace_back(row, centre);
                std::sort(entries.begin(), entries.end());
                for (const auto& [col, val] : entries) {
                    a.col.push_back(col);
                    a.val.push_back(val);
                }
                a.row_ptr.push_back(a.nnz());
            }
        }
    }
    return a;
}

}  // namespace

int main(int argc, char** argv) {
    const int n = argc > 1 ? std::atoi(argv[1]) : 48;
    const int steps = argc > 2 ? std::atoi(argv[2]) : 10;
    if (n < 2 || n > 1000 || steps < 1) {
        std::fprintf(stderr, "usage: %s [N in 2..1000] [STEPS >= 1]\n", argv[0]);
        return 2;
    }
    const double dt = 1e-3;
    mpmg::keep_freed_memory();  // many solves in one process (README "Memory of the hierarchy")
    try {
        mpmg::SolverOptions options;  // precision auto, CG for this symmetric matrix, rtol 1e-10
        options.problem.grid = {n, n, n};  // the structured path: the matrix lives on this grid
        mpmg::Solver solver(options);
        const mpmg::CsrMatrix a = assemble(n, dt);
        const mpmg::SetupResult setup = solver.setup(a);  // a copy: `a` checks the result below
        std::printf("setup: %lld rows, %zu levels, level 0 stored in %s, %.3f s\n",
                    static_cast<long long>(setup.rows), setup.levels.size(),
                    std::string(mpmg::to_string(setup.levels.front().storage)).c_str(),
                    setup.setup_s);
        std::vector<double> u(static_cast<std::size_t>(a.rows), 0.0), b(u.size()), au(u.size());
        double solve_s = 0.0;
        for (int step = 1; step <= steps; ++step) {
            for (std::size_t c = 0; c < u.size(); ++c) b[c] = u[c] / dt + 1.0;  // f = 1
            const auto t0 = std::chrono::steady_clock::now();
            const mpmg::SolveResult r = solver.solve(b, u);  // from u_n to u_{n+1}
            solve_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            a.multiply(u.data(), au.data());
            double r2 = 0.0, b2 = 0.0;
            for (std::size_t c = 0; c < u.size(); ++c) {
                r2 += (b[c] - au[c]) * (b[c] - au[c]);
                b2 += b[c] * b[c];
            }
            const double rel = std::sqrt(r2 / b2);
            std::printf("step %2d: %2d iterations, ||b - A u|| / ||b|| = %.2e, %.3f s\n", step,
                        r.iterations, rel, r.total_s);
            if (!r.converged || !(rel <= 1e-8)) {
                std::fprintf(stderr, "step %d failed: %s\n", step, r.message.c_str());
                return 3;
            }
        }
        std::printf("%d steps: setup %.3f s once, solves %.3f s in all\n", steps, setup.setup_s,
                    solve_s);
    } catch (const mpmg::Error& e) {
        std::fprintf(stderr, "mpmg: %s\n", e.what());
        return 2;
    }
    return 0;
}
