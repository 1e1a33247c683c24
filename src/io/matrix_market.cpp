// Matrix Market reader. The whole file is loaded (through zlib, which also reads
// plain files) and its entry lines parsed with std::from_chars, in parts by the OpenMP threads;
// the triplets are placed in their rows in the file's order and each row sorted by column.
#include "io/matrix_market.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <fstream>
#include <limits>
#include <string_view>
#include <vector>

#ifdef _OPENMP  // the fuzz build (.ci/fuzz) compiles src/io without OpenMP
#include <omp.h>
#endif

#include "core/prefault.hpp"
#include "core/sum_rows.hpp"
#include "io/text_input.hpp"
#include "mpmg/errors.hpp"

namespace mpmg {
namespace {

using io::ParseStatus;

int max_threads() {
#ifdef _OPENMP
    return std::max(omp_get_max_threads(), 1);
#else
    return 1;
#endif
}

enum class Format { coordinate, array };
enum class Field { real, integer, pattern };
enum class Symmetry { general, symmetric, skew };

/// Largest accepted row or column count: 2^53 - 1, so that every index is exact in a double.
/// Beyond 2^31 - 1 columns the CSR kernels take int64 column indices (unstructured/csr_typed.hpp).
constexpr std::int64_t kMaxDim = (std::int64_t{1} << 53) - 1;

/// a * b for a, b >= 0, saturated at the largest int64 (the entry counts a size line implies
/// are compared with the file's size, never allocated as such).
std::int64_t saturating_product(std::int64_t a, std::int64_t b) {
    constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
    return b != 0 && a > kMax / b ? kMax : a * b;
}
/// Row or column count accepted whatever the number of entries. Beyond it, a coordinate file must
/// declare at least half as many entries as rows (and columns), so that the memory the reader
/// allocates per row stays proportional to the size of the file: a header claiming 2^31 rows
/// and one entry would otherwise cost 16 GiB of row pointers.
constexpr std::int64_t kFreeDim = std::int64_t{1} << 20;

/// Zero-based entries as read, their row and column in I: int32 where the matrix has fewer than
/// 2^31 rows and columns (16 bytes an entry instead of 24: 92 MB less of mfem_lshape_o3_r7's
/// read peak), else int64.
template <class I>
struct Triplets {
    std::vector<I> row, col;
    std::vector<double> val;
    void push(std::int64_t i, std::int64_t j, double v) {
        row.push_back(static_cast<I>(i));
        col.push_back(static_cast<I>(j));
        val.push_back(v);
    }
};

/// Whether the rows and columns of a rows x cols matrix fit I.
template <class I>
bool indices_fit(std::int64_t rows, std::int64_t cols) {
    return std::max(rows, cols) <= std::numeric_limits<I>::max();
}

class Reader {
public:
    explicit Reader(const std::string& path) : Reader(path, io::read_whole_file(path), 0) {}
    /// The banner and the size line from `text`, the file's first bytes (at least up to the end
    /// of the size line) of a file of `file_bytes` bytes (0: text is the whole file).
    Reader(const std::string& path, std::string text, std::size_t file_bytes)
        : path_(path),
          text_(std::move(text)),
          file_bytes_(file_bytes > 0 ? file_bytes : text_.size()),
          lines_(text_) {
        read_banner();
        read_size_line();
    }
    Reader(const Reader&) = delete;  // lines_ points into text_
    Reader& operator=(const Reader&) = delete;

    [[noreturn]] void fail(std::int64_t line, const std::string& problem) const {
        throw InvalidInput(fmt::format("{}:{}: {}", path_, line, problem));
    }
    [[noreturn]] void fail(const std::string& problem) const {
        fail(lines_.line_number(), problem);
    }

    Format format = Format::coordinate;
    Field field = Field::real;
    Symmetry symmetry = Symmetry::general;
    std::int64_t rows = 0, cols = 0, entries = 0;  ///< entries: declared (or implied) count

    /// Calls f(i, j, v) (zero-based) for every stored entry, checking count, indices, values.
    template <class F>
    void for_each_entry(F&& f) {
        std::string_view line;
        std::int64_t k = 0;
        for (; k < entries; ++k) {
            if (!lines_.next_content(line)) fail_truncated(lines_.line_number(), k);
            entry(line, k, f);
        }
        if (lines_.next_content(line)) fail_too_many();
    }

    /// for_each_entry over `part`, a run of whole lines of the file after its first
    /// `lines_before` lines, whose first entry line is entry `first_entry` (MatrixMarketPart):
    /// the same checks, except that the caller checks the count against the other parts'.
    template <class F>
    void for_each_entry_in(std::string_view part, std::int64_t lines_before,
                           std::int64_t first_entry, F&& f) {
        lines_ = io::LineScanner(part, lines_before);
        std::string_view line;
        for (std::int64_t k = first_entry; lines_.next_content(line); ++k) {
            if (k >= entries) fail_too_many();
            entry(line, k, f);
        }
    }

