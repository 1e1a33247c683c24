// STREAM triad (McCalpin's kernel and byte count) and machine description for the benchmarks.
#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "bench_util.hpp"

namespace mpmg::bench {

namespace {

/// Bytes of the last-level cache from sysfs (what lscpu prints), or 0 where sysfs has no L3.
std::int64_t llc_from_sysfs() {
    std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index3/size");
    std::string text;
    if (!(in >> text) || text.empty()) return 0;
    std::int64_t mult = 1;
    if (text.back() == 'K') mult = 1024;
    if (text.back() == 'M') mult = 1024 * 1024;
    try {
        return std::stoll(text) * mult;
    } catch (...) {
        return 0;
    }
}

/// The last-level cache measured: the largest prefix (1 MiB .. 256 MiB, doubling) of a buffer
/// that one thread reads at least 1.5x as fast as the whole 512 MiB buffer, which no cache
/// holds (the largest of three sweeps). Used where sysfs has no L3 (virtual machines without cache
/// topology), because glibc's sysconf and CPUID 0x80000006 report the socket's whole L3 there (256
/// MiB on a Zen 3 VM whose core sees 32 MiB, 508 MiB on a Zen 5 VM), which would size the
/// benchmarks far beyond this machine's memory.
std::int64_t llc_measured() {
    constexpr std::int64_t kMiB = std::int64_t{1} << 20;
    constexpr std::int64_t kWhole = 512 * kMiB;
    const std::int64_t n = kWhole / 8;
    const auto buf = std::make_unique<std::uint64_t[]>(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) buf[i] = static_cast<std::uint64_t>(i);
    volatile std::uint64_t sink = 0;
    // Fastest of repeated reads of the first `bytes`; the first read loads the cache.
    const auto read_gbs = [&](std::int64_t bytes) {
        const std::int64_t m = bytes / 8;
        const int reps = static_cast<int>(std::clamp<std::int64_t>(1024 * kMiB / bytes, 3, 64));
        double best = 1e30;
        for (int r = 0; r <= reps; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            std::uint64_t s = 0;
            for (std::int64_t i = 0; i < m; ++i) s += buf[i];
            sink = sink + s;
            const double t =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (r > 0) best = std::min(best, t);
        }
        return static_cast<double>(bytes) / best * 1e-9;
    };
    // One sweep read 2 MiB on the Zen 5 VM where others read 16 or 32 (a busy moment slows
    // the small sizes), and the median of three still read 8 once in three runs: the largest
    // of three sweeps. Erring large is the safe side here: the benchmarks size their problems
    // beyond this figure.
    std::int64_t sweeps[3];
    for (std::int64_t& llc : sweeps) {
        const double memory = read_gbs(kWhole);
        llc = 0;
        for (std::int64_t bytes = kMiB; bytes <= 256 * kMiB; bytes *= 2)
            if (read_gbs(bytes) >= 1.5 * memory) llc = bytes;
    }
    const std::int64_t llc = *std::max_element(std::begin(sweeps), std::end(sweeps));
    return llc > 0 ? llc : 32 * kMiB;
}

std::int64_t& given_llc() {
    static std::int64_t bytes = 0;
    return bytes;
}

}  // namespace

void set_llc(std::int64_t bytes) { given_llc() = bytes; }

LlcSize llc_size() {
    static const LlcSize size = [] {
        if (given_llc() > 0) return LlcSize{given_llc(), "given"};
        const std::int64_t sysfs = llc_from_sysfs();
        return sysfs > 0 ? LlcSize{sysfs, "sysfs"} : LlcSize{llc_measured(), "measured"};
    }();
    return size;
}

std::int64_t llc_bytes() { return llc_size().bytes; }

std::string load_average() {
    std::ifstream in("/proc/loadavg");
    std::string a, b, c;
    return in >> a >> b >> c ? fmt::format("{} {} {}", a, b, c) : "unknown";
}

std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos)
                return line.substr(line.find_first_not_of(' ', colon + 1));
        }
    }
    return "unknown";
}

