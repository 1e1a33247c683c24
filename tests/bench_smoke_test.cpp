// Smoke test of `mpmg bench kernels --quick`: runs in seconds, writes the JSON contract
// (DESIGN.md "Benchmark contract") and the Markdown table. Never asserts on timings.
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

TEST(BenchSmoke, KernelsQuickWritesTheJsonContract) {
    const fs::path dir =
        fs::temp_directory_path() / ("mpmg_bench_smoke_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    const std::string cmd = std::string(MPMG_CLI_PATH) + " bench kernels --quick --out " +
                            dir.string() + " > " + (dir.string() + ".log") + " 2>&1";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
    ASSERT_TRUE(fs::exists(dir / "kernels.md"));
    std::ifstream in(dir / "kernels.json");
    const auto j = nlohmann::json::parse(in);
    for (const char* key : {"cpu", "threads", "stream_triad_gbs"}) {
        EXPECT_TRUE(j["machine"].contains(key)) << key;
    }
    ASSERT_TRUE(j["rows"].is_array());
    ASSERT_FALSE(j["rows"].empty());
    bool fp16_soa = false, aos = false, gs = false;
    for (const auto& r : j["rows"]) {
        for (const char* key :
             {"kernel", "pattern", "block", "storage", "compute", "layout", "threads", "seconds",
              "bytes", "gbs", "stream_fraction", "speedup_vs_fp32_aos", "bound_vs_fp32"}) {
            ASSERT_TRUE(r.contains(key)) << key;
        }
        EXPECT_GT(r["bytes"].get<double>(), 0.0);
        fp16_soa |= r["storage"] == "fp16" && r["layout"] == "soa";
        aos |= r["layout"] == "aos";
        gs |= r["kernel"] == "gs_forward";
    }
    EXPECT_TRUE(fp16_soa && aos && gs);
    fs::remove_all(dir);
    fs::remove(dir.string() + ".log");
}

}  // namespace
