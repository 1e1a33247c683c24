// Smoke test of `mpmg bench amg --quick`: 3 small matrices, 3 configurations, Jacobi; checks the
// JSON contract (DESIGN.md "Benchmark contract", amg row fields). Never asserts on timings.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "mpmg_paths.hpp"

namespace {

namespace fs = std::filesystem;

TEST(BenchSmoke, AmgQuickWritesTheJsonContract) {
    if (!fs::is_directory(MPMG_SHARED_DATA)) GTEST_SKIP() << "no " << MPMG_SHARED_DATA;
    const fs::path dir =
        fs::temp_directory_path() / ("mpmg_bench_amg_smoke_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    const std::string cmd = std::string("MPMG_DATA='") + MPMG_SHARED_DATA + "' " + MPMG_CLI_PATH +
                            " bench amg --quick --out " + dir.string() + " > " +
                            (dir.string() + ".log") + " 2>&1";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
    ASSERT_TRUE(fs::exists(dir / "amg.md"));
    std::ifstream in(dir / "amg.json");
    const auto j = nlohmann::json::parse(in);
    for (const char* key : {"cpu", "threads", "stream_triad_gbs"}) {
        EXPECT_TRUE(j["machine"].contains(key)) << key;
    }
    ASSERT_TRUE(j["rows"].is_array());
    ASSERT_EQ(j["rows"].size(), 9u);  // 3 matrices x 3 configurations x 1 smoother
    bool dp = false, half = false;
    for (const auto& r : j["rows"]) {
        for (const char* key :
             {"matrix", "smoother", "work", "matrix_precision", "iterations", "converged", "nan",
              "setup_s", "solve_s", "speedup", "status", "guard_events", "levels", "markers"}) {
            ASSERT_TRUE(r.contains(key)) << key;
        }
        EXPECT_FALSE(r["nan"].get<bool>()) << r["matrix"] << " " << r["config"];
        EXPECT_GT(r["iterations"].get<int>(), 0);
        EXPECT_FALSE(r["levels"].empty());
        if (r["config"] == "(DP)") {
            dp = true;
            EXPECT_TRUE(r["converged"].get<bool>()) << r["matrix"];
            EXPECT_DOUBLE_EQ(r["speedup"].get<double>(), 1.0);
        }
        half |= r["matrix_precision"] == "HP";
    }
    EXPECT_TRUE(dp && half);
    ASSERT_TRUE(j["heatmap"].contains("cells"));
    const int levels = j["heatmap"]["levels"].get<int>();
    EXPECT_EQ(j["heatmap"]["cells"].size(), static_cast<std::size_t>((levels + 1) * (levels + 1)));
    fs::remove_all(dir);
    fs::remove(dir.string() + ".log");
}

}  // namespace
