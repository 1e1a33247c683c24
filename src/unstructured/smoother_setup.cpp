#include "unstructured/smoother_setup.hpp"

#include <fmt/format.h>

#include <cmath>

#include "mpmg/errors.hpp"

namespace mpmg {
namespace {

std::vector<double> diagonal(const CsrMatrix& a, bool l1) {
    std::vector<double> d(static_cast<std::size_t>(a.rows), 0.0);
    for (std::int64_t i = 0; i < a.rows; ++i) {
        double diag = 0.0, off = 0.0;
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            if (a.col[p] == i) {
                diag = a.val[p];
            } else {
                off += std::fabs(a.val[p]);
            }
        }
        d[static_cast<std::size_t>(i)] = l1 ? diag + std::copysign(off, diag) : diag;
    }
    return d;
}

// Largest |eigenvalue| of D^{-1} A by power iteration from a fixed, non-smooth start vector.
double power_estimate(const CsrMatrix& a, const std::vector<double>& inv_d) {
    const auto n = static_cast<std::size_t>(a.rows);
    std::vector<double> x(n), y(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = 1.0 + static_cast<double>(i % 7) / 7.0;
    double lambda = 0.0;
    for (int it = 0; it < kPowerIterations; ++it) {
        double xx = 0.0;
        for (double v : x) xx += v * v;
        a.multiply(x.data(), y.data());
        double yy = 0.0;
        for (std::size_t i = 0; i < n; ++i) {
            y[i] *= inv_d[i];
            yy += y[i] * y[i];
        }
        if (yy == 0.0) break;
        lambda = std::sqrt(yy / xx);
        const double s = 1.0 / std::sqrt(yy);
        for (std::size_t i = 0; i < n; ++i) x[i] = y[i] * s;
    }
    return lambda;
}

}  // namespace

SmootherData smoother_setup(const CsrMatrix& a, SmootherKind kind, double jacobi_weight,
                            int level) {
    if (kind == SmootherKind::ilu0 || kind == SmootherKind::block_jacobi) {
        throw Unsupported(fmt::format(
            "--smoother {}: the AMG path offers jacobi, l1-jacobi, symgs (hybrid) and chebyshev",
            to_string(kind)));
    }
    SmootherData s;
    s.kind = kind;
    const bool l1 = kind == SmootherKind::l1_jacobi || kind == SmootherKind::chebyshev;
    const std::vector<double> d = diagonal(a, l1);
    s.inv_diag.resize(d.size());
    for (std::size_t i = 0; i < d.size(); ++i) {
        if (d[i] == 0.0 || !std::isfinite(d[i])) {
            throw NumericalError(fmt::format(
                "AMG level {}: {} diagonal {} at row {}; the {} smoother needs a nonzero "
                "diagonal",
                level, l1 ? "l1" : "", d[i], i, to_string(kind)));
        }
        s.inv_diag[i] = 1.0 / d[i];
    }
    if (kind == SmootherKind::jacobi) s.omega = jacobi_weight;
    if (kind == SmootherKind::chebyshev) {
        s.lambda_max = power_estimate(a, s.inv_diag);
        s.beta = 1.1 * s.lambda_max;
        s.alpha = 0.3 * s.lambda_max;
    }
    return s;
}

}  // namespace mpmg