    /// The error of a file whose `lines` lines hold only `found` of the declared entries.
    [[noreturn]] void fail_truncated(std::int64_t lines, std::int64_t found) const {
        fail(lines + 1, fmt::format("file ends after {} of the {} entries declared on line {}; the "
                                    "file is truncated or the size line is wrong",
                                    found, entries, size_line_));
    }

    /// Lines up to and including the size line, and their bytes.
    std::int64_t header_lines() const { return size_line_; }
    std::size_t header_bytes() const { return header_bytes_; }
    /// The text held (the whole file, or its first bytes), and the file's size in bytes.
    std::string_view text() const { return text_; }
    std::size_t file_bytes() const { return file_bytes_; }
    /// Frees the text once its entries are read (no line can be read after), so that the
    /// matrix built next can take its memory (keep_freed_memory) instead of fresh pages.
    void release_text() {
        // Not `text_ = std::string()`: libstdc++ copies an empty (short) string into the
        // buffer it has and keeps the buffer, and the whole file's text stayed beside the CSR
        // built next (194 MB of mfem_lshape_o3_r7's 651 MB read peak).
        std::string().swap(text_);
        lines_ = io::LineScanner(text_);
    }

    /// Capacity worth reserving: the declared count, bounded by what the file can hold.
    std::size_t plausible_entries() const {
        const auto by_size = static_cast<std::int64_t>(file_bytes_ / 2);
        return static_cast<std::size_t>(std::min(entries, by_size));
    }

private:
    /// Entry number k, from its line.
    template <class F>
    void entry(std::string_view line, std::int64_t k, F&& f) {
        io::Tokens tok(line);
        std::int64_t i = 0, j = 0;
        if (format == Format::coordinate) {
            i = read_index(tok, "row", rows);
            j = read_index(tok, "column", cols);
        } else {
            array_position(k, i, j);
        }
        const double v = field == Field::pattern ? 1.0 : read_value(tok);
        std::string_view extra;
        if (tok.next(extra)) {
            fail(
                fmt::format("unexpected extra token '{}' after the entry; a {} {} entry has {} "
                            "fields",
                            extra, format == Format::coordinate ? "coordinate" : "array",
                            field_name(), expected_fields()));
        }
        if (symmetry == Symmetry::skew && i == j) {
            fail(
                fmt::format("skew-symmetric file stores diagonal entry ({}, {}); a "
                            "skew-symmetric matrix has a zero diagonal, remove the entry",
                            i + 1, j + 1));
        }
        f(i, j, v);
    }

    [[noreturn]] void fail_too_many() const {
        fail(
            fmt::format("too many entries: the size line (line {}) declares {}; remove the "
                        "extra lines or correct the count",
                        size_line_, entries));
    }

    void read_banner() {
        std::string_view line;
        if (!lines_.next(line)) fail(1, "the file is empty; expected a '%%MatrixMarket' banner");
        io::Tokens tok(line);
        std::string_view t[6];
        int n = 0;
        while (n < 6 && tok.next(t[n])) ++n;
        if (n == 0 || io::lower(t[0]) != "%%matrixmarket") {
            fail(
                fmt::format("missing banner: the first line must start with '%%MatrixMarket' "
                            "(found '{}'); is this a Matrix Market file?",
                            line.substr(0, 40)));
        }
        if (n != 5) {
            fail(
                fmt::format("banner has {} words, expected 5: '%%MatrixMarket matrix "
                            "coordinate|array real|integer|pattern general|symmetric|"
                            "skew-symmetric'",
                            n));
        }
        const std::string object = io::lower(t[1]), fmt_s = io::lower(t[2]);
        const std::string field_s = io::lower(t[3]), sym_s = io::lower(t[4]);
        if (object != "matrix") {
            fail(fmt::format("unsupported object '{}' in the banner; only 'matrix' is read", t[1]));
        }
        if (fmt_s == "coordinate")
            format = Format::coordinate;
        else if (fmt_s == "array")
            format = Format::array;
        else
            fail(fmt::format("bad format '{}' in the banner; expected coordinate or array", t[2]));
        if (field_s == "real" || field_s == "double")
            field = Field::real;
        else if (field_s == "integer")
            field = Field::integer;
        else if (field_s == "pattern")
            field = Field::pattern;
        else if (field_s == "complex") {
            fail(
                "unsupported field 'complex' in the banner; mpmg reads real, integer and pattern "
                "matrices only");
        } else {
            fail(fmt::format("bad field '{}' in the banner; expected real, integer or pattern",
                             t[3]));
        }
        if (sym_s == "general")
            symmetry = Symmetry::general;
        else if (sym_s == "symmetric")
            symmetry = Symmetry::symmetric;
        else if (sym_s == "skew-symmetric")
            symmetry = Symmetry::skew;
        else if (sym_s == "hermitian") {
            fail(
                "unsupported symmetry 'hermitian' in the banner; mpmg reads general, symmetric "
                "and skew-symmetric real matrices only");
        } else {
            fail(
                fmt::format("bad symmetry '{}' in the banner; expected general, symmetric or "
                            "skew-symmetric",
                            t[4]));
        }
        if (format == Format::array && field == Field::pattern) {
            fail("'array pattern' is not a valid combination; an array file stores values");
        }
    }

