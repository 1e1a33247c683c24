#include "io/matrix_market.hpp"
#include "io/matrix_market_part_test_util.hpp"
#include "io/text_input.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "mpmg/errors.hpp"
#include "mpmg_paths.hpp"

namespace mpmg {
namespace {

namespace fs = std::filesystem;

class MatrixMarket : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("mpmg_mm_test_" + std::to_string(::getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::string write(const std::string& name, const std::string& text) const {
        const std::string path = (dir_ / name).string();
        std::ofstream(path, std::ios::binary) << text;
        return path;
    }
    std::string write_gz(const std::string& name, const std::string& text) const {
        const std::string path = (dir_ / name).string();
        gzFile f = gzopen(path.c_str(), "wb");
        EXPECT_NE(f, nullptr);
        EXPECT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())),
                  static_cast<int>(text.size()));
        gzclose(f);
        return path;
    }
    fs::path dir_;
};

/// The matrix as (row, col, value) triplets in CSR order, one-based for readability.
struct Entry {
    std::int64_t i, j;
    double v;
    bool operator==(const Entry&) const = default;
};
std::vector<Entry> entries(const CsrMatrix& a) {
    std::vector<Entry> out;
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            out.push_back({i + 1, a.col[p] + 1, a.val[p]});
        }
    }
    return out;
}

TEST_F(MatrixMarket, ReadsGeneralSummingDuplicatesAndSortingColumns) {
    const std::string path = write("g.mtx",
                                   "%%MatrixMarket MATRIX Coordinate Real GENERAL\r\n"
                                   "% a comment\r\n"
                                   "\r\n"
                                   "3 4 6\r\n"
                                   "2 4 -1.5e0\r\n"
                                   "1 3 2\r\n"
                                   "1 1 +1.0\r\n"
                                   "2 4 0.5\r\n"
                                   "   3\t2   7e-3  \r\n"
                                   "1 2 -4.\r\n");
    const CsrMatrix a = read_matrix_market(path);
    EXPECT_EQ(a.rows, 3);
    EXPECT_EQ(a.cols, 4);
    const std::vector<Entry> want = {
        {1, 1, 1.0}, {1, 2, -4.0}, {1, 3, 2.0}, {2, 4, -1.0}, {3, 2, 7e-3}};
    EXPECT_EQ(entries(a), want);
    EXPECT_EQ(a.row_ptr, (std::vector<std::int64_t>{0, 3, 4, 5}));
}

TEST_F(MatrixMarket, ExpandsSymmetricIncludingUpperTriangleEntries) {
    const std::string path = write("s.mtx",
                                   "%%MatrixMarket matrix coordinate real symmetric\n"
                                   "3 3 4\n"
                                   "1 1 4\n"
                                   "2 1 -1\n"
                                   "3 3 5\n"
                                   "2 3 -2\n");  // upper triangle: accepted and mirrored
    const std::vector<Entry> want = {{1, 1, 4},  {1, 2, -1}, {2, 1, -1},
                                     {2, 3, -2}, {3, 2, -2}, {3, 3, 5}};
    EXPECT_EQ(entries(read_matrix_market(path)), want);
}

TEST_F(MatrixMarket, ExpandsSkewSymmetricWithNegation) {
    const std::string path = write("k.mtx",
                                   "%%MatrixMarket matrix coordinate real skew-symmetric\n"
                                   "2 2 1\n"
                                   "2 1 3\n");
    const std::vector<Entry> want = {{1, 2, -3}, {2, 1, 3}};
    EXPECT_EQ(entries(read_matrix_market(path)), want);
}

TEST_F(MatrixMarket, ReadsPatternAndInteger) {
    const std::string p = write("p.mtx",
                                "%%MatrixMarket matrix coordinate pattern symmetric\n"
                                "2 2 2\n1 1\n2 1\n");
    const std::vector<Entry> want_p = {{1, 1, 1}, {1, 2, 1}, {2, 1, 1}};
    EXPECT_EQ(entries(read_matrix_market(p)), want_p);
    const std::string q = write("i.mtx",
                                "%%MatrixMarket matrix coordinate integer general\n"
                                "1 2 2\n1 1 -7\n1 2 12\n");
    const std::vector<Entry> want_i = {{1, 1, -7}, {1, 2, 12}};
    EXPECT_EQ(entries(read_matrix_market(q)), want_i);
}

