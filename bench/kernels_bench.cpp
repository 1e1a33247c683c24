// SG-DIA kernel ablation benchmark (DESIGN.md "Benchmark contract", ICPP'24 §7.2 Figure 7).
//
// Kernels: SpMV on 3d7/3d19/3d27 and forward/backward Gauss-Seidel sweeps on their lower halves
// 3d4/3d10/3d14 (the offsets up to and including the centre: a triangular sweep as in the
// paper). Cases: fp32/fp32 AOS (baseline), fp16/fp32 naive AOS, and the SOA (SG-DIA) Highway
// kernels fp16/fp32, fp32/fp32, fp64/fp64, bf16/fp32; plus Eigen's CSR SpMV on 3d27. Block
// cases (3d7, r = 3 and 4; fp16/fp32, fp32/fp32, fp16/fp64, fp64/fp64): SpMV and the forward
// sweep on the full stencil, plain SgDiaMatrix loops vs the block SIMD kernels.
// Bytes counted per run: matrix values (+ CSR indices) read once, x read once, y written once
// (SpMV); values, b and x read once, x written once (GS). Write-allocate traffic is not counted,
// as in STREAM. Problem sizes: the FP16 matrix is >= 4x the last-level cache, read at run time.
#include "kernels_bench.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "bench_util.hpp"
#include "kernels/aos.hpp"
#include "kernels/sgdia.hpp"
#include "kernels_bench_cases.hpp"
#include "structured/gs_order.hpp"
#include "structured/sgdia_ops.hpp"