    void read_size_line() {
        std::string_view line;
        const char* expect = format == Format::coordinate ? "'rows cols entries'" : "'rows cols'";
        if (!lines_.next_content(line)) {
            fail(lines_.line_number() + 1,
                 fmt::format("file ends before the size line; expected {}", expect));
        }
        size_line_ = lines_.line_number();
        header_bytes_ = lines_.position();
        io::Tokens tok(line);
        std::int64_t v[3] = {0, 0, 0};
        const int want = format == Format::coordinate ? 3 : 2;
        std::string_view t;
        int n = 0;
        for (; tok.next(t); ++n) {
            if (n == want) fail(fmt::format("bad size line '{}': expected {}", line, expect));
            const ParseStatus s = io::parse_int(t, v[n]);
            if (s == ParseStatus::out_of_range) {
                fail(fmt::format("size '{}' overflows a 64-bit integer; correct the size line", t));
            }
            if (s != ParseStatus::ok) {
                fail(fmt::format("bad size line '{}': '{}' is not an integer; expected {}", line, t,
                                 expect));
            }
        }
        if (n != want) fail(fmt::format("bad size line '{}': expected {}", line, expect));
        rows = v[0];
        cols = v[1];
        check_sizes(format == Format::coordinate ? v[2] : -1);
    }

    void check_sizes(std::int64_t nnz) {
        for (const auto& [value, what] : {std::pair{rows, "rows"}, std::pair{cols, "columns"}}) {
            if (value < 1 || value > kMaxDim) {
                fail(fmt::format("number of {} is {}; it must be between 1 and {}", what, value,
                                 kMaxDim));
            }
        }
        if (symmetry != Symmetry::general && rows != cols) {
            fail(fmt::format("a {} matrix must be square, but the size line declares {} x {}",
                             symmetry == Symmetry::symmetric ? "symmetric" : "skew-symmetric", rows,
                             cols));
        }
        const std::int64_t capacity = saturating_product(rows, cols);
        if (format == Format::array) {
            // n (n +- 1) / 2 with the even factor halved first.
            const auto half_square = [](std::int64_t a, std::int64_t b) {
                return a % 2 == 0 ? saturating_product(a / 2, b) : saturating_product(a, b / 2);
            };
            entries = symmetry == Symmetry::general     ? capacity
                      : symmetry == Symmetry::symmetric ? half_square(rows, rows + 1)
                                                        : half_square(rows, rows - 1);
            check_entries_fit();
            return;
        }
        if (nnz < 0 || nnz > capacity) {
            fail(fmt::format("number of entries is {}; it must be between 0 and rows * cols = {}",
                             nnz, capacity));
        }
        entries = nnz;
        check_entries_fit();
        const std::int64_t dim = std::max(rows, cols);
        if (dim > kFreeDim && dim > 2 * nnz) {
            fail(
                fmt::format("the size line declares {} x {} but only {} entries: most rows or "
                            "columns would be empty (more than {} need at least half as many "
                            "entries); correct the size line",
                            rows, cols, nnz, kFreeDim));
        }
    }

    /// Each entry takes at least two bytes (a value and a line break): a count the file cannot
    /// hold is rejected before anything is allocated for it.
    void check_entries_fit() const {
        const auto most = static_cast<std::int64_t>(file_bytes_ / 2 + 1);
        if (entries > most) {
            fail(
                fmt::format("the size line declares {} entries, but the file has only {} bytes; "
                            "the file is truncated or the size line is wrong",
                            entries, file_bytes_));
        }
    }

    std::int64_t read_index(io::Tokens& tok, const char* what, std::int64_t extent) {
        std::string_view t;
        if (!tok.next(t)) {
            fail(fmt::format("entry has no {} index; a coordinate entry is 'row column{}'", what,
                             field == Field::pattern ? "" : " value"));
        }
        std::int64_t idx = 0;
        const ParseStatus s = io::parse_int(t, idx);
        if (s == ParseStatus::not_a_number) {
            fail(fmt::format("{} index '{}' is not an integer; indices are 1-based integers", what,
                             t));
        }
        if (s == ParseStatus::out_of_range || idx < 1 || idx > extent) {
            fail(
                fmt::format("{} index {} is outside 1..{} (size line {}); fix the entry or "
                            "the size line",
                            what, t, extent, size_line_));
        }
        return idx - 1;
    }