TEST_F(MatrixMarket, ReadsArrayMatricesColumnMajorDroppingZeros) {
    const std::string g = write("ag.mtx",
                                "%%MatrixMarket matrix array real general\n"
                                "2 2\n1\n0\n3\n4\n");
    const std::vector<Entry> want_g = {{1, 1, 1}, {1, 2, 3}, {2, 2, 4}};
    EXPECT_EQ(entries(read_matrix_market(g)), want_g);
    const std::string s = write("as.mtx",
                                "%%MatrixMarket matrix array real symmetric\n"
                                "2 2\n1\n2\n3\n");
    const std::vector<Entry> want_s = {{1, 1, 1}, {1, 2, 2}, {2, 1, 2}, {2, 2, 3}};
    EXPECT_EQ(entries(read_matrix_market(s)), want_s);
    const std::string k = write("ak.mtx",
                                "%%MatrixMarket matrix array real skew-symmetric\n"
                                "3 3\n1\n2\n3\n");
    const std::vector<Entry> want_k = {{1, 2, -1}, {1, 3, -2}, {2, 1, 1},
                                       {2, 3, -3}, {3, 1, 2},  {3, 2, 3}};
    EXPECT_EQ(entries(read_matrix_market(k)), want_k);
}

// Beyond 2^31 rows or columns the entries go through int64 triplets; that path reads every
// kind of file as the int32 one does, bit for bit: shared matrices stored general and
// symmetric (gzip, in 1 and 3 parts), and array files, general and skew-symmetric.
TEST_F(MatrixMarket, Int64TripletsReadAsTheInt32Ones) {
    const std::string data = MPMG_SHARED_DATA;
    std::vector<std::string> files = {data + "/sherman3.mtx.gz", data + "/bcsstk13.mtx.gz",
                                      data + "/pyamg_knot.mtx.gz"};
    files.push_back(
        write("ag64.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n0\n3\n4\n"));
    files.push_back(
        write("ak64.mtx", "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n"));
    for (const std::string& f : files) {
        for (const int parts : {1, 3}) {
            SCOPED_TRACE(f + " in " + std::to_string(parts) + " parts");
            const CsrMatrix narrow = read_matrix_market(f, parts);
            const CsrMatrix wide = read_matrix_market_int64(f, parts);
            EXPECT_EQ(wide.rows, narrow.rows);
            EXPECT_EQ(wide.cols, narrow.cols);
            EXPECT_EQ(wide.row_ptr, narrow.row_ptr);
            EXPECT_EQ(wide.col, narrow.col);
            EXPECT_EQ(wide.val, narrow.val);  // the same sums, in the same order
        }
    }
}

TEST_F(MatrixMarket, ReadsGzip) {
    const std::string path = write_gz("z.mtx.gz",
                                      "%%MatrixMarket matrix coordinate real general\n"
                                      "2 2 2\n2 2 8\n1 1 0.25\n");
    const std::vector<Entry> want = {{1, 1, 0.25}, {2, 2, 8}};
    EXPECT_EQ(entries(read_matrix_market(path)), want);
}

/// A symmetric 7 x 7 file of 19 entries (duplicates among them) with a comment and a blank line
/// in its header, comments and blank lines between entries, CRLF lines, and no newline after
/// the last entry: every kind of line a cut between parts can meet.
std::string symmetric_with_every_kind_of_line() {
    std::string text =
        "%%MatrixMarket matrix coordinate real symmetric\r\n% header comment\n\n7 7 19\n";
    for (int k = 0; k < 19; ++k) {
        const int i = 1 + (k * 5) % 7, j = 1 + (k * 3) % 7;
        text += fmt::format("{} {} {}{}", std::max(i, j), std::min(i, j), 0.5 * k - 2.25,
                            k % 4 == 1 ? "\r\n" : "\n");
        if (k % 5 == 2) text += "% a comment between entries, long enough to span a cut ......\n";
        if (k % 7 == 3) text += "   \n";
    }
    text.pop_back();  // no newline after the last entry
    return text;
}

