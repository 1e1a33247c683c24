#include "core/sum_rows.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace mpmg {
namespace {

/// Sorts a row's entries by column, stably. A row already sorted (the usual case: files written
/// column by column or row by row) costs one comparison per entry; short rows are sorted by
/// insertion, without the buffer std::stable_sort allocates.
void sort_row(std::int64_t* col, double* val, std::int64_t len) {
    if (std::is_sorted(col, col + len)) return;
    constexpr std::int64_t kInsertion = 64;
    if (len <= kInsertion) {
        for (std::int64_t k = 1; k < len; ++k) {
            const std::int64_t c = col[k];
            const double v = val[k];
            std::int64_t m = k;
            for (; m > 0 && col[m - 1] > c; --m) {
                col[m] = col[m - 1];
                val[m] = val[m - 1];
            }
            col[m] = c;
            val[m] = v;
        }
        return;
    }
    std::vector<std::int64_t> order(static_cast<std::size_t>(len));
    for (std::int64_t k = 0; k < len; ++k) order[static_cast<std::size_t>(k)] = k;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::int64_t x, std::int64_t y) { return col[x] < col[y]; });
    const std::vector<std::int64_t> c(col, col + len);
    const std::vector<double> v(val, val + len);
    for (std::int64_t k = 0; k < len; ++k) {
        col[k] = c[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])];
        val[k] = v[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])];
    }
}

}  // namespace

void sort_and_sum_rows(CsrMatrix& a) {
    const auto nr = static_cast<std::size_t>(a.rows);
    // Each row sorted, its repeats summed to its front; kept[i]: its entries left.
    std::vector<std::int64_t> kept(nr);
    std::int64_t summed = 0;
#pragma omp parallel for schedule(dynamic, 4096) reduction(+ : summed)
    for (std::size_t i = 0; i < nr; ++i) {
        const std::int64_t begin = a.row_ptr[i], len = a.row_ptr[i + 1] - begin;
        std::int64_t* col = a.col.data() + begin;
        double* val = a.val.data() + begin;
        sort_row(col, val, len);
        std::int64_t out = 0;
        for (std::int64_t k = 0; k < len; ++k) {
            if (out > 0 && col[out - 1] == col[k]) {
                val[out - 1] += val[k];
            } else {
                col[out] = col[k];
                val[out] = val[k];
                ++out;
            }
        }
        kept[i] = out;
        summed += len - out;
    }
    if (summed == 0) return;
    std::int64_t out = 0;
    for (std::size_t i = 0; i < nr; ++i) {
        const std::int64_t begin = a.row_ptr[i];
        a.row_ptr[i] = out;
        std::copy_n(a.col.begin() + begin, kept[i], a.col.begin() + out);
        std::copy_n(a.val.begin() + begin, kept[i], a.val.begin() + out);
        out += kept[i];
    }
    a.row_ptr[nr] = out;
    a.col.resize(static_cast<std::size_t>(out));
    a.val.resize(static_cast<std::size_t>(out));
}

}  // namespace mpmg