    double read_value(io::Tokens& tok) {
        std::string_view t;
        if (!tok.next(t)) fail("entry has no value; add the value or declare the file 'pattern'");
        if (field == Field::integer) {
            std::int64_t iv = 0;
            if (io::parse_int(t, iv) != ParseStatus::ok) {
                fail(fmt::format("value '{}' is not an integer, as the 'integer' banner requires",
                                 t));
            }
            return static_cast<double>(iv);
        }
        double v = 0.0;
        const ParseStatus s = io::parse_double(t, v);
        if (s == ParseStatus::not_a_number) {
            fail(fmt::format("value '{}' is not a number; fix the entry", t));
        }
        if (s == ParseStatus::out_of_range || !std::isfinite(v)) {
            fail(fmt::format("value '{}' is not finite; mpmg needs finite values", t));
        }
        return v;
    }

    /// Row and column of the k-th value of an array file (column-major; symmetric: lower
    /// triangle, skew: strictly lower).
    void array_position(std::int64_t k, std::int64_t& i, std::int64_t& j) {
        if (symmetry == Symmetry::general) {
            i = k % rows;
            j = k / rows;
            return;
        }
        if (k == 0 || array_i_ + 1 >= rows) {  // first value, or the column is finished
            array_j_ = k == 0 ? 0 : array_j_ + 1;
            array_i_ = symmetry == Symmetry::symmetric ? array_j_ : array_j_ + 1;
        } else {
            ++array_i_;
        }
        i = array_i_;
        j = array_j_;
    }

    const char* field_name() const {
        return field == Field::real ? "real" : field == Field::integer ? "integer" : "pattern";
    }
    int expected_fields() const {
        return (format == Format::coordinate ? 2 : 0) + (field == Field::pattern ? 0 : 1);
    }

