// Bad input through the mpmg CLI (issue 6, item 3; DESIGN.md "Command-line contract"): every case
// must exit with code 2, never a signal, print exactly one line on stderr that names the file,
// line or option at fault, and leave neither the --json result nor a "<json>.tmp.<pid>" file.
// The input files are written by the test into a private temporary directory.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "mpmg_paths.hpp"

namespace {

namespace fs = std::filesystem;

fs::path dir_path() {
    return fs::temp_directory_path() / ("mpmg_bad_input_" + std::to_string(::getpid()));
}

const fs::path& dir() {
    static const fs::path d = [] {
        fs::path p = dir_path();
        fs::remove_all(p);
        fs::create_directories(p);
        return p;
    }();
    return d;
}

/// Removes this process's test directory after the last test.
class RemoveTestDirectory : public ::testing::Environment {
public:
    void TearDown() override {
        std::error_code ignored;
        fs::remove_all(dir_path(), ignored);
    }
};
[[maybe_unused]] ::testing::Environment* const kRemoveTestDirectory =
    ::testing::AddGlobalTestEnvironment(new RemoveTestDirectory);

std::string path(const std::string& name) { return (dir() / name).string(); }

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

void write(const std::string& name, const std::string& text) {
    std::ofstream(path(name), std::ios::binary | std::ios::trunc) << text;
}

void write_gz(const std::string& name, const std::string& text) {
    gzFile f = gzopen(path(name).c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())),
              static_cast<int>(text.size()));
    ASSERT_EQ(gzclose(f), Z_OK);
}

struct CliRun {
    bool exited = false;  ///< false: killed by a signal
    int code = -1;        ///< exit status, or the signal number
    std::string out, err;
};

CliRun mpmg(const std::string& args) {
    const std::string out = path("stdout.txt"), err = path("stderr.txt");
    const std::string cmd = std::string(MPMG_CLI_PATH) + " " + args + " >" + out + " 2>" + err;
    const int status = std::system(cmd.c_str());
    CliRun r;
    r.exited = WIFEXITED(status);
    r.code = r.exited ? WEXITSTATUS(status) : WTERMSIG(status);
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
}

/// Files named "*.tmp.*" left in the test directory (write_file_atomically's temporaries).
std::vector<std::string> leftover_temporaries() {
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(dir())) {
        const std::string name = e.path().filename().string();
        if (name.find(".tmp.") != std::string::npos) found.push_back(name);
    }
    return found;
}

/// Runs `args --json <dir>/<json>` and checks the contract for bad input; `expect` are phrases
/// the stderr line must contain (file names, line numbers, option names).
void expect_rejected(const std::string& args, const std::vector<std::string>& expect,
                     const std::string& json = "result.json") {
    SCOPED_TRACE("mpmg " + args);
    const std::string json_path = path(json);
    const CliRun r = mpmg(args + " --json " + json_path);
    ASSERT_TRUE(r.exited) << "killed by signal " << r.code << "\n" << r.err;
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(!r.err.empty() && r.err.back() == '\n') << r.err;
    for (const std::string& phrase : expect) {
        EXPECT_NE(r.err.find(phrase), std::string::npos) << "expected '" << phrase << "' in\n"
                                                         << r.err;
    }
    EXPECT_FALSE(fs::exists(json_path)) << "a result was written for bad input";
    EXPECT_EQ(leftover_temporaries(), std::vector<std::string>{});
}

const std::string kGeneral = "%%MatrixMarket matrix coordinate real general\n";
const std::string kGood = kGeneral + "2 2 3\n1 1 4\n2 1 -1\n2 2 4\n";

// --- Matrix Market files, read by `mpmg info` (errors name "<file>:<line>:") ---------------

struct BadMatrix {
    std::string name, text, expect;
};

