#include "io/matrix_info.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/float16.hpp"

namespace mpmg {
namespace {

/// Relative tolerance of numerical symmetry, against max |a|.
constexpr double kSymmetryTol = 1e-12;

void analyse_values(const CsrMatrix& a, MatrixInfo& info) {
    double min_abs = std::numeric_limits<double>::infinity();
    for (const double v : a.val) {
        const double m = std::fabs(v);
        if (m == 0.0) {
            ++info.explicit_zeros;
            continue;
        }
        min_abs = std::min(min_abs, m);
        info.max_abs = std::max(info.max_abs, m);
        if (m > kHalfMax) ++info.above_fp16_max;
        if (m < kHalfMinNormal) ++info.below_fp16_min_normal;
        if (m < kHalfMinSubnormal) ++info.below_fp16_min_subnormal;
    }
    info.min_abs_nonzero = std::isinf(min_abs) ? 0.0 : min_abs;
}

/// Diagonal values (missing ones as 0) over min(rows, cols) positions.
std::vector<double> diagonal(const CsrMatrix& a, MatrixInfo& info) {
    const std::int64_t n = std::min(a.rows, a.cols);
    std::vector<double> d(static_cast<std::size_t>(n), 0.0);
    std::vector<bool> present(static_cast<std::size_t>(n), false);
    for (std::int64_t i = 0; i < n; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            if (a.col[p] == i) {
                d[static_cast<std::size_t>(i)] += a.val[p];
                present[static_cast<std::size_t>(i)] = true;
            }
        }
    }
    std::int64_t negative = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        const double v = d[static_cast<std::size_t>(i)];
        if (v < 0.0 && present[static_cast<std::size_t>(i)]) ++negative;
        if (i == 0) info.min_diag = info.max_diag = v;
        info.min_diag = std::min(info.min_diag, v);
        info.max_diag = std::max(info.max_diag, v);
        if (v <= 0.0) ++info.nonpositive_diag;
        if (v == 0.0 || !present[static_cast<std::size_t>(i)]) ++info.zero_or_missing_diag;
    }
    info.diagonal_negative = info.square && n > 0 && negative == n;
    return d;
}

void analyse_symmetry(const CsrMatrix& a, MatrixInfo& info) {
    if (!info.square) return;
    const CsrMatrix t = a.transpose();
    info.structurally_symmetric = t.row_ptr == a.row_ptr && t.col == a.col;
    const double tol = kSymmetryTol * info.max_abs;
    info.numerically_symmetric = true;
    for (std::int64_t i = 0; i < a.rows && info.numerically_symmetric; ++i) {
        std::int64_t p = a.row_ptr[i], q = t.row_ptr[i];
        const std::int64_t pe = a.row_ptr[i + 1], qe = t.row_ptr[i + 1];
        while (p < pe || q < qe) {
            double x = 0.0, y = 0.0;
            if (q >= qe || (p < pe && a.col[p] < t.col[q])) {
                x = a.val[p++];
            } else if (p >= pe || t.col[q] < a.col[p]) {
                y = t.val[q++];
            } else {
                x = a.val[p++];
                y = t.val[q++];
            }
            if (std::fabs(x - y) > tol) {
                info.numerically_symmetric = false;
                break;
            }
        }
    }
}

/// g_max, g and the scaled underflow count; requires a square matrix with a positive diagonal.
void analyse_scaling(const CsrMatrix& a, const std::vector<double>& d, MatrixInfo& info) {
    std::vector<double> s(d.size());
    for (std::size_t i = 0; i < d.size(); ++i) s[i] = std::sqrt(d[i]);
    double max_scaled = 0.0;
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            const double scaled = std::fabs(a.val[p]) / s[static_cast<std::size_t>(i)] /
                                  s[static_cast<std::size_t>(a.col[p])];
            max_scaled = std::max(max_scaled, scaled);
        }
    }
    info.g_max = kHalfMax / max_scaled;  // max_scaled >= 1: the diagonal scales to 1
    info.g = std::min(info.g_max / 2.0, 1.0);
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            const double scaled = info.g * std::fabs(a.val[p]) / s[static_cast<std::size_t>(i)] /
                                  s[static_cast<std::size_t>(a.col[p])];
            if (scaled != 0.0 && scaled < kHalfMinNormal) ++info.scaled_below_fp16_min_normal;
        }
    }
}

