// Integration tests of the mpmg CLI: exit codes, error lines and the --json contract.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "mpmg_paths.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;

struct CliRun {
    int code = -1;
    std::string out, err;
};

fs::path temp_dir() {
    static const mpmg::test::TempDir dir("mpmg_cli_test_");
    return dir.path();
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

CliRun mpmg(const std::string& args) {
    const fs::path out = temp_dir() / "stdout.txt", err = temp_dir() / "stderr.txt";
    const std::string cmd =
        std::string(MPMG_CLI_PATH) + " " + args + " >" + out.string() + " 2>" + err.string();
    const int status = std::system(cmd.c_str());
    CliRun r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

TEST(Cli, SolveWritesTheJsonContract) {
    const fs::path json = temp_dir() / "result.json";
    const CliRun r =
        mpmg("solve --problem laplace27 --n 16 --precision K64P32D16 --json " + json.string());
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("hierarchy"), std::string::npos);
    EXPECT_NE(r.out.find("converged"), std::string::npos);
    const auto j = nlohmann::json::parse(slurp(json));
    for (const char* key :
         {"problem", "rows", "nnz", "config", "converged", "iterations", "final_relative_residual",
          "residual_history", "time_s", "hierarchy", "error_vs_exact"}) {
        EXPECT_TRUE(j.contains(key)) << key;
    }
    EXPECT_EQ(j["rows"], 16 * 16 * 16);
    // The process's peak resident memory: at least A in FP64 (27 values a row), and printed.
    EXPECT_GT(j["peak_memory_mb"].get<double>(), 16 * 16 * 16 * 27 * 8 / 1e6);
    EXPECT_LT(j["peak_memory_mb"].get<double>(), 4000.0);
    EXPECT_NE(r.out.find("peak memory: "), std::string::npos) << r.out;
    EXPECT_TRUE(j["converged"].get<bool>());
    EXPECT_FALSE(j["negated"].get<bool>());
    EXPECT_EQ(j["residual_history"].size(), j["iterations"].get<std::size_t>() + 1);
    for (const char* key : {"setup", "preconditioner", "other", "total"}) {
        EXPECT_TRUE(j["time_s"].contains(key)) << key;
    }
    const auto& level0 = j["hierarchy"]["levels"][0];
    for (const char* key : {"rows", "nnz", "storage_precision", "compute_precision", "scaled",
                            "scale_G", "overflow_count", "underflow_count"}) {
        EXPECT_TRUE(level0.contains(key)) << key;
    }
    EXPECT_EQ(level0["storage_precision"], "fp16");
    EXPECT_EQ(j["config"]["precision"], "K64P32D16");
    EXPECT_TRUE(j["hierarchy"].contains("grid_complexity"));
    EXPECT_TRUE(j["hierarchy"].contains("operator_complexity"));
}

// The Krylov products read an exact narrower copy of A when one holds every value (Laplace's
// 26 / -1 in FP16, times 1e8 in FP32), else A in K; the report says so and from which product
// on: from the first when level 0 shares the FP16 copy, else only once the solve has run long
// enough to pay for the copy (api/guarded_solve.hpp products_before_half_copy: FP16 after 6
// products from FP64 values, 10 once they read a symmetric A mirrored, more when K = FP32; the
// FP32 copy after 16).
TEST(Cli, KrylovOperatorStorageIsReported) {
    const fs::path json = temp_dir() / "storage.json";
    const auto storage = [&](const std::string& args) {
        const CliRun r = mpmg("solve " + args + " --quiet --json " + json.string());
        EXPECT_EQ(r.code, 0) << args << ": " << r.err;
        const nlohmann::json j = nlohmann::json::parse(slurp(json));
        return j["krylov_operator_storage"].get<std::string>() + " from " +
               std::to_string(j["krylov_operator_storage_from_product"].get<int>());
    };
    EXPECT_EQ(storage("--problem laplace27 --n 12 --precision K64P32D16"), "fp16 from 1");
    // (K = FP32 iterations: an rtol that FP32 can reach; 1e-10 is refused as not converged.)
    EXPECT_EQ(storage("--problem laplace27 --n 12 --precision K32P32D16 --rtol 1e-5"),
              "fp16 from 1");
    // Full64: level 0 keeps FP64 and the products read the symmetric A mirrored, so the copy
    // waits for the 11th product: none in 8 iterations (9 products), from the 11th in 11.
    EXPECT_EQ(storage("--problem laplace27 --n 12 --precision K64P64D64"), "fp64 from 1");
    EXPECT_EQ(storage("--problem laplace27 --n 12 --precision K64P64D64 --rtol 1e-14"),
              "fp16 from 11");
    // laplace27e8 is 1e8 times an FP16 matrix: level 0 shares that copy, the products scale by
    // 1e8; under Full64 the copy comes at the 11th product.
    EXPECT_EQ(storage("--problem laplace27e8 --n 12 --precision K64P32D16"), "fp16 from 1");
    EXPECT_EQ(storage("--problem laplace27e8 --n 12 --precision K64P64D64 --rtol 1e-14"),
              "fp16 from 11");
    EXPECT_EQ(nlohmann::json::parse(slurp(json))["krylov_operator_scale"].get<double>(), 1e8);
    // K = FP32 reads A truncated to FP32 (mirrored): the FP16 multiple would save too little
    // per product for a copy in 7 iterations (Richardson with Jacobi to rtol 1e-5).
    EXPECT_EQ(storage("--problem laplace27e8 --n 12 --precision K32P32D32 --smoother jacobi "
                      "--solver richardson --rtol 1e-5"),
              "fp32 from 1");
    // A 7-point stencil whose diagonal 6 + 2^-20 FP32 holds but no FP16 multiple does:
    // CG converges in fewer than 17 products, so no FP32 copy is worth making ...
    const fs::path f32 = temp_dir() / "fp32_exact.mtx";
    {
        constexpr int n = 16;
        std::ofstream out(f32);
        out << "%%MatrixMarket matrix coordinate real general\n";
        std::ostringstream entries;
        int count = 0;
        const auto at = [](int i, int j, int k) { return 1 + i + n * (j + n * k); };
        for (int k = 0; k < n; ++k) {
            for (int j = 0; j < n; ++j) {
                for (int i = 0; i < n; ++i) {
                    entries << at(i, j, k) << " " << at(i, j, k) << " 6.00000095367431640625\n";
                    ++count;
                    const int d[6][3] = {{1, 0, 0},  {-1, 0, 0}, {0, 1, 0},
                                         {0, -1, 0}, {0, 0, 1},  {0, 0, -1}};
                    for (const auto& o : d) {
                        const int a = i + o[0], b = j + o[1], c = k + o[2];
                        if (a < 0 || a >= n || b < 0 || b >= n || c < 0 || c >= n) continue;
                        entries << at(i, j, k) << " " << at(a, b, c) << " -1\n";
                        ++count;
                    }
                }
            }
        }
        out << n * n * n << " " << n * n * n << " " << count << "\n" << entries.str();
    }
    const std::string file = "--matrix " + f32.string() + " --grid 16,16,16";
    EXPECT_EQ(storage(file + " --precision K64P32D16"), "fp64 from 1");
    // ... unless the solve runs longer (Richardson with Jacobi, 44 iterations).
    EXPECT_EQ(storage(file + " --precision K64P32D16 --smoother jacobi --solver richardson "
                             "--rtol 1e-13"),
              "fp32 from 17");
    EXPECT_EQ(storage("--problem rhd --n 12 --precision K64P32D16"), "fp64 from 1");
    EXPECT_EQ(storage("--problem rhd --n 12 --precision K32P32D16 --rtol 1e-5"), "fp32 from 1");
    const CliRun r = mpmg("solve --problem laplace27 --n 12 --precision K64P64D64 --rtol 1e-14");
    EXPECT_NE(r.out.find("Krylov products: A stored in fp16 (holds every value of A exactly) "
                         "from product 11 on, computed in fp64"),
              std::string::npos)
        << r.out;
}

// An exactly symmetric A (the CG problems) is multiplied from the centre and the offsets after
// it from the second product on (after one check of A); a nonsymmetric one reads every offset.
TEST(Cli, KrylovMirroredProductsAreReported) {
    const fs::path json = temp_dir() / "mirrored.json";
    const auto from = [&](const std::string& args) {
        const CliRun r = mpmg("solve " + args + " --quiet --json " + json.string());
        EXPECT_EQ(r.code, 0) << args << ": " << r.err;
        return nlohmann::json::parse(slurp(json))["krylov_operator_mirrored_from_product"]
            .get<int>();
    };
    EXPECT_EQ(from("--problem rhd --n 12"), 2);
    // The FP16 copy that level 0 shares is checked once when it is made, for both ...
    EXPECT_EQ(from("--problem laplace27 --n 12 --precision K64P32D16"), 2);
    // ... and under Full64 it comes only at the 7th product, after the check.
    EXPECT_EQ(from("--problem laplace27 --n 12 --precision K64P64D64"), 2);
    EXPECT_EQ(from("--problem rhd3t --n 8 --precision K64P64D64"), 2);
    EXPECT_EQ(from("--problem solid3d --n 8 --precision K32P32D16 --rtol 1e-5"), 2);
    EXPECT_EQ(from("--problem oil --n 12"), 0);
    EXPECT_EQ(from("--problem oil4c --n 8"), 0);
    const CliRun r = mpmg("solve --problem rhd --n 12");
    EXPECT_NE(r.out.find("Krylov products: A is exactly symmetric, the products read the centre "
                         "and the offsets after it only (from product 2 on)"),
              std::string::npos)
        << r.out;
}

// K = FP32: the CG recurrence reaches rtol 1e-10 while the FP32 x holds only about 1e-7; the
// solve checks b - A x once and exits 3 with that residual instead of claiming 1e-10 (it did,
// with a true residual of 5e-7).
TEST(Cli, Fp32IterationsDoNotClaimAnRtolBeyondFp32) {
    const fs::path json = temp_dir() / "k32.json";
    const CliRun r = mpmg("solve --problem laplace27 --n 24 --precision K32P32D16 --quiet --json " +
                          json.string());
    EXPECT_EQ(r.code, 3) << r.out;
    EXPECT_NE(r.err.find("iterations in K = FP32 cannot reach rtol = 1.0e-10"), std::string::npos)
        << r.err;
    const auto j = nlohmann::json::parse(slurp(json));
    EXPECT_FALSE(j["converged"].get<bool>());
    EXPECT_EQ(j["status"], "stagnated");
    EXPECT_GT(j["final_relative_residual"].get<double>(), 1e-8);
    EXPECT_LT(j["final_relative_residual"].get<double>(), 1e-5);
    const CliRun ok = mpmg(
        "solve --problem laplace27 --n 24 --precision K32P32D16 --rtol 1e-5 "
        "--quiet");
    EXPECT_EQ(ok.code, 0) << ok.err;
}

TEST(Cli, NotConvergedExitsThree) {
    const CliRun r = mpmg("solve --problem laplace27 --n 16 --max-iter 1");
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_NE(r.err.find("did not converge"), std::string::npos);
}

TEST(Cli, BadInputExitsTwoWithOneClearLine) {
    struct Case {
        std::string args, expect;
    };
    const fs::path cfg = temp_dir() / "bad.json";
    write(cfg, R"({"multigrid": {"smoothr": "symgs"}})");
    const fs::path broken = temp_dir() / "broken.json";
    write(broken, "{ not json");
    for (const Case& c : {
             Case{"solve --problem nope", "nope"},
             Case{"solve", "--problem"},
             Case{"solve --problem laplace27 --precision K64P16D16", "K64P16D16"},
             Case{"solve --problem laplace27 --matrix a.mtx", "contradict"},
             Case{"solve --problem laplace27 --grid 4,4", "--grid"},
             Case{"solve --problem laplace27 --grid 4,4,x", "--grid"},
             Case{"solve --problem laplace27 --n -3", "--n"},
             Case{"solve --problem laplace27 --rtol 2", "--rtol"},
             Case{"solve --problem laplace27 --smoother magic", "symgs"},
             Case{"solve --problem laplace27 --cycle Q", "--cycle"},
             Case{"solve --problem laplace27 --work DP-XP", "XP"},
             Case{"solve --problem laplace27 --matrix-precision HP", "--work"},
             Case{"solve --problem laplace27 --frobnicate", "frobnicate"},
             Case{"solve --problem laplace27 --config " + cfg.string(), "multigrid.smoothr"},
             Case{"solve --problem laplace27 --config " + broken.string(), "JSON"},
             Case{"solve --problem laplace27 --config /nonexistent/x.json", "x.json"},
             Case{"info /nonexistent/a.mtx", "a.mtx"},
             Case{"frob", "frob"},
         }) {
        const CliRun r = mpmg(c.args);
        EXPECT_EQ(r.code, 2) << c.args << "\n" << r.err;
        EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << "\n" << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.args << "\n" << r.err;
    }
}

TEST(Cli, JsonNeverOverwritesAnInput) {
    const fs::path cfg = temp_dir() / "run.json";
    const std::string text = R"({"problem": {"name": "laplace27", "n": 8}})";
    write(cfg, text);
    const CliRun r = mpmg("solve --config " + cfg.string() + " --json " + cfg.string());
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(slurp(cfg), text);
}

TEST(Cli, ConfigThenFlagsOverride) {
    const fs::path cfg = temp_dir() / "cfg.json";
    write(cfg, R"({"problem": {"name": "laplace27", "n": 8}, "precision": "K64P64D64"})");
    const fs::path json = temp_dir() / "cfg_result.json";
    const CliRun r =
        mpmg("solve --config " + cfg.string() + " --precision K64P32D32 --json " + json.string());
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(slurp(json));
    EXPECT_EQ(j["config"]["precision"], "K64P32D32");
    EXPECT_EQ(j["rows"], 512);
}

}  // namespace