TEST(BadInput, MalformedMatrixMarket) {
    const std::vector<BadMatrix> cases = {
        {"no_banner.mtx", "2 2 1\n1 1 1\n", ":1: missing banner"},
        {"bad_banner.mtx", "%%MatrixMarket matrix sparse real general\n2 2 1\n1 1 1\n",
         ":1: bad format 'sparse'"},
        {"short_banner.mtx", "%%MatrixMarket matrix coordinate real\n2 2 1\n1 1 1\n",
         ":1: banner has 4 words"},
        {"count_not_integer.mtx", kGeneral + "2 2 x\n", ":2: bad size line"},
        {"count_above_capacity.mtx", kGeneral + "2 2 5\n1 1 1\n", ":2: number of entries is 5"},
        {"count_negative.mtx", kGeneral + "2 -2 1\n1 1 1\n", ":2: number of columns is -2"},
        {"too_few_entries.mtx", kGeneral + "3 3 3\n1 1 1\n2 2 1\n", ":5: file ends after 2"},
        {"too_many_entries.mtx", kGeneral + "3 3 1\n1 1 1\n2 2 1\n", ":4: too many entries"},
        {"row_out_of_range.mtx", kGeneral + "3 3 2\n1 1 1\n4 1 1\n", ":4: row index 4"},
        {"column_zero.mtx", kGeneral + "3 3 1\n1 0 1\n", ":3: column index 0"},
        {"value_nan.mtx", kGeneral + "2 2 2\n1 1 1\n2 2 NaN\n", ":4: value 'NaN' is not finite"},
        {"value_inf.mtx", kGeneral + "2 2 1\n1 1 inf\n", ":3: value 'inf' is not finite"},
        {"value_overflow.mtx", kGeneral + "2 2 1\n1 1 -1e400\n", ":3: value '-1e400'"},
        {"symmetric_not_square.mtx",
         "%%MatrixMarket matrix coordinate real symmetric\n3 2 1\n1 1 1\n",
         ":2: a symmetric matrix must be square"},
        {"empty.mtx", "", ":1: the file is empty"},
        {"zero_byte.mtx.gz", "", ":1: the file is empty"},
        // A header claiming 2^40 rows, and ones that would allocate gigabytes for a tiny file.
        {"rows_2_40.mtx", kGeneral + "1099511627776 1099511627776 1\n1 1 1\n",
         ":2: the size line declares 1099511627776 x 1099511627776 but only 1 entries"},
        {"rows_2_60.mtx", kGeneral + "1152921504606846976 1 1\n1 1 1\n",
         ":2: number of rows is 1152921504606846976"},
        {"mostly_empty.mtx", kGeneral + "2147483647 2147483647 1\n1 1 1\n",
         ":2: the size line declares 2147483647 x 2147483647 but only 1 entries"},
        {"array_huge.mtx", "%%MatrixMarket matrix array real general\n2147483647 1\n1\n",
         ":2: the size line declares 2147483647 entries"},
        // Binary garbage: the message quotes the first line with its control bytes escaped.
        {"binary.mtx",
         std::string("\x7f"
                     "ELF\x02\x01\r\x03\n",
                     9),
         ":1: missing banner"},
    };
    for (const BadMatrix& c : cases) {
        write(c.name, c.text);
        expect_rejected("info " + path(c.name), {path(c.name) + c.expect});
    }
}

TEST(BadInput, CorruptAndTruncatedGzip) {
    write_gz("good.mtx.gz", kGood);
    const std::string gz = slurp(path("good.mtx.gz"));
    ASSERT_GT(gz.size(), 20u);
    write("truncated.mtx.gz", gz.substr(0, gz.size() / 2));
    expect_rejected("info " + path("truncated.mtx.gz"), {path("truncated.mtx.gz"), "truncated"});
    std::string corrupt = gz;
    for (std::size_t i = 10; i < corrupt.size(); ++i) corrupt[i] = static_cast<char>(0xA5);
    write("corrupt.mtx.gz", corrupt);
    expect_rejected("info " + path("corrupt.mtx.gz"), {path("corrupt.mtx.gz"), "gzip"});
    // The intact file reads, so the failures above are the damage, not the compression.
    const CliRun r = mpmg("info " + path("good.mtx.gz"));
    EXPECT_EQ(r.code, 0) << r.err;
}

