#include "unstructured/smoother_setup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <omp.h>

#include "mpmg/errors.hpp"

extern "C" {
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void dgetri_(const int* n, double* a, const int* lda, const int* ipiv, double* work,
             const int* lwork, int* info);
}

namespace mpmg {
namespace {

std::vector<double> diagonal(const CsrMatrix& a, bool l1);

// A block whose LU pivots span more than this (largest / smallest |u_ii|) counts as singular.
constexpr double kMaxPivotSpread = 1e14;

bool same_pattern(const CsrMatrix& a, std::int64_t i, std::int64_t j) {
    const std::int64_t n = a.row_ptr[i + 1] - a.row_ptr[i];
    if (a.row_ptr[j + 1] - a.row_ptr[j] != n) return false;
    return std::equal(a.col.begin() + a.row_ptr[i], a.col.begin() + a.row_ptr[i + 1],
                      a.col.begin() + a.row_ptr[j]);
}

// Inverts the dense block rows/columns [r0, r0 + m) of `a` into `inv` (column-major, m * m, as
// LAPACK leaves it); false when it is singular or nearly so (then `inv` is unspecified).
bool invert_block(const CsrMatrix& a, std::int64_t r0, int m, double* inv) {
    std::fill(inv, inv + std::int64_t{m} * m, 0.0);
    for (int i = 0; i < m; ++i) {  // inv[j * m + i] = a(r0 + i, r0 + j)
        for (std::int64_t p = a.row_ptr[r0 + i]; p < a.row_ptr[r0 + i + 1]; ++p) {
            const std::int64_t j = a.col[p] - r0;
            if (j >= 0 && j < m) inv[j * m + i] = a.val[p];
        }
    }
    for (int k = 0; k < m * m; ++k) {
        if (!std::isfinite(inv[k])) return false;
    }
    std::vector<int> piv(static_cast<std::size_t>(m));
    int info = 0;
    dgetrf_(&m, &m, inv, &m, piv.data(), &info);
    if (info != 0) return false;
    double big = 0.0, small = std::numeric_limits<double>::infinity();
    for (int i = 0; i < m; ++i) {
        big = std::max(big, std::fabs(inv[i * m + i]));
        small = std::min(small, std::fabs(inv[i * m + i]));
    }
    if (!(small * kMaxPivotSpread > big)) return false;
    const int lwork = std::max(1, m * m);
    std::vector<double> work(static_cast<std::size_t>(lwork));
    dgetri_(&m, inv, &m, piv.data(), work.data(), &lwork, &info);
    if (info != 0) return false;
    for (int k = 0; k < m * m; ++k) {
        if (!std::isfinite(inv[k])) return false;
    }
    return true;
}

// ||B||_1 of the block rows/columns [r0, r0 + m) of `a` (largest column sum).
double block_norm1(const CsrMatrix& a, std::int64_t r0, int m) {
    std::vector<double> col(static_cast<std::size_t>(m), 0.0);
    for (int i = 0; i < m; ++i) {
        for (std::int64_t p = a.row_ptr[r0 + i]; p < a.row_ptr[r0 + i + 1]; ++p) {
            const std::int64_t j = a.col[p] - r0;
            if (j >= 0 && j < m) col[static_cast<std::size_t>(j)] += std::fabs(a.val[p]);
        }
    }
    return *std::max_element(col.begin(), col.end());
}

// ||B^{-1}||_1 of a column-major m x m inverse (largest column sum).
double inverse_norm1(const double* inv, int m) {
    double best = 0.0;
    for (int j = 0; j < m; ++j) {
        double sum = 0.0;
        for (int i = 0; i < m; ++i) sum += std::fabs(inv[j * m + i]);
        best = std::max(best, sum);
    }
    return best;
}

// Block Jacobi data (see smoother_setup.hpp); NumericalError when a block that must fall back to
// its diagonal has a zero diagonal entry.
void block_setup(const CsrMatrix& a, int max_block, int level, const std::int64_t* row_ids,
                 SmootherData& s) {
    s.block_ptr = jacobi_blocks(a, max_block);
    const auto nb = static_cast<std::int64_t>(s.block_ptr.size()) - 1;
    s.inv_ptr.assign(static_cast<std::size_t>(nb + 1), 0);
    for (std::int64_t b = 0; b < nb; ++b) {
        const std::int64_t m = s.block_ptr[b + 1] - s.block_ptr[b];
        s.inv_ptr[b + 1] = s.inv_ptr[b] + m * m;
        s.largest_block = std::max(s.largest_block, static_cast<int>(m));
    }
    s.inv_blocks.assign(static_cast<std::size_t>(s.inv_ptr.back()), 0.0);
    const std::vector<double> d = diagonal(a, false);
    std::int64_t fallback = 0, bad_row = -1;
    double kappa = 0.0;
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : fallback) reduction(max : kappa) \
    if (nb > 256)
    for (std::int64_t b = 0; b < nb; ++b) {
        const std::int64_t r0 = s.block_ptr[b];
        const int m = static_cast<int>(s.block_ptr[b + 1] - r0);
        double* inv = s.inv_blocks.data() + s.inv_ptr[b];
        if (invert_block(a, r0, m, inv)) {
            kappa = std::max(kappa, block_norm1(a, r0, m) * inverse_norm1(inv, m));
            continue;
        }
        ++fallback;
        std::fill(inv, inv + std::int64_t{m} * m, 0.0);
        for (int i = 0; i < m; ++i) {
            const double di = d[static_cast<std::size_t>(r0 + i)];
            if (di == 0.0 || !std::isfinite(di)) {
#pragma omp critical(mpmg_block_jacobi_bad_row)
                bad_row = bad_row < 0 ? r0 + i : std::min(bad_row, r0 + i);
                continue;
            }
            inv[i * m + i] = 1.0 / di;
        }
    }
    if (bad_row >= 0) {
        throw NumericalError(fmt::format(
            "AMG level {}: the block Jacobi block of row {} is singular and its diagonal {} at "
            "row {} cannot replace it",
            level, row_ids ? row_ids[bad_row] : bad_row, d[static_cast<std::size_t>(bad_row)],
            row_ids ? row_ids[bad_row] : bad_row));
    }
    s.diagonal_blocks = fallback;
    s.max_condition = kappa;
}

std::vector<double> diagonal(const CsrMatrix& a, bool l1) {
    std::vector<double> d = diagonal_of(a);
    if (!l1) return d;
    for (std::int64_t i = 0; i < a.rows; ++i) {
        double off = 0.0;
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            if (a.col[p] != i) off += std::fabs(a.val[p]);
        }
        auto& di = d[static_cast<std::size_t>(i)];
        di += std::copysign(off, di);
    }
    return d;
}

