// Distributed runs (issue #8): `mpirun -np 2` and `-np 3` (uneven blocks) of the CLI against the
// serial run, for a scalar and a block problem, with FP16 storage (K64P32D16) and Full64.
// Targets: iterations within +-1 of serial, the same solution to the solver's tolerance, and a
// partition field that covers the grid. Built only with MPI.
#ifdef MPMG_HAVE_MPI

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "io/matrix_market.hpp"
#include "io/problems.hpp"
#include "mpmg_paths.hpp"
#include "structured/coarsen.hpp"
#include "temp_dir.hpp"
#include "unstructured/csr_test_util.hpp"
#include "unstructured/rcm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using namespace mpmg;
namespace fs = std::filesystem;
using json = nlohmann::json;

fs::path temp_dir() {
    static const mpmg::test::TempDir dir("mpmg_mpi_test_");
    return dir.path();
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

struct MpiRun {
    int code = -1;
    std::string out, err;
    json result;
};

// ranks 0: the plain serial CLI; otherwise mpirun -np ranks, one thread per rank (the CI
// machine has two cores; --oversubscribe lets 3 ranks share them).
MpiRun mpmg(int ranks, const std::string& args) {
    static int counter = 0;
    const std::string tag = std::to_string(ranks) + "_" + std::to_string(counter++);
    const fs::path json_path = temp_dir() / ("r" + tag + ".json");
    const fs::path out = temp_dir() / ("out" + tag), err = temp_dir() / ("err" + tag);
    std::string cmd = "OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive ";
    if (ranks > 0) {
        // Open MPI's own allocations outlive MPI_Finalize; under the asan preset LeakSanitizer
        // would report them as leaks of every distributed run. Leak checking of mpmg's code
        // stays on in the serial runs of the same paths.
        cmd += "ASAN_OPTIONS=detect_leaks=0 ";
        // A session directory of its own: two mpirun started at once (ctest -j2) raced to
        // create Open MPI's default /tmp/ompi.<host>.<uid>, and the loser failed in orte_init
        // ("mkdir ... File exists").
        const fs::path session = temp_dir() / ("ompi" + tag);
        fs::create_directories(session);
        cmd += "OMPI_MCA_orte_tmpdir_base=" + session.string() + " ";
        cmd +=
            "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_"
            "oversubscribe=1 " +
            std::string(MPMG_MPIEXEC) + " -np " + std::to_string(ranks) + " ";
    }
    cmd += std::string(MPMG_CLI_PATH) + " " + args + " --json " + json_path.string() + " >" +
           out.string() + " 2>" + err.string();
    const int status = std::system(cmd.c_str());
    MpiRun r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(out);
    r.err = slurp(err);
    if (fs::exists(json_path)) r.result = json::parse(slurp(json_path));
    return r;
}

// ||x_a - x_b|| / ||x_b|| from the errors against the exact solution is not enough (both are
// small); compare the reported error and the residual instead, and the iteration counts.
void expect_like_serial(const MpiRun& serial, const MpiRun& par, int ranks) {
    ASSERT_EQ(par.code, 0) << par.err << par.out;
    const json& s = serial.result;
    const json& p = par.result;
    EXPECT_TRUE(p["converged"].get<bool>());
    const int is = s["iterations"], ip = p["iterations"];
    EXPECT_LE(std::abs(ip - is), 1) << "serial " << is << " vs " << ranks << " ranks " << ip;
    EXPECT_LE(p["final_relative_residual"].get<double>(), 1e-8);
    // Same solution to the tolerance: both errors against x_exact at the same small level.
    const double es = s["error_vs_exact"], ep = p["error_vs_exact"];
    EXPECT_LT(std::abs(ep - es), 10.0 * std::max(es, 1e-12)) << es << " vs " << ep;
    EXPECT_EQ(p["rows"], s["rows"]);
    // The hierarchy is the serial one: every level's size, structure, storage decision (G to
    // the bit, the note with the counts it was taken on) and truncation counts, whether its
    // setup was distributed or replicated. Not the counts of ILU(0) levels: those include the
    // factors', and a process factorises its own block.
    const json& ls = s["hierarchy"]["levels"];
    const json& lp = p["hierarchy"]["levels"];
    EXPECT_EQ(lp.size(), ls.size());
    const bool ilu = s["config"]["multigrid"]["smoother"] == "ilu0";
    for (std::size_t l = 0; l < std::min(ls.size(), lp.size()); ++l) {
        for (const char* key :
             {"rows", "nnz", "storage_precision", "compute_precision", "scaled", "scale_G", "note",
              "overflow_count", "underflow_count", "subnormal_count"}) {
            if (ilu && std::string(key).find("_count") != std::string::npos) continue;
            EXPECT_EQ(lp[l][key], ls[l][key]) << "level " << l << " " << key;
        }
        // G_max: the serial FP16 levels measure it in their truncation pass (FP16 max x G /
        // largest |â_ij|), distributed ones from the min ratio: equal up to rounding.
        ASSERT_EQ(lp[l]["scale_G_max"].is_null(), ls[l]["scale_G_max"].is_null()) << l;
        if (!ls[l]["scale_G_max"].is_null()) {
            const double a = lp[l]["scale_G_max"], b = ls[l]["scale_G_max"];
            EXPECT_NEAR(a, b, 1e-12 * b) << "level " << l << " scale_G_max";
        }
    }
    // The partition covers the grid exactly once.
    const json& part = p["partition"];
    ASSERT_TRUE(part.is_object()) << p.dump();
    EXPECT_EQ(part["ranks"], ranks);
    EXPECT_EQ(part["boxes"].size(), static_cast<std::size_t>(ranks));
    long long cells = 0;
    for (const auto& b : part["boxes"]) {
        cells += b["extent"][0].get<long long>() * b["extent"][1].get<long long>() *
                 b["extent"][2].get<long long>();
    }
    const long long block = s["hierarchy"]["levels"][0]["block"].get<long long>();
    EXPECT_EQ(cells * block, s["rows"].get<long long>());
    EXPECT_GE(part["distributed_levels"].get<int>(), 1);
    // Per level the ranks that run it: all, then fewer, down to rank 0.
    const json& level_ranks = part["level_ranks"];
    ASSERT_EQ(level_ranks.size(), lp.size());
    EXPECT_EQ(level_ranks.front(), ranks);
    EXPECT_EQ(level_ranks.back(), 1);
    for (std::size_t l = 1; l < level_ranks.size(); ++l) {
        EXPECT_LE(level_ranks[l].get<int>(), level_ranks[l - 1].get<int>()) << l;
    }
    EXPECT_TRUE(s["partition"].is_null());
    EXPECT_EQ(part["setup"].get<std::string>().rfind("distributed", 0), 0) << part["setup"];
    // The largest process's peak resident memory, as the serial run gives its own.
    EXPECT_GT(p["peak_memory_mb"].get<double>(), 0.0);
    EXPECT_GT(s["peak_memory_mb"].get<double>(), 0.0);
}

void check(const std::string& args) {
    const MpiRun serial = mpmg(0, args);
    ASSERT_EQ(serial.code, 0) << serial.err;
    for (int ranks : {2, 3}) {
        SCOPED_TRACE(ranks);
        const MpiRun par = mpmg(ranks, args);
        expect_like_serial(serial, par, ranks);
        // Only rank 0 prints.
        EXPECT_EQ(serial.out.find("mpmg solve:"), serial.out.rfind("mpmg solve:"));
        EXPECT_EQ(par.out.find("mpmg solve:"), par.out.rfind("mpmg solve:")) << par.out;
    }
}

TEST(Mpi, Laplace27Fp16StorageMatchesSerial) {
    check("solve --problem laplace27 --n 24 --precision K64P32D16 --quiet");
}

// The Krylov operator reads the exact FP16 copy of each process's block from the first
// product, the one level 0 stores (as serially), mirrored from the second product on (the copy
// is symmetric); with FP64 levels its products read the symmetric block mirrored from the
// second product on, and wait 10 products for the copy (products_before_half_copy): none in
// this 9-product solve, as serially. A rhd block (not exact in FP16) never has one.
TEST(Mpi, KrylovOperatorReadsTheExactFp16CopyAsSerially) {
    const auto storage = [](const std::string& args, int ranks) {
        const MpiRun r = mpmg(ranks, args);
        EXPECT_EQ(r.code, 0) << r.err;
        return std::tuple{r.result["krylov_operator_storage"].get<std::string>(),
                          r.result["krylov_operator_storage_from_product"].get<int>(),
                          r.result["krylov_operator_mirrored_from_product"].get<int>()};
    };
    const std::string fp16 = "solve --problem laplace27 --n 24 --precision K64P32D16 --quiet";
    const std::string fp64 = "solve --problem laplace27 --n 24 --precision K64P64D64 --quiet";
    const std::string rhd = "solve --problem rhd --n 24 --precision K64P32D16 --quiet";
    for (int ranks : {0, 2, 3}) {
        SCOPED_TRACE(ranks);
        EXPECT_EQ(storage(fp16, ranks), std::tuple(std::string("fp16"), 1, 2));
        EXPECT_EQ(storage(fp64, ranks), std::tuple(std::string("fp64"), 1, 2));
        EXPECT_EQ(std::get<0>(storage(rhd, ranks)), "fp64");
    }
}

TEST(Mpi, Laplace27Full64MatchesSerial) {
    check("solve --problem laplace27 --n 24 --precision K64P64D64 --quiet");
}

// Values far outside FP16: every level scaled inside its truncation, the process boundary's
// coupling scaled the same way.
TEST(Mpi, ScaledFp16LevelsMatchSerial) {
    check("solve --problem laplace27e8 --n 24 --precision K64P32D16 --quiet");
    check("solve --problem rhd --n 24 --precision K64P32D16 --quiet");
}

// jump7 takes operator-dependent interpolation: non-uniform weights across process boundaries,
// set up distributed (one directional step at a time). rhd3t: the same for 3x3 blocks on scaled
// FP16 levels.
TEST(Mpi, OperatorDependentInterpolationMatchesSerial) {
    check("solve --problem jump7 --n 24 --precision K64P32D16 --quiet");
    check("solve --problem rhd3t --n 16 --interpolation operator --precision K64P32D16 --quiet");
}

// A Matrix Market file on --grid: every process reads only its share of the file's lines and
// sends each entry to the owner of its row; no process holds the whole matrix.
std::string input_of(const std::string& args, int ranks) {
    const MpiRun r = mpmg(ranks, args);
    EXPECT_EQ(r.code, 0) << r.err;
    return r.result.is_object() ? r.result["partition"]["input"].get<std::string>() : "";
}

// Built-in problem `name` on n^3 as FP64 CSR.
CsrMatrix problem_csr(const std::string& name, int n) {
    ProblemOptions po;
    po.name = name;
    po.n = n;
    return to_csr(make_problem(po).a);
}

// The problem written as a Matrix Market file (coordinate real general) in the temp folder.
fs::path problem_file(const std::string& name, int n) {
    const fs::path path = temp_dir() / (name + std::to_string(n) + ".mtx");
    write_matrix_market(path.string(), problem_csr(name, n));
    return path;
}

std::vector<std::string> file_lines(const fs::path& path) {
    std::vector<std::string> lines;
    std::stringstream in(slurp(path));
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

fs::path write_lines(const std::string& name, const std::vector<std::string>& lines) {
    const fs::path path = temp_dir() / name;
    std::ofstream out(path);
    for (const auto& l : lines) out << l << "\n";
    return path;
}

TEST(Mpi, MatrixFileOnAGridMatchesSerial) {
    const fs::path path = problem_file("rhd", 24);
    const std::string args =
        "solve --matrix " + path.string() + " --grid 24,24,24 --precision K64P32D16 --quiet";
    check(args);
    EXPECT_EQ(input_of(args, 2).rfind("file read in parts", 0), 0u);
}

// A block matrix in symmetric storage (lower triangle, mirrored by the reader), with comments
// and blank lines among the entries: the parts' cuts fall anywhere. CG, as serially.
TEST(Mpi, SymmetricStorageBlockFileMatchesSerial) {
    const CsrMatrix a = problem_csr("rhd3t", 12);
    std::string text = "%%MatrixMarket matrix coordinate real symmetric\n% rhd3t 12^3\n";
    std::int64_t lower = 0;
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) lower += a.col[p] <= i;
    }
    text +=
        std::to_string(a.rows) + " " + std::to_string(a.cols) + " " + std::to_string(lower) + "\n";
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            if (a.col[p] > i) continue;
            char line[96];
            std::snprintf(line, sizeof line, "%lld %lld %.17g\n", static_cast<long long>(i + 1),
                          static_cast<long long>(a.col[p] + 1), a.val[p]);
            text += line;
        }
        if (i % 97 == 0) text += "% a comment\n\n";
    }
    const fs::path path = temp_dir() / "rhd3t12_sym.mtx";
    std::ofstream(path) << text;
    const std::string args =
        "solve --matrix " + path.string() + " --grid 12,12,12,3 --precision K64P32D16 --quiet";
    check(args);
    const MpiRun par = mpmg(3, args);
    EXPECT_EQ(par.result["config"]["solver"], "cg");
}

