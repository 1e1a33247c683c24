#include "unstructured/drop_zeros.hpp"

namespace mpmg {

std::int64_t drop_zeros(CsrMatrix& a, std::int64_t first_row) {
    std::int64_t out = 0, start = 0;
    for (std::int64_t i = 0; i < a.rows; ++i) {
        const std::int64_t end = a.row_ptr[i + 1];
        for (std::int64_t p = start; p < end; ++p) {
            if (a.val[p] == 0.0 && a.col[p] != first_row + i) continue;
            a.col[out] = a.col[p];
            a.val[out] = a.val[p];
            ++out;
        }
        start = end;
        a.row_ptr[i + 1] = out;
    }
    const std::int64_t dropped = static_cast<std::int64_t>(a.val.size()) - out;
    a.col.resize(static_cast<std::size_t>(out));
    a.val.resize(static_cast<std::size_t>(out));
    return dropped;
}

bool has_droppable_zeros(const CsrMatrix& a, std::int64_t first_row) {
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            if (a.val[p] == 0.0 && a.col[p] != first_row + i) return true;
        }
    }
    return false;
}

}  // namespace mpmg
