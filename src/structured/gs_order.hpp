// Parallel order of a lexicographic Gauss-Seidel sweep over the lines (j,k) of a box, giving
// exactly the sequential result for any thread count (ICPP'24 §5.2 discusses the alternatives).
//
// Dependencies. Every stencil offset is in {-1,0,1}^3. In a forward sweep, line (j,k) must read
// the new values of (j-1,k) and (j-1..j+1, k-1), and the old values of (j+1,k) and
// (j-1..j+1, k+1). The backward sweep is the mirror image (planes and lines in decreasing order).
//
// Order: a pipelined wavefront over planes. Planes are dealt round-robin to the threads (thread t
// takes planes t, t+T, ...), each thread walks the lines of its plane in sweep order, and after
// each line publishes "lines done in this plane" (release). Before line p of plane q, a thread
// waits (acquire) until plane q-1 has finished lines 0..p+1. Hence
//  - the lines of plane q-1 that (j,k) reads are complete (new values), and (j-1,k) was done by
//    the same thread just before;
//  - a line (j',k+1) of the next plane starts only after (j'+1,k) is published, so every line
//    (j-1..j+1, k+1) that (j,k) reads is still untouched (old values);
// which are exactly the values the sequential sweep reads: the result is bitwise identical to
// it, so multigrid convergence does not depend on the thread count. In the steady state thread
// t+1 runs two lines behind thread t, one plane further.
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

/// Calls line_fn(line) for every line j + ny*k of an ny x nz grid of lines, in lexicographic
/// sweep order (forward: increasing) or an order equivalent to it (see above) when `parallel`.
template <class F>
void gs_lines_ordered(int ny, int nz, bool forward, bool parallel, F&& line_fn) {
    const auto line_of = [&](int q, int p) {
        const int k = forward ? q : nz - 1 - q;
        const int j = forward ? p : ny - 1 - p;
        return j + std::int64_t{ny} * k;
    };
    if (!parallel) {
        for (int q = 0; q < nz; ++q) {
            for (int p = 0; p < ny; ++p) line_fn(line_of(q, p));
        }
        return;
    }
    struct alignas(64) Counter {
        std::atomic<int> lines{0};
    };
    std::vector<Counter> done(static_cast<std::size_t>(nz));
#pragma omp parallel
    {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        for (int q = t; q < nz; q += nt) {
            const Counter* prev = q > 0 ? &done[static_cast<std::size_t>(q - 1)] : nullptr;
            Counter& mine = done[static_cast<std::size_t>(q)];
            for (int p = 0; p < ny; ++p) {
                if (prev != nullptr) {
                    const int need = std::min(p + 2, ny);
                    for (int spin = 0; prev->lines.load(std::memory_order_acquire) < need; ++spin) {
                        if (spin > 64) std::this_thread::yield();
                    }
                }
                line_fn(line_of(q, p));
                mine.lines.store(p + 1, std::memory_order_release);
            }
        }
    }
}

}  // namespace mpmg
