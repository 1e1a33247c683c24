#include "multigrid/scaling.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/setup_simd.hpp"
#include "multigrid/truncate.hpp"

namespace mpmg {
namespace {

// Cell-index difference of offset d (the neighbour of cell c is c + lin).
std::int64_t linear_offset(const SgDiaMatrix<double>& a, int d) {
    const Box& box = a.box();
    const Offset& o = a.stencil()[d];
    return o.dx + std::int64_t{box.nx} * (o.dy + std::int64_t{box.ny} * o.dz);
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
    // min over stored nonzeros of sqrt(a_ii a_jj) / |a_ij|; the minimum does not depend on the
    // order, so the SIMD runs give exactly the scalar loop's value.
    double min_ratio = std::numeric_limits<double>::infinity();
    const int ndiag = a.stencil().size();
#pragma omp parallel for schedule(dynamic, 1) reduction(min : min_ratio)
    for (int d = 0; d < ndiag; ++d) {
        const std::int64_t lin = linear_offset(a, d);
        const double* v = a.diagonal(d);
        if (r == 1) {
            for_each_inside_run(a, d, [&](std::int64_t first, std::int64_t n) {
                min_ratio = std::min(min_ratio, kernels::min_ratio(v + first, diag.data() + first,
                                                                   diag.data() + first + lin, n));
            });
            continue;
        }
        // r x r blocks: entry (i, j) of cell c couples row c r + i with row (c + lin) r + j.
        a.for_each_inside(d, [&](std::int64_t c) {
            for (int i = 0; i < r; ++i) {
                const double di = diag[static_cast<std::size_t>(c * r + i)];
                for (int j = 0; j < r; ++j) {
                    const double ax = std::fabs(a.value(d, c, i, j));
                    if (ax == 0.0) continue;
                    const double dj = diag[static_cast<std::size_t>((c + lin) * r + j)];
                    min_ratio = std::min(min_ratio, std::sqrt(di * dj) / ax);
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

SgDiaMatrix<double> scale_matrix(const SgDiaMatrix<double>& a, const std::vector<double>& s,
                                 const RangeLimits& lim, TruncationCounts& counts) {
    SgDiaMatrix<double> out(a.box(), a.stencil(), a.block());
    const int r = a.block();
    counts += detail::for_diagonals_counted(a.stencil().size(), [&](int d, TruncationCounts& c) {
        const std::int64_t lin = linear_offset(a, d);
        const double* v = a.diagonal(d);
        double* w = out.diagonal(d);
        if (r == 1) {
            for_each_inside_run(a, d, [&](std::int64_t first, std::int64_t n) {
                c += kernels::scale_counted(v + first, s.data() + first, s.data() + first + lin,
                                            w + first, n, lim);
            });
            return;
        }
        a.for_each_inside(d, [&](std::int64_t cell) {
            for (int i = 0; i < r; ++i) {
                const double si = s[static_cast<std::size_t>(cell * r + i)];
                for (int j = 0; j < r; ++j) {
                    const double sj = s[static_cast<std::size_t>((cell + lin) * r + j)];
                    double& y = out.value(d, cell, i, j);
                    y = a.value(d, cell, i, j) / (si * sj);
                    count_by_limits(y, lim, c);
                }
            }
        });
    });
    return out;
}

TruncationCounts count_scaled_truncation(const SgDiaMatrix<double>& a, const std::vector<double>& s,
                                         const RangeLimits& lim) {
    const int r = a.block();
    return detail::for_diagonals_counted(a.stencil().size(), [&](int d, TruncationCounts& c) {
        const std::int64_t lin = linear_offset(a, d);
        const double* v = a.diagonal(d);
        if (r == 1) {
            for_each_inside_run(a, d, [&](std::int64_t first, std::int64_t n) {
                c += kernels::count_scaled(v + first, s.data() + first, s.data() + first + lin, n,
                                           lim);
            });
            return;
        }
        a.for_each_inside(d, [&](std::int64_t cell) {
            for (int i = 0; i < r; ++i) {
                const double si = s[static_cast<std::size_t>(cell * r + i)];
                for (int j = 0; j < r; ++j) {
                    const double sj = s[static_cast<std::size_t>((cell + lin) * r + j)];
                    count_by_limits(a.value(d, cell, i, j) / (si * sj), lim, c);
                }
            }
        });
    });
}

SgDiaMatrix<double> scale_matrix(const SgDiaMatrix<double>& a, const std::vector<double>& s) {
    TruncationCounts unused;
    return scale_matrix(a, s, range_limits<half>(), unused);
}

}  // namespace mpmg