double stream_triad_gbs(int threads, std::int64_t n, int reps) {
    const auto a = std::make_unique<double[]>(static_cast<std::size_t>(n));
    const auto b = std::make_unique<double[]>(static_cast<std::size_t>(n));
    const auto c = std::make_unique<double[]>(static_cast<std::size_t>(n));
    double* pa = a.get();
    double* pb = b.get();
    double* pc = c.get();
    // First touch by the same static schedule as the triad.
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::int64_t i = 0; i < n; ++i) {
        pa[i] = 0.0;
        pb[i] = 1.0;
        pc[i] = 2.0;
    }
    const double s = 3.0;
    const double sec = time_median(reps, [&] {
#pragma omp parallel for schedule(static) num_threads(threads)
        for (std::int64_t i = 0; i < n; ++i) pa[i] = pb[i] + s * pc[i];
    });
    return 24.0 * static_cast<double>(n) / sec * 1e-9;
}

std::vector<int> allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) cpus.push_back(c);
    return cpus;
}

PinToCpu::PinToCpu(int cpu) {
    if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof(old_), &old_) != 0) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pinned_ = sched_setaffinity(0, sizeof(one), &one) == 0;
}

PinToCpu::~PinToCpu() {
    if (pinned_) (void)sched_setaffinity(0, sizeof(old_), &old_);
}

namespace {

/// STREAM triad's kernel on three 16 KiB arrays, which stay in L1/L2, repeated: GB/s by
/// triad's byte count. Bound by the core's load, store and vector throughput, not by memory:
/// how much of its core the thread gets. (A chain of dependent operations barely shows it: on
/// the Zen 5 VM one ran at 1.56 against 1.50 G/s on the two vCPUs while this kernel ran at 213
/// against 340 GB/s, and Python and the solves 1.6x slower on one of them, as when a busy SMT
/// sibling shares the core's ports.)
double cache_triad_gbs(int reps) {
    constexpr std::int64_t kN = 2048, kPasses = 20000;
    std::vector<double> a(kN, 0.0), b(kN, 1.0), c(kN, 2.0);
    volatile double scalar = 3.0;
    const double s = scalar;
    const double sec = time_median(reps, [&] {
        for (std::int64_t r = 0; r < kPasses; ++r) {
            for (std::int64_t i = 0; i < kN; ++i) a[i] = b[i] + s * c[i];
            b[r % kN] += a[(r * 7) % kN] * 1e-300;  // keeps the passes from being merged
        }
    });
    return 24.0 * static_cast<double>(kN * kPasses) / sec * 1e-9;
}

}  // namespace

std::vector<CoreSpeed> core_speeds(std::int64_t n, int reps, std::size_t max_cpus) {
    std::vector<CoreSpeed> out;
    for (int cpu : allowed_cpus()) {
        if (out.size() >= max_cpus) break;
        const PinToCpu pin(cpu);
        if (!pin.pinned()) continue;
        out.push_back({cpu, n > 0 ? stream_triad_gbs(1, n, reps) : 0.0, cache_triad_gbs(reps)});
    }
    return out;
}

int fastest_cpu(const std::vector<CoreSpeed>& speeds) {
    int best = -1;
    double rate = 0.0;
    for (const CoreSpeed& s : speeds) {
        if (s.cache_gbs > rate) {
            rate = s.cache_gbs;
            best = s.cpu;
        }
    }
    return best;
}

nlohmann::json core_speeds_json(const std::vector<CoreSpeed>& speeds) {
    nlohmann::json rows = nlohmann::json::array();
    for (const CoreSpeed& c : speeds) {
        rows.push_back({{"cpu", c.cpu}, {"stream_gbs", c.stream_gbs}, {"cache_gbs", c.cache_gbs}});
    }
    return rows;
}

std::string describe_cores(const nlohmann::json& rows) {
    std::string out;
    for (const nlohmann::json& c : rows) {
        const double stream = c["stream_gbs"].get<double>();
        out += fmt::format("{}cpu {}: STREAM {}, in cache {:.0f} GB/s", out.empty() ? "" : "; ",
                           c["cpu"].get<int>(),
                           stream > 0 ? fmt::format("{:.1f} GB/s", stream) : "not measured",
                           c["cache_gbs"].get<double>());
    }
    return out;
}

}  // namespace mpmg::bench