TEST(BadInput, MissingOrUnreadableMatrix) {
    expect_rejected("info " + path("missing.mtx"), {path("missing.mtx"), "cannot open"});
    expect_rejected("info " + dir().string(), {dir().string(), "Is a directory"});
    expect_rejected("info", {"matrix is required"});
}

TEST(BadInput, DuplicatesAreSummedNotAnError) {
    // The coordinate format sums repeated entries: (1,1) = 1 + 2 and (3,2) = 5.
    write("dup.mtx", kGeneral + "3 3 4\n1 1 1\n3 2 5\n1 1 2\n3 3 1\n");
    const std::string json = path("dup.json");
    const CliRun r = mpmg("info " + path("dup.mtx") + " --json " + json);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    EXPECT_NE(r.out.find("3 stored entries"), std::string::npos) << r.out;
    const auto j = nlohmann::json::parse(slurp(json));
    EXPECT_EQ(j["nnz"], 3);
    EXPECT_EQ(j["max_diag"], 3.0);  // a_11 = 1 + 2
    EXPECT_EQ(j["max_abs"], 5.0);
    fs::remove(json);
}

TEST(BadInput, InfoDescribesANonSquareMatrix) {
    // Not an error for `info`: it reports the shape (only solving needs a square matrix).
    write("rect.mtx", kGeneral + "3 2 2\n1 1 1\n3 2 1\n");
    const CliRun r = mpmg("info " + path("rect.mtx"));
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("3 x 2"), std::string::npos) << r.out;
}

TEST(BadInput, InfoJsonNeverOverwritesTheMatrix) {
    write("keep.mtx", kGood);
    const CliRun r = mpmg("info " + path("keep.mtx") + " --json " + path("keep.mtx"));
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("would overwrite an input"), std::string::npos) << r.err;
    EXPECT_EQ(slurp(path("keep.mtx")), kGood);
}

// --- `mpmg solve --matrix`: the message must name the file --------------------------------

TEST(BadInput, SolveMatrixNamesTheFile) {
    write("solve_nan.mtx", kGeneral + "2 2 1\n1 1 nan\n");
    write("solve_rect.mtx", kGeneral + "3 2 2\n1 1 1\n3 2 1\n");
    write("solve_empty.mtx", "");
    for (const char* name : {"solve_nan.mtx", "solve_empty.mtx"}) {
        expect_rejected("solve --matrix " + path(name), {path(name)});
    }
    expect_rejected("solve --matrix " + path("solve_rect.mtx"),
                    {path("solve_rect.mtx"), "3 x 2", "square"});
    expect_rejected("solve --matrix " + path("missing.mtx"), {path("missing.mtx")});
}