// A nonsymmetric matrix: GMRES, as serially; and the same file gzipped is read in parts too
// (cut by the bytes of its decompressed text): the same run to the bit.
TEST(Mpi, NonsymmetricFileChoosesGmresAndGzipIsReadInParts) {
    const fs::path path = problem_file("oil", 16);
    const std::string args =
        "solve --matrix " + path.string() + " --grid 16,16,16 --precision K64P32D16 --quiet";
    check(args);
    const MpiRun par = mpmg(2, args);
    EXPECT_EQ(par.result["config"]["solver"], "gmres");
    const std::string gz = path.string() + ".gz";
    ASSERT_EQ(std::system(("gzip -c " + path.string() + " > " + gz).c_str()), 0);
    const MpiRun zipped =
        mpmg(2, "solve --matrix " + gz + " --grid 16,16,16 --precision K64P32D16 --quiet");
    ASSERT_EQ(zipped.code, 0) << zipped.err;
    EXPECT_EQ(zipped.result["partition"]["input"].get<std::string>().rfind("file read in parts", 0),
              0u);
    EXPECT_EQ(zipped.result["residual_history"], par.result["residual_history"]);
}

// Explicitly stored zeros are part of the pattern that decides CG or GMRES, as serially: one
// stored zero without its mirror makes the matrix nonsymmetric (GMRES), a mirrored pair does
// not (CG). The zeros sit at an offset rhd's 7-point stencil lacks, on a row that 2 and 3 ranks
// put next to another rank's block.
TEST(Mpi, StoredZerosDecideTheSolverAsSerially) {
    const std::vector<std::string> lines = file_lines(problem_file("rhd", 12));
    std::size_t size_line = 1;
    while (lines[size_line].empty() || lines[size_line][0] == '%') ++size_line;
    // Cell (5, 5, 5) (row 5 + 12 * (5 + 12 * 5) = 785, 1-based 786) and (6, 6, 6) (row 942,
    // 1-based 943): diagonal neighbours on either side of the z = 6 cut of 2 ranks.
    for (const bool mirrored : {false, true}) {
        SCOPED_TRACE(mirrored);
        std::vector<std::string> ls = lines;
        std::vector<std::string> extra = {"786 943 0"};
        if (mirrored) extra.push_back("943 786 0.0");
        long long rows = 0, cols = 0, nnz = 0;
        std::sscanf(ls[size_line].c_str(), "%lld %lld %lld", &rows, &cols, &nnz);
        ls[size_line] = std::to_string(rows) + " " + std::to_string(cols) + " " +
                        std::to_string(nnz + static_cast<long long>(extra.size()));
        ls.insert(ls.begin() + static_cast<std::ptrdiff_t>(ls.size() / 2), extra.begin(),
                  extra.end());
        const fs::path path = write_lines(mirrored ? "rhd12_zeros2.mtx" : "rhd12_zero1.mtx", ls);
        const std::string args =
            "solve --matrix " + path.string() + " --grid 12,12,12 --precision K64P32D16 --quiet";
        const MpiRun serial = mpmg(0, args);
        ASSERT_EQ(serial.code, 0) << serial.err;
        EXPECT_EQ(serial.result["config"]["solver"], mirrored ? "cg" : "gmres");
        for (int ranks : {2, 3}) {
            const MpiRun par = mpmg(ranks, args);
            ASSERT_EQ(par.code, 0) << par.err;
            EXPECT_EQ(par.result["config"]["solver"], serial.result["config"]["solver"]) << ranks;
            EXPECT_LE(std::abs(par.result["iterations"].get<int>() -
                               serial.result["iterations"].get<int>()),
                      1);
        }
    }
}