namespace {

TEST(Cli, StructuredMatrixFromFile) {
    const std::string data = MPMG_SHARED_DATA;
    const fs::path json = temp_dir() / "gr.json";
    const CliRun r = mpmg("solve --matrix " + data + "/gr_30_30.mtx.gz --grid 30,30,1 " +
                          "--precision K64P32D16 --json " + json.string());
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(slurp(json));
    EXPECT_EQ(j["rows"], 900);
    EXPECT_EQ(j["hierarchy"]["levels"][0]["storage_precision"], "fp16");
    EXPECT_LT(j["error_vs_exact"].get<double>(), 1e-8);
    // Stored symmetric in the file: the products read half of its offsets, also from the FP16
    // copy (its integer values fit) that level 0 shares under K64P32D16, and level 0 too.
    EXPECT_EQ(j["krylov_operator_mirrored_from_product"], 2);
    EXPECT_TRUE(j["hierarchy"]["levels"][0]["reads_upper_half"].get<bool>());
    const CliRun f = mpmg("solve --matrix " + data + "/gr_30_30.mtx.gz --grid 30,30,1 " +
                          "--precision K64P64D64 --json " + json.string());
    ASSERT_EQ(f.code, 0) << f.err;
    EXPECT_EQ(nlohmann::json::parse(slurp(json))["krylov_operator_mirrored_from_product"], 2);
    // sherman5: 16x23x3 reservoir grid with 3 unknowns per cell, a 3d7 block stencil.
    const CliRun s = mpmg("solve --matrix " + data + "/sherman5.mtx.gz --grid 16,23,3,3 " +
                          "--solver gmres --quiet");
    EXPECT_EQ(s.code, 0) << s.err;
    const CliRun bad = mpmg("solve --matrix " + data + "/gr_30_30.mtx.gz --grid 30,31,1");
    EXPECT_EQ(bad.code, 2);
    EXPECT_NE(bad.err.find("gr_30_30.mtx.gz: 900 rows do not fit"), std::string::npos) << bad.err;
}

}  // namespace

