// Small helpers shared by the benchmarks in bench/: timing medians, the machine's description,
// the last-level cache size (benchmark problems are sized from it at run time) and STREAM.
#pragma once

#include <sched.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mpmg::bench {

/// Median of `v` (v non-empty).
inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Runs f once untimed (warm-up: page faults, caches), then `reps` timed runs; median seconds.
template <class F>
double time_median(int reps, F&& f) {
    f();
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        f();
        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return median(t);
}

/// The last-level (L3) cache one core sees, and where that figure came from.
struct LlcSize {
    std::int64_t bytes = 0;
    std::string source;  ///< "given" (--llc), "sysfs", or "measured" (a read-bandwidth sweep)
};

/// The last-level cache: the size given to set_llc (`mpmg bench --llc`), else sysfs's L3, else
/// measured once per process (about a second).
LlcSize llc_size();

/// Fixes the figure llc_size() returns (source "given"); call before the first llc_size().
void set_llc(std::int64_t bytes);

/// `llc_size().bytes`.
std::int64_t llc_bytes();

/// "Beyond the cache" for `bench kernels` and `bench e2e`: the FP16 finest matrix at least this
/// many times the LLC (at 1x, the FP64 level 1 of a 3D problem, 1/8 of level 0 and 4x the
/// bytes, still fits, so half of an FP64 hierarchy would run from cache).
inline constexpr std::int64_t kCacheFactor = 4;

/// "model name" of /proc/cpuinfo (or "unknown").
std::string cpu_model();

/// The 1, 5 and 15 minute load averages of /proc/loadavg (or "unknown"), to say how busy the
/// machine was around a measurement.
std::string load_average();

/// STREAM triad a = b + s c over `n` doubles with `threads` OpenMP threads: median GB/s of
/// `reps` runs, counting 24 bytes per element (two reads, one write; no write-allocate).
double stream_triad_gbs(int threads, std::int64_t n, int reps);

/// The CPUs this process may run on (its affinity mask), ascending.
std::vector<int> allowed_cpus();

/// Pins the calling thread to one CPU until destroyed, then restores the mask it had. Processes
/// started from this thread meanwhile (std::system) inherit the pin; OpenMP regions of one
/// thread run on it. Does nothing (pinned() false) where the kernel refuses.
class PinToCpu {
public:
    explicit PinToCpu(int cpu);
    ~PinToCpu();
    PinToCpu(const PinToCpu&) = delete;
    PinToCpu& operator=(const PinToCpu&) = delete;
    bool pinned() const { return pinned_; }

private:
    cpu_set_t old_{};  ///< the mask before
    bool pinned_ = false;
};

/// One core's speed, measured with the calling thread pinned to it. Cores of a virtual machine
/// need not be alike: on the 2-core Zen 5 VM one vCPU at a time ran everything about 1.6x slower
/// than the other (most likely a busy SMT sibling on the host), so a 1-thread time depends on
/// where it ran.
struct CoreSpeed {
    int cpu = 0;
    double stream_gbs = 0.0;  ///< STREAM triad from memory, one thread
    double cache_gbs = 0.0;   ///< the triad on arrays in L1/L2: the core's own throughput
};

/// The speed of each of the first `max_cpus` allowed CPUs: STREAM triad over n doubles (none,
/// 0, when n is 0: a quick probe) and the triad in cache (medians of reps), each pinned to that
/// CPU. The triad in cache takes a few milliseconds a core; STREAM about a second.
std::vector<CoreSpeed> core_speeds(std::int64_t n, int reps,
                                   std::size_t max_cpus = static_cast<std::size_t>(-1));

/// The CPU of `speeds` with the fastest triad in cache (the least contended), or -1 when empty.
int fastest_cpu(const std::vector<CoreSpeed>& speeds);

/// The speeds as the benchmarks' JSON rows ({cpu, stream_gbs, cache_gbs}).
nlohmann::json core_speeds_json(const std::vector<CoreSpeed>& speeds);

/// "cpu 1: STREAM 24.8 GB/s, in cache 82 GB/s" for each row of core_speeds_json, joined by
/// "; " (STREAM "not measured" where it is 0).
std::string describe_cores(const nlohmann::json& rows);

}  // namespace mpmg::bench