// BentPipe2D100 on the grid stagnates with linear interpolation; the guard rebuilds with
// operator-dependent interpolation on every rank alike (the rebuild is collective) and the solve
// converges within one iteration of serial, with the serial guard event.
TEST(Mpi, StagnationRebuildsWithOperatorInterpolationOnEveryRank) {
    const std::string args = "solve --matrix " + std::string(MPMG_SHARED_DATA) +
                             "/BentPipe2D100.mtx.gz --grid 100,100,1 --quiet";
    const MpiRun serial = mpmg(0, args);
    ASSERT_EQ(serial.code, 0) << serial.err;
    ASSERT_EQ(serial.result["guard_events"].size(), 1u);
    for (int ranks : {2, 3}) {
        SCOPED_TRACE(ranks);
        const MpiRun par = mpmg(ranks, args);
        ASSERT_EQ(par.code, 0) << par.err;
        EXPECT_TRUE(par.result["converged"].get<bool>());
        EXPECT_LE(
            std::abs(par.result["iterations"].get<int>() - serial.result["iterations"].get<int>()),
            1);
        ASSERT_EQ(par.result["guard_events"].size(), 1u) << par.result["guard_events"];
        const std::string e = par.result["guard_events"][0];
        EXPECT_NE(e.find("and operator interpolation"), std::string::npos) << e;
    }
}

// A zero diagonal entry in the last rank's block: every rank stops with the serial message (the
// cell in the whole grid's coordinates) and exit 3, and none waits for the others: the level's
// build is agreed over the ranks.
TEST(Mpi, ZeroDiagonalInOneBlockGivesTheSerialError) {
    CsrMatrix a = problem_csr("laplace27", 12);
    const std::int64_t row = (10 * 12 + 6) * 12 + 5;  // cell (5, 6, 10)
    for (std::int64_t q = a.row_ptr[row]; q < a.row_ptr[row + 1]; ++q) {
        if (a.col[static_cast<std::size_t>(q)] == row) a.val[static_cast<std::size_t>(q)] = 0.0;
    }
    const fs::path path = temp_dir() / "laplace27_12_zero.mtx";
    write_matrix_market(path.string(), a);
    const std::string args = "solve --matrix " + path.string() + " --grid 12,12,12 --quiet";
    const std::string message = "level 0: diagonal 0 at cell (5, 6, 10)";
    const MpiRun serial = mpmg(0, args);
    EXPECT_EQ(serial.code, 3) << serial.err;
    EXPECT_NE(serial.err.find(message), std::string::npos) << serial.err;
    for (int ranks : {2, 3}) {
        SCOPED_TRACE(ranks);
        const MpiRun par = mpmg(ranks, args);
        EXPECT_EQ(par.code, 3) << par.err;
        EXPECT_NE(par.err.find(message), std::string::npos) << par.err;
    }
}

// A bad file gives the serial run's message (file, line, problem) and exit code, whichever
// process's part holds the bad line, on the structured and the AMG path, and no process
// crashes or hangs.
TEST(Mpi, BadMatrixFileGivesTheSerialError) {
    const fs::path good = problem_file("laplace27", 8);
    const std::vector<std::string> lines = file_lines(good);
    const auto write = [](const std::string& name, const std::vector<std::string>& ls) {
        return write_lines(name, ls).string();
    };
    std::vector<std::pair<std::string, std::string>> cases;  // file, --grid
    for (const std::size_t at : {lines.size() / 3, lines.size() - 2}) {
        auto bad = lines;
        bad[at] = "1 1 abc";
        cases.push_back({write("value" + std::to_string(at) + ".mtx", bad), "8,8,8"});
    }
    {
        auto bad = lines;  // an entry coupling cells (0,0,0) and (4,0,0)
        bad[lines.size() * 2 / 3] = "1 5 -1";
        cases.push_back({write("far.mtx", bad), "8,8,8"});
    }
    {
        auto bad = lines;  // one entry line missing
        bad.pop_back();
        cases.push_back({write("short.mtx", bad), "8,8,8"});
    }
    {
        auto bad = lines;  // two more entries for (300, 300), whose sum overflows
        std::size_t size_line = 1;
        while (bad[size_line].empty() || bad[size_line][0] == '%') ++size_line;
        const std::size_t space = bad[size_line].rfind(' ');
        bad[size_line] = bad[size_line].substr(0, space + 1) +
                         std::to_string(std::stoll(bad[size_line].substr(space + 1)) + 2);
        bad.insert(bad.begin() + static_cast<std::ptrdiff_t>(lines.size() / 2), "300 300 1e308");
        bad.push_back("300 300 1e308");
        cases.push_back({write("overflow.mtx", bad), "8,8,8"});
        // and an entry beyond the neighbourhood in an earlier row: still the overflow first
        bad[lines.size() / 4] = "1 5 -1";
        cases.push_back({write("overflow_far.mtx", bad), "8,8,8"});
    }
    cases.push_back({good.string(), "8,8,4"});  // rows do not fit the grid
    // The AMG path (no --grid) reads the same files in parts: the same errors (not for the
    // entry beyond the 27-point neighbourhood, which is the grid's); and a matrix that is not
    // square.
    for (std::size_t c = 0, n = cases.size() - 1; c < n; ++c) {
        if (cases[c].first.find("far.mtx") == std::string::npos) {  // overflow_far.mtx too
            cases.push_back({cases[c].first, ""});
        }
    }
    {
        auto wide = lines;
        std::size_t size_line = 1;
        while (wide[size_line].empty() || wide[size_line][0] == '%') ++size_line;
        wide[size_line] = "512 513" + wide[size_line].substr(wide[size_line].rfind(' '));
        cases.push_back({write("wide.mtx", wide), ""});
    }
    for (const auto& [file, grid] : cases) {
        SCOPED_TRACE(file + " " + grid);
        const std::string args =
            "solve --matrix " + file + (grid.empty() ? "" : " --grid " + grid) + " --quiet";
        const MpiRun serial = mpmg(0, args);
        ASSERT_NE(serial.code, 0);
        ASSERT_FALSE(serial.err.empty());
        const std::string message = serial.err.substr(0, serial.err.find('\n'));
        for (int ranks : {2, 3}) {
            const MpiRun par = mpmg(ranks, args);
            EXPECT_EQ(par.code, serial.code) << par.err;
            EXPECT_NE(par.err.find(message), std::string::npos) << message << "\n---\n" << par.err;
        }
    }
}

