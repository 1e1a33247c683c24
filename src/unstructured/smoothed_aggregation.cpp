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
    return filtered_rows(
        a, 0, [&](std::int64_t j) { return d[static_cast<std::size_t>(j)]; }, theta, block);
}

std::vector<double> smoothing_inverse_diagonal(const CsrMatrix& a, std::int64_t first) {
    std::vector<double> inv_d(static_cast<std::size_t>(a.rows), 0.0);
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            if (a.col[p] != first + i) continue;
            const double v = a.val[p];
            inv_d[static_cast<std::size_t>(i)] = v != 0.0 && std::isfinite(v) ? 1.0 / v : 0.0;
        }
    }
    return inv_d;
}

CsrMatrix jacobi_smoothing_rows(const CsrMatrix& a, std::int64_t first,
                                const std::vector<double>& inv_d, double omega) {
    const auto n = static_cast<std::size_t>(a.rows);
    CsrMatrix s;
    s.rows = a.rows;
    s.cols = a.cols;
    s.row_ptr.reserve(n + 1);
    s.col.reserve(static_cast<std::size_t>(a.nnz()) + n);
    s.val.reserve(s.col.capacity());
    for (std::int64_t li = 0; li < a.rows; ++li) {
        const std::int64_t i = first + li;
        const double f = omega * inv_d[static_cast<std::size_t>(li)];
        bool diag = false;
        for (std::int64_t p = a.row_ptr[li]; p < a.row_ptr[li + 1]; ++p) {
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
    return s;
}

SmoothedProlongation smoothed_prolongation(const CsrMatrix& a_in, const CsrMatrix& tentative,
                                           double theta, int block) {
    CsrMatrix held;  // the filtered matrix; theta 0 smooths with A itself (no copy)
    if (theta > 0.0) held = filtered(a_in, theta, block);
    const CsrMatrix& a = theta > 0.0 ? held : a_in;
    const std::vector<double> inv_d = smoothing_inverse_diagonal(a, 0);
    SmoothedProlongation out;
    out.rho = power_estimate(a, inv_d);
    out.omega = smoothing_omega(out.rho);
    const CsrMatrix s = jacobi_smoothing_rows(a, 0, inv_d, out.omega);
    out.p = spgemm(s, tentative);
    return out;
}

}  // namespace mpmg
