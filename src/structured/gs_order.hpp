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

/// The order of a parallel Gauss-Seidel smoothing sweep.
enum class GsOrder {
    /// The lexicographic order for any thread count: the pipelined wavefront above. Required
    /// where the sweep is a triangular solve (ILU(0)'s factors).
    wavefront,
    /// A slab of consecutive planes per thread, each slab's lowest plane swept last
    /// (gs_lines_blocks): an exact Gauss-Seidel sweep in an order that depends on the thread
    /// count. Only the slabs' boundaries are shared between threads.
    blocks,
};

/// Slabs that the block order uses for nz planes on nt threads: nt when every slab gets at least
/// two planes (its lowest, deferred, and one more), else 1 (the order is then lexicographic).
inline int gs_block_slabs(int nz, int nt) { return nt > 1 && nz >= 2 * nt ? nt : 1; }

/// First plane of slab t of `slabs` over nz planes (t = slabs gives nz).
inline int gs_block_first(int nz, int slabs, int t) {
    return static_cast<int>(std::int64_t{nz} * t / slabs);
}

/// Calls run_fn(line_begin, line_end, deferred) for the lines j + ny*k of an ny x nz grid of
/// lines in the block order of `slabs` (> 1) threads, one thread per slab [q_t, q_t+1):
///  - forward: every thread sweeps its slab's planes but the lowest (slab 0: all of them),
///    upwards; after a barrier, every other thread sweeps its lowest plane q_t (`deferred`);
///  - backward, the same order reversed: the deferred planes first, then, after a barrier, the
///    rest of every slab downwards.
/// A sequential sweep in the order P = (slab 0, the other slabs without their lowest planes,
/// then the lowest planes q_1, q_2, ...) reads exactly the values these threads read: a slab's
/// planes read only their own slab's planes and the deferred planes around it, which P sweeps
/// last (old values), and a deferred plane, swept after everything else, reads the new values
/// of the planes on both sides; no two deferred planes are neighbours. So the result is
/// bitwise that of the sequential sweep in P (for a given thread count), a Gauss-Seidel sweep
/// in its own right; the backward sweep is P reversed, and the pair a symmetric Gauss-Seidel.
/// The MPI z-split order (LevelBoundary::z_split) is the same order over processes.
/// Why: the wavefront's threads work on neighbouring planes, one run of lines apart, so every
/// line reads values another core has just written, and they wait on each other after every
/// run. laplace27 n = 108, FP16/FP32, one FP16 sweep of level 0 on 2 threads in a throwaway
/// driver: forward 5.4-5.9 ms with the wavefront, 3.3-4.3 ms in slabs (7.0 ms on one thread);
/// backward 6.4-6.7 against 3.3-3.9 ms.
template <class F>
void gs_lines_blocks(int ny, int nz, int slabs, bool forward, F&& run_fn) {
    const std::int64_t rows = ny;
    // Slab t's planes but its lowest (slab 0: all), and its lowest plane.
    const auto rest = [&](int t) {
        const int q0 = gs_block_first(nz, slabs, t), q1 = gs_block_first(nz, slabs, t + 1);
        run_fn(rows * (t == 0 ? q0 : q0 + 1), rows * q1, false);
    };
    const auto lowest = [&](int t) {
        const int q0 = gs_block_first(nz, slabs, t);
        if (t > 0) run_fn(rows * q0, rows * (q0 + 1), true);
    };
#pragma omp parallel num_threads(slabs)
    {
        // One slab per thread; should OpenMP give fewer threads, each takes several.
        const int t0 = omp_get_thread_num(), nt = omp_get_num_threads();
        for (int t = t0; t < slabs; t += nt) forward ? rest(t) : lowest(t);
#pragma omp barrier
        for (int t = t0; t < slabs; t += nt) forward ? lowest(t) : rest(t);
    }
}

}  // namespace mpmg