// Scale-then-setup (the ablation): level 0 scaled row by row on each rank with the whole A's G,
// then coarsened distributed; a scalar and a block problem.
TEST(Mpi, ScaleThenSetupMatchesSerial) {
    check("solve --problem rhd --n 24 --precision K64P32D16 --scaling scale-then-setup --quiet");
    check("solve --problem rhd3t --n 16 --precision K64P32D16 --scaling scale-then-setup --quiet");
}

// G comes from the whole grid: one off-diagonal entry larger than its diagonals (the smallest
// sqrt(a_ii a_jj) / |a_ij|, 0.43 against 1 elsewhere) in the last z-plane, which 2 and 3 ranks
// give to their last rank; every rank scales with the G it sets, as serially.
TEST(Mpi, ScaleThenSetupTakesTheWholeGridsG) {
    CsrMatrix a = problem_csr("laplace27", 12);
    const std::int64_t row = 6 + 12 * (6 + 12 * 11);
    for (std::int64_t q = a.row_ptr[row]; q < a.row_ptr[row + 1]; ++q) {
        if (a.col[q] == row + 1) a.val[q] = -60.0;
    }
    const fs::path path = temp_dir() / "laplace27_big_entry.mtx";
    write_matrix_market(path.string(), a);
    check("solve --matrix " + path.string() +
          " --grid 12,12,12 --precision K64P32D16 --scaling scale-then-setup --quiet");
}

TEST(Mpi, BlockProblemRhd3tFp16StorageMatchesSerial) {
    check("solve --problem rhd3t --n 16 --precision K64P32D16 --quiet");
}

// `auto` decides each level's storage from the whole level's values (and its underflow count)
// on every process alike; weather is cut across its weak directions and smoothed by ILU(0).
TEST(Mpi, AutoPrecisionAndIluMatchSerial) {
    check("solve --problem weather --n 24 --precision auto --quiet");
}

TEST(Mpi, BlockProblemOil4cGmresMatchesSerial) {
    // n = 24: its vertical coupling must keep the cut off z (37 iterations vs 35 serial there).
    check("solve --problem oil4c --n 24 --precision K64P32D16 --quiet");
}

// With the Jacobi smoother nothing is hybrid: every distributed operation (halo exchange,
// coupling, residual, transfers across rank boundaries, agglomeration, reductions) must give the
// serial numbers up to rounding, so the residual histories agree to many digits.
void expect_serial_history(const std::string& args, std::initializer_list<int> rank_counts) {
    const MpiRun serial = mpmg(0, args);
    ASSERT_EQ(serial.code, 0) << serial.err;
    for (int ranks : rank_counts) {
        SCOPED_TRACE(ranks);
        const MpiRun par = mpmg(ranks, args);
        ASSERT_EQ(par.code, 0) << par.err;
        EXPECT_GE(par.result["partition"]["distributed_levels"].get<int>(), 1);
        const auto& hs = serial.result["residual_history"];
        const auto& hp = par.result["residual_history"];
        ASSERT_EQ(hs.size(), hp.size());
        for (std::size_t k = 0; k < hs.size(); ++k) {
            const double a = hs[k], b = hp[k];
            EXPECT_NEAR(b, a, 1e-9 * a) << "iteration " << k;
        }
    }
}

TEST(Mpi, JacobiSmootherReproducesTheSerialHistory) {
    // 3 ranks: 1x1x3 (uneven); 4 ranks: 1x2x2, whose halos include edges.
    expect_serial_history(
        "solve --problem rhd3t --n 16 --precision K64P64D64 --smoother jacobi --quiet", {3, 4});
    // Scalar unknowns cut along x at odd cells (2 ranks: 23 + 22, 3 ranks: 15 each): the
    // x-direction transfers read the coarse and fine halos at both ends of every line.
    expect_serial_history(
        "solve --problem laplace27 --grid 45,14,12 --precision K64P64D64 --smoother jacobi "
        "--quiet",
        {2, 3});
}

// Four ranks on a grid long in z (1x1x4): level 2's blocks (4x4x16) are too small, so it and
// the coarser levels move onto the merged partition's two holders (4x4x32 each), the coarsest
// onto rank 0 (level_ranks 4, 4, 2, 1); with the Jacobi smoother the history is still the
// serial one.
TEST(Mpi, CoarseLevelsMergeOntoFewerRanksWithTheSerialHistory) {
    const std::string args =
        "solve --problem laplace27 --grid 16,16,256 --precision K64P64D64 --smoother jacobi "
        "--quiet";
    expect_serial_history(args, {4});
    const MpiRun r = mpmg(4, args);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.result["partition"]["level_ranks"], json::parse("[4, 4, 2, 1]"))
        << r.result["partition"].dump();
}

// The distributed coarsest solve. With multigrid.max_levels = 2, laplace27 n = 40's coarsest
// level (20^3 = 8000 rows, beyond the LU's 4096) is smoothed (40 sweeps). It stays on every rank
// (level_ranks r, r) instead of being gathered onto rank 0 while the others wait. With the
// Jacobi smoother the residual history is the serial one; with SymGS (hybrid across ranks) the
// iterations are within 1. max_levels = 1: level 0 alone, smoothed on every rank.
TEST(Mpi, CoarsestLevelTooLargeForTheLuIsSmoothedOnEveryRank) {
    for (const int levels : {2, 1}) {
        SCOPED_TRACE(levels);
        const fs::path config = temp_dir() / ("levels" + std::to_string(levels) + ".json");
        std::ofstream(config) << R"({"multigrid": {"max_levels": )" << levels << "}}";
        const std::string args = "solve --problem laplace27 --n " +
                                 std::string(levels == 2 ? "40" : "24") +
                                 " --precision K64P64D64 --config " + config.string() + " --quiet";
        expect_serial_history(args + " --smoother jacobi", {2, 3});
        const MpiRun serial = mpmg(0, args);
        ASSERT_EQ(serial.code, 0) << serial.err;
        const json& ls = serial.result["hierarchy"]["levels"];
        ASSERT_EQ(ls.size(), static_cast<std::size_t>(levels));
        EXPECT_EQ(ls.back()["solve"], "40 smoother sweeps");
        for (int ranks : {2, 3}) {
            SCOPED_TRACE(ranks);
            const MpiRun par = mpmg(ranks, args);
            ASSERT_EQ(par.code, 0) << par.err;
            EXPECT_TRUE(par.result["converged"].get<bool>());
            EXPECT_LE(std::abs(par.result["iterations"].get<int>() -
                               serial.result["iterations"].get<int>()),
                      1);
            EXPECT_EQ(par.result["hierarchy"]["levels"].back()["solve"], "40 smoother sweeps");
            const json& part = par.result["partition"];
            EXPECT_EQ(part["distributed_levels"], levels);
            EXPECT_EQ(part["level_ranks"], json(std::vector<int>(levels, ranks))) << part.dump();
        }
    }
}

