// Matrix Market input and output (coordinate real/integer/pattern, general/symmetric/
// skew-symmetric; array for vectors; ".gz" files read through zlib). Errors name file and line.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mpmg/csr_matrix.hpp"

namespace mpmg {

/// Reads a sparse matrix. Symmetric storage is expanded; duplicate entries are summed (as the
/// format's coordinate convention); throws InvalidInput "<file>:<line>: <problem>" for any
/// malformed header, count, index, value (NaN/Inf) or premature end.
CsrMatrix read_matrix_market(const std::string& path);

/// read_matrix_market with the entry lines of a coordinate file parsed in `parts` pieces of
/// about equal bytes, cut at line starts, by as many OpenMP threads (0: one part per MiB, at
/// most omp_get_max_threads()). The result and the errors are those of one part, bit for bit:
/// duplicates are summed in the file's order, and an error names the file's first bad line.
CsrMatrix read_matrix_market(const std::string& path, int parts);

/// read_matrix_market(path, parts), also saying whether the file stores one triangle of a
/// symmetric matrix (symmetry `symmetric` in its banner). Such a file's matrix is symmetric by
/// construction: every off-diagonal entry read gives its value to its mirror as well, and
/// repeated entries are summed in the same order on both sides, so A = A^T to the bit and
/// is_symmetric(A) holds without a pass over A and its mirrors.
CsrMatrix read_matrix_market(const std::string& path, int parts, bool& stored_symmetric);

/// read_matrix_market(path, parts) through the int64 triplets of matrices with 2^31 rows or
/// columns or more, whatever the size: for tests of that path on small files.
CsrMatrix read_matrix_market_int64(const std::string& path, int parts);

/// Throws InvalidInput "<path>: the entries given for (i, j) sum to inf ..." (one-based, the
/// first in row order) when a value of `a` is not finite: every value read is, so a sum of
/// repeated entries overflowed. Row k of `a` is the file's row first_row + k (a process's rows).
void check_finite_sums(const CsrMatrix& a, const std::string& path, std::int64_t first_row = 0);

/// check_finite_sums' error for entry (row, col) (zero-based) whose sum is `value`.
[[noreturn]] void fail_sum_not_finite(const std::string& path, std::int64_t row, std::int64_t col,
                                      double value);

/// Reads a dense vector: "array real general" n x 1, or coordinate n x 1.
std::vector<double> read_vector_market(const std::string& path);

/// Writes coordinate real general (17 significant digits), via a temporary file renamed into
/// place so that a failed write never leaves a partial file.
void write_matrix_market(const std::string& path, const CsrMatrix& a);

/// One share of a coordinate Matrix Market file that several processes read together (issue #8:
/// `mpirun ... --matrix`), each its own part of the entry lines. Part p of P holds the lines whose
/// first byte lies in the p-th of P equal byte ranges of the file after the size line, so every
/// line belongs to exactly one part and a process keeps only the header and its own bytes (of a
/// gzip file, the decompressed text's). The
/// header is checked as read_matrix_market checks it (every part throws the same error); the
/// entries, once the caller knows how many lines and entry lines come before the part (sums
/// over the earlier parts' lines() and content_lines()), with the same messages and line numbers.
class MatrixMarketPart {
public:
    /// Nothing for a file in the array format (read it whole). A gzip file is split by the
    /// bytes of its decompressed text: decompressed whole (libdeflate) when its text is at most
    /// `whole_text_bytes`, else as a stream up to the end of the part (see open_gzip).
    /// Throws InvalidInput for a file that cannot be read or a bad banner or size line.
    static std::optional<MatrixMarketPart> open(const std::string& path, int part, int parts,
                                                std::size_t whole_text_bytes = kWholeTextBytes);
    /// The largest gzip text a part decompresses whole: every process holds it for a moment.
    static constexpr std::size_t kWholeTextBytes = std::size_t{256} << 20;
    MatrixMarketPart(MatrixMarketPart&&) noexcept;
    MatrixMarketPart& operator=(MatrixMarketPart&&) noexcept;
    ~MatrixMarketPart();

    std::int64_t rows() const;
    std::int64_t cols() const;
    /// Entries the size line declares.
    std::int64_t declared() const;
    /// Lines up to and including the size line.
    std::int64_t header_lines() const;
    /// Lines of this part, and how many of them are entry lines (neither blank nor comments).
    std::int64_t lines() const { return lines_; }
    std::int64_t content_lines() const { return content_lines_; }
    /// Entries an entry line gives at most: 2 in a file that stores one triangle (the entry
    /// and its mirror), else 1.
    int most_entries_per_line() const;
    /// Whether the file stores one triangle of a symmetric matrix (read_matrix_market's
    /// `stored_symmetric`): the entries of all the parts, mirrors included, make A = A^T
    /// wherever their sums are finite.
    bool stored_symmetric() const;
    /// Calls f(i, j, v) (zero-based) for every entry of the part, and for the mirror (j, i) of
    /// an off-diagonal entry of a symmetric (v) or skew-symmetric (-v) file; a pattern file's
    /// values are 1. `lines_before` / `entries_before`: lines / entry lines of the file before
    /// the part. Throws InvalidInput "<file>:<line>: <problem>" at the part's first bad line,
    /// including an entry line beyond the declared count.
    void for_each_entry(std::int64_t lines_before, std::int64_t entries_before,
                        const std::function<void(std::int64_t, std::int64_t, double)>& f);
    /// Throws the error of a file of `total_lines` lines that holds only `total_entries` of the
    /// declared entries.
    [[noreturn]] void fail_truncated(std::int64_t total_lines, std::int64_t total_entries) const;

private:
    struct Impl;
    explicit MatrixMarketPart(std::unique_ptr<Impl> impl);
    /// open() of the whole text of a file, in memory.
    static std::optional<MatrixMarketPart> open_text(const std::string& path, std::string text,
                                                     int part, int parts);
    /// open() of a gzip file as a stream: cut by the decompressed size its trailer announces,
    /// decompressed once up to the end of the part's lines; only the header and the part's
    /// lines are kept.
    static std::optional<MatrixMarketPart> open_gzip(const std::string& path, int part, int parts);
    std::unique_ptr<Impl> impl_;
    std::int64_t lines_ = 0, content_lines_ = 0;
};

}  // namespace mpmg
