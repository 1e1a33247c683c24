// STREAM triad (McCalpin's kernel and byte count) and machine description for the benchmarks.
#include <omp.h>
#include <unistd.h>

#include <fmt/format.h>

#include <fstream>
#include <memory>
#include <string>

#include "bench_util.hpp"

namespace mpmg::bench {

std::int64_t llc_bytes() {
    // sysfs first: it matches lscpu; glibc's sysconf reports 256 MiB on these Zen3 VMs (32 MiB).
    std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index3/size");
    std::string text;
    if (in >> text && !text.empty()) {
        std::int64_t mult = 1;
        if (text.back() == 'K') mult = 1024;
        if (text.back() == 'M') mult = 1024 * 1024;
        try {
            return std::stoll(text) * mult;
        } catch (...) {
        }
    }
#ifdef _SC_LEVEL3_CACHE_SIZE
    const long s = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (s > 0) return s;
#endif
    return std::int64_t{32} << 20;
}

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

}  // namespace mpmg::bench