// Read in 1..9 parts (the processes of `mpirun ... --matrix`), a file gives the matrix of the
// whole read: every line in exactly one part, wherever the byte ranges cut it (comments, blank
// and CRLF lines, long lines, a last line without its newline), mirrors and duplicates included.
TEST_F(MatrixMarket, ReadInPartsGivesTheWholeMatrix) {
    const std::string text = symmetric_with_every_kind_of_line();
    const std::string path = write("parts.mtx", text);
    const std::vector<Entry> want = entries(read_matrix_market(path));
    for (int parts = 1; parts <= 9; ++parts) {
        SCOPED_TRACE(parts);
        const std::optional<CsrMatrix> a = test::read_in_parts(path, parts);
        ASSERT_TRUE(a.has_value());
        EXPECT_EQ(entries(*a), want);
        std::int64_t lines = 0, content = 0;
        for (int p = 0; p < parts; ++p) {
            const std::optional<MatrixMarketPart> part = MatrixMarketPart::open(path, p, parts);
            lines += part->lines();
            content += part->content_lines();
            if (p == 0) lines += part->header_lines();
        }
        EXPECT_EQ(lines, std::count(text.begin(), text.end(), '\n') + 1);
        EXPECT_EQ(content, 19);
    }
    // A gzip stream is cut by the bytes of its decompressed text; an array file is not read in
    // parts.
    const std::string gz = write_gz("z.mtx.gz", text);
    for (int parts = 1; parts <= 9; ++parts) {
        const std::optional<CsrMatrix> a = test::read_in_parts(gz, parts);
        ASSERT_TRUE(a.has_value());
        EXPECT_EQ(entries(*a), want) << parts;
    }
    // Part for part the plain file's lines, also where a cut falls right after a newline.
    for (int parts = 1; parts <= 60; ++parts) {
        for (int p = 0; p < parts; ++p) {
            const std::optional<MatrixMarketPart> a = MatrixMarketPart::open(path, p, parts);
            const std::optional<MatrixMarketPart> b = MatrixMarketPart::open(gz, p, parts);
            ASSERT_TRUE(a.has_value() && b.has_value());
            EXPECT_EQ(b->lines(), a->lines()) << p << " of " << parts;
        }
    }
    EXPECT_FALSE(MatrixMarketPart::open(
                     write("a.mtx", "%%MatrixMarket matrix array real general\n1 1\n2\n"), 0, 1)
                     .has_value());
}