// Block ILU(0) (see the header) into s.ilu_l, s.ilu_u, s.inv_diag and s.block_ptr. Row i's
// values inside its block are spread into `w` at their columns (the others stay 0); each
// k < i of its pattern in turn gives l_ik = w_k / u_kk and removes l_ik times U's row k from
// the positions row i has (ILU(0) drops the rest), in ascending k as IKJ needs.
void ilu0_setup(const CsrMatrix& a, int threads, int level, const std::int64_t* row_ids,
                SmootherData& s) {
    const std::int64_t n = a.rows;
    const std::int64_t nb = n > kIluBlockRows ? std::max(1, threads) : 1;
    s.block_ptr.resize(static_cast<std::size_t>(nb + 1));
    for (std::int64_t b = 0; b <= nb; ++b) s.block_ptr[static_cast<std::size_t>(b)] = n * b / nb;
    s.inv_diag.assign(static_cast<std::size_t>(n), 0.0);
    CsrMatrix& l = s.ilu_l;
    CsrMatrix& u = s.ilu_u;
    l = CsrMatrix{};
    u = CsrMatrix{};
    l.rows = l.cols = u.rows = u.cols = n;
    l.row_ptr.reserve(static_cast<std::size_t>(n + 1));
    u.row_ptr.reserve(static_cast<std::size_t>(n + 1));
    std::vector<double> w(static_cast<std::size_t>(n), 0.0);
    std::vector<char> in_row(static_cast<std::size_t>(n), 0);
    for (std::int64_t b = 0; b < nb; ++b) {
        const std::int64_t b0 = s.block_ptr[static_cast<std::size_t>(b)];
        const std::int64_t b1 = s.block_ptr[static_cast<std::size_t>(b + 1)];
        for (std::int64_t i = b0; i < b1; ++i) {
            const auto p0 = static_cast<std::size_t>(a.row_ptr[i]);
            const auto p1 = static_cast<std::size_t>(a.row_ptr[i + 1]);
            double big = 0.0;
            for (std::size_t p = p0; p < p1; ++p) {
                const std::int64_t j = a.col[p];
                big = std::max(big, std::fabs(a.val[p]));
                if (j < b0 || j >= b1) continue;
                w[static_cast<std::size_t>(j)] = a.val[p];
                in_row[static_cast<std::size_t>(j)] = 1;
            }
            for (std::size_t p = p0; p < p1; ++p) {
                const std::int64_t k = a.col[p];
                if (k < b0) continue;
                if (k >= i) break;  // columns are sorted
                const double lik = w[static_cast<std::size_t>(k)] * s.inv_diag[k];
                w[static_cast<std::size_t>(k)] = lik;
                for (std::int64_t q = u.row_ptr[k]; q < u.row_ptr[k + 1]; ++q) {
                    const auto j = static_cast<std::size_t>(u.col[q]);
                    if (in_row[j]) w[j] -= lik * u.val[q];
                }
            }
            const double pivot = in_row[static_cast<std::size_t>(i)] ? w[i] : 0.0;
            // A pivot at rounding level of its row is cancellation, not a value.
            if (!std::isfinite(pivot) || !(std::fabs(pivot) > 1e-14 * big)) {
                throw NumericalError(fmt::format(
                    "AMG level {}: ILU(0) pivot {:.3g} at row {} (row's largest entry {:.3g}); "
                    "the ilu0 smoother cannot factor this level: try --smoother l1-jacobi, "
                    "chebyshev or block-jacobi",
                    level, pivot, row_ids ? row_ids[i] : i, big));
            }
            s.inv_diag[static_cast<std::size_t>(i)] = 1.0 / pivot;
            for (std::size_t p = p0; p < p1; ++p) {
                const std::int64_t j = a.col[p];
                if (j < b0 || j >= b1) continue;
                if (j < i) {
                    s.ilu_largest_l =
                        std::max(s.ilu_largest_l, std::fabs(w[static_cast<std::size_t>(j)]));
                }
                if (j != i) {
                    CsrMatrix& t = j < i ? l : u;
                    t.col.push_back(j);
                    t.val.push_back(w[static_cast<std::size_t>(j)]);
                }
                w[static_cast<std::size_t>(j)] = 0.0;
                in_row[static_cast<std::size_t>(j)] = 0;
            }
            l.row_ptr.push_back(l.nnz());
            u.row_ptr.push_back(u.nnz());
        }
    }
}

}  // namespace

