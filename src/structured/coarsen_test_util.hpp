// Small matrix generators and dense comparisons shared by the coarsening and transfer tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "mpmg/csr_matrix.hpp"
#include "mpmg/sgdia_matrix.hpp"

namespace mpmg::test {

inline bool inside(const Box& b, std::int64_t cell, const Offset& o) {
    const std::int64_t i = cell % b.nx, j = (cell / b.nx) % b.ny,
                       k = cell / (std::int64_t{b.nx} * b.ny);
    return i + o.dx >= 0 && i + o.dx < b.nx && j + o.dy >= 0 && j + o.dy < b.ny && k + o.dz >= 0 &&
           k + o.dz < b.nz;
}

inline std::int64_t neighbour(const Box& b, std::int64_t cell, const Offset& o) {
    return cell + o.dx + std::int64_t{b.nx} * (o.dy + std::int64_t{b.ny} * o.dz);
}

/// A random 27-point matrix: off-diagonal entries in [-1, 0], diagonal blocks with `diag` on
/// the diagonal and small off-diagonal parts; zero outside the box. With `symmetric`, the
/// matrix equals its transpose (value(d, c, a, b) = value(-d, c + d, b, a)).
inline SgDiaMatrix<double> random27(Box box, int r, bool symmetric, unsigned seed,
                                    double diag = 30.0) {
    SgDiaMatrix<double> m(box, Stencil::full27(), r);
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> u(-1.0, 0.0);
    const Stencil& st = m.stencil();
    for (int d = 0; d < st.size(); ++d) {
        const Offset o = st[d];
        const int mirror = st.find(Offset{-o.dx, -o.dy, -o.dz});
        if (symmetric && d > st.center()) continue;  // filled as the mirror of d' < centre
        for (std::int64_t c = 0; c < box.cells(); ++c) {
            if (!inside(box, c, o)) continue;
            for (int a = 0; a < r; ++a) {
                for (int b = 0; b < r; ++b) {
                    if (d == st.center() && symmetric && b < a) continue;
                    double v = u(gen);
                    if (d == st.center()) v = a == b ? diag : 0.1 * v;
                    m.value(d, c, a, b) = v;
                    if (symmetric) m.value(mirror, neighbour(box, c, o), b, a) = v;
                }
            }
        }
    }
    return m;
}

/// A constant-coefficient stencil: `centre` on the diagonal, coefficient(o) on neighbour o.
template <class F>
SgDiaMatrix<double> constant(Box box, const Stencil& st, double centre, F coefficient) {
    SgDiaMatrix<double> m(box, st, 1);
    for (int d = 0; d < st.size(); ++d) {
        for (std::int64_t c = 0; c < box.cells(); ++c) {
            if (!inside(box, c, st[d])) continue;
            m.value(d, c, 0, 0) = d == st.center() ? centre : coefficient(st[d]);
        }
    }
    return m;
}

inline std::vector<double> dense(const CsrMatrix& a) {
    std::vector<double> m(static_cast<std::size_t>(a.rows * a.cols), 0.0);
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            m[static_cast<std::size_t>(i * a.cols + a.col[p])] += a.val[p];
        }
    }
    return m;
}

/// Max |a - b| relative to max |b|, over dense forms.
inline double relative_difference(const CsrMatrix& a, const CsrMatrix& b) {
    EXPECT_EQ(a.rows, b.rows);
    EXPECT_EQ(a.cols, b.cols);
    if (a.rows != b.rows || a.cols != b.cols) return 1.0;
    const std::vector<double> x = dense(a), y = dense(b);
    double diff = 0.0, scale = 0.0;
    for (std::size_t q = 0; q < x.size(); ++q) {
        diff = std::max(diff, std::fabs(x[q] - y[q]));
        scale = std::max(scale, std::fabs(y[q]));
    }
    return scale > 0 ? diff / scale : diff;
}

inline std::vector<double> random_vector(std::int64_t n, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> v(static_cast<std::size_t>(n));
    for (double& x : v) x = u(gen);
    return v;
}

}  // namespace mpmg::test
