#include "multigrid/scaling.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace mpmg {
namespace {

// Row index of (cell c + offset d, component b).
std::int64_t neighbour_row(const SgDiaMatrix<double>& a, std::int64_t c, int d, int b) {
    const Box& box = a.box();
    const Offset& o = a.stencil()[d];
    const std::int64_t nb = c + o.dx + std::int64_t{box.nx} * (o.dy + std::int64_t{box.ny} * o.dz);
    return nb * a.block() + b;
}

}  // namespace

LevelScaling compute_scaling(const SgDiaMatrix<double>& a, double storage_max) {
    LevelScaling out;
    const int r = a.block();
    const int center = a.stencil().center();
    const std::int64_t cells = a.box().cells();
    std::vector<double> diag(static_cast<std::size_t>(a.rows()));
    for (std::int64_t c = 0; c < cells; ++c) {
        for (int k = 0; k < r; ++k) {
            const double v = a.value(center, c, k, k);
            if (!(v > 0.0) || !std::isfinite(v)) {
                out.problem = fmt::format("non-positive diagonal {} at row {}", v, c * r + k);
                return out;
            }
            diag[static_cast<std::size_t>(c * r + k)] = v;
        }
    }
    double min_ratio = std::numeric_limits<double>::infinity();  // sqrt(a_ii a_jj) / |a_ij|
    const int ndiag = a.stencil().size();
#pragma omp parallel for schedule(dynamic, 1) reduction(min : min_ratio)
    for (int d = 0; d < ndiag; ++d) {
        a.for_each_inside(d, [&](std::int64_t c) {
            for (int i = 0; i < r; ++i) {
                for (int j = 0; j < r; ++j) {
                    const double v = std::fabs(a.value(d, c, i, j));
                    if (v == 0.0) continue;
                    const double dj = diag[static_cast<std::size_t>(neighbour_row(a, c, d, j))];
                    min_ratio = std::min(
                        min_ratio, std::sqrt(diag[static_cast<std::size_t>(c * r + i)] * dj) / v);
                }
            }
        });
    }
    out.g_max = storage_max * min_ratio;
    if (!(out.g_max > 0.0) || !std::isfinite(out.g_max)) {
        out.problem = fmt::format("G_max = {} is not a positive finite number", out.g_max);
        return out;
    }
    out.g = std::exp2(std::floor(std::log2(out.g_max / 2.0)));
    out.s.resize(diag.size());
    for (std::size_t i = 0; i < diag.size(); ++i) out.s[i] = std::sqrt(diag[i] / out.g);
    out.ok = true;
    return out;
}

SgDiaMatrix<double> scale_matrix(const SgDiaMatrix<double>& a, const std::vector<double>& s) {
    SgDiaMatrix<double> out(a.box(), a.stencil(), a.block());
    const int r = a.block();
    const int ndiag = a.stencil().size();
#pragma omp parallel for schedule(dynamic, 1)
    for (int d = 0; d < ndiag; ++d) {
        a.for_each_inside(d, [&](std::int64_t c) {
            for (int i = 0; i < r; ++i) {
                for (int j = 0; j < r; ++j) {
                    const double si = s[static_cast<std::size_t>(c * r + i)];
                    const double sj = s[static_cast<std::size_t>(neighbour_row(a, c, d, j))];
                    out.value(d, c, i, j) = a.value(d, c, i, j) / (si * sj);
                }
            }
        });
    }
    return out;
}

}  // namespace mpmg
