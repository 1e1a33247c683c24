// Smoke test of `mpmg bench vs-hypre --quick`: with hypre, it writes the JSON contract
// (DESIGN.md "Benchmark contract", vs-hypre row fields) and the Markdown table, and every hypre
// solver and mpmg configuration converges (true residual computed by mpmg); without hypre, it
// exits 2 with one clear line. Never asserts on timings.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "mpmg_paths.hpp"

namespace {

namespace fs = std::filesystem;

TEST(BenchSmoke, VsHypreQuick) {
    const fs::path dir =
        fs::temp_directory_path() / ("mpmg_bench_vs_hypre_smoke_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    const std::string log = dir.string() + ".log";
    const std::string cmd = std::string(MPMG_CLI_PATH) + " bench vs-hypre --quick --out " +
                            dir.string() + " > " + log + " 2>&1";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status));
#ifndef MPMG_HAVE_HYPRE
    EXPECT_EQ(WEXITSTATUS(status), 2);
    std::stringstream text;
    text << std::ifstream(log).rdbuf();
    EXPECT_NE(text.str().find("needs hypre"), std::string::npos) << text.str();
    EXPECT_FALSE(fs::exists(dir / "vs-hypre.json"));
#else
    ASSERT_EQ(WEXITSTATUS(status), 0);
    ASSERT_TRUE(fs::exists(dir / "vs-hypre.md"));
    std::ifstream in(dir / "vs-hypre.json");
    const auto j = nlohmann::json::parse(in);
    for (const char* key : {"cpu", "threads", "stream_triad_gbs", "hypre_version"}) {
        EXPECT_TRUE(j["machine"].contains(key)) << key;
    }
    ASSERT_TRUE(j["rows"].is_array());
    std::set<std::string> problems, solvers;
    for (const auto& r : j["rows"]) {
        for (const char* key : {"problem", "n", "solver", "iterations", "setup_s", "solve_s",
                                "total_s", "true_relres", "ratio_to_fastest_hypre"}) {
            ASSERT_TRUE(r.contains(key)) << key;
        }
        const std::string what =
            r["problem"].get<std::string>() + " " + r["solver"].get<std::string>();
        problems.insert(r["problem"].get<std::string>());
        solvers.insert(r["solver"].get<std::string>());
        EXPECT_EQ(r["n"].get<int>(), 16);
        ASSERT_EQ(r["status"], "ok") << what;
        EXPECT_TRUE(r["converged"].get<bool>()) << what;
        // rtol 1e-8 on the recursive residual; the true one agrees to a few digits.
        EXPECT_LE(r["true_relres"].get<double>(), 1e-7) << what;
        EXPECT_GT(r["ratio_to_fastest_hypre"].get<double>(), 0.0) << what;
    }
    EXPECT_EQ(problems, (std::set<std::string>{"laplace27", "laplace27e8", "rhd", "oil"}));
    for (const char* s :
         {"hypre PCG+PFMG", "hypre PCG+SMG", "hypre PCG+BoomerAMG", "hypre GMRES+PFMG",
          "hypre GMRES+BoomerAMG-default", "mpmg Full64", "mpmg K64P32D16", "mpmg auto"}) {
        EXPECT_TRUE(solvers.contains(s)) << s;
    }
    EXPECT_EQ(j["targets"].size(), 4u);
    // The fastest hypre solver of every (problem, n) has ratio 1.
    std::set<std::string> with_one;
    for (const auto& r : j["rows"]) {
        if (r["package"] == "hypre" && r["ratio_to_fastest_hypre"].get<double>() == 1.0) {
            with_one.insert(r["problem"].get<std::string>());
        }
    }
    EXPECT_EQ(with_one.size(), 4u);
#endif
    fs::remove_all(dir);
    fs::remove(log);
}

}  // namespace
