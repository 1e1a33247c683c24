// The benchmarks' core pinning and per-core speed probe (bench/stream.cpp): a pin holds this
// thread and the processes it starts on one CPU and is undone after; the probe measures every
// allowed CPU.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "bench_util.hpp"

namespace {

using mpmg::bench::allowed_cpus;
using mpmg::bench::CoreSpeed;
using mpmg::bench::PinToCpu;

int allowed_count() {
    cpu_set_t set;
    CPU_ZERO(&set);
    EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
    return CPU_COUNT(&set);
}

TEST(BenchPin, PinsThisThreadAndItsChildrenThenRestores) {
    const std::vector<int> cpus = allowed_cpus();
    ASSERT_FALSE(cpus.empty());
    EXPECT_EQ(static_cast<int>(cpus.size()), allowed_count());
    const int cpu = cpus.back();
    const std::filesystem::path out =
        std::filesystem::temp_directory_path() / ("mpmg_pin_" + std::to_string(::getpid()));
    {
        const PinToCpu pin(cpu);
        ASSERT_TRUE(pin.pinned());
        EXPECT_EQ(allowed_count(), 1);
        EXPECT_EQ(sched_getcpu(), cpu);
        // A process started now inherits the pin (how bench scaling pins its serial runs).
        const std::string cmd = "grep Cpus_allowed_list /proc/self/status > '" + out.string() + "'";
        ASSERT_EQ(std::system(cmd.c_str()), 0);
    }
    EXPECT_EQ(allowed_cpus(), cpus);  // undone
    std::ifstream in(out);
    std::string key, list;
    in >> key >> list;
    EXPECT_EQ(list, std::to_string(cpu));
    std::filesystem::remove(out);
}

TEST(BenchPin, AnInvalidCpuPinsNothing) {
    const std::vector<int> cpus = allowed_cpus();
    for (const int bad : {-1, CPU_SETSIZE, CPU_SETSIZE - 1}) {
        if (bad == CPU_SETSIZE - 1 && !cpus.empty() && cpus.back() == bad) continue;
        const PinToCpu pin(bad);
        EXPECT_FALSE(pin.pinned()) << bad;
        EXPECT_EQ(allowed_cpus(), cpus) << bad;
    }
}

TEST(BenchPin, CoreSpeedsMeasureEveryAllowedCpu) {
    const std::vector<int> cpus = allowed_cpus();
    const std::vector<CoreSpeed> speeds = mpmg::bench::core_speeds(0, 1);  // no STREAM
    ASSERT_EQ(speeds.size(), cpus.size());
    double best = 0.0;
    for (std::size_t i = 0; i < speeds.size(); ++i) {
        EXPECT_EQ(speeds[i].cpu, cpus[i]);
        EXPECT_EQ(speeds[i].stream_gbs, 0.0);
        EXPECT_GT(speeds[i].cache_gbs, 0.0);
        best = std::max(best, speeds[i].cache_gbs);
    }
    const int fastest = mpmg::bench::fastest_cpu(speeds);
    bool found = false;
    for (const CoreSpeed& s : speeds) found |= s.cpu == fastest && s.cache_gbs == best;
    EXPECT_TRUE(found);
    EXPECT_EQ(mpmg::bench::fastest_cpu({}), -1);
    // At most max_cpus of them, the first ones.
    const std::vector<CoreSpeed> first = mpmg::bench::core_speeds(0, 1, 1);
    ASSERT_EQ(first.size(), 1U);
    EXPECT_EQ(first.front().cpu, cpus.front());
    EXPECT_EQ(allowed_cpus(), cpus);  // every probe's pin undone
}

}  // namespace
