// Test fixtures for the CSR / AMG tests: Poisson matrices, seeded random matrices, and loading
// the shared real matrices.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "mpmg/csr_matrix.hpp"
#include "mpmg_paths.hpp"

namespace mpmg::csr_test {

/// The n x n matrix of `rows` (one container of (column, value) pairs in column order per row).
template <class Rows>
CsrMatrix from_rows(std::int64_t n, const Rows& rows) {
    CsrMatrix a;
    a.rows = a.cols = n;
    for (const auto& r : rows) {
        for (const auto& [j, v] : r) {
            a.col.push_back(j);
            a.val.push_back(v);
        }
        a.row_ptr.push_back(a.nnz());
    }
    return a;
}

/// 5-point (dim 2) or 7-point (dim 3) -Laplacian on an n^dim grid, Dirichlet, times `scale`.
inline CsrMatrix poisson(int n, int dim, double scale = 1.0) {
    CsrMatrix a;
    const std::int64_t nn = n, rows = dim == 2 ? nn * nn : nn * nn * nn;
    a.rows = a.cols = rows;
    const std::int64_t stride[3] = {1, nn, nn * nn};
    for (std::int64_t i = 0; i < rows; ++i) {
        const std::int64_t c[3] = {i % nn, (i / nn) % nn, i / (nn * nn)};
        std::set<std::int64_t> cols;
        for (int d = dim - 1; d >= 0; --d) {
            if (c[d] > 0) cols.insert(i - stride[d]);
            if (c[d] < nn - 1) cols.insert(i + stride[d]);
        }
        cols.insert(i);
        for (std::int64_t j : cols) {
            a.col.push_back(j);
            a.val.push_back(scale * (j == i ? 2.0 * dim : -1.0));
        }
        a.row_ptr.push_back(a.nnz());
    }
    return a;
}

/// 5-point Laplacian on nx x nx (Dirichlet) plus first-order upwind convection `c` in x (c > 0
/// makes it nonsymmetric).
inline CsrMatrix convection_diffusion(int nx, double c) {
    CsrMatrix a;
    a.rows = a.cols = std::int64_t{nx} * nx;
    for (int y = 0; y < nx; ++y) {
        for (int x = 0; x < nx; ++x) {
            const auto add = [&](int i, int j, double v) {
                if (i >= 0 && j >= 0 && i < nx && j < nx) {
                    a.col.push_back(i + std::int64_t{nx} * j);
                    a.val.push_back(v);
                }
            };
            add(x, y - 1, -1.0);
            add(x - 1, y, -1.0 - c);
            add(x, y, 4.0 + c);
            add(x + 1, y, -1.0);
            add(x, y + 1, -1.0);
            a.row_ptr.push_back(a.nnz());
        }
    }
    return a;
}

/// Plane-stress linear elasticity (Young's modulus 1, Poisson ratio `nu`) on nx x ny square
/// bilinear (Q1) elements, 2 x 2 Gauss points, clamped at x = 0 (those nodes removed): the
/// free nodes in lexicographic order, each with its x and y displacement (r = 2, node by
/// node). `blocked`: all x displacements first, then all y (the same matrix renumbered).
inline CsrMatrix elasticity2d(int nx, int ny, double nu, bool blocked = false) {
    const double c = 1.0 / (1.0 - nu * nu);  // D = c [1 nu 0; nu 1 0; 0 0 (1 - nu) / 2]
    const double d[3][3] = {{c, c * nu, 0.0}, {c * nu, c, 0.0}, {0.0, 0.0, c * (1.0 - nu) / 2}};
    double ke[8][8] = {};  // element dofs: node (0,0), (1,0), (0,1), (1,1); x then y each
    const double g = 1.0 / std::sqrt(3.0);
    for (double gx : {-g, g}) {
        for (double gy : {-g, g}) {
            double b[3][8] = {};
            for (int k = 0; k < 4; ++k) {
                const double sx = k % 2 == 0 ? -1.0 : 1.0, sy = k / 2 == 0 ? -1.0 : 1.0;
                // phi_k = (1 + sx xi)(1 + sy eta) / 4 on [-1, 1]^2; unit element: dx = dxi / 2
                const double dx = sx * (1.0 + sy * gy) / 2.0, dy = sy * (1.0 + sx * gx) / 2.0;
                b[0][2 * k] = dx;
                b[1][2 * k + 1] = dy;
                b[2][2 * k] = dy;
                b[2][2 * k + 1] = dx;
            }
            for (int i = 0; i < 8; ++i) {
                for (int j = 0; j < 8; ++j) {
                    double s = 0.0;
                    for (int p = 0; p < 3; ++p) {
                        for (int q = 0; q < 3; ++q) s += b[p][i] * d[p][q] * b[q][j];
                    }
                    ke[i][j] += s / 4.0;  // Gauss weight 1, det J = 1/4
                }
            }
        }
    }
    const std::int64_t nodes = std::int64_t{nx} * (ny + 1);  // free nodes: x = 1 .. nx
    const auto dof = [&](int x, int y, int comp) -> std::int64_t {
        if (x == 0) return -1;
        const std::int64_t node = std::int64_t{y} * nx + (x - 1);
        return blocked ? comp * nodes + node : 2 * node + comp;
    };
    std::vector<std::map<std::int64_t, double>> rows(static_cast<std::size_t>(2 * nodes));
    for (int ey = 0; ey < ny; ++ey) {
        for (int ex = 0; ex < nx; ++ex) {
            std::int64_t ids[8];
            for (int k = 0; k < 4; ++k) {
                for (int comp = 0; comp < 2; ++comp) {
                    ids[2 * k + comp] = dof(ex + k % 2, ey + k / 2, comp);
                }
            }
            for (int i = 0; i < 8; ++i) {
                for (int j = 0; j < 8; ++j) {
                    if (ids[i] >= 0 && ids[j] >= 0) rows[ids[i]][ids[j]] += ke[i][j];
                }
            }
        }
    }
    return from_rows(2 * nodes, rows);
}

/// Row scales 10^u, u uniform in [-decades, decades], from a linear congruential sequence
/// started at `seed` (the same on every platform, unlike the std distributions).
inline std::vector<double> rough_scales(std::int64_t n, double decades, std::uint64_t seed) {
    std::vector<double> s(static_cast<std::size_t>(n));
    std::uint64_t state = seed;
    for (double& v : s) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        const double u = static_cast<double>(state >> 11) / 9007199254740992.0;  // [0, 1)
        v = std::pow(10.0, decades * (2.0 * u - 1.0));
    }
    return s;
}

