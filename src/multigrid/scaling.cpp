#include "multigrid/scaling.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/setup_simd.hpp"
#include "multigrid/truncate.hpp"

namespace mpmg {
namespace {

/// The diagonal of `a` (rows in order), or nothing with out.problem set when an entry is not a
/// positive finite number.
std::vector<double> positive_diagonal(const SgDiaMatrix<double>& a, LevelScaling& out) {
    const int r = a.block();
    const int center = a.stencil().center();
    const std::int64_t cells = a.box().cells();
    std::vector<double> diag(static_cast<std::size_t>(a.rows()));
    for (std::int64_t c = 0; c < cells; ++c) {
        for (int k = 0; k < r; ++k) {
            const double v = a.value(center, c, k, k);
            if (!(v > 0.0) || !std::isfinite(v)) {
                out.problem = fmt::format("non-positive diagonal {} at row {}", v, c * r + k);
                return {};
            }
            diag[static_cast<std::size_t>(c * r + k)] = v;
        }
    }
    return diag;
}

/// s[i] = sqrt(v[i] / g) for i < n (kernels::sqrt_over, in parallel parts); false when some
/// v[i] is not a positive finite number. s may be v.
bool sqrt_over(const double* v, std::int64_t n, double g, double* s) {
    constexpr std::int64_t kPart = std::int64_t{1} << 16;
    const std::int64_t parts = (n + kPart - 1) / kPart;
    bool good = true;
#pragma omp parallel for schedule(static) reduction(&& : good) if (parts > 1)
    for (std::int64_t q = 0; q < parts; ++q) {
        const std::int64_t lo = q * kPart;
        good = kernels::sqrt_over(v + lo, std::min(kPart, n - lo), g, s + lo) && good;
    }
    return good;
}

void set_s(const std::vector<double>& diag, LevelScaling& out) {
    out.s.resize(diag.size());
    (void)sqrt_over(diag.data(), static_cast<std::int64_t>(diag.size()), out.g, out.s.data());
    out.ok = true;  // diag is positive (positive_diagonal)
}

/// 1 / sqrt(d_i), row by row (kernels::inverse_sqrt, in parallel parts).
std::vector<double> inverse_roots(const std::vector<double>& diag) {
    std::vector<double> inv_sqrt(diag.size());
    constexpr std::int64_t kPart = std::int64_t{1} << 16;
    const auto n = static_cast<std::int64_t>(diag.size());
    const std::int64_t parts = (n + kPart - 1) / kPart;
#pragma omp parallel for schedule(static) if (parts > 1)
    for (std::int64_t q = 0; q < parts; ++q) {
        const std::int64_t lo = q * kPart;
        kernels::inverse_sqrt(diag.data() + lo, std::min(kPart, n - lo), inv_sqrt.data() + lo);
    }
    return inv_sqrt;
}

/// The largest |a_ij| inv_sqrt_i inv_sqrt_j over the entries of offset d.
double largest_ratio(const SgDiaMatrix<double>& a, const std::vector<double>& inv_sqrt, int d) {
    double largest = 0.0;
    const double* v = a.diagonal(d);
    for_each_inside_scaled_run(
        a, inv_sqrt, d, [&](std::int64_t at, const double* si, const double* sj, std::int64_t n) {
            largest = std::max(largest, kernels::max_scaled_abs(v + at, si, sj, n));
        });
    return largest;
}

}  // namespace

double largest_g(double g_max) { return std::exp2(std::floor(std::log2(g_max / 2.0))); }

double centre_ratio(const SgDiaMatrix<double>& a) {
    if (a.block() == 1) return 1.0;
    LevelScaling out;
    const std::vector<double> diag = positive_diagonal(a, out);
    if (!out.problem.empty()) return 0.0;
    return largest_ratio(a, inverse_roots(diag), a.stencil().center());
}

LevelScaling compute_scaling(const SgDiaMatrix<double>& a, double storage_max,
                             const LevelReductions* dist) {
    LevelScaling out;
    const std::vector<double> diag = positive_diagonal(a, out);
    if (dist != nullptr && dist->any(!out.problem.empty()) && out.problem.empty()) {
        out.problem = "a non-positive diagonal entry on another process";
    }
    if (!out.problem.empty()) return out;
    // G_max = storage_max / max |â_ij|, â = Q^-1/2 A Q^-1/2 (Q = diag(A)): its entries as
    // |a_ij| (1 / sqrt(a_ii)) (1 / sqrt(a_jj)), one square root and division per row instead
    // of per entry. The maximum does not depend on the order, so the SIMD runs give exactly
    // the scalar loop's value.
    const std::vector<double> inv_sqrt = inverse_roots(diag);
    double largest = 0.0;
    const int ndiag = a.stencil().size();
#pragma omp parallel for schedule(dynamic, 1) reduction(max : largest)
    for (int d = 0; d < ndiag; ++d) largest = std::max(largest, largest_ratio(a, inv_sqrt, d));
    // 1 / x is monotonic and correctly rounded: the minimum over the processes of 1 / largest
    // is 1 / (the largest over all of them).
    double min_ratio = largest > 0.0 ? 1.0 / largest : std::numeric_limits<double>::infinity();
    if (dist != nullptr) min_ratio = dist->min(min_ratio);
    out.g_max = storage_max * min_ratio;
    if (!(out.g_max > 0.0) || !std::isfinite(out.g_max)) {
        out.problem = fmt::format("G_max = {} is not a positive finite number", out.g_max);
        return out;
    }
    out.g = largest_g(out.g_max);
    set_s(diag, out);
    return out;
}

LevelScaling scaling_for(const SgDiaMatrix<double>& a, double g) {
    LevelScaling out;
    out.g = g;
    out.s.resize(static_cast<std::size_t>(a.rows()));
    const int r = a.block();
    const double* diag = a.diagonal(a.stencil().center());  // r = 1: the diagonal itself
    if (r > 1) {  // the centre blocks' diagonals, gathered into s and rooted in place
        const std::int64_t cells = a.box().cells();
        for (std::int64_t c = 0; c < cells; ++c) {
            for (int k = 0; k < r; ++k) {
                out.s[static_cast<std::size_t>(c * r + k)] = a.value(a.stencil().center(), c, k, k);
            }
        }
        diag = out.s.data();
    }
    if (!sqrt_over(diag, a.rows(), g, out.s.data())) {
        out.s.clear();
        (void)positive_diagonal(a, out);  // names the first bad row
        return out;
    }
    out.ok = true;
    return out;
}

SgDiaMatrix<double> scale_matrix(const SgDiaMatrix<double>& a, const std::vector<double>& s) {
    SgDiaMatrix<double> out(a.box(), a.stencil(), a.block());
    const RangeLimits lim = range_limits<half>();  // the kernel counts too; nothing asks here
    (void)detail::for_diagonals_counted(a.stencil().size(), [&](int d, TruncationCounts& c) {
        const double* v = a.diagonal(d);
        double* w = out.diagonal(d);
        for_each_inside_scaled_run(
            a, s, d, [&](std::int64_t at, const double* si, const double* sj, std::int64_t n) {
                c += kernels::scale_counted(v + at, si, sj, w + at, n, lim);
            });
    });
    return out;
}

TruncationCounts count_scaled_truncation(const SgDiaMatrix<double>& a, const std::vector<double>& s,
                                         const RangeLimits& lim) {
    return detail::for_diagonals_counted(a.stencil().size(), [&](int d, TruncationCounts& c) {
        const double* v = a.diagonal(d);
        for_each_inside_scaled_run(
            a, s, d, [&](std::int64_t at, const double* si, const double* sj, std::int64_t n) {
                c += kernels::count_scaled(v + at, si, sj, n, lim);
            });
    });
}

}  // namespace mpmg
