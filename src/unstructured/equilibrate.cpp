#include "unstructured/equilibrate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace mpmg {

Equilibration equilibrate(const CsrMatrix& a) {
    Equilibration e;
    e.r.assign(static_cast<std::size_t>(a.rows), 0.0);
    e.c.assign(static_cast<std::size_t>(a.cols), 0.0);
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            const double v = std::fabs(a.val[p]);
            e.r[static_cast<std::size_t>(i)] = std::max(e.r[static_cast<std::size_t>(i)], v);
            e.c[a.col[p]] = std::max(e.c[a.col[p]], v);
        }
    }
    for (std::size_t i = 0; i < e.r.size(); ++i) {
        if (e.r[i] == 0.0) {
            e.problem = fmt::format("row {} is zero", i);
            return e;
        }
        e.r[i] = std::sqrt(e.r[i]);
    }
    for (std::size_t j = 0; j < e.c.size(); ++j) {
        if (e.c[j] == 0.0) {
            e.problem = fmt::format("column {} is zero", j);
            return e;
        }
        e.c[j] = std::sqrt(e.c[j]);
    }
    e.ok = true;
    return e;
}

CsrMatrix apply_equilibration(const CsrMatrix& a, const Equilibration& e) {
    CsrMatrix s = a;
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            s.val[p] = a.val[p] / (e.r[static_cast<std::size_t>(i)] * e.c[a.col[p]]);
        }
    }
    return s;
}

}  // namespace mpmg