    std::string path_;
    std::string text_;
    std::size_t file_bytes_;
    io::LineScanner lines_;
    std::int64_t size_line_ = 0;
    std::size_t header_bytes_ = 0;
    std::int64_t array_i_ = 0, array_j_ = 0;
};

/// CSR with sorted columns and duplicates summed in the file's order, from zero-based
/// triplets in parts that follow each other in the file (each part is released once placed).
/// Every entry is placed in its row once, in the parts' order (in parallel, part by part, where
/// a count per part and row costs no more memory than the entries), then sort_and_sum_rows.
template <class I>
CsrMatrix build_csr(std::int64_t rows, std::int64_t cols, std::vector<Triplets<I>>& parts) {
    const int np = static_cast<int>(parts.size());
    const auto nr = static_cast<std::size_t>(rows);
    std::size_t n = 0;
    for (const Triplets<I>& t : parts) n += t.val.size();
    CsrMatrix a;
    a.rows = rows;
    a.cols = cols;
    a.row_ptr.assign(nr + 1, 0);
    assign_prefaulted(a.col, n, std::int64_t{0});
    assign_prefaulted(a.val, n, 0.0);
    // Part t's entries into their rows, next[i] the place of row i's next one; t released.
    const auto place = [&](Triplets<I>& t, std::vector<std::int64_t>& next) {
        for (std::size_t k = 0; k < t.val.size(); ++k) {
            const auto q = static_cast<std::size_t>(next[static_cast<std::size_t>(t.row[k])]++);
            a.col[q] = t.col[k];
            a.val[q] = t.val[k];
        }
        t = Triplets<I>{};
    };
    if (np > 1 && static_cast<std::size_t>(np) * nr <= 2 * n) {
        // at[p][i]: part p's entries in row i, then where the first of them goes.
        std::vector<std::vector<std::int64_t>> at(static_cast<std::size_t>(np));
#pragma omp parallel for num_threads(np) schedule(static, 1)
        for (int p = 0; p < np; ++p) {
            std::vector<std::int64_t>& c = at[static_cast<std::size_t>(p)];
            c.assign(nr, 0);
            for (const I i : parts[static_cast<std::size_t>(p)].row) {
                ++c[static_cast<std::size_t>(i)];
            }
        }
        for (std::size_t i = 0; i < nr; ++i) {
            std::int64_t len = 0;
            for (const auto& c : at) len += c[i];
            a.row_ptr[i + 1] = a.row_ptr[i] + len;
        }
#pragma omp parallel for schedule(static)
        for (std::size_t i = 0; i < nr; ++i) {
            std::int64_t next = a.row_ptr[i];
            for (auto& c : at) {
                const std::int64_t len = c[i];
                c[i] = next;
                next += len;
            }
        }
#pragma omp parallel for num_threads(np) schedule(static, 1)
        for (int p = 0; p < np; ++p) {
            place(parts[static_cast<std::size_t>(p)], at[static_cast<std::size_t>(p)]);
        }
    } else {
        for (const Triplets<I>& t : parts) {
            for (const I i : t.row) ++a.row_ptr[static_cast<std::size_t>(i) + 1];
        }
        for (std::size_t i = 0; i < nr; ++i) a.row_ptr[i + 1] += a.row_ptr[i];
        std::vector<std::int64_t> next(a.row_ptr.begin(), a.row_ptr.end() - 1);
        for (Triplets<I>& t : parts) place(t, next);
    }
    sort_and_sum_rows(a);
    return a;
}

/// A plain file opened for reading parts of it (MatrixMarketPart).
class PlainFile {
public:
    explicit PlainFile(const std::string& path) : path_(path), in_(path, std::ios::binary) {
        errno = 0;
        if (!in_) {
            throw InvalidInput(
                fmt::format("{}: cannot open the file ({}); check the path and its permissions",
                            path, errno != 0 ? std::strerror(errno) : "unknown error"));
        }
        in_.seekg(0, std::ios::end);
        size_ = static_cast<std::size_t>(in_.tellg());
    }
    std::size_t size() const { return size_; }
    /// Bytes [begin, end) of the file.
    std::string read(std::size_t begin, std::size_t end) {
        std::string out(end - begin, '\0');
        in_.clear();
        in_.seekg(static_cast<std::streamoff>(begin));
        in_.read(out.data(), static_cast<std::streamsize>(out.size()));
        if (static_cast<std::size_t>(in_.gcount()) != out.size()) {
            throw InvalidInput(
                fmt::format("{}: cannot read bytes {}..{} of the file; was it changed "
                            "while being read?",
                            path_, begin, end));
        }
        return out;
    }
    /// The first line start at or after `pos` (a line starts at `after_header` or after a
    /// '\n'), or the file's size.
    std::size_t line_start(std::size_t pos, std::size_t after_header) {
        if (pos <= after_header) return after_header;
        constexpr std::size_t kBlock = std::size_t{1} << 16;
        for (std::size_t at = pos - 1; at < size_; at += kBlock) {
            const std::string block = read(at, std::min(size_, at + kBlock));
            const auto nl = block.find('\n');
            if (nl != std::string::npos) return at + nl + 1;
        }
        return size_;
    }

private:
    std::string path_;
    std::ifstream in_;
    std::size_t size_ = 0;
};

/// Where the size line (the first line after the banner that is neither blank nor a comment) of
/// a file whose first bytes are `head` ends (after its '\n'), or npos when `head` ends before.
std::size_t size_line_end(std::string_view head) {
    for (std::size_t pos = 0;;) {
        const std::size_t nl = head.find('\n', pos);
        if (nl == std::string_view::npos) return std::string_view::npos;
        const std::string_view line = head.substr(pos, nl - pos);
        const std::size_t first = line.find_first_not_of(" \t\r");
        if (pos > 0 && first != std::string_view::npos && line[first] != '%') return nl + 1;
        pos = nl + 1;
    }
}

/// The file's first bytes up to and including its size line, or all of a file that ends before.
std::string read_head(PlainFile& f) {
    std::string head;
    constexpr std::size_t kBlock = std::size_t{1} << 16;
    for (;;) {
        const std::size_t end = size_line_end(head);
        if (end != std::string::npos) {
            head.resize(end);
            return head;
        }
        if (head.size() == f.size()) return head;
        head += f.read(head.size(), std::min(f.size(), head.size() + kBlock));
    }
}

/// Part p of `parts` begins at the first line start at or after this byte: the p-th of `parts`
/// equal byte ranges of the entry lines, which start at byte `begin` of a text of `total` bytes.
std::size_t part_byte(std::size_t begin, std::size_t total, int p, int parts) {
    const std::size_t span = total - begin;
    const auto q = static_cast<std::size_t>(p), n = static_cast<std::size_t>(parts);
    return begin + span / n * q + span % n * q / n;
}

/// PlainFile::line_start for a text read from the start chunk by chunk: the first line start at
/// or after `pos` (after_header when pos is not beyond it; else after the '\n' at or after
/// byte pos - 1), or the text's size. Feed it every chunk in order; `at` is known once a chunk
/// holds that '\n' (npos until then, and at the end when there is none: the text's size).
struct LineStartAfter {
    std::size_t pos;
    std::size_t at = std::string::npos;
    LineStartAfter(std::size_t pos_, std::size_t after_header)
        : pos(pos_), at(pos_ <= after_header ? after_header : std::string::npos) {}
    void feed(std::string_view chunk, std::size_t offset) {
        if (at != std::string::npos || offset + chunk.size() < pos) return;
        const std::size_t from = pos > offset ? pos - offset - 1 : 0;
        const std::size_t nl = chunk.find('\n', from);
        if (nl != std::string_view::npos) at = offset + nl + 1;
    }
};

/// Where part p of `parts` begins in a text held whole whose entry lines start at byte `begin`:
/// PlainFile::line_start of part_byte, or the text's end when no line starts after it.
std::size_t part_start(std::string_view text, std::size_t begin, int p, int parts) {
    LineStartAfter at(part_byte(begin, text.size(), p, parts), begin);
    at.feed(text, 0);
    return at.at != std::string::npos ? at.at : text.size();
}

/// A run of whole lines: its lines, and how many of them are entry lines (neither blank nor
/// comments).
struct LineCounts {
    std::int64_t lines = 0, content = 0;
};
LineCounts count_lines(std::string_view text) {
    io::LineScanner scan(text);
    std::string_view line;
    LineCounts c;
    while (scan.next_content(line)) ++c.content;
    c.lines = scan.line_number();
    return c;
}

}  // namespace

CsrMatrix read_matrix_market(const std::string& path) { return read_matrix_market(path, 0); }

void fail_sum_not_finite(const std::string& path, std::int64_t row, std::int64_t col,
                         double value) {
    throw InvalidInput(
        fmt::format("{}: the entries given for ({}, {}) sum to {}, beyond the range of doubles; "
                    "mpmg needs finite values",
                    path, row + 1, col + 1, value));
}

void check_finite_sums(const CsrMatrix& a, const std::string& path, std::int64_t first_row) {
    if (std::all_of(a.val.begin(), a.val.end(), [](double v) { return std::isfinite(v); })) {
        return;
    }
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            if (!std::isfinite(a.val[p])) {
                fail_sum_not_finite(path, first_row + i, a.col[p], a.val[p]);
            }
        }
    }
}

