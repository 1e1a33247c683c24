#include "unstructured/spgemm.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <vector>

#include "mpmg/errors.hpp"

namespace mpmg {
namespace {

constexpr std::int64_t kParallelRows = 1024;

// Number of distinct columns of row i of A B; `marker` holds the last row that touched a column.
std::int64_t row_count(const CsrMatrix& a, const CsrMatrix& b, std::int64_t i,
                       std::vector<std::int64_t>& marker) {
    std::int64_t count = 0;
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
        const std::int64_t k = a.col[p];
        for (std::int64_t q = b.row_ptr[k]; q < b.row_ptr[k + 1]; ++q) {
            if (marker[b.col[q]] != i) {
                marker[b.col[q]] = i;
                ++count;
            }
        }
    }
    return count;
}

// Writes row i of A B into c (its slot is already sized), columns sorted.
void row_fill(const CsrMatrix& a, const CsrMatrix& b, std::int64_t i, CsrMatrix& c,
              std::vector<std::int64_t>& marker, std::vector<double>& acc) {
    const std::int64_t begin = c.row_ptr[i];
    std::int64_t end = begin;
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
        const std::int64_t k = a.col[p];
        const double av = a.val[p];
        for (std::int64_t q = b.row_ptr[k]; q < b.row_ptr[k + 1]; ++q) {
            const std::int64_t j = b.col[q];
            if (marker[j] != i) {
                marker[j] = i;
                acc[j] = 0.0;
                c.col[end++] = j;
            }
            acc[j] += av * b.val[q];
        }
    }
    std::sort(c.col.begin() + begin, c.col.begin() + end);
    for (std::int64_t p = begin; p < end; ++p) c.val[p] = acc[c.col[p]];
}

}  // namespace

CsrMatrix spgemm(const CsrMatrix& a, const CsrMatrix& b) {
    if (a.cols != b.rows) {
        throw InvalidInput(fmt::format("spgemm: inner dimensions differ ({} x {} times {} x {})",
                                       a.rows, a.cols, b.rows, b.cols));
    }
    CsrMatrix c;
    c.rows = a.rows;
    c.cols = b.cols;
    c.row_ptr.assign(static_cast<std::size_t>(a.rows + 1), 0);
    const auto width = static_cast<std::size_t>(b.cols);
#pragma omp parallel if (a.rows > kParallelRows)
    {
        std::vector<std::int64_t> marker(width, -1);
#pragma omp for schedule(static)
        for (std::int64_t i = 0; i < a.rows; ++i) c.row_ptr[i + 1] = row_count(a, b, i, marker);
    }
    for (std::int64_t i = 0; i < a.rows; ++i) c.row_ptr[i + 1] += c.row_ptr[i];
    c.col.resize(static_cast<std::size_t>(c.row_ptr.back()));
    c.val.resize(c.col.size());
#pragma omp parallel if (a.rows > kParallelRows)
    {
        std::vector<std::int64_t> marker(width, -1);
        std::vector<double> acc(width, 0.0);
#pragma omp for schedule(static)
        for (std::int64_t i = 0; i < a.rows; ++i) row_fill(a, b, i, c, marker, acc);
    }
    return c;
}

CsrMatrix galerkin_product(const CsrMatrix& r, const CsrMatrix& a, const CsrMatrix& p) {
    return spgemm(r, spgemm(a, p));
}

}  // namespace mpmg
