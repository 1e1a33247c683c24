// Test fixtures for the CSR / AMG tests: Poisson matrices, seeded random matrices, and loading
// the shared real matrices.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "mpmg/csr_matrix.hpp"
#include "mpmg_paths.hpp"

namespace mpmg::csr_test {

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

inline std::string shared_matrix(const std::string& name) {
    return std::string(MPMG_SHARED_DATA) + "/" + name + ".mtx.gz";
}

}  // namespace mpmg::csr_test