// Parsed in parts by threads (read_matrix_market(path, parts)), a file gives the one-part read's
// matrix bit for bit, wherever the cuts fall: the entries reach their rows in the file's order, so
// duplicates are summed in it (1e16 + 1 - 1e16 is 0 in that order and 1 in others), also in a
// row too long for the insertion sort; the row counts per part are used where they fit (many
// entries per row) and not where they do not (more rows than entries).
TEST_F(MatrixMarket, ThreadedPartsGiveTheOnePartMatrix) {
    const std::string sym = symmetric_with_every_kind_of_line();
    // Row 2: 100 entries in falling column order with duplicates of column 5 whose sum depends
    // on its order; row 1: the same three duplicates among a few entries.
    std::string general = "%%MatrixMarket matrix coordinate real general\n3 100 108\n";
    general += "1 5 1e16\n1 7 2\n1 5 1\n1 1 3\n1 5 -1e16\n";
    for (int j = 100; j >= 1; --j) {
        general += fmt::format("2 {} {}\n", j, j == 5 ? 1e16 : 0.25 * j);
        if (j == 40) general += "2 5 1\n% comment\n";
        if (j == 3) general += "2 5 -1e16\n";
    }
    general += "3 3 7\n";
    // More rows than entries: no row counts per part.
    const std::string sparse =
        "%%MatrixMarket matrix coordinate real general\n50 50 4\n50 1 1\n1 50 2\n25 25 "
        "3\n50 1 4\n";
    for (const auto& [name, text] : {std::pair{"sym.mtx", sym}, std::pair{"general.mtx", general},
                                     std::pair{"sparse.mtx", sparse}}) {
        SCOPED_TRACE(name);
        const std::string path = write(name, text);
        const CsrMatrix one = read_matrix_market(path, 1);
        for (int parts : {0, 2, 3, 4, 5, 7, 9, 16}) {
            SCOPED_TRACE(parts);
            const CsrMatrix a = read_matrix_market(path, parts);
            EXPECT_EQ(a.rows, one.rows);
            EXPECT_EQ(a.cols, one.cols);
            EXPECT_EQ(a.row_ptr, one.row_ptr);
            EXPECT_EQ(a.col, one.col);
            EXPECT_EQ(a.val, one.val);
        }
        if (text == general) {
            const std::vector<Entry> e = entries(one);
            ASSERT_EQ(e.size(), 104u);
            EXPECT_EQ(e[0], (Entry{1, 1, 3}));
            EXPECT_EQ(e[1], (Entry{1, 5, 0}));  // (1e16 + 1) - 1e16
            EXPECT_EQ(e[2], (Entry{1, 7, 2}));
            EXPECT_EQ(e[3 + 4], (Entry{2, 5, 0}));
            EXPECT_EQ(e[3 + 100], (Entry{3, 3, 7}));
            EXPECT_TRUE(
                std::is_sorted(one.col.begin() + one.row_ptr[1], one.col.begin() + one.row_ptr[2]));
        }
        if (text == sparse) {
            const std::vector<Entry> want = {{1, 50, 2}, {25, 25, 3}, {50, 1, 5}};
            EXPECT_EQ(entries(one), want);
        }
    }
}

// A gzip file larger than the 1 MiB chunks it is decompressed in, with a comment line of 2.5 MiB
// in the middle: the cuts, and the searches for the next line start, cross chunk boundaries.
// Every part count gives the lines of the plain file's parts, so the whole read's matrix.
TEST_F(MatrixMarket, GzipPartsAcrossChunksAreThePlainFilesParts) {
    std::string text = "%%MatrixMarket matrix coordinate real general\n1000 1000 60000\n";
    for (int k = 0; k < 60000; ++k) {
        text += fmt::format("{} {} {}\n", 1 + k % 1000, 1 + (k * 7) % 1000, 0.25 * (k % 13) - 1.0);
        if (k == 30000) text += "%" + std::string(std::size_t{5} << 19, 'x') + "\n";
    }
    const std::string plain = write("chunks.mtx", text);
    const std::string gz = write_gz("chunks.mtx.gz", text);
    const std::vector<Entry> want = entries(read_matrix_market(plain));
    // Decompressed whole (the default), and as a stream (no text is small enough to be whole).
    for (const std::size_t whole : {MatrixMarketPart::kWholeTextBytes, std::size_t{0}}) {
        for (const int parts : {1, 2, 3, 5, 8}) {
            SCOPED_TRACE(::testing::Message() << parts << " parts, whole up to " << whole);
            for (int p = 0; p < parts; ++p) {
                const std::optional<MatrixMarketPart> a = MatrixMarketPart::open(plain, p, parts);
                const std::optional<MatrixMarketPart> b =
                    MatrixMarketPart::open(gz, p, parts, whole);
                ASSERT_TRUE(a.has_value() && b.has_value());
                EXPECT_EQ(b->lines(), a->lines()) << p;
                EXPECT_EQ(b->content_lines(), a->content_lines()) << p;
            }
            const std::optional<CsrMatrix> m = test::read_in_parts(gz, parts, whole);
            ASSERT_TRUE(m.has_value());
            EXPECT_EQ(entries(*m), want);
        }
    }
}

