// Smoke test of `mpmg bench e2e --quick`: writes the JSON contract (DESIGN.md "Benchmark
// contract", e2e row fields) and the Markdown table. Never asserts on timings.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "mpmg_paths.hpp"

namespace {

namespace fs = std::filesystem;

TEST(BenchSmoke, E2eQuickWritesTheJsonContract) {
    const fs::path dir =
        fs::temp_directory_path() / ("mpmg_bench_e2e_smoke_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    const std::string cmd = std::string(MPMG_CLI_PATH) + " bench e2e --quick --threads 1 --out " +
                            dir.string() + " > " + (dir.string() + ".log") + " 2>&1";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
    ASSERT_TRUE(fs::exists(dir / "e2e.md"));
    std::ifstream in(dir / "e2e.json");
    const auto j = nlohmann::json::parse(in);
    for (const char* key : {"cpu", "threads", "stream_triad_gbs", "core_speeds"}) {
        EXPECT_TRUE(j["machine"].contains(key)) << key;
    }
    // One thread runs pinned, each problem on one core (the speeds of all are recorded); more
    // threads run unpinned.
    const bool one = j["machine"]["threads"].get<int>() == 1;
    EXPECT_EQ(j["machine"]["core_speeds"].empty(), !one);
    for (const auto& p : j["problems"]) {
        ASSERT_TRUE(p.contains("cpu"));
        EXPECT_EQ(p["cpu"].is_null(), !one) << p["problem"];
    }
    ASSERT_TRUE(j["rows"].is_array());
    std::set<std::string> problems, labels;
    for (const auto& r : j["rows"]) {
        for (const char* key :
             {"problem", "n", "config", "scaling", "iterations", "converged", "setup_s",
              "preconditioner_s", "other_s", "total_s", "preconditioner_speedup", "e2e_speedup",
              "e2e_speedup_setup_overhead", "guard_events", "levels", "level0_storage",
              "residual_history"}) {
            ASSERT_TRUE(r.contains(key)) << key;
        }
        problems.insert(r["problem"].get<std::string>());
        labels.insert(r["label"].get<std::string>());
        EXPECT_EQ(r["n"].get<int>(), 16);
        EXPECT_TRUE(r["guard_events"].is_array());
        // The page faults of every run, one count per repetition (--quick: 1) that ran.
        ASSERT_TRUE(r["page_faults"].is_array());
        if (!r.contains("error")) {
            EXPECT_EQ(r["page_faults"].size(), r["repetitions"].get<std::size_t>());
        }
        for (const auto& f : r["page_faults"]) EXPECT_GE(f.get<long>(), 0);
        // The default configurations converge without NaN/Inf on the quick problems.
        const std::string lab = r["label"].get<std::string>();
        if (lab == "Full64" || lab == "K64P32D32" || lab == "K64P32D16" || lab == "auto") {
            EXPECT_TRUE(r["converged"].get<bool>()) << r["problem"] << " " << lab;
            EXPECT_FALSE(r["nan_inf_met"].get<bool>()) << r["problem"] << " " << lab;
            EXPECT_EQ(r["residual_history"].size(), r["iterations"].get<std::size_t>() + 1);
        }
        if (lab == "Full64") {
            EXPECT_DOUBLE_EQ(r["e2e_speedup"].get<double>(), 1.0);
            EXPECT_DOUBLE_EQ(r["e2e_speedup_setup_overhead"].get<double>(), 1.0);
        }
    }
    // The paper's end to end (ICPP'24 §7.3): Full64's setup off both totals.
    std::map<std::string, nlohmann::json> full;
    for (const auto& r : j["rows"]) {
        if (r["label"] == "Full64") full[r["problem"].get<std::string>()] = r;
    }
    for (const auto& r : j["rows"]) {
        if (r["total_s"].is_null()) continue;
        const auto& f = full.at(r["problem"].get<std::string>());
        const double s_full = f["setup_s"].get<double>();
        const double t = r["total_s"].get<double>();
        if (t <= s_full) {  // possible on the quick problems: undefined, so null
            EXPECT_TRUE(r["e2e_speedup_setup_overhead"].is_null())
                << r["problem"] << " " << r["label"];
            continue;
        }
        EXPECT_NEAR(r["e2e_speedup_setup_overhead"].get<double>(),
                    (f["total_s"].get<double>() - s_full) / (t - s_full), 1e-12)
            << r["problem"] << " " << r["label"];
    }
    EXPECT_EQ(problems, (std::set<std::string>{"laplace27", "laplace27e8", "rhd3t"}));
    EXPECT_EQ(labels, (std::set<std::string>{"Full64", "K64P32D32", "K64P32D16", "K64P32D16-none",
                                             "K64P32D16-scale-setup", "auto"}));
    ASSERT_EQ(j["rows"].size(), 18u);
    EXPECT_TRUE(j["summary"].contains("geomean_preconditioner_speedup"));
    // A number, or null when some row's was undefined (quick problems).
    EXPECT_TRUE(j["summary"]["geomean_e2e_speedup_setup_overhead"].is_number() ||
                j["summary"]["geomean_e2e_speedup_setup_overhead"].is_null());
    fs::remove_all(dir);
    fs::remove(dir.string() + ".log");
}

// --problems keeps the named problems of the (quick) suite; --llc sizes by the given cache and
// says so; a name outside the suite is an error naming it, before anything is measured.
TEST(BenchSmoke, E2eProblemsAndLlcOptions) {
    const fs::path dir =
        fs::temp_directory_path() / ("mpmg_bench_e2e_subset_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    const std::string log = dir.string() + ".log";
    const std::string cli = std::string(MPMG_CLI_PATH) + " bench e2e --quick --out " + dir.string();
    int status = std::system((cli + " --problems rhd3t --llc 8 > " + log + " 2>&1").c_str());
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
    std::ifstream in(dir / "e2e.json");
    const auto j = nlohmann::json::parse(in);
    EXPECT_EQ(j["machine"]["llc_source"], "given");
    EXPECT_EQ(j["machine"]["llc_bytes"].get<std::int64_t>(), std::int64_t{8} << 20);
    ASSERT_EQ(j["rows"].size(), 6u);
    for (const auto& r : j["rows"]) EXPECT_EQ(r["problem"], "rhd3t");

    status = std::system((cli + " --problems rhd3t,nosuch > " + log + " 2>&1").c_str());
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 2);
    std::ifstream err(log);
    const std::string text((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("'nosuch' is not in the quick suite"), std::string::npos) << text;
    fs::remove_all(dir);
    fs::remove(log);
}

}  // namespace