namespace {

// saylr3's diagonal is negative on every row (symmetric negative semidefinite): the CLI solves
// -A x = -b, says so, and reports it in the JSON (it exited 3 for every configuration before).
TEST(Cli, NegativeDiagonalIsSolvedNegated) {
    const std::string data = MPMG_SHARED_DATA;
    const fs::path json = temp_dir() / "saylr3.json";
    const CliRun r =
        mpmg("solve --matrix " + data + "/saylr3.mtx.gz --quiet --json " + json.string());
    ASSERT_EQ(r.code, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("solved -A x = -b"), std::string::npos) << r.out;
    const auto j = nlohmann::json::parse(slurp(json));
    EXPECT_TRUE(j["negated"].get<bool>());
    EXPECT_TRUE(j["converged"].get<bool>());
    EXPECT_TRUE(j["guard_events"].empty()) << j["guard_events"];
}

// A system the coarsest level's LU solves whole converges in one GMRES iteration, whatever
// rounding leaves of the next Krylov direction (this one ended "Krylov vector 1 lies in the
// span of the earlier ones", exit 3, after three guard rebuilds). Pattern and real forms.
TEST(Cli, DirectlySolvedNonsymmetricSystemConvergesInOneIteration) {
    const fs::path real = temp_dir() / "upper2.mtx", pattern = temp_dir() / "upper2p.mtx";
    write(real, "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n2 2 1\n1 2 1\n");
    write(pattern, "%%MatrixMarket matrix coordinate pattern general\n2 2 3\n1 1\n2 2\n1 2\n");
    for (const fs::path& f : {real, pattern}) {
        SCOPED_TRACE(f.string());
        const fs::path json = temp_dir() / "upper2.json";
        const CliRun r = mpmg("solve --matrix " + f.string() + " --quiet --json " + json.string());
        ASSERT_EQ(r.code, 0) << r.err << r.out;
        const auto j = nlohmann::json::parse(slurp(json));
        EXPECT_EQ(j["config"]["solver"].get<std::string>(), "gmres");
        EXPECT_EQ(j["iterations"].get<int>(), 1);
        EXPECT_LE(j["final_relative_residual"].get<double>(), 1e-10);
        EXPECT_LE(j["error_vs_exact"].get<double>(), 1e-12);
        EXPECT_TRUE(j["guard_events"].empty()) << j["guard_events"];
    }
}

// A failure of a system whose input scale flushed values to zero names the flush: 1e-300 beside
// 1e300 becomes 0, leaving a zero row in the middle of A's LU.
TEST(Cli, FailureAfterTheInputScaleFlushedValuesSaysSo) {
    const fs::path a = temp_dir() / "flushed.mtx";
    write(a,
          "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1e300\n1 2 1\n2 2 "
          "1e-300\n3 3 1\n");
    const CliRun r = mpmg("solve --matrix " + a.string() + " --quiet");
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_NE(r.err.find("is singular"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("(the input scale turned some nonzero values of A and b into zero"),
              std::string::npos)
        << r.err;
}

// Values beyond 2^64 (here 4e40): the solve scales A and b by powers of two, says so and
// reports the exponents; x is the given system's (error against x = 1).
TEST(Cli, ExtremeValuesAreScaledByPowersOfTwo) {
    const fs::path matrix = temp_dir() / "huge.mtx", json = temp_dir() / "huge.json";
    std::string text = "%%MatrixMarket matrix coordinate real symmetric\n200 200 399\n";
    for (int i = 1; i <= 200; ++i) {
        text += std::to_string(i) + " " + std::to_string(i) + " 4e40\n";
        if (i > 1) text += std::to_string(i) + " " + std::to_string(i - 1) + " -1e40\n";
    }
    write(matrix, text);
    const CliRun r = mpmg("solve --matrix " + matrix.string() + " --precision K64P32D16 --json " +
                          json.string());
    ASSERT_EQ(r.code, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("input scale: the largest |a_ij| or |b_i| lies outside [2^-64, 2^64]"),
              std::string::npos)
        << r.out;
    const auto j = nlohmann::json::parse(slurp(json));
    EXPECT_EQ(j["input_scale_exponents"]["a"], -134);  // 4e40 = 1.84 2^134
    EXPECT_LT(j["error_vs_exact"].get<double>(), 1e-8);
}

// A Matrix Market file on --grid 30,30,1: the 5-point Laplacian (block: 2 unknowns per cell,
// centre block [[4, 1], [1, 4]], -I to each neighbour), one cell's diagonal set by `centre`.
fs::path grid_file(const std::string& name, int r, int zero_x, int zero_y,
                   const std::string& centre) {
    constexpr int n = 30;
    std::string entries;
    int count = 0;
    const auto row = [&](int x, int y, int k) { return 1 + (y * n + x) * r + k; };
    for (int y = 0; y < n; ++y) {
        for (int x = 0; x < n; ++x) {
            for (int k = 0; k < r; ++k) {
                for (int j = 0; j < r; ++j) {
                    const std::string v = x == zero_x && y == zero_y ? centre : k == j ? "4" : "1";
                    entries += fmt::format("{} {} {}\n", row(x, y, k), row(x, y, j), v);
                    ++count;
                }
                const int d[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
                for (const auto& o : d) {
                    const int a = x + o[0], b = y + o[1];
                    if (a < 0 || a >= n || b < 0 || b >= n) continue;
                    entries += fmt::format("{} {} -1\n", row(x, y, k), row(a, b, k));
                    ++count;
                }
            }
        }
    }
    const fs::path path = temp_dir() / name;
    write(path, fmt::format("%%MatrixMarket matrix coordinate real general\n{} {} {}\n{}",
                            n * n * r, n * n * r, count, entries));
    return path;
}

// A zero diagonal entry (a saddle-point row) on the structured path: Gauss-Seidel and Jacobi
// would divide by it, so the setup stops with a numerical failure that names the cell (exit 3).
// Before, the first sweep made NaN, the guard rebuilt three times and the solve ended "not
// converged after 0 iterations" with "(r, z) = nan". A singular centre block likewise; the AMG
// path already said so.
TEST(Cli, ZeroDiagonalOnTheGridIsNamed) {
    const fs::path scalar = grid_file("zero_diagonal.mtx", 1, 7, 3, "0");
    for (const char* smoother : {"symgs", "jacobi"}) {
        const CliRun r = mpmg("solve --matrix " + scalar.string() +
                              " --grid 30,30,1 --quiet --smoother " + smoother);
        EXPECT_EQ(r.code, 3) << r.err << r.out;
        EXPECT_NE(
            r.err.find(fmt::format("numerical failure: level 0: diagonal 0 at cell (7, 3, 0); "
                                   "the {} smoother needs a nonzero diagonal",
                                   smoother)),
            std::string::npos)
            << r.err;
    }
    // ILU(0) eliminates around it. This A is indefinite, so CG breaks down; the guard's robust
    // smoother (Jacobi) cannot be set up on it, and the guard goes on with GMRES on the ILU(0)
    // hierarchy, which converges (before, the failed Jacobi setup replaced the solve).
    const fs::path json = temp_dir() / "zero_diagonal.json";
    const CliRun ilu = mpmg("solve --matrix " + scalar.string() +
                            " --grid 30,30,1 --quiet --smoother ilu0 --json " + json.string());
    EXPECT_EQ(ilu.code, 0) << ilu.err;
    const auto j = nlohmann::json::parse(slurp(json));
    EXPECT_TRUE(j["converged"].get<bool>());
    ASSERT_FALSE(j["guard_events"].empty());
    const std::string last = j["guard_events"].back();
    EXPECT_NE(last.find("rebuilding the hierarchy with smoother jacobi failed (level 0: diagonal "
                        "0 at cell (7, 3, 0)"),
              std::string::npos)
        << last;
    EXPECT_NE(last.find("switched to GMRES"), std::string::npos) << last;
    const fs::path block = grid_file("singular_block.mtx", 2, 12, 20, "2");  // [[2, 2], [2, 2]]
    const CliRun b = mpmg("solve --matrix " + block.string() + " --grid 30,30,1,2 --quiet");
    EXPECT_EQ(b.code, 3) << b.err << b.out;
    EXPECT_NE(b.err.find("level 0: 1 of its 2x2 diagonal blocks are singular or not finite"),
              std::string::npos)
        << b.err;
    // The same files without the defect solve.
    const CliRun good = mpmg("solve --matrix " + grid_file("good.mtx", 2, -1, -1, "").string() +
                             " --grid 30,30,1,2 --quiet");
    EXPECT_EQ(good.code, 0) << good.err;
}

// BentPipe2D100 (convection-diffusion on a 100 x 100 grid, GMRES) with linear interpolation: the
// coarse correction undoes the smoothing, and GMRES stagnated at 0.87 through every rebuild of
// precision and smoother (not converged after 200 iterations). A stagnating restart cycle now
// makes the guard rebuild with operator-dependent interpolation first, which converges.
TEST(Cli, StagnationOnTheGridRebuildsWithOperatorInterpolation) {
    const std::string file = std::string(MPMG_SHARED_DATA) + "/BentPipe2D100.mtx.gz";
    const fs::path json = temp_dir() / "bentpipe.json";
    const CliRun r =
        mpmg("solve --matrix " + file + " --grid 100,100,1 --quiet --json " + json.string());
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(slurp(json));
    EXPECT_TRUE(j["converged"].get<bool>());
    EXPECT_LE(j["iterations"].get<int>(), 60);
    ASSERT_EQ(j["guard_events"].size(), 1u) << j["guard_events"];
    const std::string e = j["guard_events"][0];
    EXPECT_NE(e.find("stagnates"), std::string::npos) << e;
    EXPECT_NE(e.find("rebuilt the hierarchy with precision auto, smoother symgs and operator "
                     "interpolation"),
              std::string::npos)
        << e;
    // Asked for from the start: no rebuild.
    const CliRun o =
        mpmg("solve --matrix " + file +
             " --grid 100,100,1 --interpolation operator --quiet --json " + json.string());
    ASSERT_EQ(o.code, 0) << o.err;
    EXPECT_TRUE(nlohmann::json::parse(slurp(json))["guard_events"].empty());
}

/// An n x n grid's 5-point Laplacian cut in two halves that do not couple: the left half has
/// no boundary condition (constants on it are a null vector), the right half Dirichlet ends. In
/// the grid's order the left half's null pivot comes before the right half's last rows.
std::string neumann_island(int n) {
    std::ostringstream rows;
    int nnz = 0;
    for (int y = 0; y < n; ++y) {
        for (int x = 0; x < n; ++x) {
            const int i = y * n + x;
            const bool left = x < n / 2;
            double d = 0.0;
            for (const auto& [xx, yy] : {std::pair{x - 1, y}, {x + 1, y}, {x, y - 1}, {x, y + 1}}) {
                if (xx >= 0 && xx < n && yy >= 0 && yy < n) {
                    if ((xx < n / 2) != left) continue;
                    rows << i + 1 << ' ' << yy * n + xx + 1 << " -1\n";
                    ++nnz;
                    d += 1.0;
                } else if (!left) {
                    d += 1.0;
                }
            }
            rows << i + 1 << ' ' << i + 1 << ' ' << d << '\n';
            ++nnz;
        }
    }
    return "%%MatrixMarket matrix coordinate real general\n" + std::to_string(n * n) + ' ' +
           std::to_string(n * n) + ' ' + std::to_string(nnz) + '\n' + rows.str();
}

// A singular coarsest LU says whether the singular matrix is A (level 0: it may be wrongly
// assembled) or an operator the hierarchy made (then the options that build another one). It
// said "the operator may be wrongly assembled" for both. The null pivot comes before nonzero
// ones here (an empty column, moved last, or trailing null pivots are a null space instead).
TEST(Cli, SingularCoarsestLevelSaysWhetherItIsA) {
    const fs::path a16 = temp_dir() / "island16.mtx", a24 = temp_dir() / "island24.mtx";
    write(a16, neumann_island(16));  // 256 rows: A is the coarsest level
    write(a24, neumann_island(24));
    const CliRun r = mpmg("solve --matrix " + a16.string() + " --grid 16,16,1 --quiet");
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_NE(r.err.find("coarsest level (256 rows) is singular"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("; A may be wrongly assembled"), std::string::npos) << r.err;
    // On 24 x 24 with operator-dependent weights the Galerkin coarsest level keeps the island.
    const CliRun g =
        mpmg("solve --matrix " + a24.string() + " --grid 24,24,1 --interpolation operator --quiet");
    EXPECT_EQ(g.code, 3) << g.err;
    EXPECT_NE(g.err.find("level 1 is a coarse operator the hierarchy made, not A: try "
                         "--coarse-solver smoother or the other --interpolation"),
              std::string::npos)
        << g.err;
    EXPECT_EQ(g.err.find("wrongly assembled"), std::string::npos) << g.err;
}

/// An n x n grid's 5-point Laplacian and one constraint row per 2 x 2 block of cells (zero
/// diagonal; 1, -1, 0.5, -0.5 on its cells, mirrored): a saddle point [[A, B^T], [B, 0]].
std::string constrained_laplacian(int n) {
    std::ostringstream rows;
    int nnz = 0;
    const auto entry = [&](int i, int j, double v) {
        rows << i + 1 << ' ' << j + 1 << ' ' << v << '\n';
        ++nnz;
    };
    for (int y = 0; y < n; ++y) {
        for (int x = 0; x < n; ++x) {
            const int i = y * n + x;
            entry(i, i, 4.0);
            if (x > 0) entry(i, i - 1, -1.0);
            if (x + 1 < n) entry(i, i + 1, -1.0);
            if (y > 0) entry(i, i - n, -1.0);
            if (y + 1 < n) entry(i, i + n, -1.0);
        }
    }
    int m = 0;
    for (int by = 0; by + 1 < n; by += 2) {
        for (int bx = 0; bx + 1 < n; bx += 2, ++m) {
            const int r = n * n + m, i = by * n + bx;
            for (const auto& [j, v] :
                 {std::pair{i, 1.0}, {i + 1, -1.0}, {i + n, 0.5}, {i + n + 1, -0.5}}) {
                entry(r, j, v);
                entry(j, r, v);
            }
        }
    }
    return "%%MatrixMarket matrix coordinate real general\n" + std::to_string(n * n + m) + ' ' +
           std::to_string(n * n + m) + ' ' + std::to_string(nnz) + '\n' + rows.str();
}

// A saddle point gets the block preconditioner under `auto` (GMRES, SymGS in the blocks),
// converges without the guard, and says why; --saddle-point none takes one AMG on all of A,
// which needs the guard. block on a matrix without zero diagonal entries, block with CG, and
// block on the structured path are errors (exit 2) naming the option.
TEST(Cli, SaddlePointTakesTheBlockPreconditioner) {
    const fs::path a = temp_dir() / "saddle40.mtx", json = temp_dir() / "saddle.json";
    write(a, constrained_laplacian(40));
    const CliRun r = mpmg("solve --matrix " + a.string() + " --quiet --json " + json.string());
    ASSERT_EQ(r.code, 0) << r.err << r.out;
    auto j = nlohmann::json::parse(slurp(json));
    EXPECT_EQ(j["config"]["multigrid"]["saddle_point"], "block");
    EXPECT_EQ(j["config"]["solver"], "gmres");
    EXPECT_EQ(j["config"]["multigrid"]["smoother"], "symgs");
    EXPECT_NE(j["auto_reason"].get<std::string>().find("a saddle point"), std::string::npos)
        << j["auto_reason"];
    EXPECT_LT(j["iterations"].get<int>(), 60);
    EXPECT_TRUE(j["guard_events"].empty()) << j["guard_events"];
    std::string notes;
    for (const auto& l : j["hierarchy"]["levels"]) notes += l["note"].get<std::string>() + "\n";
    EXPECT_NE(notes.find("block A"), std::string::npos) << notes;
    EXPECT_NE(notes.find("block S"), std::string::npos) << notes;
    const CliRun none = mpmg("solve --matrix " + a.string() +
                             " --saddle-point none --quiet --json " + json.string());
    j = nlohmann::json::parse(slurp(json));
    EXPECT_EQ(j["config"]["multigrid"]["saddle_point"], "none");
    EXPECT_FALSE(j["guard_events"].empty()) << none.out;
    const CliRun cg = mpmg("solve --matrix " + a.string() + " --saddle-point block --solver cg");
    EXPECT_EQ(cg.code, 2);
    EXPECT_NE(cg.err.find("--solver cg: the saddle-point block preconditioner is not symmetric"),
              std::string::npos)
        << cg.err;
    const CliRun plain = mpmg("solve --matrix " + std::string(MPMG_SHARED_DATA) +
                              "/nos6.mtx.gz --saddle-point block");
    EXPECT_EQ(plain.code, 2);
    EXPECT_NE(plain.err.find("--saddle-point block: A (675 rows) is not a saddle point"),
              std::string::npos)
        << plain.err;
    // Constraints that pin one unknown each (a 1D Laplacian of 1000 points, every other one
    // pinned): `auto` keeps one AMG; forced into the blocks, whose S = B diag(A)^-1 B^T is a
    // poor Schur complement there, the solve becomes too slow and the guard goes back to one
    // AMG, which converges.
    {
        std::ostringstream pin;
        const int m = 1000, k = m / 2;
        pin << "%%MatrixMarket matrix coordinate real general\n"
            << m + k << ' ' << m + k << ' ' << 3 * m - 2 + 2 * k << '\n';
        for (int i = 0; i < m; ++i) {
            pin << i + 1 << ' ' << i + 1 << " 2\n";
            if (i > 0) pin << i + 1 << ' ' << i << " -1\n";
            if (i + 1 < m) pin << i + 1 << ' ' << i + 2 << " -1\n";
        }
        for (int c = 0; c < k; ++c) {
            pin << m + c + 1 << ' ' << 2 * c + 1 << " 1\n"
                << 2 * c + 1 << ' ' << m + c + 1 << " 1\n";
        }
        const fs::path p1 = temp_dir() / "pin1d.mtx";
        write(p1, pin.str());
        const CliRun automatic =
            mpmg("solve --matrix " + p1.string() + " --quiet --json " + json.string());
        ASSERT_EQ(automatic.code, 0) << automatic.err;
        j = nlohmann::json::parse(slurp(json));
        EXPECT_EQ(j["config"]["multigrid"]["saddle_point"], "none");
        EXPECT_TRUE(j["guard_events"].empty()) << j["guard_events"];
        const CliRun forced = mpmg("solve --matrix " + p1.string() +
                                   " --saddle-point block --quiet --json " + json.string());
        ASSERT_EQ(forced.code, 0) << forced.err;
        j = nlohmann::json::parse(slurp(json));
        ASSERT_FALSE(j["guard_events"].empty());
        EXPECT_NE(j["guard_events"][0].get<std::string>().find(
                      "one AMG on all of A instead of the saddle-point blocks"),
                  std::string::npos)
            << j["guard_events"];
    }
    const CliRun grid = mpmg("solve --problem laplace27 --n 8 --saddle-point block");
    EXPECT_EQ(grid.code, 2);
    EXPECT_NE(grid.err.find("--saddle-point block: the saddle-point block preconditioner applies "
                            "to the AMG path"),
              std::string::npos)
        << grid.err;
}

TEST(Cli, UnstructuredMatrixSolvesWithAmg) {
    const std::string data = MPMG_SHARED_DATA;
    const fs::path json = temp_dir() / "amg.json";
    const CliRun r =
        mpmg("solve --matrix " + data + "/nos6.mtx.gz --precision auto --json " + json.string());
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(slurp(json));
    EXPECT_EQ(j["config"]["method"], "amg");
    EXPECT_EQ(j["config"]["solver"], "cg");  // nos6 is symmetric
    EXPECT_EQ(j["hierarchy"]["levels"][0]["stencil"], "csr");
    EXPECT_GE(j["hierarchy"]["levels"].size(), 2u);
    const CliRun g = mpmg("solve --matrix " + data + "/pde900.mtx.gz --quiet");
    EXPECT_EQ(g.code, 0) << g.err;
    EXPECT_NE(g.out.find("solver gmres"), std::string::npos);  // nonsymmetric: GMRES chosen
}

TEST(Cli, AmgPathTakesIlu0AndNamesAZeroPivot) {
    const std::string data = MPMG_SHARED_DATA;
    const fs::path json = temp_dir() / "amg_ilu0.json";
    const CliRun r = mpmg("solve --matrix " + data +
                          "/sherman3.mtx.gz --smoother ilu0 --threads 2 --json " + json.string());
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(slurp(json));
    EXPECT_EQ(j["config"]["multigrid"]["smoother"], "ilu0");
    EXPECT_TRUE(j["converged"].get<bool>());
    EXPECT_LE(j["iterations"].get<int>(), 25);  // 17 when written; SymGS takes 32
    const std::string note = j["hierarchy"]["levels"][0]["note"];
    EXPECT_NE(note.find("ILU(0) in 2 row blocks, largest |l_ij| "), std::string::npos) << note;
    // saylr3 row 988 has no diagonal entry: ILU(0)'s pivot there is 0.
    const CliRun bad = mpmg("solve --matrix " + data + "/saylr3.mtx.gz --smoother ilu0");
    EXPECT_EQ(bad.code, 3);
    EXPECT_NE(bad.err.find("AMG level 0: ILU(0) pivot 0 at row 988"), std::string::npos) << bad.err;
}

}  // namespace