// A gzip file of several members (gzip a.mtx; gzip b >> a.mtx.gz) announces only its last
// member's size in its trailer (RFC 1952 §2.3.1). The readers size and cut the text by that
// size: a wrong one must cost balance, never entries. Three files, each over the 1 MiB chunk so
// that the parts are cut by the announced size: a last member too small for the size line's
// entries (the size is then counted), one larger than the first chunk, and a single member.
TEST_F(MatrixMarket, GzipOfSeveralMembersReadsWhole) {
    constexpr int kEntries = 620000;  // 10 bytes a line: a 1.2 MB last member holds too few
    std::string text =
        fmt::format("%%MatrixMarket matrix coordinate real general\n900 900 {}\n", kEntries);
    for (int k = 0; k < kEntries; ++k) {
        text += fmt::format("{} {} {}\n", 101 + k % 9, 101 + (k * 7 / 9) % 9, 1 + k % 3);
    }
    const std::string plain = write("m.mtx", text);
    const std::vector<Entry> want = entries(read_matrix_market(plain));
    ASSERT_EQ(want.size(), 81u);
    EXPECT_FALSE(io::gzip_size_hint(plain).has_value());
    // Members split mid-line: a member holds bytes, not lines.
    for (const std::size_t last : {std::size_t{1200001}, text.size() - 70001, text.size()}) {
        SCOPED_TRACE(last);
        const std::size_t cut = text.size() - last;
        const std::string gz = write_gz("m.mtx.gz", cut > 0 ? text.substr(0, cut) : text);
        if (cut > 0) {
            const std::string second = write_gz("second.gz", text.substr(cut));
            std::ofstream(gz, std::ios::binary | std::ios::app)
                << std::ifstream(second, std::ios::binary).rdbuf();
        }
        ASSERT_EQ(io::gzip_size_hint(gz), std::optional<std::uint64_t>(last));
        const std::optional<std::string> whole = io::gunzip_whole(gz, text.size());
        ASSERT_TRUE(whole.has_value());
        EXPECT_TRUE(*whole == text);
        EXPECT_FALSE(io::gunzip_whole(gz, text.size() - 1).has_value());
        EXPECT_EQ(entries(read_matrix_market(gz)), want);
        // Parts of the whole text, and of the stream cut by the announced size.
        for (const std::size_t most : {MatrixMarketPart::kWholeTextBytes, std::size_t{0}}) {
            for (const int parts : {1, 2, 3, 5}) {
                const std::optional<CsrMatrix> m = test::read_in_parts(gz, parts, most);
                ASSERT_TRUE(m.has_value());
                EXPECT_EQ(entries(*m), want) << parts << " parts, whole up to " << most;
            }
        }
    }
}

// gunzip_whole only makes reads faster: it gives up on what is not a whole, clean gzip file
// (zlib's stream then reads it or names the trouble), and the reader gives the same matrix.
TEST_F(MatrixMarket, WholeGzipOnlyForCleanFiles) {
    const std::string text = "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 4\n2 2 5\n";
    const std::string gz = write_gz("a.mtx.gz", text);
    EXPECT_EQ(io::gunzip_whole(gz, 1 << 20), std::optional<std::string>(text));
    EXPECT_FALSE(io::gunzip_whole(write("a.mtx", text), 1 << 20).has_value());  // not gzip
    std::ifstream in(gz, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), {});
    // Trailing bytes that are no gzip member: zlib's stream reads the text (and ignores them).
    const std::string trailing = write("t.mtx.gz", bytes + "junk");
    EXPECT_FALSE(io::gunzip_whole(trailing, 1 << 20).has_value());
    EXPECT_EQ(entries(read_matrix_market(trailing)), entries(read_matrix_market(gz)));
    // A damaged stream: the stream's error.
    std::string damaged = bytes;
    damaged[damaged.size() / 2] = static_cast<char>(damaged[damaged.size() / 2] ^ 0x55);
    const std::string bad = write("d.mtx.gz", damaged);
    EXPECT_FALSE(io::gunzip_whole(bad, 1 << 20).has_value());
}