TEST(BadInput, RhsSizeMismatch) {
    write("a3.mtx", kGeneral + "3 3 3\n1 1 2\n2 2 2\n3 3 2\n");
    write("b2.mtx", "%%MatrixMarket matrix array real general\n2 1\n1\n1\n");
    const CliRun r = mpmg("solve --matrix " + path("a3.mtx") + " --rhs " + path("b2.mtx") +
                          " --json " + path("result.json"));
    ASSERT_TRUE(r.exited);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("b2.mtx: right-hand side has 2 entries"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("3 rows"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(path("result.json")));
}

// --- Options -------------------------------------------------------------------------------

struct BadOption {
    std::string args;
    std::vector<std::string> expect;
};

TEST(BadInput, UnknownOrContradictoryOptions) {
    const std::string p = "solve --problem laplace27 --n 4 ";
    write("c.mtx", kGood);
    const std::vector<BadOption> cases = {
        {"solve --problem laplace27 --matrix " + path("c.mtx"), {"--problem", "--matrix"}},
        {p + "--precision K64P32D16 --work DP-SP", {"--precision", "--work"}},
        {p + "--matrix-precision DP-HP", {"--matrix-precision needs --work"}},
        {p + "--shift-level -5", {"--shift-level -5"}},
        {p + "--threads -1", {"--threads -1"}},
        {p + "--rtol 0", {"--rtol 0"}},
        {p + "--rtol nan", {"--rtol nan"}},
        {p + "--rtol 1e999", {"--rtol"}},
        {p + "--max-iter 0", {"--max-iter 0"}},
        {p + "--solver bicg", {"--solver", "'bicg'", "gmres"}},
        {p + "--cycle Z", {"--cycle", "'Z'"}},
        {p + "--smoother sor", {"--smoother", "'sor'", "symgs"}},
        {p + "--scaling always", {"--scaling", "'always'"}},
        {p + "--interpolation cubic", {"--interpolation", "'cubic'", "operator"}},
        {"solve --problem laplace27 --n 4 --method amg --interpolation operator",
         {"--interpolation operator", "AMG"}},
        {p + "--aggregation rs", {"--aggregation", "'rs'", "smoothed"}},
        {p + "--reorder metis", {"--reorder", "'metis'", "rcm"}},
        {p + "--row-weights diag", {"--row-weights", "'diag'", "none"}},
        {"solve --problem laplace27 --n 4 --row-weights none", {"--row-weights none", "AMG path"}},
        {p + "--coarse-solver amg", {"--coarse-solver", "'amg'", "direct"}},
        {p + "--block-size 0", {"--block-size", "'0'", "auto", "1..64"}},
        {p + "--block-size 2x", {"--block-size", "'2x'"}},
        {p + "--block-size 65", {"--block-size", "'65'"}},
        {"solve --problem laplace27 --n 4 --block-size 3", {"--block-size 3", "AMG path"}},
        {"solve --problem laplace27 --n 4 --method amg --block-size 5",
         {"--block-size 5", "does not divide", "64 rows"}},
        {"solve --problem laplace27 --n 4 --reorder rcm", {"--reorder rcm", "AMG path"}},
        {"solve --problem laplace27 --n 4 --aggregation smoothed",
         {"--aggregation smoothed", "AMG path"}},
        {"solve --problem laplace27 --n 4 --smoother block-jacobi",
         {"--smoother block-jacobi", "structured path"}},
        {p + "--method multigrid", {"--method", "'multigrid'", "structured"}},
        {p + "--precision K16P16D16", {"--precision", "K16P16D16"}},
        {p + "--work DP-QP", {"QP"}},
        {"solve --problem laplace27 --n abc", {"--n", "abc"}},
        {p + "--frobnicate 3", {"--frobnicate"}},
        {"solve", {"--problem"}},
        {"solve --problem poisson", {"'poisson'", "laplace27"}},
        // A value with a newline still gives one line: the newline is escaped.
        {p + "--smoother 'sym\ngs'", {"--smoother", "sym\\ngs"}},
        {"frobnicate", {"frobnicate"}},
    };
    for (const BadOption& c : cases) expect_rejected(c.args, c.expect);
}

TEST(BadInput, GridsAndAbsurdSizes) {
    const std::string p = "solve --problem laplace27 ";
    const std::vector<BadOption> cases = {
        {p + "--grid 1,2", {"--grid '1,2'"}},
        {p + "--grid 4,4,4,4,4", {"--grid"}},
        {p + "--grid 4,0,4", {"--grid '4,0,4'"}},
        {p + "--grid 4,4,x", {"--grid"}},
        {p + "--grid 4,4,4,3", {"laplace27", "3"}},
        {p + "--grid 4,4,4,9", {"--grid", "9 components"}},
        {p + "--grid 2147483648,1,1", {"--grid"}},
        // Rejected before anything is allocated.
        {p + "--n 100000", {"--n 100000"}},
        {p + "--n 2000", {"--n 2000"}},
        {p + "--grid 100000,100000,100000", {"--grid", "cells"}},
        {p + "--grid 1000000,3000,1", {"--grid", "cells"}},
        {p + "--n -3", {"--n -3"}},
    };
    for (const BadOption& c : cases) expect_rejected(c.args, c.expect);
}

TEST(BadInput, BadConfigFiles) {
    write("unknown_key.json", R"({"problem": {"name": "laplace27"}, "multigrid": {"cylce": "V"}})");
    write("wrong_type.json", R"({"problem": {"name": "laplace27"}, "rtol": "1e-8"})");
    write("wrong_type_n.json", R"({"problem": {"name": "laplace27", "n": 4.5}})");
    write("not_json.json", "{ problem: laplace27 }");
    write("not_object.json", "[1, 2, 3]");
    write("overflow.json", R"({"problem": {"name": "laplace27"}, "rtol": 1e999})");
    write("bad_value.json", R"({"problem": {"name": "laplace27"}, "solver": "bicg"})");
    write("newline_key.json", "{\"a\\nb\": 1}");
    write("empty.json", "");
    write("range.json", R"({"problem": {"name": "laplace27", "n": 4}, "max_iter": -1})");
    write("big_lu.json", R"({"problem": {"name": "laplace27", "n": 32},
        "multigrid": {"coarse_solver": "direct", "max_levels": 1}})");
    write("sweeps.json", R"({"problem": {"name": "laplace27", "n": 4},
        "multigrid": {"coarse_sweeps": 0}})");
    fs::create_directories(dir() / "config_dir");
    const std::vector<BadOption> cases = {
        {"unknown_key.json", {"unknown_key.json", "multigrid.cylce"}},
        {"wrong_type.json", {"wrong_type.json", "rtol", "expected a number"}},
        {"wrong_type_n.json", {"wrong_type_n.json", "problem.n", "integer"}},
        {"not_json.json", {"not_json.json", "not valid JSON"}},
        {"not_object.json", {"not_object.json", "object"}},
        {"overflow.json", {"overflow.json", "1e999"}},
        {"bad_value.json", {"bad_value.json", "solver", "'bicg'"}},
        {"newline_key.json", {"newline_key.json", "a\\nb"}},
        {"empty.json", {"empty.json", "not valid JSON"}},
        {"range.json", {"--max-iter -1"}},
        {"big_lu.json", {"coarse_solver direct", "32768 rows", "20000"}},
        {"sweeps.json", {"multigrid.coarse_sweeps 0"}},
        {"missing.json", {"missing.json", "cannot open"}},
        {"config_dir", {"config_dir", "directory"}},
    };
    for (const BadOption& c : cases) expect_rejected("solve --config " + path(c.args), c.expect);
}