// A file read in parts with --rhs: every rank reads b whole and keeps its rows; with the Jacobi
// smoother the residual history is the serial one (a b cut from the wrong cells is not).
TEST(Mpi, RhsFileGivesTheSerialHistory) {
    std::vector<std::string> rhs = {"%%MatrixMarket matrix array real general", "1728 1"};
    for (int i = 0; i < 1728; ++i) rhs.push_back(std::to_string(1.0 + (i % 7) * 0.25));
    expect_serial_history("solve --matrix " + problem_file("rhd", 12).string() +
                              " --grid 12,12,12 --rhs " + write_lines("rhd12_b.mtx", rhs).string() +
                              " --precision K64P64D64 --smoother jacobi --quiet",
                          {2, 3});
}

// `mpmg bench scaling --quick`: rows for 1 and 2 ranks of both configurations, with the
// contract's fields, and the weak-scaling model labelled as a model.
TEST(Mpi, BenchScalingQuickWritesRowsAndTheModel) {
    const fs::path out = temp_dir() / "scaling";
    const std::string cmd = "ASAN_OPTIONS=detect_leaks=0 OMP_WAIT_POLICY=passive " +
                            std::string(MPMG_CLI_PATH) + " bench scaling --quick --out " +
                            out.string() + " >/dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    const json doc = json::parse(slurp(out / "scaling.json"));
    // Each core's speed, and the serial baseline pinned to each core in turn.
    const json& cores = doc["machine"]["core_speeds"];
    ASSERT_TRUE(cores.is_array());
    ASSERT_FALSE(cores.empty());
    for (const auto& c : cores) {
        EXPECT_GT(c["stream_gbs"].get<double>(), 0.0);
        EXPECT_GT(c["cache_gbs"].get<double>(), 0.0);
    }
    bool two_ranks = false;
    std::map<std::string, std::set<int>> pinned;  // config -> the cpus of its 1x1 rows
    for (const auto& r : doc["rows"]) {
        for (const char* key :
             {"problem", "config", "ranks", "threads", "cpu", "total_s", "iterations", "efficiency",
              "capacity_efficiency", "solve_capacity_efficiency", "even_split_bound"}) {
            EXPECT_TRUE(r.contains(key)) << key;
        }
        EXPECT_GT(r["efficiency"].get<double>(), 0.0);
        EXPECT_GT(r["capacity_efficiency"].get<double>(), 0.0);
        if (r["ranks"].get<int>() * r["threads"].get<int>() == 1) {
            ASSERT_FALSE(r["cpu"].is_null());
            pinned[r["config"].get<std::string>()].insert(r["cpu"].get<int>());
            EXPECT_LE(r["efficiency"].get<double>(), 1.0);  // against the fastest core
            EXPECT_TRUE(r["round_slowest_efficiency"].is_null());
        } else {
            EXPECT_TRUE(r["cpu"].is_null());
            EXPECT_GT(r["round_slowest_efficiency"].get<double>(), 0.0);  // one round: all ran
        }
        // The bandwidth bound of its core count, from STREAM measured in the same run.
        EXPECT_GT(r["stream_bound"].get<double>(), 0.0);
        if (r["ranks"].get<int>() * r["threads"].get<int>() == 1) {
            EXPECT_EQ(r["stream_bound"].get<double>(), 1.0);
        }
        two_ranks |= r["ranks"].get<int>() == 2;
    }
    EXPECT_TRUE(two_ranks);
    ASSERT_EQ(pinned.size(), 2U);
    for (const auto& [config, cpus] : pinned) EXPECT_EQ(cpus.size(), cores.size()) << config;
    ASSERT_EQ(doc["weak_model"].size(), 2U);
    EXPECT_NE(doc["weak_model"][0]["kind"].get<std::string>().find("model"), std::string::npos);
    EXPECT_TRUE(fs::exists(out / "scaling.md"));
}

// `mpmg bench scaling --quick --matrix A.mtx`: the same rows for the user's matrix on the AMG
// path (row blocks under mpirun), no weak-scaling model (said so), and --matrix refused by the
// other benchmarks.
TEST(Mpi, BenchScalingOfAMatrixFileRunsTheAmgPath) {
    const fs::path a = problem_file("laplace27", 24);  // 13,824 rows: distributed on 2 ranks
    const fs::path out = temp_dir() / "scaling_file";
    const std::string cmd = "ASAN_OPTIONS=detect_leaks=0 OMP_WAIT_POLICY=passive " +
                            std::string(MPMG_CLI_PATH) + " bench scaling --quick --matrix " +
                            a.string() + " --out " + out.string() + " >/dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    const json doc = json::parse(slurp(out / "scaling.json"));
    EXPECT_EQ(doc["method"], "amg");
    EXPECT_TRUE(doc["n"].is_null());
    EXPECT_EQ(doc["unknowns"], 13824);
    EXPECT_TRUE(doc["weak_model"].empty());
    bool two_ranks = false;
    for (const auto& r : doc["rows"]) {
        EXPECT_NE(r["problem"].get<std::string>().find("laplace27"), std::string::npos);
        EXPECT_TRUE(r["converged"].get<bool>());
        if (r["ranks"].get<int>() == 2) {
            two_ranks = true;
            EXPECT_NE(r["partition"]["setup"].get<std::string>().find("distributed AMG"),
                      std::string::npos)
                << r["partition"].dump();
            EXPECT_GT(r["partition"]["distributed_levels"].get<int>(), 0);
        }
    }
    EXPECT_TRUE(two_ranks);
    EXPECT_NE(slurp(out / "scaling.md").find("No weak-scaling model for the AMG path"),
              std::string::npos);
    const fs::path err = temp_dir() / "scaling_file_e2e.err";
    const int status = std::system((std::string(MPMG_CLI_PATH) + " bench e2e --quick --matrix " +
                                    a.string() + " >/dev/null 2>" + err.string())
                                       .c_str());
    EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 2);
    EXPECT_NE(slurp(err).find("--matrix and --rhs are options of bench scaling"), std::string::npos)
        << slurp(err);
    // A matrix no solve can read: every case fails, each saying why, and the benchmark too.
    const fs::path bad =
        write_lines("bench_bad.mtx",
                    {"%%MatrixMarket matrix coordinate real general", "2 2 2", "1 1 1", "2 2 x"});
    const int failed =
        std::system(("ASAN_OPTIONS=detect_leaks=0 OMP_WAIT_POLICY=passive " +
                     std::string(MPMG_CLI_PATH) + " bench scaling --quick --matrix " +
                     bad.string() + " --out " + out.string() + "_bad >/dev/null 2>" + err.string())
                        .c_str());
    EXPECT_EQ(WIFEXITED(failed) ? WEXITSTATUS(failed) : -1, 1);
    const std::string said = slurp(err);
    EXPECT_NE(said.find("no case ran; the first error: mpmg: " + bad.string() + ":4"),
              std::string::npos)
        << said;
    EXPECT_NE(said.find("2x1: failed: mpmg: "), std::string::npos) << said;
}