// A file that stores one triangle gives two entries for an off-diagonal line: the parts say so,
// for the readers that make room for a part's entries.
TEST_F(MatrixMarket, PartsSayHowManyEntriesALineGives) {
    for (const auto& [kind, most] :
         {std::pair{"general", 1}, std::pair{"symmetric", 2}, std::pair{"skew-symmetric", 2}}) {
        const std::string path = write(
            "k.mtx", fmt::format("%%MatrixMarket matrix coordinate real {}\n2 2 1\n2 1 3\n", kind));
        const std::optional<MatrixMarketPart> part = MatrixMarketPart::open(path, 0, 1);
        ASSERT_TRUE(part.has_value());
        EXPECT_EQ(part->most_entries_per_line(), most) << kind;
    }
}

TEST_F(MatrixMarket, ReadsVectors) {
    const std::string col = write("b.mtx",
                                  "%%MatrixMarket matrix array real general\n% rhs\n"
                                  "3 1\n1.5\n-2\n1e-3\n");
    EXPECT_EQ(read_vector_market(col), (std::vector<double>{1.5, -2, 1e-3}));
    const std::string row = write("r.mtx", "%%MatrixMarket matrix array real general\n1 2\n5\n6\n");
    EXPECT_EQ(read_vector_market(row), (std::vector<double>{5, 6}));
    const std::string coo = write_gz("c.mtx.gz",
                                     "%%MatrixMarket matrix coordinate integer general\n"
                                     "4 1 3\n4 1 2\n2 1 1\n4 1 3\n");
    EXPECT_EQ(read_vector_market(coo), (std::vector<double>{0, 1, 0, 5}));
}

TEST_F(MatrixMarket, WritesAndReadsBackExactly) {
    CsrMatrix a;
    a.rows = 3;
    a.cols = 2;
    a.row_ptr = {0, 2, 2, 3};
    a.col = {0, 1, 1};
    a.val = {0.1, -1.0 / 3.0, 6.02214076e23};
    for (const char* name : {"w.mtx", "w.mtx.gz"}) {
        const std::string path = (dir_ / name).string();
        write_matrix_market(path, a);
        const CsrMatrix b = read_matrix_market(path);
        EXPECT_EQ(b.rows, a.rows) << name;
        EXPECT_EQ(b.cols, a.cols) << name;
        EXPECT_EQ(b.row_ptr, a.row_ptr) << name;
        EXPECT_EQ(b.col, a.col) << name;
        EXPECT_EQ(b.val, a.val) << name;  // %.17g round-trips every double
    }
    EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator{}), 2);
}

TEST_F(MatrixMarket, FailedWriteLeavesNoFileAndThrows) {
    CsrMatrix a;
    a.rows = 1;
    a.cols = 1;
    a.row_ptr = {0, 1};
    a.col = {0};
    a.val = {2.0};
    const std::string missing_dir = (dir_ / "no_such_dir" / "a.mtx").string();
    EXPECT_THROW(write_matrix_market(missing_dir, a), InvalidInput);
    fs::create_directory(dir_ / "target_is_a_dir");
    fs::create_directory(dir_ / "target_is_a_dir" / "x");  // non-empty: rename cannot replace it
    const std::string onto_dir = (dir_ / "target_is_a_dir").string();
    try {
        write_matrix_market(onto_dir, a);
        ADD_FAILURE() << "writing onto a directory did not throw";
    } catch (const InvalidInput& e) {
        EXPECT_NE(std::string(e.what()).find(onto_dir), std::string::npos) << e.what();
    }
    // Only the directory itself remains: the temporary file was removed.
    EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator{}), 1);
    a.val[0] = std::numeric_limits<double>::quiet_NaN();
    EXPECT_THROW(write_matrix_market((dir_ / "nan.mtx").string(), a), InvalidInput);
    EXPECT_FALSE(fs::exists(dir_ / "nan.mtx"));
}