TEST(BadInput, JsonOutputPaths) {
    // A missing directory is found before the solve starts: nothing is printed on stdout.
    const std::string missing = path("no_such_dir") + "/r.json";
    const CliRun r = mpmg("solve --problem laplace27 --n 4 --json " + missing);
    ASSERT_TRUE(r.exited);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_FALSE(fs::exists(path("no_such_dir")));
    // A directory as the output path.
    fs::create_directories(dir() / "out_dir");
    write("c.mtx", kGood);
    for (const std::string& args :
         {std::string("solve --problem laplace27 --n 4"), "info " + path("c.mtx")}) {
        const CliRun d = mpmg(args + " --json " + path("out_dir"));
        EXPECT_EQ(d.code, 2) << args << "\n" << d.err;
        EXPECT_NE(d.err.find("is a directory"), std::string::npos) << d.err;
        EXPECT_EQ(std::count(d.err.begin(), d.err.end(), '\n'), 1) << d.err;
    }
    EXPECT_TRUE(fs::is_empty(dir() / "out_dir"));
    // --json naming the --config file: refused, the config is left as it was.
    const std::string text = R"({"problem": {"name": "laplace27", "n": 4}})";
    write("run.json", text);
    const CliRun same = mpmg("solve --config " + path("run.json") + " --json " + path("run.json"));
    EXPECT_EQ(same.code, 2) << same.err;
    EXPECT_NE(same.err.find("would overwrite an input"), std::string::npos) << same.err;
    EXPECT_EQ(slurp(path("run.json")), text);
    EXPECT_EQ(leftover_temporaries(), std::vector<std::string>{});
}

TEST(BadInput, GoodRunLeavesOnlyTheResult) {
    // The counterpart of the cases above: a good run writes the result and no temporary.
    const std::string json = path("good.json");
    const CliRun r = mpmg("solve --problem laplace27 --n 4 --quiet --json " + json);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(fs::exists(json));
    EXPECT_EQ(leftover_temporaries(), std::vector<std::string>{});
    fs::remove(json);
}

}  // namespace
