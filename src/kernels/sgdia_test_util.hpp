// Shared helpers for the SG-DIA kernel and operation tests: the supported (S, C) pairs as a
// typed-test list, grid cases, seeded random diagonally dominant matrices, and tolerances derived
// from the compute precision's epsilon.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/float16.hpp"
#include "kernels/reference/sgdia_reference.hpp"
#include "kernels/sgdia.hpp"
#include "mpmg/sgdia_matrix.hpp"

namespace mpmg::testing {

template <class S, class C>
struct Pair {
    using Storage = S;
    using Compute = C;
};
using SupportedPairs =
    ::testing::Types<Pair<double, double>, Pair<float, double>, Pair<half, double>,
                     Pair<bfloat16, double>, Pair<float, float>, Pair<half, float>,
                     Pair<bfloat16, float>>;

/// One test grid: stencil name, block size r, box.
struct GridCase {
    const char* stencil;
    int block;
    Box box;
};

inline std::string describe(const GridCase& c) {
    return std::string(c.stencil) + " r=" + std::to_string(c.block) + " " +
           std::to_string(c.box.nx) + "x" + std::to_string(c.box.ny) + "x" +
           std::to_string(c.box.nz);
}

/// A random matrix stored in S: off-diagonal entries uniform in [-1, 1], the centre block
/// diagonal 1 + 1.5 x (sum of |off-diagonal| in its row), so Gauss-Seidel and Jacobi are well
/// defined after truncation to S. Entries whose neighbour is outside the box are NaN: a kernel
/// that reads one poisons its result.
template <class S>
SgDiaMatrix<S> random_matrix(Box box, const Stencil& st, int r, unsigned seed) {
    SgDiaMatrix<S> a(box, st, r);
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (std::int64_t c = 0; c < box.cells(); ++c) {
        for (int ra = 0; ra < r; ++ra) {
            double off = 0.0;
            for (int d = 0; d < st.size(); ++d) {
                for (int rb = 0; rb < r; ++rb) {
                    if (!a.neighbour_inside(c, d)) {
                        a.value(d, c, ra, rb) = from_double<S>(nan);
                        continue;
                    }
                    if (d == st.center() && ra == rb) continue;
                    const S v = from_double<S>(dist(gen));
                    a.value(d, c, ra, rb) = v;
                    off += std::fabs(to_double(v));
                }
            }
            a.value(st.center(), c, ra, ra) = from_double<S>(1.0 + 1.5 * off);
        }
    }
    return a;
}

/// Makes `a` symmetric bit for bit across every pair of cells inside the box: each lower
/// offset's values (and the centre blocks' upper triangles) copied from the transposed blocks
/// of the mirrored ones. Entries whose neighbour is outside the box are left as they are.
inline void symmetrize(SgDiaMatrix<double>& a) {
    const Stencil& st = a.stencil();
    const Box& b = a.box();
    const int r = a.block();
    for (int d = st.center(); d < st.size(); ++d) {
        const Offset& o = st[d];
        const int m = st.find(Offset{-o.dx, -o.dy, -o.dz});
        const std::int64_t shift = o.dx + std::int64_t{b.nx} * (o.dy + std::int64_t{b.ny} * o.dz);
        for (std::int64_t c = 0; c < b.cells(); ++c) {
            if (!a.neighbour_inside(c, d)) continue;
            for (int ra = 0; ra < r; ++ra) {
                for (int rb = 0; rb < r; ++rb) {
                    if (d == st.center() && rb >= ra) continue;
                    a.value(m, c + shift, rb, ra) = a.value(d, c, ra, rb);
                }
            }
        }
    }
}

template <class C>
std::vector<C> random_vector(std::int64_t n, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    std::vector<C> v(static_cast<std::size_t>(n));
    for (C& e : v) e = static_cast<C>(dist(gen));
    return v;
}

template <class C>
std::vector<double> to_double_vector(const std::vector<C>& v) {
    return std::vector<double>(v.begin(), v.end());
}

/// |A| in FP64 (entries outside the box, never read, become 0).
template <class S>
SgDiaMatrix<double> abs_matrix(const SgDiaMatrix<S>& a) {
    SgDiaMatrix<double> m(a.box(), a.stencil(), a.block());
    for (int d = 0; d < a.stencil().size(); ++d) {
        for (std::int64_t e = 0; e < a.diag_values(); ++e) {
            const double v = std::fabs(to_double(a.diagonal(d)[e]));
            m.diagonal(d)[e] = std::isnan(v) ? 0.0 : v;
        }
    }
    return m;
}

/// Per row: 64 eps_C (|b| + sum |a||x|), the bound for a product or residual in C.
template <class C, class S>
std::vector<double> row_tolerance(const SgDiaMatrix<S>& a, const std::vector<double>& x,
                                  const std::vector<double>* b = nullptr) {
    std::vector<double> ax(x.size()), t(x.size());
    for (std::size_t e = 0; e < x.size(); ++e) ax[e] = std::fabs(x[e]);
    reference::spmv(abs_matrix(a), ax.data(), t.data());
    const double eps = std::numeric_limits<C>::epsilon();
    for (std::size_t e = 0; e < t.size(); ++e)
        t[e] = 64 * eps * (t[e] + (b ? std::fabs((*b)[e]) : 0));
    return t;
}

/// Uniform bound for a smoothing step in C: 64 eps_C (max|b| + max row sum |A| max|x|) divided
/// by the smallest Gershgorin bound of a diagonal entry (errors of earlier Gauss-Seidel updates
/// are damped by the diagonal dominance, factor < 3).
template <class C, class S>
double smoother_tolerance(const SgDiaMatrix<S>& a, const std::vector<double>& b, double max_x) {
    const SgDiaMatrix<double> m = abs_matrix(a);
    const int r = a.block();
    const int ctr = a.stencil().center();
    std::vector<double> ones(static_cast<std::size_t>(a.rows()), 1.0), rows(ones.size());
    reference::spmv(m, ones.data(), rows.data());
    double min_diag = HUGE_VAL;
    for (std::int64_t c = 0; c < a.box().cells(); ++c) {
        for (int ra = 0; ra < r; ++ra) {
            double g = m.value(ctr, c, ra, ra);
            for (int rb = 0; rb < r; ++rb) g -= rb == ra ? 0.0 : m.value(ctr, c, ra, rb);
            min_diag = std::min(min_diag, g);
        }
    }
    double max_b = 0.0;
    for (double v : b) max_b = std::max(max_b, std::fabs(v));
    const double max_row = *std::max_element(rows.begin(), rows.end());
    return 64 * std::numeric_limits<C>::epsilon() * 3 * (max_b + max_row * max_x) / min_diag;
}

inline double max_abs(const std::vector<double>& v) {
    double m = 0.0;
    for (double e : v) m = std::max(m, std::fabs(e));
    return m;
}

/// Every entry of `got` is finite and within tol[e] (or `tol_all`) of `want`.
template <class C>
void expect_close(const std::vector<C>& got, const std::vector<double>& want,
                  const std::vector<double>* tol, double tol_all = 0.0) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t e = 0; e < got.size(); ++e) {
        const double t = tol ? (*tol)[e] : tol_all;
        ASSERT_TRUE(std::isfinite(static_cast<double>(got[e]))) << "entry " << e;
        ASSERT_NEAR(static_cast<double>(got[e]), want[e], t) << "entry " << e;
    }
}