TEST_F(MatrixMarket, MissingOrCorruptFileNamesThePath) {
    const std::string missing = (dir_ / "absent.mtx").string();
    try {
        read_matrix_market(missing);
        ADD_FAILURE() << "no exception";
    } catch (const InvalidInput& e) {
        EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
    }
    // A gzip stream cut in half.
    std::string text = "%%MatrixMarket matrix coordinate real general\n100 100 100\n";
    for (int k = 1; k <= 100; ++k) text += std::to_string(k) + " " + std::to_string(k) + " 1.5\n";
    const std::string whole = write_gz("whole.mtx.gz", text);
    std::ifstream in(whole, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string cut = write("cut.mtx.gz", bytes.substr(0, bytes.size() / 2));
    EXPECT_EQ(read_matrix_market(whole).nnz(), 100);
    try {
        read_matrix_market(cut);
        ADD_FAILURE() << "no exception";
    } catch (const InvalidInput& e) {
        EXPECT_NE(std::string(e.what()).find(cut), std::string::npos) << e.what();
    }
}

// The banner's symmetry, as the whole read and a part say it: only `symmetric` (real, integer
// or pattern) stores one triangle of a symmetric matrix.
TEST_F(MatrixMarket, SaysWhetherTheFileStoresASymmetricMatrix) {
    struct Case {
        const char* banner;
        bool symmetric;
    };
    for (const Case& c : {Case{"real general", false}, Case{"real symmetric", true},
                          Case{"integer symmetric", true}, Case{"pattern symmetric", true},
                          Case{"real skew-symmetric", false}}) {
        SCOPED_TRACE(c.banner);
        const bool pattern = std::string(c.banner).starts_with("pattern");
        const std::string path =
            write("k.mtx", fmt::format("%%MatrixMarket matrix coordinate {}\n2 2 1\n2 1{}\n",
                                       c.banner, pattern ? "" : " 3"));
        bool stored = !c.symmetric;
        (void)read_matrix_market(path, 1, stored);
        EXPECT_EQ(stored, c.symmetric);
        const std::optional<MatrixMarketPart> part = MatrixMarketPart::open(path, 0, 1);
        ASSERT_TRUE(part.has_value());
        EXPECT_EQ(part->stored_symmetric(), c.symmetric);
    }
}

// Every value read is finite, so is every sum of repeated entries, or the read names the first
// entry (in row order) whose sum is not: one part or several.
TEST_F(MatrixMarket, RepeatedEntriesThatOverflowAreAnError) {
    const std::string path = write("s.mtx",
                                   "%%MatrixMarket matrix coordinate real general\n"
                                   "3 3 6\n"
                                   "1 1 4\n"
                                   "3 2 -1e308\n"
                                   "2 1 1e308\n"
                                   "3 2 -1e308\n"
                                   "2 1 1e308\n"
                                   "3 3 4\n");
    for (const int parts : {1, 3}) {
        try {
            (void)read_matrix_market(path, parts);
            ADD_FAILURE() << "no error";
        } catch (const InvalidInput& e) {
            EXPECT_EQ(std::string(e.what()),
                      path +
                          ": the entries given for (2, 1) sum to inf, beyond the range of "
                          "doubles; mpmg needs finite values");
        }
    }
    const std::string b = write("b.mtx",
                                "%%MatrixMarket matrix coordinate real general\n"
                                "3 1 3\n"
                                "2 1 -1e308\n"
                                "1 1 1\n"
                                "2 1 -1e308\n");
    EXPECT_THROW(
        {
            try {
                (void)read_vector_market(b);
            } catch (const InvalidInput& e) {
                EXPECT_EQ(std::string(e.what()),
                          b + ": the entries given for entry 2 sum to -inf, beyond the range of "
                              "doubles; mpmg needs finite values");
                throw;
            }
        },
        InvalidInput);
}

// Real files from ../shared/data (MANIFEST.tsv gives rows, cols and stored entries).
const std::string kData = MPMG_SHARED_DATA;

std::int64_t diagonal_count(const CsrMatrix& a) {
    std::int64_t n = 0;
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) n += a.col[p] == i;
    }
    return n;
}