CsrMatrix read_matrix_market(const std::string& path, int parts) {
    bool stored_symmetric = false;
    return read_matrix_market(path, parts, stored_symmetric);
}

namespace {

/// read_matrix_market's entries, in triplets indexed by I.
template <class I>
CsrMatrix read_entries(Reader& r, const std::string& path, int parts) {
    const double mirror_sign = r.symmetry == Symmetry::skew ? -1.0 : 1.0;
    const bool mirror = r.symmetry != Symmetry::general;
    const auto push = [&](Triplets<I>& t, std::int64_t i, std::int64_t j, double v) {
        t.push(i, j, v);
        if (mirror && i != j) t.push(j, i, mirror_sign * v);
    };
    std::vector<Triplets<I>> t(1);
    if (r.format == Format::array) {
        const std::size_t reserve = r.plausible_entries() * (mirror ? 2 : 1);
        reserve_prefaulted(t[0].row, reserve);
        reserve_prefaulted(t[0].col, reserve);
        reserve_prefaulted(t[0].val, reserve);
        r.for_each_entry([&](std::int64_t i, std::int64_t j, double v) {
            if (v != 0.0) push(t[0], i, j, v);  // an array file's zeros are not stored entries
        });
        CsrMatrix a = build_csr(r.rows, r.cols, t);
        check_finite_sums(a, path);
        return a;
    }
    // The entry lines, cut into parts at line starts (as MatrixMarketPart cuts a file for the
    // processes), each parsed by its own thread with the whole file's line and entry numbers.
    const std::size_t begin = r.header_bytes();
    const std::string_view body = r.text().substr(begin);
    constexpr std::size_t kBytesPerPart = std::size_t{1} << 20;
    if (parts <= 0) {
        parts = static_cast<int>(std::clamp<std::size_t>(body.size() / kBytesPerPart, 1,
                                                         static_cast<std::size_t>(max_threads())));
    }
    const auto np = static_cast<std::size_t>(parts);
    std::vector<std::size_t> cut(np + 1, body.size());
    cut[0] = 0;
    for (std::size_t p = 1; p < np; ++p) cut[p] = part_start(body, 0, static_cast<int>(p), parts);
    const auto part = [&](std::size_t p) { return body.substr(cut[p], cut[p + 1] - cut[p]); };
    std::vector<LineCounts> counts(np);
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (std::size_t p = 0; p < np; ++p) counts[p] = count_lines(part(p));
    std::vector<std::int64_t> lines_before(np), entries_before(np);
    std::int64_t total_lines = r.header_lines(), total_entries = 0;
    for (std::size_t p = 0; p < np; ++p) {
        lines_before[p] = total_lines;
        entries_before[p] = total_entries;
        total_lines += counts[p].lines;
        total_entries += counts[p].content;
    }
    t.resize(np);
    std::vector<std::exception_ptr> failed(np);
    const std::string head(r.text().substr(0, begin));
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (std::size_t p = 0; p < np; ++p) {
        try {
            Reader h(path, head, r.file_bytes());
            // Lines beyond the declared count are an error (at the first of them).
            const auto reserve = static_cast<std::size_t>(std::max<std::int64_t>(
                0, std::min(counts[p].content, r.entries - entries_before[p])));
            const std::size_t entries = reserve * (mirror ? 2 : 1);
            reserve_prefaulted(t[p].row, entries);
            reserve_prefaulted(t[p].col, entries);
            reserve_prefaulted(t[p].val, entries);
            h.for_each_entry_in(
                part(p), lines_before[p], entries_before[p],
                [&](std::int64_t i, std::int64_t j, double v) { push(t[p], i, j, v); });
        } catch (...) {
            failed[p] = std::current_exception();
        }
    }
    // The first bad line of the file is in the first part that failed.
    for (const std::exception_ptr& e : failed) {
        if (e) std::rethrow_exception(e);
    }
    if (total_entries < r.entries) r.fail_truncated(total_lines, total_entries);
    r.release_text();
    CsrMatrix a = build_csr(r.rows, r.cols, t);
    check_finite_sums(a, path);
    return a;
}

}  // namespace