namespace mpmg::bench {
namespace {

using nlohmann::json;

/// Cube edge so that an FP16 matrix with `ndiag` offsets is >= kCacheFactor x the LLC.
int edge_for(std::int64_t llc, int ndiag, bool quick) {
    if (quick) return 20;
    const double cells = static_cast<double>(kCacheFactor * llc) / (2.0 * ndiag);
    return static_cast<int>(std::ceil(std::cbrt(cells)));
}

/// The lower half of a stencil: offsets lexicographically up to and including the centre.
Stencil lower_half(const Stencil& s) {
    std::vector<Offset> lo(s.offsets().begin(), s.offsets().begin() + s.center() + 1);
    return Stencil(lo);
}

/// off-diagonal -1, centre ndiag (diagonally dominant: Gauss-Seidel stays bounded).
SgDiaMatrix<double> make_matrix(int n, const Stencil& st) {
    SgDiaMatrix<double> a(Box{n, n, n}, st);
    for (int d = 0; d < st.size(); ++d) {
        double* v = a.diagonal(d);
        const double val = d == st.center() ? static_cast<double>(st.size()) : -1.0;
        for (std::int64_t c = 0; c < a.diag_values(); ++c) v[c] = val;
    }
    return a;
}

/// r x r blocks: every entry -1 except the centre block's diagonal, ndiag r (diagonally
/// dominant by rows: Gauss-Seidel stays bounded).
SgDiaMatrix<double> make_block_matrix(int n, const Stencil& st, int r) {
    SgDiaMatrix<double> a(Box{n, n, n}, st, r);
    for (int d = 0; d < st.size(); ++d) {
        double* v = a.diagonal(d);
        for (std::int64_t e = 0; e < a.diag_values(); ++e) {
            const bool diag = d == st.center() && (e % (r * r)) % (r + 1) == 0;
            v[e] = diag ? static_cast<double>(st.size() * r) : -1.0;
        }
    }
    return a;
}

template <class S>
SgDiaMatrix<S> convert(const SgDiaMatrix<double>& a) {
    SgDiaMatrix<S> m(a.box(), a.stencil(), a.block());
    for (int d = 0; d < a.stencil().size(); ++d) {
        for (std::int64_t e = 0; e < a.diag_values(); ++e) {
            m.diagonal(d)[e] = from_double<S>(a.diagonal(d)[e]);
        }
    }
    return m;
}

}  // namespace

int run_kernels_bench(const BenchOptions& opt) {
    const std::int64_t llc = llc_bytes();
    const int reps = opt.quick ? 3 : 5;
    std::vector<int> thread_list{1};
    if (opt.threads > 1) thread_list.push_back(opt.threads);

    fmt::print(stderr, "bench kernels: LLC {} MiB ({}), SIMD target {}, threads {}\n", llc >> 20,
               llc_size().source, kernels_simd_target(), fmt::join(thread_list, ","));
    std::map<int, double> stream;
    const std::int64_t stream_n = opt.quick ? (std::int64_t{1} << 20) : 4 * llc / 8 * 2;
    for (int t : thread_list) {
        stream[t] = stream_triad_gbs(t, stream_n, opt.quick ? 3 : 10);
        fmt::print(stderr, "  STREAM triad, {} thread(s): {:.1f} GB/s\n", t, stream[t]);
    }

    Recorder rec;
    rec.reps = reps;
    rec.stream = stream;
    for (const char* name : {"3d7", "3d19", "3d27"}) {
        const Stencil full = Stencil::named(name);
        const int n_spmv = edge_for(llc, full.size(), opt.quick);
        {
            const SgDiaMatrix<double> a = make_matrix(n_spmv, full);
            fmt::print(stderr, "  spmv {} on {}^3 ...\n", name, n_spmv);
            run_spmv_cases(rec, a, thread_list, std::string(name) == "3d27");
        }
        const Stencil lower = lower_half(full);
        const int n_gs = edge_for(llc, lower.size(), opt.quick);
        const SgDiaMatrix<double> l = make_matrix(n_gs, lower);
        fmt::print(stderr, "  gs {} on {}^3 ...\n", lower.name(), n_gs);
        run_gs_cases(rec, l, thread_list);
    }
    // r x r blocks (3d7, r = 3 and 4): FP16 matrix >= 4x the LLC as above.
    for (const int r : {3, 4}) {
        const Stencil st = Stencil::named("3d7");
        const int n = edge_for(llc, st.size() * r * r, opt.quick);
        const SgDiaMatrix<double> a = make_block_matrix(n, st, r);
        fmt::print(stderr, "  block r={} {} (spmv, gs) on {}^3 ...\n", r, st.name(), n);
        run_block_cases(rec, a, thread_list);
    }
    rec.finish();

    json doc;
    doc["machine"] = {{"cpu", cpu_model()},
                      {"threads", thread_list.back()},
                      {"stream_triad_gbs", stream[thread_list.back()]},
                      {"stream_triad_gbs_1thread", stream[1]},
                      {"llc_bytes", llc},
                      {"llc_source", llc_size().source},
                      {"simd_target", kernels_simd_target()}};
    doc["quick"] = opt.quick;
    doc["repetitions"] = reps;
    doc["bytes_model"] =
        "matrix values (+ CSR indices) read once; spmv: x read, y written; gs: b and x read, x "
        "written; no write-allocate";
    doc["rows"] = rec.rows;

    namespace fs = std::filesystem;
    fs::create_directories(opt.out);
    const fs::path json_path = fs::path(opt.out) / "kernels.json";
    std::ofstream(json_path) << doc.dump(2) << "\n";
    std::ofstream(fs::path(opt.out) / "kernels.md") << markdown_table(doc);
    fmt::print(stderr, "  wrote {} and kernels.md\n", json_path.string());

    const fs::path script = fs::path(opt.bench_dir) / "plot_kernels.py";
    const std::string cmd =
        fmt::format("/usr/bin/python3 '{}' '{}' '{}' >&2", script.string(), json_path.string(),
                    (fs::path(opt.out) / "kernels.png").string());
    if (!fs::exists(script) || std::system(cmd.c_str()) != 0) {
        fmt::print(stderr,
                   "  note: kernels.png not written (needs /usr/bin/python3 with matplotlib and "
                   "{}); JSON and Markdown are complete\n",
                   script.string());
    } else {
        fmt::print(stderr, "  wrote kernels.png\n");
    }
    return 0;
}

}  // namespace mpmg::bench
