// Parallel order of a lexicographic Gauss-Seidel sweep over the lines (j,k) of a box, giving
// exactly the sequential result for any thread count (ICPP'24 §5.2 discusses the alternatives).
//
// Dependencies. Every stencil offset is in {-1,0,1}^3. In a forward sweep, line (j,k) must read
// the new values of (j-1,k) and (j-1..j+1, k-1), and the old values of (j+1,k) and
// (j-1..j+1, k+1). The backward sweep is the mirror image (planes and lines in decreasing order).
//
// Order: a pipelined wavefront over planes. Planes are dealt round-robin to the threads (thread t
// takes planes t, t+T, ...), each thread walks the lines of its plane in sweep order, in runs of
// 1-4 lines (gs_run_lines), and after each run publishes "lines done in this plane" (release).
// Before a run ending with line p of plane q, a thread waits (acquire) until plane q-1 has
// finished lines 0..p+1 (so every line of the run has what it needs). Hence
//  - the lines of plane q-1 that (j,k) reads are complete (new values), and (j-1,k) was done by
//    the same thread just before;
//  - a line (j',k+1) of the next plane starts only after (j'+1,k) is published, so every line
//    (j-1..j+1, k+1) that (j,k) reads is still untouched (old values);
// which are exactly the values the sequential sweep reads: the result is bitwise identical to
// it, so multigrid convergence does not depend on the thread count. In the steady state thread
// t+1 runs one run and two lines behind thread t, one plane further. Runs let the kernel share
// its per-line setup between lines (kernels::gs_lines); the serial sweep is a single run.
//
// Why not barriers between fronts t = j + 2k: the lines of one front lie in different planes, so
// each thread's matrix and vector streams break after every line (a line is only nx values,
// a few cache lines per stencil offset) and the hardware prefetchers never get going; here each
// thread streams whole planes, contiguous in memory, and waits only on one counter. The counters
// are padded to a cache line each, and one parallel region covers the whole sweep.
#pragma once

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace mpmg {

/// Lines per call of a parallel sweep: a thread publishes its progress after each run of this
/// many lines of its plane (fewer on planes of few lines, so that the pipeline still overlaps).
inline int gs_run_lines(int ny) { return std::clamp(ny / 16, 1, 4); }

/// Calls run_fn(line_begin, line_end) for runs of consecutive lines j + ny*k of an ny x nz
/// grid of lines, every line once, in lexicographic sweep order (forward: increasing; the lines
/// of a run are meant in that order too: increasing forward, decreasing backward) or an order
/// equivalent to it (see above) when `parallel`. A run lies in one plane when `parallel`; the
/// serial sweep is one run.
template <class F>
void gs_lines_ordered(int ny, int nz, bool forward, bool parallel, F&& run_fn) {
    if (!parallel) {
        run_fn(std::int64_t{0}, std::int64_t{ny} * nz);
        return;
    }
    struct alignas(64) Counter {
        std::atomic<int> lines{0};
    };
    std::vector<Counter> done(static_cast<std::size_t>(nz));
    const int run = gs_run_lines(ny);
#pragma omp parallel
    {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        for (int q = t; q < nz; q += nt) {
            const Counter* prev = q > 0 ? &done[static_cast<std::size_t>(q - 1)] : nullptr;
            Counter& mine = done[static_cast<std::size_t>(q)];
            const std::int64_t plane = std::int64_t{ny} * (forward ? q : nz - 1 - q);
            for (int p = 0; p < ny; p += run) {
                const int pe = std::min(p + run, ny);  // lines p .. pe-1 in sweep order
                if (prev != nullptr) {
                    const int need = std::min(pe + 1, ny);
                    for (int spin = 0; prev->lines.load(std::memory_order_acquire) < need; ++spin) {
                        if (spin > 64) std::this_thread::yield();
                    }
                }
                if (forward) {
                    run_fn(plane + p, plane + pe);
                } else {
                    run_fn(plane + ny - pe, plane + ny - p);
                }
                mine.lines.store(pe, std::memory_order_release);
            }
        }
    }
}

}  // namespace mpmg
