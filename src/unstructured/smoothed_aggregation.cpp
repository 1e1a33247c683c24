#include "unstructured/smoothed_aggregation.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "unstructured/smoother_setup.hpp"
#include "unstructured/spgemm.hpp"

namespace mpmg {

CsrMatrix filtered(const CsrMatrix& a, double theta, int block) {
    const std::vector<double> d = diagonal_of(a);
    CsrMatrix f;
    f.rows = a.rows;
    f.cols = a.cols;
    f.row_ptr.reserve(static_cast<std::size_t>(a.rows) + 1);
    std::vector<double> lumped(static_cast<std::size_t>(block));
    std::vector<std::pair<std::int64_t, double>> row;
    for (std::int64_t i = 0; i < a.rows; ++i) {
        std::fill(lumped.begin(), lumped.end(), 0.0);
        row.clear();
        const double di = d[static_cast<std::size_t>(i)];
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            const std::int64_t j = a.col[p];
            const double dj = d[static_cast<std::size_t>(j)];
            if (j != i && a.val[p] * a.val[p] < theta * theta * std::fabs(di * dj)) {
                lumped[static_cast<std::size_t>(j % block)] += a.val[p];
                continue;
            }
            row.emplace_back(j, a.val[p]);
        }
        // Weak a_ij goes to column (i's node, j's component): A_F keeps A's products with the
        // vectors constant per component (translations), as A_F 1 = A 1 for one unknown.
        const std::int64_t node_first = i / block * block;
        for (int k = 0; k < block; ++k) {
            const double v = lumped[static_cast<std::size_t>(k)];
            if (v == 0.0) continue;
            const std::int64_t c = node_first + k;
            auto at =
                std::lower_bound(row.begin(), row.end(), c,
                                 [](const auto& e, std::int64_t col) { return e.first < col; });
            if (at != row.end() && at->first == c) {
                at->second += v;
            } else if (block > 1) {
                row.insert(at, {c, v});
            }
        }
        for (const auto& [j, v] : row) {
            f.col.push_back(j);
            f.val.push_back(v);
        }
        f.row_ptr.push_back(f.nnz());
    }
    return f;
}

SmoothedProlongation smoothed_prolongation(const CsrMatrix& a_in, const CsrMatrix& tentative,
                                           double theta, int block) {
    CsrMatrix held;  // the filtered matrix; theta 0 smooths with A itself (no copy)
    if (theta > 0.0) held = filtered(a_in, theta, block);
    const CsrMatrix& a = theta > 0.0 ? held : a_in;
    const auto n = static_cast<std::size_t>(a.rows);
    std::vector<double> inv_d = diagonal_of(a);  // then 1 / a_ii, or 0: the row is not smoothed
    for (double& v : inv_d) v = v != 0.0 && std::isfinite(v) ? 1.0 / v : 0.0;
    SmoothedProlongation out;
    out.rho = power_estimate(a, inv_d);
    out.omega = out.rho > 0.0 && std::isfinite(out.rho) ? 4.0 / (3.0 * out.rho) : 0.0;
    // S = I - omega D^{-1} A, on A's pattern (plus the diagonal where A stores none).
    CsrMatrix s;
    s.rows = s.cols = a.rows;
    s.row_ptr.reserve(n + 1);
    s.col.reserve(static_cast<std::size_t>(a.nnz()) + n);
    s.val.reserve(s.col.capacity());
    for (std::int64_t i = 0; i < a.rows; ++i) {
        const double f = out.omega * inv_d[static_cast<std::size_t>(i)];
        bool diag = false;
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            const std::int64_t j = a.col[p];
            if (!diag && j > i) {  // A stores no diagonal here: S's is 1
                s.col.push_back(i);
                s.val.push_back(1.0);
                diag = true;
            }
            s.col.push_back(j);
            s.val.push_back((j == i ? 1.0 : 0.0) - f * a.val[p]);
            diag = diag || j == i;
        }
        if (!diag) {
            s.col.push_back(i);
            s.val.push_back(1.0);
        }
        s.row_ptr.push_back(s.nnz());
    }
    out.p = spgemm(s, tentative);
    return out;
}

}  // namespace mpmg