double power_estimate(const CsrMatrix& a, const std::vector<double>& inv_d) {
    return power_estimate_parts(
        a.rows, 0, inv_d, [&](const double* x, double* y) { a.multiply(x, y); }, [](double*) {});
}

std::vector<std::int64_t> jacobi_blocks(const CsrMatrix& a, int max_block) {
    max_block = std::clamp(max_block, 1, kMaxJacobiBlock);  // the sweep's accumulator size
    std::vector<std::int64_t> ptr{0};
    std::int64_t start = 0;  // first row of the block being grown
    std::int64_t i = 0;
    while (i < a.rows) {
        std::int64_t end = i + 1;  // the supervariable starting at i: rows i .. end-1
        while (end < a.rows && same_pattern(a, i, end)) ++end;
        // A supervariable longer than max_block is cut into max_block pieces.
        for (std::int64_t at = i; at < end;) {
            const std::int64_t piece = std::min<std::int64_t>(end - at, max_block);
            if (at + piece - start > max_block) {
                ptr.push_back(at);
                start = at;
            }
            at += piece;
        }
        i = end;
    }
    if (ptr.back() != a.rows) ptr.push_back(a.rows);
    return ptr;
}

SmootherData smoother_setup(const CsrMatrix& a, SmootherKind kind, double jacobi_weight, int level,
                            int max_block, const std::int64_t* row_ids, int threads) {
    SmootherData s;
    s.kind = kind;
    if (kind == SmootherKind::ilu0) {
        ilu0_setup(a, threads > 0 ? threads : omp_get_max_threads(), level, row_ids, s);
        return s;
    }
    if (kind == SmootherKind::block_jacobi) {
        s.omega = jacobi_weight;
        block_setup(a, max_block, level, row_ids, s);
        return s;
    }
    const bool l1 = kind == SmootherKind::l1_jacobi || kind == SmootherKind::chebyshev;
    const std::vector<double> d = diagonal(a, l1);
    s.inv_diag.resize(d.size());
    for (std::size_t i = 0; i < d.size(); ++i) {
        if (d[i] == 0.0 || !std::isfinite(d[i])) {
            const auto row = static_cast<std::int64_t>(i);
            const bool zero_row =
                std::all_of(a.val.begin() + a.row_ptr[row], a.val.begin() + a.row_ptr[row + 1],
                            [](double v) { return v == 0.0; });
            throw NumericalError(fmt::format(
                "AMG level {}: {}diagonal {} at row {}; the {} smoother needs a nonzero "
                "diagonal{}",
                level, l1 ? "l1 " : "", d[i], row_ids ? row_ids[i] : row, to_string(kind),
                !zero_row    ? " (for a zero diagonal entry, such as a saddle point's, try "
                               "--smoother l1-jacobi or chebyshev, which divide by the row's l1 "
                               "norm)"
                : level == 0 ? " (the row is zero: A is singular)"
                             : " (the row is zero)"));
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
