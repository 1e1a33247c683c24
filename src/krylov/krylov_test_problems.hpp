// Small test problems for the Krylov solver tests: sparse matrices held in double and applied in
// precision K, Jacobi and misbehaving preconditioners, and a true-residual check in double.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <type_traits>
#include <vector>

#include "krylov/krylov.hpp"

namespace mpmg {

/// Lets GoogleTest print a status by name.
inline void PrintTo(SolveStatus s, std::ostream* os) { *os << to_string(s); }

}  // namespace mpmg

namespace mpmg::krylov_test {

/// Compressed sparse rows in double.
struct Sparse {
    std::int64_t n = 0;
    std::vector<std::int64_t> ptr{0};
    std::vector<std::int64_t> col;
    std::vector<double> val;

    void add(std::int64_t j, double v) {
        col.push_back(j);
        val.push_back(v);
    }
    void end_row() { ptr.push_back(static_cast<std::int64_t>(col.size())); }
    double diag(std::int64_t i) const {
        for (std::int64_t p = ptr[i]; p < ptr[i + 1]; ++p) {
            if (col[p] == i) return val[p];
        }
        return 0.0;
    }
};

/// 5-point -Laplacian on an nx x nx grid (Dirichlet) plus shift(i) on the diagonal, with an
/// upwind convection term of strength c in x (c = 0: symmetric).
template <class Shift>
Sparse grid2d(int nx, double c, Shift shift) {
    Sparse a;
    a.n = static_cast<std::int64_t>(nx) * nx;
    for (int iy = 0; iy < nx; ++iy) {
        for (int ix = 0; ix < nx; ++ix) {
            const std::int64_t i = static_cast<std::int64_t>(iy) * nx + ix;
            if (iy > 0) a.add(i - nx, -1.0);
            if (ix > 0) a.add(i - 1, -1.0 - c);
            a.add(i, 4.0 + c + shift(i));
            if (ix < nx - 1) a.add(i + 1, -1.0);
            if (iy < nx - 1) a.add(i + nx, -1.0);
            a.end_row();
        }
    }
    return a;
}

/// SPD: -Laplacian with a diagonal that varies between 0 and 4 (so Jacobi does something).
inline Sparse spd_problem(int nx = 16) {
    return grid2d(nx, 0.0, [](std::int64_t i) { return static_cast<double>(i % 5); });
}

/// Nonsymmetric upwind convection-diffusion.
inline Sparse convdiff_problem(int nx = 16, double c = 8.0) {
    return grid2d(nx, c, [](std::int64_t) { return 0.0; });
}

/// Diagonal matrix.
inline Sparse diagonal(std::int64_t n, double (*d)(std::int64_t)) {
    Sparse a;
    a.n = n;
    for (std::int64_t i = 0; i < n; ++i) {
        a.add(i, d(i));
        a.end_row();
    }
    return a;
}

/// y = A x in precision K (entries rounded to K, products accumulated in K).
template <class K>
class SparseOp : public LinearOperator<K> {
public:
    explicit SparseOp(const Sparse& a) : a_(a) {}
    std::int64_t size() const override { return a_.n; }
    void apply(const K* x, K* y) const override {
        for (std::int64_t i = 0; i < a_.n; ++i) {
            K s = 0;
            for (std::int64_t p = a_.ptr[i]; p < a_.ptr[i + 1]; ++p) {
                s += static_cast<K>(a_.val[p]) * x[a_.col[p]];
            }
            y[i] = s;
        }
    }

private:
    const Sparse& a_;
};

/// ||b - A x|| / ||b|| with A, b and x taken exactly into double.
template <class K>
double true_relres(const Sparse& a, const std::vector<K>& b, const std::vector<K>& x) {
    double rr = 0.0;
    double bb = 0.0;
    for (std::int64_t i = 0; i < a.n; ++i) {
        double s = static_cast<double>(b[i]);
        for (std::int64_t p = a.ptr[i]; p < a.ptr[i + 1]; ++p) {
            s -= a.val[p] * static_cast<double>(x[a.col[p]]);
        }
        rr += s * s;
        bb += static_cast<double>(b[i]) * static_cast<double>(b[i]);
    }
    return std::sqrt(rr / bb);
}

/// z = D^{-1} r, counting applications; from call nan_at on (1-based, 0 = never) it writes NaN.
template <class K>
class Jacobi : public Preconditioner<K> {
public:
    explicit Jacobi(const Sparse& a, int nan_at = 0, double sign = 1.0) : nan_at_(nan_at) {
        for (std::int64_t i = 0; i < a.n; ++i) inv_.push_back(static_cast<K>(sign / a.diag(i)));
    }
    void apply(const K* r, K* z) override {
        ++calls;
        const bool poison = nan_at_ > 0 && calls >= nan_at_;
        for (std::size_t i = 0; i < inv_.size(); ++i) {
            z[i] = poison ? std::numeric_limits<K>::quiet_NaN() : inv_[i] * r[i];
        }
    }
    int calls = 0;

private:
    std::vector<K> inv_;
    int nan_at_;
};

/// A smooth, nonconstant right-hand side.
template <class K>
std::vector<K> rhs(std::int64_t n) {
    std::vector<K> b(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        b[i] = static_cast<K>(1.0 + std::sin(0.37 * static_cast<double>(i)));
    }
    return b;
}

template <class K>
bool all_finite(const std::vector<K>& x) {
    for (K v : x) {
        if (!std::isfinite(v)) return false;
    }
    return true;
}

/// Solver tolerance for precision K: 1e-10 in double, 1e-5 in float.
template <class K>
double tol() {
    return std::is_same_v<K, double> ? 1e-10 : 1e-5;
}

}  // namespace mpmg::krylov_test