CsrMatrix read_matrix_market(const std::string& path, int parts, bool& stored_symmetric) {
    Reader r(path);
    stored_symmetric = r.symmetry == Symmetry::symmetric;
    return indices_fit<std::int32_t>(r.rows, r.cols) ? read_entries<std::int32_t>(r, path, parts)
                                                     : read_entries<std::int64_t>(r, path, parts);
}

CsrMatrix read_matrix_market_int64(const std::string& path, int parts) {
    Reader r(path);
    return read_entries<std::int64_t>(r, path, parts);
}

std::vector<double> read_vector_market(const std::string& path) {
    Reader r(path);
    if (r.rows != 1 && r.cols != 1) {
        r.fail(
            fmt::format("a vector file must be n x 1 or 1 x n, but the size line declares "
                        "{} x {}",
                        r.rows, r.cols));
    }
    if (r.symmetry != Symmetry::general || r.field == Field::pattern) {
        r.fail(1, "a vector file must be 'real general' or 'integer general'; fix the banner");
    }
    std::vector<double> x(static_cast<std::size_t>(r.rows * r.cols), 0.0);
    r.for_each_entry([&](std::int64_t i, std::int64_t j, double v) {
        x[static_cast<std::size_t>(i + j)] += v;  // one of i, j is zero
    });
    for (std::size_t k = 0; k < x.size(); ++k) {  // every value read is finite, a sum may not be
        if (!std::isfinite(x[k])) {
            throw InvalidInput(fmt::format(
                "{}: the entries given for entry {} sum to {}, beyond the range of doubles; "
                "mpmg needs finite values",
                path, k + 1, x[k]));
        }
    }
    return x;
}

struct MatrixMarketPart::Impl {
    std::unique_ptr<Reader> header;
    std::string text;  ///< the part's lines
};

MatrixMarketPart::MatrixMarketPart(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
    const LineCounts c = count_lines(impl_->text);
    lines_ = c.lines;
    content_lines_ = c.content;
}
MatrixMarketPart::MatrixMarketPart(MatrixMarketPart&&) noexcept = default;
MatrixMarketPart& MatrixMarketPart::operator=(MatrixMarketPart&&) noexcept = default;
MatrixMarketPart::~MatrixMarketPart() = default;

std::optional<MatrixMarketPart> MatrixMarketPart::open(const std::string& path, int part, int parts,
                                                       std::size_t whole_text_bytes) {
    PlainFile f(path);
    const std::string magic = f.read(0, std::min<std::size_t>(2, f.size()));
    if (magic == "\x1f\x8b") {
        if (std::optional<std::string> text = io::gunzip_whole(path, whole_text_bytes)) {
            return open_text(path, std::move(*text), part, parts);
        }
        return open_gzip(path, part, parts);
    }
    std::string head = read_head(f);
    auto impl = std::make_unique<Impl>();
    impl->header = std::make_unique<Reader>(path, std::move(head), f.size());
    const Reader& h = *impl->header;
    if (h.format != Format::coordinate) return std::nullopt;
    const std::size_t begin = h.header_bytes();
    const auto cut = [&](int p) {
        return f.line_start(part_byte(begin, f.size(), p, parts), begin);
    };
    const std::size_t lo = cut(part), hi = part + 1 == parts ? f.size() : cut(part + 1);
    impl->text = lo < hi ? f.read(lo, hi) : std::string();
    return MatrixMarketPart(std::move(impl));
}

std::optional<MatrixMarketPart> MatrixMarketPart::open_text(const std::string& path,
                                                            std::string text, int part, int parts) {
    auto impl = std::make_unique<Impl>();
    impl->header = std::make_unique<Reader>(
        path, text.substr(0, std::min(size_line_end(text), text.size())), text.size());
    const Reader& h = *impl->header;
    if (h.format != Format::coordinate) return std::nullopt;
    // Cut as PlainFile::line_start cuts a plain file of this text.
    const std::size_t begin = h.header_bytes();
    const std::size_t lo = part_start(text, begin, part, parts);
    const std::size_t hi =
        part + 1 == parts ? text.size() : part_start(text, begin, part + 1, parts);
    if (lo < hi) impl->text = text.substr(lo, hi - lo);
    return MatrixMarketPart(std::move(impl));
}

