#include "structured/sgdia_ops.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "kernels/sgdia.hpp"

namespace mpmg {
namespace {

/// Grids with fewer cells run serially: a parallel region and its barriers cost more than the
/// work there (about one sweep of a 16^3 scalar grid).
constexpr std::int64_t kSerialCells = 4096;

bool run_serial(const Box& box) { return box.cells() < kSerialCells || omp_get_max_threads() < 2; }

/// Runs f(line_begin, line_end) over all lines, one contiguous block of lines per thread.
template <class F>
void for_lines(const kernels::SgDiaGeom& g, bool serial, F f) {
    const std::int64_t lines = g.lines();
    if (serial) {
        f(std::int64_t{0}, lines);
        return;
    }
#pragma omp parallel
    {
        const std::int64_t t = omp_get_thread_num();
        const std::int64_t nt = omp_get_num_threads();
        f(lines * t / nt, lines * (t + 1) / nt);
    }
}

}  // namespace

template <class S, class C>
void spmv(const SgDiaMatrix<S>& a, const C* x, C* y) {
    const kernels::SgDiaGeom g = kernels::geometry(a);
    const S* v = a.values().data();
    for_lines(g, run_serial(a.box()),
              [&](std::int64_t lb, std::int64_t le) { kernels::spmv(g, v, x, y, lb, le); });
}

template <class S, class C>
void residual(const SgDiaMatrix<S>& a, const C* b, const C* x, C* r) {
    const kernels::SgDiaGeom g = kernels::geometry(a);
    const S* v = a.values().data();
    for_lines(g, run_serial(a.box()),
              [&](std::int64_t lb, std::int64_t le) { kernels::residual(g, v, b, x, r, lb, le); });
}

template <class S, class C>
void jacobi(const SgDiaMatrix<S>& a, const C* b, const C* x, C* x_new, C omega) {
    const kernels::SgDiaGeom g = kernels::geometry(a);
    const S* v = a.values().data();
    for_lines(g, run_serial(a.box()), [&](std::int64_t lb, std::int64_t le) {
        kernels::jacobi(g, v, b, x, x_new, omega, lb, le);
    });
}

// Wavefront ordering of the lexicographic Gauss-Seidel sweep.
//
// Line (j,k) gets the time t = j + 2k. Every offset is in {-1,0,1}^3, so the lines whose new
// values cell (i,j,k) reads in a forward sweep -- (j-1,k) and (j-1..j+1, k-1) -- have times
// t-1 and t-3..t-1, and the lines that must still see its old values -- (j+1,k) and
// (j-1..j+1, k+1) -- have times t+1 and t+1..t+3. Lines of equal time, (j,k) and (j+2,k-1)
// etc., never neighbour each other. Processing t = 0, 1, ..., (ny-1) + 2(nz-1) in order, with
// a barrier between fronts and the lines of one front in parallel (each line sequential in i
// by kernels::gs_line), therefore reads exactly the values the sequential lexicographic sweep
// reads: the result is identical to it, so multigrid convergence does not change with
// parallelism, and deterministic for any thread count. The backward sweep runs the times in
// decreasing order and each line in decreasing i.
template <class S, class C>
void gs_sweep(const SgDiaMatrix<S>& a, const C* b, C* x, bool forward) {
    const kernels::SgDiaGeom g = kernels::geometry(a);
    const S* v = a.values().data();
    if (run_serial(a.box())) {
        const std::int64_t lines = g.lines();
        for (std::int64_t l = 0; l < lines; ++l) {
            kernels::gs_line(g, v, b, x, forward ? l : lines - 1 - l, forward);
        }
        return;
    }
    const int fronts = (g.ny - 1) + 2 * (g.nz - 1) + 1;
#pragma omp parallel
    for (int f = 0; f < fronts; ++f) {
        const int t = forward ? f : fronts - 1 - f;
        // Lines of front t: k in [k_lo, k_hi], j = t - 2k in [0, ny).
        const int k_lo = std::max(0, (t - (g.ny - 1) + 1) / 2);
        const int k_hi = std::min(g.nz - 1, t / 2);
#pragma omp for schedule(static)
        for (int k = k_lo; k <= k_hi; ++k) {
            const int j = t - 2 * k;
            kernels::gs_line(g, v, b, x, j + std::int64_t{g.ny} * k, forward);
        }  // implicit barrier: front t is complete before front t +- 1 starts
    }
}

// Explicit instantiations: exactly the supported (storage, compute) pairs.

template void spmv<double, double>(const SgDiaMatrix<double>&, const double*, double*);
template void spmv<float, double>(const SgDiaMatrix<float>&, const double*, double*);
template void spmv<half, double>(const SgDiaMatrix<half>&, const double*, double*);
template void spmv<bfloat16, double>(const SgDiaMatrix<bfloat16>&, const double*, double*);
template void spmv<float, float>(const SgDiaMatrix<float>&, const float*, float*);
template void spmv<half, float>(const SgDiaMatrix<half>&, const float*, float*);
template void spmv<bfloat16, float>(const SgDiaMatrix<bfloat16>&, const float*, float*);

template void residual<double, double>(const SgDiaMatrix<double>&, const double*, const double*,
                                       double*);
template void residual<float, double>(const SgDiaMatrix<float>&, const double*, const double*,
                                      double*);
template void residual<half, double>(const SgDiaMatrix<half>&, const double*, const double*,
                                     double*);
template void residual<bfloat16, double>(const SgDiaMatrix<bfloat16>&, const double*, const double*,
                                         double*);
template void residual<float, float>(const SgDiaMatrix<float>&, const float*, const float*, float*);
template void residual<half, float>(const SgDiaMatrix<half>&, const float*, const float*, float*);
template void residual<bfloat16, float>(const SgDiaMatrix<bfloat16>&, const float*, const float*,
                                        float*);

template void jacobi<double, double>(const SgDiaMatrix<double>&, const double*, const double*,
                                     double*, double);
template void jacobi<float, double>(const SgDiaMatrix<float>&, const double*, const double*,
                                    double*, double);
template void jacobi<half, double>(const SgDiaMatrix<half>&, const double*, const double*, double*,
                                   double);
template void jacobi<bfloat16, double>(const SgDiaMatrix<bfloat16>&, const double*, const double*,
                                       double*, double);
template void jacobi<float, float>(const SgDiaMatrix<float>&, const float*, const float*, float*,
                                   float);
template void jacobi<half, float>(const SgDiaMatrix<half>&, const float*, const float*, float*,
                                  float);
template void jacobi<bfloat16, float>(const SgDiaMatrix<bfloat16>&, const float*, const float*,
                                      float*, float);

template void gs_sweep<double, double>(const SgDiaMatrix<double>&, const double*, double*, bool);
template void gs_sweep<float, double>(const SgDiaMatrix<float>&, const double*, double*, bool);
template void gs_sweep<half, double>(const SgDiaMatrix<half>&, const double*, double*, bool);
template void gs_sweep<bfloat16, double>(const SgDiaMatrix<bfloat16>&, const double*, double*,
                                         bool);
template void gs_sweep<float, float>(const SgDiaMatrix<float>&, const float*, float*, bool);
template void gs_sweep<half, float>(const SgDiaMatrix<half>&, const float*, float*, bool);
template void gs_sweep<bfloat16, float>(const SgDiaMatrix<bfloat16>&, const float*, float*, bool);

}  // namespace mpmg