// The AMG path under mpirun (item 5): the same solution as serially (error vs exact at the
// same small level), the whole operator's rows, row blocks that cover the matrix once, distributed
// levels, a report of every level summed over the ranks, and about the serial iteration count
// (the aggregates differ along the rank boundaries and the smoother is hybrid there).
void check_amg(const std::string& args) {
    const MpiRun serial = mpmg(0, args);
    ASSERT_EQ(serial.code, 0) << serial.err;
    const json& s = serial.result;
    for (int ranks : {2, 3}) {
        SCOPED_TRACE(ranks);
        const MpiRun par = mpmg(ranks, args);
        ASSERT_EQ(par.code, 0) << par.err << par.out;
        const json& p = par.result;
        EXPECT_TRUE(p["converged"].get<bool>());
        EXPECT_EQ(p["config"]["solver"], s["config"]["solver"]);
        const int is = s["iterations"], ip = p["iterations"];
        EXPECT_LE(ip, 1.1 * is + 1) << "serial " << is << " vs " << ranks << " ranks " << ip;
        EXPECT_LE(p["final_relative_residual"].get<double>(), 1e-8);
        ASSERT_EQ(p["error_vs_exact"].is_null(), s["error_vs_exact"].is_null());
        if (!s["error_vs_exact"].is_null()) {  // null: a --rhs, no exact solution known
            const double es = s["error_vs_exact"], ep = p["error_vs_exact"];
            EXPECT_LT(std::abs(ep - es), 10.0 * std::max(es, 1e-12)) << es << " vs " << ep;
        }
        EXPECT_EQ(p["rows"], s["rows"]);
        EXPECT_EQ(p["nnz"], s["nnz"]);
        EXPECT_EQ(p["hierarchy"]["levels"][0]["rows"], s["rows"]);
        EXPECT_EQ(p["hierarchy"]["levels"][0]["nnz"], s["hierarchy"]["levels"][0]["nnz"]);
        const json& part = p["partition"];
        EXPECT_EQ(part["ranks"], ranks);
        EXPECT_GE(part["distributed_levels"].get<int>(), 1);
        long long next = 0;
        for (const auto& b : part["boxes"]) {
            EXPECT_EQ(b["lo"][0].get<long long>(), next);
            EXPECT_GE(b["extent"][0].get<long long>(), 1);
            next += b["extent"][0].get<long long>();
        }
        EXPECT_EQ(next, s["rows"].get<long long>());
        EXPECT_EQ(part["setup"].get<std::string>().rfind("distributed AMG", 0), 0) << part["setup"];
        EXPECT_EQ(par.out.find("mpmg solve:"), par.out.rfind("mpmg solve:")) << par.out;
    }
}

TEST(Mpi, AmgPathSolvesLikeSerial) {
    check_amg("solve --problem laplace27 --n 24 --method amg --precision K64P32D16 --quiet");
    // A block problem's CSR form stores its blocks' zeros; level 0 drops them as the serial
    // hierarchy does (its nonzeros equal serial's; keeping them gave 832,896 against 335,232).
    check_amg("solve --problem rhd3t --n 24 --method amg --quiet");
    // A file without --grid goes to the AMG path; GMRES for a nonsymmetric one. Under mpirun the
    // rows are renumbered by RCM before they are cut into blocks, and x comes back in the file's
    // order (the error against the exact solution checks that).
    const fs::path path = problem_file("oil", 24);
    check_amg("solve --matrix " + path.string() + " --precision auto --quiet");
    // ILU(0): each rank factors its own rows (in one block per thread), the couplings to the
    // other ranks entering through the residual.
    check_amg("solve --matrix " + path.string() + " --smoother ilu0 --quiet");
    // A real finite-element matrix (third-order, L-shape) in mfem's entity-by-entity order,
    // which the ranks renumber by RCM (42 iterations against 43 serially; in the file's order
    // 53 on 2 ranks, 50 on 3), with a --rhs file.
    const std::string lshape = std::string(MPMG_SHARED_DATA) + "/mfem/mfem_lshape_o3_r5";
    check_amg("solve --matrix " + lshape + ".mtx.gz --rhs " + lshape + "_b.mtx.gz --quiet");
    // The K-cycle: its Krylov steps on the distributed levels sum their inner products over the
    // ranks, so every rank takes the same branches (laplace27 n = 40: 3 distributed levels, 13
    // iterations on 1, 2 and 3 ranks; flexible CG steps), and GCR steps under GMRES (oil: 21 on
    // 1, 2 and 3 ranks).
    check_amg("solve --problem laplace27 --n 40 --method amg --cycle K --quiet");
    check_amg("solve --matrix " + path.string() + " --cycle K --quiet");
}

// Smoothed aggregation under mpirun (dist_smoothed.hpp): the decoupled aggregates' tentative
// prolongation smoothed across the ranks, R A P summed at the coarse rows' owners. laplace27
// n = 24 (16 CG iterations on 1, 2 and 3 ranks), the L-shape finite elements (18 on 1, 2 and
// 3), plane elasticity with nodes of 2 unknowns (the filter lumps by components; 22, 22, 21),
// and oil (a nonsymmetric A: R = P_t^T; 27, 26, 26). Every distributed level reports its
// smoothed P.
TEST(Mpi, AmgPathSmoothedAggregationSolvesLikeSerial) {
    const std::string lshape = std::string(MPMG_SHARED_DATA) + "/mfem/mfem_lshape_o3_r5";
    const fs::path elasticity = temp_dir() / "elasticity128_sa.mtx";
    write_matrix_market(elasticity.string(), csr_test::elasticity2d(128, 64, 0.3));
    for (const std::string& args :
         {std::string("solve --problem laplace27 --n 24 --method amg"),
          "solve --matrix " + lshape + ".mtx.gz --rhs " + lshape + "_b.mtx.gz",
          "solve --matrix " + elasticity.string(),
          std::string("solve --problem oil --n 32 --method amg")}) {
        SCOPED_TRACE(args);
        const std::string sa = args + " --aggregation smoothed --quiet";
        check_amg(sa);
        const MpiRun par = mpmg(2, sa);
        ASSERT_EQ(par.code, 0) << par.err;
        const json& levels = par.result["hierarchy"]["levels"];
        const int distributed = par.result["partition"]["distributed_levels"];
        ASSERT_GE(distributed, 1);
        for (int l = 0; l < distributed; ++l) {
            const std::string note = levels[static_cast<std::size_t>(l)]["note"];
            EXPECT_NE(note.find("smoothed P: omega"), std::string::npos) << note;
        }
    }
}

// A system of PDEs (plane elasticity, 2 unknowns per node, read in parts): rank 0 reads the
// block size from the gathered matrix, RCM renumbers whole nodes and the row blocks hold whole
// nodes, so every rank aggregates nodes as serially (128 x 64 elements: 50, 50 and 51 CG
// iterations on 1, 2 and 3 ranks, 51 with --reorder rcm; 106 with --block-size 1). A block
// size that does not divide the rows is an error on every rank.
TEST(Mpi, AmgPathAggregatesNodesLikeSerial) {
    const fs::path path = temp_dir() / "elasticity128.mtx";
    write_matrix_market(path.string(), csr_test::elasticity2d(128, 64, 0.3));
    const std::string args = "solve --matrix " + path.string() + " --quiet";
    check_amg(args);
    const MpiRun serial = mpmg(0, args);
    const MpiRun par = mpmg(3, args + " --reorder rcm");  // RCM on the node graph
    ASSERT_EQ(serial.code, 0) << serial.err;
    ASSERT_EQ(par.code, 0) << par.err;
    EXPECT_EQ(serial.result["hierarchy"]["block_size"], 2);
    EXPECT_EQ(par.result["hierarchy"]["block_size"], 2);
    EXPECT_EQ(par.result["hierarchy"]["block_size_reason"],
              serial.result["hierarchy"]["block_size_reason"]);
    EXPECT_EQ(par.result["hierarchy"]["reordered"], "rcm");
    for (const auto& b : par.result["partition"]["boxes"]) {
        EXPECT_EQ(b["lo"][0].get<long long>() % 2, 0) << b;
    }
    const MpiRun scalar = mpmg(3, args + " --block-size 1");
    ASSERT_EQ(scalar.code, 0) << scalar.err;
    EXPECT_EQ(scalar.result["hierarchy"]["block_size"], 1);
    EXPECT_GT(scalar.result["iterations"].get<int>(), 3 * par.result["iterations"].get<int>() / 2);
    const MpiRun bad = mpmg(2, "solve --matrix " + path.string() + " --block-size 7 --quiet");
    EXPECT_NE(bad.code, 0);
    EXPECT_NE(bad.err.find("--block-size 7"), std::string::npos) << bad.err;
}

