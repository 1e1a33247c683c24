#include "mpmg/csr_matrix.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace mpmg {

void CsrMatrix::multiply(const double* x, double* y) const {
    for (std::int64_t i = 0; i < rows; ++i) {
        double s = 0.0;
        for (std::int64_t p = row_ptr[i]; p < row_ptr[i + 1]; ++p) s += val[p] * x[col[p]];
        y[i] = s;
    }
}

bool is_symmetric(const CsrMatrix& a) {
    if (a.rows != a.cols) return false;
    const CsrMatrix t = a.transpose();
    if (t.col != a.col) return false;
    double scale = 0.0;
    for (double v : a.val) scale = std::max(scale, std::fabs(v));
    for (std::size_t i = 0; i < a.val.size(); ++i) {
        if (std::fabs(a.val[i] - t.val[i]) > 1e-12 * scale) return false;
    }
    return true;
}

CsrMatrix CsrMatrix::transpose() const {
    CsrMatrix t;
    t.rows = cols;
    t.cols = rows;
    t.row_ptr.assign(static_cast<std::size_t>(cols + 1), 0);
    for (std::int64_t c : col) ++t.row_ptr[static_cast<std::size_t>(c + 1)];
    for (std::int64_t i = 0; i < cols; ++i) t.row_ptr[i + 1] += t.row_ptr[i];
    t.col.resize(col.size());
    t.val.resize(val.size());
    std::vector<std::int64_t> next(t.row_ptr.begin(), t.row_ptr.end() - 1);
    for (std::int64_t i = 0; i < rows; ++i) {
        for (std::int64_t p = row_ptr[i]; p < row_ptr[i + 1]; ++p) {
            const std::int64_t q = next[static_cast<std::size_t>(col[p])]++;
            t.col[q] = i;
            t.val[q] = val[p];
        }
    }
    return t;
}

CsrMatrix multiply(const CsrMatrix& a, const CsrMatrix& b) {
    CsrMatrix c;
    c.rows = a.rows;
    c.cols = b.cols;
    c.row_ptr.assign(1, 0);
    std::map<std::int64_t, double> acc;
    for (std::int64_t i = 0; i < a.rows; ++i) {
        acc.clear();
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            const std::int64_t k = a.col[p];
            for (std::int64_t q = b.row_ptr[k]; q < b.row_ptr[k + 1]; ++q) {
                acc[b.col[q]] += a.val[p] * b.val[q];
            }
        }
        for (const auto& [j, v] : acc) {
            c.col.push_back(j);
            c.val.push_back(v);
        }
        c.row_ptr.push_back(static_cast<std::int64_t>(c.col.size()));
    }
    return c;
}

}  // namespace mpmg