void decide_verdict(MatrixInfo& info) {
    if (info.above_fp16_max == 0 && info.below_fp16_min_normal == 0) {
        info.verdict = Fp16Verdict::inside;
        info.verdict_reason = "every nonzero lies within the FP16 normal range [6.1e-05, 65504]";
        return;
    }
    const std::string why_outside =
        fmt::format("{} entries exceed 65504 and {} lie below the FP16 normal minimum",
                    info.above_fp16_max, info.below_fp16_min_normal);
    info.verdict = Fp16Verdict::outside;
    if (!info.square) {
        info.verdict_reason = why_outside + "; a non-square matrix cannot be diagonally scaled";
        return;
    }
    if (info.nonpositive_diag > 0 && !info.diagonal_negative) {
        info.verdict_reason = fmt::format(
            "{}; {} diagonal entries are <= 0 or missing, so "
            "symmetric diagonal scaling is undefined",
            why_outside, info.nonpositive_diag);
        return;
    }
    if (info.g_max < kMinUsefulG) {
        info.verdict_reason = fmt::format(
            "{}; after diagonal scaling G_max = {:.3g} < {:g}, "
            "off-diagonal entries dwarf the diagonal",
            why_outside, info.g_max, kMinUsefulG);
        return;
    }
    info.verdict = Fp16Verdict::scalable;
    info.verdict_reason = fmt::format(
        "{}; symmetric diagonal scaling with G = {:.3g} "
        "(G_max = {:.3g}) fits FP16, {} scaled entries below the "
        "FP16 normal minimum",
        why_outside, info.g, info.g_max, info.scaled_below_fp16_min_normal);
}

}  // namespace

MatrixInfo analyse_matrix(const CsrMatrix& a) {
    MatrixInfo info;
    info.rows = a.rows;
    info.cols = a.cols;
    info.nnz = a.nnz();
    info.square = a.rows == a.cols;
    analyse_values(a, info);
    std::vector<double> d = diagonal(a, info);
    analyse_symmetry(a, info);
    if (info.diagonal_negative) {
        for (double& v : d) v = -v;  // -A's diagonal: what `mpmg solve` scales by
    }
    if (info.square && info.rows > 0 && (info.nonpositive_diag == 0 || info.diagonal_negative)) {
        analyse_scaling(a, d, info);
    }
    decide_verdict(info);
    if (info.diagonal_negative) {
        info.verdict_reason =
            "for -A (every diagonal entry is negative, so mpmg solve solves -A x = -b): " +
            info.verdict_reason;
    }
    return info;
}

const char* to_string(Fp16Verdict v) {
    switch (v) {
        case Fp16Verdict::inside:
            return "inside";
        case Fp16Verdict::scalable:
            return "scalable";
        case Fp16Verdict::outside:
            return "outside";
    }
    return "outside";
}

nlohmann::json to_json(const MatrixInfo& m) {
    return nlohmann::json{
        {"rows", m.rows},
        {"cols", m.cols},
        {"nnz", m.nnz},
        {"explicit_zeros", m.explicit_zeros},
        {"square", m.square},
        {"structurally_symmetric", m.structurally_symmetric},
        {"numerically_symmetric", m.numerically_symmetric},
        {"min_abs_nonzero", m.min_abs_nonzero},
        {"max_abs", m.max_abs},
        {"min_diag", m.min_diag},
        {"max_diag", m.max_diag},
        {"nonpositive_diag", m.nonpositive_diag},
        {"zero_or_missing_diag", m.zero_or_missing_diag},
        {"diagonal_negative", m.diagonal_negative},
        {"above_fp16_max", m.above_fp16_max},
        {"below_fp16_min_normal", m.below_fp16_min_normal},
        {"below_fp16_min_subnormal", m.below_fp16_min_subnormal},
        {"fp16_verdict", to_string(m.verdict)},
        {"fp16_verdict_reason", m.verdict_reason},
        {"g_max", m.g_max},
        {"g", m.g},
        {"scaled_below_fp16_min_normal", m.scaled_below_fp16_min_normal},
    };
}

std::string format_info(const MatrixInfo& m, const std::string& name) {
    const char* sym = m.numerically_symmetric    ? "symmetric"
                      : m.structurally_symmetric ? "structurally symmetric only"
                                                 : "nonsymmetric";
    std::string out = fmt::format("{}: {} x {}, {} stored entries ({} explicit zeros), {}\n", name,
                                  m.rows, m.cols, m.nnz, m.explicit_zeros, sym);
    out += fmt::format("  |a| nonzero range: {:.3e} .. {:.3e}\n", m.min_abs_nonzero, m.max_abs);
    out += fmt::format("  diagonal: {:.3e} .. {:.3e}, {} <= 0, {} zero or missing\n", m.min_diag,
                       m.max_diag, m.nonpositive_diag, m.zero_or_missing_diag);
    out += fmt::format(
        "  FP16: {} above 65504, {} below 6.1e-05 (normal min), {} below 6.0e-08 "
        "(subnormal min)\n",
        m.above_fp16_max, m.below_fp16_min_normal, m.below_fp16_min_subnormal);
    out += fmt::format("  verdict: {} ({})\n", to_string(m.verdict), m.verdict_reason);
    return out;
}

}  // namespace mpmg