// Equations in different units: oil n = 24 with its rows scaled by 10^u, u in [-3, 3]. The
// ranks estimate the row weights of the finest level together (unstructured/row_weights.hpp)
// and reach the serial estimate (the same cancellation in the note) and iteration count; with
// --row-weights none GMRES needs far more.
TEST(Mpi, AmgPathWeighsRowsLikeSerial) {
    CsrMatrix a = problem_csr("oil", 24);
    std::uint64_t state = 7;
    for (std::int64_t i = 0; i < a.rows; ++i) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        const double u = static_cast<double>(state >> 11) / 9007199254740992.0;
        const double s = std::pow(10.0, 3.0 * (2.0 * u - 1.0));
        for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) a.val[k] *= s;
    }
    const fs::path path = temp_dir() / "oil24_rows_scaled.mtx";
    write_matrix_market(path.string(), a);
    const std::string args = "solve --matrix " + path.string() + " --quiet";
    check_amg(args);
    const auto weights = [](const MpiRun& r) {
        const std::string note = r.result["hierarchy"]["levels"][0]["note"];
        const auto at = note.find("rows weighted");
        return at == std::string::npos ? std::string() : note.substr(at, note.find(')', at) - at);
    };
    const MpiRun serial = mpmg(0, args);
    const MpiRun par = mpmg(2, args);
    const MpiRun plain = mpmg(2, args + " --row-weights none");
    ASSERT_EQ(serial.code, 0) << serial.err;
    ASSERT_EQ(par.code, 0) << par.err;
    EXPECT_FALSE(weights(serial).empty()) << serial.result["hierarchy"]["levels"][0]["note"];
    EXPECT_EQ(weights(par), weights(serial));
    EXPECT_GE(par.result["partition"]["distributed_levels"].get<int>(), 1);
    EXPECT_TRUE(weights(plain).empty());
    EXPECT_GT(plain.result["iterations"].get<int>(), 2 * par.result["iterations"].get<int>());
}

// `--reorder auto` under mpirun renumbers by RCM only where that at least halves the entries
// coupling the row blocks; the ranks count them together. laplace27 in its lexicographic order
// keeps it (built in, every rank holding the whole matrix, and read in parts from a file);
// the same matrix with its rows shuffled is renumbered, and needs no more iterations.
TEST(Mpi, AutoRenumbersWhereRcmHalvesTheCoupling) {
    const CsrMatrix a = problem_csr("laplace27", 24);  // 13,824 rows: >= 4096 a rank on 3
    std::vector<std::int64_t> perm(static_cast<std::size_t>(a.rows));
    for (std::size_t i = 0; i < perm.size(); ++i) {
        perm[i] = static_cast<std::int64_t>((i * 7919) % perm.size());  // 7919 is prime
    }
    const fs::path plain = temp_dir() / "auto_lap24.mtx";
    const fs::path shuffled = temp_dir() / "auto_lap24_shuffled.mtx";
    write_matrix_market(plain.string(), a);
    write_matrix_market(shuffled.string(), permute(a, perm));
    for (int ranks : {2, 3}) {
        SCOPED_TRACE(ranks);
        const MpiRun built = mpmg(ranks, "solve --problem laplace27 --n 24 --method amg --quiet");
        const MpiRun file = mpmg(ranks, "solve --matrix " + plain.string() + " --quiet");
        const MpiRun mixed = mpmg(ranks, "solve --matrix " + shuffled.string() + " --quiet");
        for (const MpiRun* r : {&built, &file, &mixed}) ASSERT_EQ(r->code, 0) << r->err;
        EXPECT_TRUE(built.result["hierarchy"]["reordered"].is_null());
        EXPECT_TRUE(file.result["hierarchy"]["reordered"].is_null());
        EXPECT_EQ(mixed.result["hierarchy"]["reordered"], "rcm");
        EXPECT_LE(mixed.result["iterations"].get<int>(), file.result["iterations"].get<int>() + 1);
    }
}

// A coordinate file on the AMG path is read in parts (no rank holds the whole file; rank 0
// gathers the matrix for RCM and the block size), plain or gzipped (cut by the decompressed text's
// bytes): the same rows, renumbering and blocks, so the same run to the bit (residual history and
// error).
TEST(Mpi, AmgPathReadsPlainAndGzipFilesInPartsAlike) {
    const std::string lshape = std::string(MPMG_SHARED_DATA) + "/mfem/mfem_lshape_o3_r5";
    const fs::path plain = temp_dir() / "mfem_lshape_o3_r5.mtx";
    ASSERT_EQ(std::system(("gzip -dc " + lshape + ".mtx.gz > " + plain.string()).c_str()), 0);
    const std::string rhs = " --rhs " + lshape + "_b.mtx.gz --quiet";
    for (int ranks : {2, 3}) {
        SCOPED_TRACE(ranks);
        const MpiRun parts = mpmg(ranks, "solve --matrix " + plain.string() + rhs);
        const MpiRun zipped = mpmg(ranks, "solve --matrix " + lshape + ".mtx.gz" + rhs);
        ASSERT_EQ(parts.code, 0) << parts.err;
        ASSERT_EQ(zipped.code, 0) << zipped.err;
        const json& p = parts.result;
        const json& w = zipped.result;
        EXPECT_EQ(p["partition"]["input"].get<std::string>().rfind("file read in parts", 0), 0u);
        EXPECT_EQ(w["partition"]["input"], p["partition"]["input"]);
        EXPECT_EQ(p["hierarchy"]["reordered"], "rcm");
        EXPECT_EQ(p["hierarchy"]["reordered"], w["hierarchy"]["reordered"]);
        EXPECT_EQ(p["partition"]["boxes"], w["partition"]["boxes"]);
        EXPECT_EQ(p["config"]["solver"], w["config"]["solver"]);
        EXPECT_EQ(p["rows"], w["rows"]);
        EXPECT_EQ(p["nnz"], w["nnz"]);
        EXPECT_EQ(p["iterations"], w["iterations"]);
        EXPECT_EQ(p["residual_history"], w["residual_history"]);
        EXPECT_EQ(p["error_vs_exact"], w["error_vs_exact"]);
    }
}