bool is_sorted_csr(const CsrMatrix& a) {
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t p = a.row_ptr[i] + 1; p < a.row_ptr[i + 1]; ++p) {
            if (a.col[p - 1] >= a.col[p]) return false;
        }
    }
    return true;
}

void expect_same(const CsrMatrix& a, const CsrMatrix& b) {
    EXPECT_EQ(a.row_ptr, b.row_ptr);
    EXPECT_EQ(a.col, b.col);
    EXPECT_EQ(a.val, b.val);
}

TEST(MatrixMarketData, ExpandsSymmetricFilesAsTheManifestSays) {
    struct Case {
        const char* file;
        std::int64_t n, stored;
    };
    for (const Case& c : {Case{"bcsstk01", 48, 224}, Case{"nos4", 100, 347},
                          Case{"gr_30_30", 900, 4322}, Case{"saylr3", 1000, 2375}}) {
        SCOPED_TRACE(c.file);
        bool stored = false;
        const CsrMatrix a = read_matrix_market(kData + "/" + c.file + ".mtx.gz", 0, stored);
        EXPECT_TRUE(stored);
        EXPECT_TRUE(is_symmetric(a, false, 0.0));  // what the flag spares measuring
        EXPECT_EQ(a.rows, c.n);
        EXPECT_EQ(a.cols, c.n);
        EXPECT_EQ(a.nnz(), 2 * c.stored - diagonal_count(a));
        EXPECT_TRUE(is_sorted_csr(a));
        expect_same(a, a.transpose());
    }
    const CsrMatrix k = read_matrix_market(kData + "/bcsstk01.mtx.gz");
    EXPECT_EQ(k.nnz(), 400);
    EXPECT_EQ(diagonal_count(k), 48);
    EXPECT_EQ(k.val[0], 2832268.51852);  // first entry of the file: 1 1 2832268.51852
}

TEST(MatrixMarketData, ReadsGeneralFilesAndRoundTrips) {
    bool stored = true;
    const CsrMatrix a = read_matrix_market(kData + "/pde900.mtx.gz", 0, stored);
    EXPECT_FALSE(stored);
    EXPECT_EQ(a.rows, 900);
    EXPECT_EQ(a.cols, 900);
    EXPECT_EQ(a.nnz(), 4380);
    EXPECT_TRUE(is_sorted_csr(a));
    EXPECT_NE(a.transpose().val, a.val);  // nonsymmetric (convection)
    const CsrMatrix c = read_matrix_market(kData + "/cage5.mtx.gz");
    EXPECT_EQ(c.rows, 37);
    EXPECT_EQ(c.nnz(), 233);
    const fs::path tmp =
        fs::temp_directory_path() / ("mpmg_mm_rt_" + std::to_string(::getpid()) + ".mtx");
    write_matrix_market(tmp.string(), a);
    const CsrMatrix b = read_matrix_market(tmp.string());
    fs::remove(tmp);
    expect_same(a, b);
}

// Real files read by several threads: the matrix of one part, bit for bit.
TEST(MatrixMarketData, ThreadedReadsGiveTheOnePartMatrix) {
    for (const char* file : {"sherman5", "1138_bus", "mfem/mfem_beam_o3_r1"}) {
        SCOPED_TRACE(file);
        const std::string path = kData + "/" + file + ".mtx.gz";
        const CsrMatrix one = read_matrix_market(path, 1);
        for (int parts : {0, 2, 3, 5}) {
            const CsrMatrix a = read_matrix_market(path, parts);
            expect_same(a, one);
        }
    }
}

TEST(MatrixMarketData, ReadsRightHandSideVector) {
    const std::vector<double> b = read_vector_market(kData + "/mfem/mfem_beam_o3_r1_b.mtx.gz");
    ASSERT_EQ(b.size(), 2401u);
    EXPECT_EQ(b[0], 0.0);  // eliminated Dirichlet dof
    double sum = 0.0;
    for (double v : b) sum += std::fabs(v);
    EXPECT_GT(sum, 0.0);
}

}  // namespace
}  // namespace mpmg
