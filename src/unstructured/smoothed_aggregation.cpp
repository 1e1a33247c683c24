#include "unstructured/smoothed_aggregation.hpp"

#include <cmath>
#include <vector>

#include "unstructured/smoother_setup.hpp"
#include "unstructured/spgemm.hpp"

namespace mpmg {

CsrMatrix filtered(const CsrMatrix& a, double theta) {
    const std::vector<double> d = diagonal_of(a);
    CsrMatrix f;
    f.rows = a.rows;
    f.cols = a.cols;
    f.row_ptr.reserve(static_cast<std::size_t>(a.rows) + 1);
    for (std::int64_t i = 0; i < a.rows; ++i) {
        double lumped = 0.0;
        std::int64_t diag_at = -1;
        const double di = d[static_cast<std::size_t>(i)];
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            const std::int64_t j = a.col[p];
            const double dj = d[static_cast<std::size_t>(j)];
            if (j != i && a.val[p] * a.val[p] < theta * theta * std::fabs(di * dj)) {
                lumped += a.val[p];
                continue;
            }
            if (j == i) diag_at = f.nnz();
            f.col.push_back(j);
            f.val.push_back(a.val[p]);
        }
        if (diag_at >= 0) f.val[static_cast<std::size_t>(diag_at)] += lumped;
        f.row_ptr.push_back(f.nnz());
    }
    return f;
}

SmoothedProlongation smoothed_prolongation(const CsrMatrix& a_in, const CsrMatrix& tentative,
                                           double theta) {
    CsrMatrix held;  // the filtered matrix; theta 0 smooths with A itself (no copy)
    if (theta > 0.0) held = filtered(a_in, theta);
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