// A file whose diagonal is negative on every row (Δ assembled for -Δ) is solved as -A x = -b,
// and one whose values lie beyond 2^64 as 2^-e A x = 2^-e b: every rank negates and scales its
// rows by what all ranks' rows call for, so the AMG path (read in parts) and the structured one
// give A's residual history to the bit, as serially. One positive diagonal entry, in the last
// rank's rows, keeps every rank from negating.
TEST(Mpi, NegatedAndScaledInputAlikeOnEveryRank) {
    const fs::path pos = problem_file("laplace27", 12);
    CsrMatrix a = problem_csr("laplace27", 12);
    for (double& v : a.val) v = -v;
    const fs::path neg = temp_dir() / "minus_laplace27_12.mtx";
    write_matrix_market(neg.string(), a);
    CsrMatrix big = a;
    for (double& v : big.val) v = std::ldexp(v, 200);  // -2^200 A: 26 2^200 = 1.625 2^204
    const fs::path huge = temp_dir() / "minus_2e200_laplace27_12.mtx";
    write_matrix_market(huge.string(), big);
    for (const std::string grid : {"", " --grid 12,12,12"}) {
        SCOPED_TRACE(grid);
        for (int ranks : {0, 2, 3}) {
            SCOPED_TRACE(ranks);
            const MpiRun p = mpmg(ranks, "solve --matrix " + pos.string() + grid + " --quiet");
            const MpiRun m = mpmg(ranks, "solve --matrix " + neg.string() + grid + " --quiet");
            const MpiRun h = mpmg(ranks, "solve --matrix " + huge.string() + grid + " --quiet");
            ASSERT_EQ(p.code, 0) << p.err;
            ASSERT_EQ(m.code, 0) << m.err << m.out;
            ASSERT_EQ(h.code, 0) << h.err << h.out;
            EXPECT_FALSE(p.result["negated"].get<bool>());
            EXPECT_TRUE(m.result["negated"].get<bool>());
            EXPECT_TRUE(h.result["negated"].get<bool>());
            EXPECT_EQ(p.result["input_scale_exponents"]["a"], 0);
            EXPECT_EQ(h.result["input_scale_exponents"]["a"], -204);
            EXPECT_EQ(h.result["input_scale_exponents"]["b"], -204);  // max |A 1|: 19 (a corner)
            for (const MpiRun* r : {&m, &h}) {
                EXPECT_EQ(r->result["residual_history"], p.result["residual_history"]);
                EXPECT_EQ(r->result["error_vs_exact"], p.result["error_vs_exact"]);
            }
        }
    }
    const std::int64_t row = a.rows - 2;
    for (std::int64_t q = a.row_ptr[row]; q < a.row_ptr[row + 1]; ++q) {
        if (a.col[q] == row) a.val[q] = -a.val[q];
    }
    write_matrix_market(neg.string(), a);
    const std::string args = "solve --matrix " + neg.string() + " --max-iter 5 --quiet";
    const MpiRun serial = mpmg(0, args);
    for (int ranks : {2, 3}) {
        const MpiRun par = mpmg(ranks, args);
        EXPECT_EQ(par.code, serial.code) << par.err;
        ASSERT_TRUE(par.result.is_object()) << par.err;
        EXPECT_FALSE(par.result["negated"].get<bool>());
    }
}

// A setup error on one rank (a zero diagonal entry in the last rank's rows, SymGS) is every rank's
// error: the same exit code and message as serially (the row in the file's numbering, though
// the ranks renumber by RCM), and no rank left waiting.
TEST(Mpi, AmgSetupErrorOnOneRankStopsAll) {
    CsrMatrix a = problem_csr("laplace27", 24);
    const std::int64_t row = a.rows - 3;
    for (std::int64_t q = a.row_ptr[row]; q < a.row_ptr[row + 1]; ++q) {
        if (a.col[q] == row) a.val[q] = 0.0;
    }
    const fs::path path = temp_dir() / "laplace27_zero_diagonal.mtx";
    write_matrix_market(path.string(), a);
    // SymGS as given, on all of A: `auto` would take l1-Jacobi for the zero entry (serially the
    // saddle-point blocks) and solve.
    const std::string args =
        "solve --matrix " + path.string() + " --smoother symgs --saddle-point none --quiet";
    const MpiRun serial = mpmg(0, args);
    ASSERT_NE(serial.code, 0);
    const std::string message = serial.err.substr(0, serial.err.find('\n'));
    ASSERT_NE(message.find("row " + std::to_string(row)), std::string::npos) << message;
    for (int ranks : {2, 3}) {
        const MpiRun par = mpmg(ranks, args);
        EXPECT_EQ(par.code, serial.code) << par.err;
        EXPECT_NE(par.err.find(message), std::string::npos) << message << "\n---\n" << par.err;
    }
}

// The cycle `auto` resolves from the whole A on every rank: K for laplace27 n = 40 on the AMG
// path (64,000 rows, constant diagonal), built in or read in parts from a file, and V for rhd
// (material jumps spread its diagonal to 6.4e4, past 1e4), as serially.
TEST(Mpi, AutoCycleIsTheSerialOneOnEveryRank) {
    const std::string file = problem_file("laplace27", 40).string();
    for (const auto& [args, cycle] :
         {std::pair{std::string("solve --problem laplace27 --n 40 --method amg --quiet"), "K"},
          std::pair{"solve --matrix " + file + " --quiet", "K"},
          std::pair{std::string("solve --problem rhd --n 40 --method amg --quiet"), "V"}}) {
        SCOPED_TRACE(args);
        const MpiRun serial = mpmg(0, args);
        ASSERT_EQ(serial.code, 0) << serial.err;
        EXPECT_EQ(serial.result["config"]["multigrid"]["cycle"], cycle);
        const int is = serial.result["iterations"];
        for (const int ranks : {2, 3}) {
            SCOPED_TRACE(ranks);
            const MpiRun par = mpmg(ranks, args);
            ASSERT_EQ(par.code, 0) << par.err << par.out;
            EXPECT_EQ(par.result["config"]["multigrid"]["cycle"], cycle);
            EXPECT_TRUE(par.result["converged"].get<bool>());
            const int ip = par.result["iterations"];
            EXPECT_LE(ip, 1.1 * is + 1) << "serial " << is << " vs " << ranks << " ranks " << ip;
        }
    }
}

// A small matrix no cycle converges on within max_iter (cryg2500: 3.7e-9 after 200 iterations)
// is gathered onto rank 0, where the guard's last rebuild solves it by its LU, as serially: every
// rank takes the same step after the same iterations (196 on 1, 2 and 3 ranks in Release).
TEST(Mpi, SmallMatrixGetsTheSerialDirectSolve) {
    const std::string args =
        "solve --matrix " + std::string(MPMG_SHARED_DATA) + "/cryg2500.mtx.gz --quiet";
    const MpiRun serial = mpmg(0, args);
    ASSERT_EQ(serial.code, 0) << serial.err;
    for (const int ranks : {0, 2, 3}) {
        SCOPED_TRACE(ranks);
        const MpiRun par = ranks == 0 ? serial : mpmg(ranks, args);
        ASSERT_EQ(par.code, 0) << par.err << par.out;
        const json& p = par.result;
        EXPECT_TRUE(p["converged"].get<bool>());
        EXPECT_LE(p["final_relative_residual"].get<double>(), 1e-10);
        // The same step after the same 195 iterations; the direct solve then takes one or two
        // (3 ranks in the ASan + MPI build: 197 against 196), within issue 8's +-1.
        const int ip = p["iterations"], is = serial.result["iterations"];
        EXPECT_LE(std::abs(ip - is), 1) << "serial " << is << " vs " << ranks << " ranks " << ip;
        ASSERT_FALSE(p["guard_events"].empty());
        const std::string last = p["guard_events"].back();
        EXPECT_NE(last.find("kept for a direct solve; rebuilt the hierarchy with one level, A "
                            "itself factorised by LU"),
                  std::string::npos)
            << last;
        ASSERT_EQ(p["hierarchy"]["levels"].size(), 1u);
        EXPECT_EQ(p["hierarchy"]["levels"][0]["solve"], "direct (LU, fp64)");
    }
}

}  // namespace

#endif  // MPMG_HAVE_MPI
