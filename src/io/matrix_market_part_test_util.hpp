// Test helper: reads a Matrix Market file through MatrixMarketPart in `parts` parts, one after
// the other in this process, as the processes of a distributed read do together
// (distributed/dist_read.cpp): the parts' line and entry counts summed before each part, the
// first error in file order thrown, then the count checked.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/matrix_market.hpp"
#include "mpmg/csr_matrix.hpp"

namespace mpmg::test {

/// The matrix read in parts (duplicates summed, columns sorted), or nothing where a file is not
/// read in parts (the array format). Throws what the parts throw. `whole_text_bytes`: as
/// MatrixMarketPart::open's (0: a gzip file is read as a stream).
inline std::optional<CsrMatrix> read_in_parts(
    const std::string& path, int parts,
    std::size_t whole_text_bytes = MatrixMarketPart::kWholeTextBytes) {
    std::vector<MatrixMarketPart> all;
    for (int p = 0; p < parts; ++p) {
        std::optional<MatrixMarketPart> part =
            MatrixMarketPart::open(path, p, parts, whole_text_bytes);
        if (!part) return std::nullopt;
        all.push_back(std::move(*part));
    }
    std::map<std::pair<std::int64_t, std::int64_t>, double> sum;
    std::int64_t lines = all[0].header_lines(), entries = 0;
    for (MatrixMarketPart& part : all) {
        part.for_each_entry(lines, entries, [&](std::int64_t i, std::int64_t j, double v) {
            sum[{i, j}] += v;
        });
        lines += part.lines();
        entries += part.content_lines();
    }
    if (entries < all[0].declared()) all[0].fail_truncated(lines, entries);
    CsrMatrix a;
    a.rows = all[0].rows();
    a.cols = all[0].cols();
    a.row_ptr.assign(static_cast<std::size_t>(a.rows) + 1, 0);
    for (const auto& [ij, v] : sum) {
        ++a.row_ptr[static_cast<std::size_t>(ij.first) + 1];
        a.col.push_back(ij.second);
        a.val.push_back(v);
    }
    for (std::int64_t i = 0; i < a.rows; ++i) a.row_ptr[i + 1] += a.row_ptr[i];
    return a;
}

}  // namespace mpmg::test