/// kernels::upper_residual against the FP64 reference at x, and, after one forward zero-guess
/// sweep on b (x = 0 first), against kernels::residual: there -U x is b - A x.
template <class C, class S>
void expect_upper_residual(const SgDiaMatrix<S>& a, const std::vector<C>& x,
                           const std::vector<C>& b) {
    const kernels::SgDiaGeom g = kernels::geometry(a);
    const S* v = a.values().data();
    const auto xd = to_double_vector(x), bd = to_double_vector(b);
    std::vector<C> u(x.size());
    std::vector<double> u_ref(x.size());
    kernels::upper_residual(g, v, x.data(), u.data(), 0, g.lines());
    reference::upper_residual(a, xd.data(), u_ref.data());
    const auto tol = row_tolerance<C>(a, xd);
    expect_close(u, u_ref, &tol);

    std::vector<C> xs(x.size(), C{0}), full(x.size());
    for (std::int64_t l = 0; l < g.lines(); ++l)
        kernels::gs_line(g, v, b.data(), xs.data(), l, true, true);
    kernels::upper_residual(g, v, xs.data(), u.data(), 0, g.lines());
    kernels::residual(g, v, b.data(), xs.data(), full.data(), 0, g.lines());
    const auto tol_f = row_tolerance<C>(a, to_double_vector(xs), &bd);
    expect_close(u, to_double_vector(full), &tol_f);
}

}  // namespace mpmg::testing
