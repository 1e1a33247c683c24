// Malformed Matrix Market files: each must throw InvalidInput naming "<path>:<line>:" and the
// problem.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <system_error>

#include "io/matrix_market.hpp"
#include "io/matrix_market_part_test_util.hpp"
#include "mpmg/errors.hpp"

namespace mpmg {
namespace {

namespace fs = std::filesystem;

struct BadFile {
    const char* name;
    std::string text;
    int line;          ///< the line the message must name
    const char* what;  ///< a phrase the message must contain
    bool vector = false;
};

void PrintTo(const BadFile& b, std::ostream* os) { *os << b.name; }

const std::string kGeneral = "%%MatrixMarket matrix coordinate real general\n";

const BadFile kBadFiles[] = {
    {"empty", "", 1, "empty"},
    {"no_banner", "3 3 1\n1 1 1\n", 1, "missing banner"},
    {"short_banner", "%%MatrixMarket matrix coordinate real\n1 1 1\n1 1 1\n", 1, "4 words"},
    {"bad_format", "%%MatrixMarket matrix sparse real general\n", 1, "bad format 'sparse'"},
    {"complex", "%%MatrixMarket matrix coordinate complex general\n", 1, "unsupported field"},
    {"hermitian", "%%MatrixMarket matrix coordinate real hermitian\n", 1, "unsupported symmetry"},
    {"bad_symmetry", "%%MatrixMarket matrix coordinate real upper\n", 1, "bad symmetry 'upper'"},
    {"array_pattern", "%%MatrixMarket matrix array pattern general\n", 1, "not a valid"},
    {"no_size_line", kGeneral + "% only comments\n", 3, "before the size line"},
    {"size_not_integer", kGeneral + "% c\n3 x 2\n", 3, "'x' is not an integer"},
    {"size_too_few", kGeneral + "3 3\n", 2, "expected 'rows cols entries'"},
    {"size_too_many", kGeneral + "3 3 1 1\n1 1 1\n", 2, "expected 'rows cols entries'"},
    {"negative_rows", kGeneral + "-3 3 1\n1 1 1\n", 2, "number of rows is -3"},
    {"zero_cols", kGeneral + "3 0 0\n", 2, "number of columns is 0"},
    {"absurd_rows", kGeneral + "3000000000 3 1\n1 1 1\n", 2, "3000000000 x 3 but only 1 entries"},
    {"nnz_overflow", kGeneral + "2 2 99999999999999999999\n", 2, "overflows a 64-bit"},
    {"nnz_above_capacity", kGeneral + "2 2 5\n1 1 1\n", 2, "rows * cols = 4"},
    {"nnz_negative", kGeneral + "2 2 -1\n", 2, "number of entries is -1"},
    {"symmetric_not_square", "%%MatrixMarket matrix coordinate real symmetric\n3 2 1\n1 1 1\n", 2,
     "must be square"},
    {"row_out_of_range", kGeneral + "3 3 2\n1 1 1\n4 1 1\n", 4, "row index 4 is outside 1..3"},
    {"col_zero", kGeneral + "3 5 2\n1 1 1\n% c\n2 0 1\n", 5, "column index 0 is outside 1..5"},
    {"index_not_integer", kGeneral + "3 3 1\n1.5 1 1\n", 3, "row index '1.5' is not an integer"},
    {"value_not_number", kGeneral + "3 3 2\n1 1 1\n2 2 abc\n", 4, "value 'abc' is not a number"},
    {"two_bad_values", kGeneral + "3 3 3\n1 1 abc\n2 2 1\n3 3 def\n", 3,
     "value 'abc' is not a number"},
    {"value_nan", kGeneral + "3 3 2\n1 1 nan\n2 2 1\n", 3, "value 'nan' is not finite"},
    {"value_inf", kGeneral + "3 3 2\n1 1 1\n2 2 -inf\n", 4, "value '-inf' is not finite"},
    {"value_overflow", kGeneral + "3 3 1\n1 1 1e999\n", 3, "value '1e999' is not finite"},
    {"value_missing", kGeneral + "3 3 1\n1 1\n", 3, "no value"},
    {"extra_token", kGeneral + "3 3 1\n1 1 1 9\n", 3, "extra token '9'"},
    {"integer_with_fraction", "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n",
     3, "'1.5' is not an integer"},
    {"too_few_entries", kGeneral + "3 3 3\n1 1 1\n2 2 1\n", 5, "after 2 of the 3 entries"},
    {"too_few_array", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n\n", 7,
     "after 3 of the 4 entries"},
    {"too_many_entries", kGeneral + "3 3 1\n1 1 1\n\n2 2 1\n", 5, "too many entries"},
    {"skew_diagonal", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 3\n", 3,
     "diagonal entry (1, 1)"},
    {"vector_not_a_column", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", 2,
     "must be n x 1 or 1 x n", true},
    {"vector_symmetric", "%%MatrixMarket matrix array real symmetric\n1 1\n1\n", 1,
     "must be 'real general'", true},
    {"vector_row_out_of_range", kGeneral + "3 1 1\n4 1 1\n", 3, "row index 4 is outside 1..3",
     true},
    // Sizes that would allocate gigabytes for a file of a few bytes (found with bad_input_test).
    {"mostly_empty", kGeneral + "2147483647 2147483647 1\n1 1 1\n", 2, "but only 1 entries"},
    {"vector_beyond_file", "%%MatrixMarket matrix array real general\n2147483647 1\n1\n", 2,
     "declares 2147483647 entries, but the file has only", true},
    {"vector_mostly_empty", kGeneral + "2147483647 1 1\n1 1 1\n", 2, "but only 1 entries", true},
    // Beyond 32-bit sizes (int64 columns): the largest accepted size and products past int64.
    {"too_many_rows", kGeneral + "9007199254740992 1 1\n1 1 1\n", 2,
     "number of rows is 9007199254740992; it must be between 1 and 9007199254740991"},
    {"huge_symmetric_array",
     "%%MatrixMarket matrix array real symmetric\n9007199254740991 9007199254740991\n1\n", 2,
     "declares 9223372036854775807 entries, but the file has only"},
    {"huge_sparse", kGeneral + "3 9007199254740991 3\n1 1 1\n", 2, "but only 3 entries"},
};

class MatrixMarketErrors : public ::testing::TestWithParam<BadFile> {};

/// A bad file's text in a file of a per-process temporary folder, removed (and the folder once
/// empty) with the object.
class OnDisk {
public:
    explicit OnDisk(const BadFile& bad) {
        const fs::path dir =
            fs::temp_directory_path() / ("mpmg_mm_err_" + std::to_string(::getpid()));
        fs::create_directories(dir);
        path_ = (dir / (std::string(bad.name) + ".mtx")).string();
        std::ofstream(path_, std::ios::binary) << bad.text;
    }
    ~OnDisk() {
        std::error_code ignored;
        fs::remove(path_, ignored);
        fs::remove(fs::path(path_).parent_path(), ignored);  // once the last file is gone
    }
    OnDisk(const OnDisk&) = delete;
    OnDisk& operator=(const OnDisk&) = delete;
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

/// The message of the InvalidInput that f() throws, or empty.
template <class F>
std::string message_of(F&& f) {
    try {
        f();
    } catch (const InvalidInput& e) {
        return e.what();
    }
    return {};
}

TEST_P(MatrixMarketErrors, NamesFileLineAndProblem) {
    const BadFile& bad = GetParam();
    const OnDisk file(bad);
    const std::string& path = file.path();
    const std::string message = message_of([&] {
        if (bad.vector) {
            (void)read_vector_market(path);
        } else {
            (void)read_matrix_market(path);
        }
    });
    ASSERT_FALSE(message.empty()) << bad.name << ": no InvalidInput thrown";
    const std::string where = path + ":" + std::to_string(bad.line) + ": ";
    EXPECT_EQ(message.rfind(where, 0), 0u) << "expected prefix '" << where << "' in: " << message;
    EXPECT_NE(message.find(bad.what), std::string::npos)
        << "expected '" << bad.what << "' in: " << message;
}

// Read in parts (as the processes of `mpirun ... --matrix` read a file), every bad matrix file
// gives the message of the whole read, whichever part holds the bad line.
TEST_P(MatrixMarketErrors, ReadInPartsGivesTheSameMessage) {
    const BadFile& bad = GetParam();
    if (bad.vector) return;  // vectors are read whole
    const OnDisk file(bad);
    const std::string whole = message_of([&] { (void)read_matrix_market(file.path()); });
    for (int parts : {1, 2, 3, 4, 7}) {
        SCOPED_TRACE(parts);
        bool split = true;
        const std::string message =
            message_of([&] { split = test::read_in_parts(file.path(), parts).has_value(); });
        if (!split) {  // only array files are not read in parts
            EXPECT_NE(bad.text.find(" array "), std::string::npos) << bad.name;
            break;
        }
        EXPECT_EQ(message, whole) << bad.name;
    }
}

// Parsed in parts by threads, every bad file gives the message of one part: the file's first
// bad line.
TEST_P(MatrixMarketErrors, ThreadedReadGivesTheSameMessage) {
    const BadFile& bad = GetParam();
    if (bad.vector) return;  // vectors are read in one part
    const OnDisk file(bad);
    const std::string whole = message_of([&] { (void)read_matrix_market(file.path(), 1); });
    ASSERT_FALSE(whole.empty());
    for (int parts : {2, 3, 4, 7}) {
        EXPECT_EQ(message_of([&] { (void)read_matrix_market(file.path(), parts); }), whole)
            << bad.name << ", " << parts << " parts";
    }
}

INSTANTIATE_TEST_SUITE_P(MatrixMarket, MatrixMarketErrors, ::testing::ValuesIn(kBadFiles),
                         [](const ::testing::TestParamInfo<BadFile>& p) {
                             return std::string(p.param.name);
                         });

}  // namespace
}  // namespace mpmg