std::optional<MatrixMarketPart> MatrixMarketPart::open_gzip(const std::string& path, int part,
                                                            int parts) {
    constexpr std::size_t kChunk = std::size_t{1} << 20;
    // The stream's first chunks, up to the size line (or the end of a file that ends before).
    auto f = std::make_unique<io::FileChunks>(path);
    std::string start;
    std::size_t head_end = std::string::npos;
    bool ended = false;
    while (head_end == std::string::npos && !ended) {
        const std::size_t old = start.size();
        start.resize(old + kChunk);
        const std::size_t n = f->read(start.data() + old, kChunk);
        start.resize(old + n);
        ended = n < kChunk;
        head_end = size_line_end(start);
    }
    const std::string head = start.substr(0, std::min(head_end, start.size()));
    // The parts are cut by the decompressed size. The trailer announces it, which spares every
    // process a whole pass of decompression before its own; the count is taken only when the
    // file ends within the chunks read, or when the trailer gives no size the header can accept
    // (a size line declaring more entries than that many bytes hold: the exact size then gives
    // the serial read's error, or the header was right). A wrong announced size (a file of
    // several gzip members, or one of 4 GiB or more) leaves the parts whole lines that cover the
    // file once, only unevenly: they are cut at line starts, and the last part reads to the end.
    auto impl = std::make_unique<Impl>();
    std::size_t total = start.size();
    if (!ended) {
        const std::optional<std::uint64_t> hint = io::gzip_size_hint(path);
        if (hint && *hint >= start.size()) {
            try {
                impl->header =
                    std::make_unique<Reader>(path, head, static_cast<std::size_t>(*hint));
                total = static_cast<std::size_t>(*hint);
            } catch (const InvalidInput&) {
                impl->header.reset();
            }
        }
        if (!impl->header) {
            std::string chunk(kChunk, '\0');
            for (std::size_t n = kChunk; n == kChunk; total += n) n = f->read(chunk.data(), kChunk);
            f = std::make_unique<io::FileChunks>(path);
            start.clear();
        }
    }
    if (!impl->header) impl->header = std::make_unique<Reader>(path, head, total);
    const Reader& h = *impl->header;
    if (h.format != Format::coordinate) return std::nullopt;
    // The part's lines, cut as a plain file of the decompressed text would be.
    const std::size_t begin = h.header_bytes();
    LineStartAfter lo(part_byte(begin, total, part, parts), begin);
    LineStartAfter hi(
        part + 1 == parts ? std::string::npos : part_byte(begin, total, part + 1, parts), begin);
    // Takes the chunk at `offset` of the text; true once the part is complete.
    const auto take = [&](std::string_view c, std::size_t offset) {
        lo.feed(c, offset);
        hi.feed(c, offset);
        if (lo.at != std::string::npos) {
            const std::size_t from = std::max(lo.at, offset);
            const std::size_t to = std::min(hi.at, offset + c.size());
            if (from < to) impl->text.append(c.substr(from - offset, to - from));
        }
        return hi.at != std::string::npos && offset + c.size() >= hi.at;
    };
    std::size_t offset = start.size();
    bool done = take(start, 0) || ended;
    std::string chunk(done ? 0 : kChunk, '\0');
    while (!done) {
        const std::size_t n = f->read(chunk.data(), kChunk);
        done = take(std::string_view(chunk.data(), n), offset) || n < kChunk;
        offset += n;
    }
    return MatrixMarketPart(std::move(impl));
}

std::int64_t MatrixMarketPart::rows() const { return impl_->header->rows; }
std::int64_t MatrixMarketPart::cols() const { return impl_->header->cols; }
std::int64_t MatrixMarketPart::declared() const { return impl_->header->entries; }
std::int64_t MatrixMarketPart::header_lines() const { return impl_->header->header_lines(); }
int MatrixMarketPart::most_entries_per_line() const {
    return impl_->header->symmetry == Symmetry::general ? 1 : 2;
}
bool MatrixMarketPart::stored_symmetric() const {
    return impl_->header->symmetry == Symmetry::symmetric;
}

void MatrixMarketPart::for_each_entry(
    std::int64_t lines_before, std::int64_t entries_before,
    const std::function<void(std::int64_t, std::int64_t, double)>& f) {
    Reader& r = *impl_->header;
    const double mirror_sign = r.symmetry == Symmetry::skew ? -1.0 : 1.0;
    const bool mirror = r.symmetry != Symmetry::general;
    r.for_each_entry_in(impl_->text, lines_before, entries_before,
                        [&](std::int64_t i, std::int64_t j, double v) {
                            f(i, j, v);
                            if (mirror && i != j) f(j, i, mirror_sign * v);
                        });
}

void MatrixMarketPart::fail_truncated(std::int64_t total_lines, std::int64_t total_entries) const {
    impl_->header->fail_truncated(total_lines, total_entries);
}

}  // namespace mpmg