/// Random n x n matrix with about `per_row` off-diagonal entries per row in [-1, 1] and a
/// diagonal in [1, 2]; `symmetric` mirrors the pattern and the values.
inline CsrMatrix random_csr(std::int64_t n, int per_row, std::uint64_t seed, bool symmetric) {
    std::mt19937_64 gen(seed);
    std::uniform_int_distribution<std::int64_t> pick(0, n - 1);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<std::set<std::pair<std::int64_t, double>>> rows(static_cast<std::size_t>(n));
    std::vector<std::set<std::int64_t>> seen(static_cast<std::size_t>(n));
    const auto add = [&](std::int64_t i, std::int64_t j, double v) {
        if (seen[static_cast<std::size_t>(i)].insert(j).second) {
            rows[static_cast<std::size_t>(i)].insert({j, v});
        }
    };
    for (std::int64_t i = 0; i < n; ++i) {
        add(i, i, 1.5 + 0.5 * u(gen));
        for (int k = 0; k < per_row; ++k) {
            const std::int64_t j = pick(gen);
            if (j == i) continue;
            const double v = u(gen);
            if (seen[static_cast<std::size_t>(i)].count(j) != 0) continue;
            add(i, j, v);
            if (symmetric) add(j, i, v);
        }
    }
    return from_rows(n, rows);
}

inline std::string shared_matrix(const std::string& name) {
    return std::string(MPMG_SHARED_DATA) + "/" + name + ".mtx.gz";
}

}  // namespace mpmg::csr_test
