// Cases of `mpmg bench kernels`: one timed function per (kernel, storage, compute, layout).
#include "kernels_bench_cases.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <cstdint>
#include <vector>

#ifdef MPMG_HAVE_EIGEN
#include <Eigen/SparseCore>
#endif

#include "bench_util.hpp"
#include "kernels/aos.hpp"
#include "kernels/sgdia.hpp"
#include "kernels/sgdia_block.hpp"
#include "kernels/sgdia_simd.hpp"
#include "structured/gs_order.hpp"
#include "structured/sgdia_ops.hpp"

namespace mpmg::bench {
namespace {

using nlohmann::json;

template <class T>
const char* type_name() {
    if constexpr (std::is_same_v<T, double>) return "fp64";
    if constexpr (std::is_same_v<T, float>) return "fp32";
    if constexpr (std::is_same_v<T, half>) return "fp16";
    return "bf16";
}

template <class S>
SgDiaMatrix<S> convert(const SgDiaMatrix<double>& a) {
    SgDiaMatrix<S> m(a.box(), a.stencil(), a.block());
    for (int d = 0; d < a.stencil().size(); ++d) {
        const double* src = a.diagonal(d);
        S* dst = m.diagonal(d);
#pragma omp parallel for schedule(static)
        for (std::int64_t e = 0; e < a.diag_values(); ++e) dst[e] = from_double<S>(src[e]);
    }
    return m;
}

/// Runs f over all lines, one contiguous block per thread (the same split as sgdia_ops).
template <class F>
void parallel_lines(std::int64_t lines, F&& f) {
#pragma omp parallel
    {
        const std::int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
        f(lines * t / nt, lines * (t + 1) / nt);
    }
}

template <class S, class C>
void spmv_case(Recorder& rec, const SgDiaMatrix<double>& a64, const std::vector<int>& threads,
               bool aos) {
    const SgDiaMatrix<S> a = convert<S>(a64);
    const kernels::SgDiaGeom g = kernels::geometry(a);
    std::vector<S> aos_values;
    if (aos) {
        aos_values.resize(a.values().size());
        kernels::aos_from_soa(g, a.values().data(), aos_values.data());
    }
    const std::vector<C> x(static_cast<std::size_t>(a.rows()), C{1});
    std::vector<C> y(x.size());
    const double bytes =
        static_cast<double>(a.bytes()) + 2.0 * static_cast<double>(a.rows()) * sizeof(C);
    for (const int t : threads) {
        omp_set_num_threads(t);
        const double sec = time_median(rec.reps, [&] {
            if (aos) {
                parallel_lines(g.lines(), [&](std::int64_t lb, std::int64_t le) {
                    kernels::spmv_aos(g, aos_values.data(), x.data(), y.data(), lb, le);
                });
            } else {
                spmv(a, x.data(), y.data());
            }
        });
        rec.add("spmv", a.stencil().name(), type_name<S>(), type_name<C>(), aos ? "aos" : "soa", t,
                sec, bytes);
    }
}

template <class S, class C>
void gs_case(Recorder& rec, const SgDiaMatrix<double>& a64, const std::vector<int>& threads,
             bool aos) {
    const SgDiaMatrix<S> a = convert<S>(a64);
    const kernels::SgDiaGeom g = kernels::geometry(a);
    std::vector<S> aos_values;
    if (aos) {
        aos_values.resize(a.values().size());
        kernels::aos_from_soa(g, a.values().data(), aos_values.data());
    }
    const std::vector<C> b(static_cast<std::size_t>(a.rows()), C{1});
    std::vector<C> x(b.size(), C{0});
    const double bytes =
        static_cast<double>(a.bytes()) + 3.0 * static_cast<double>(a.rows()) * sizeof(C);
    for (const int t : threads) {
        omp_set_num_threads(t);
        for (const bool forward : {true, false}) {
            if (aos && !forward) continue;  // the naive AOS variant has the forward sweep only
            const double sec = time_median(rec.reps, [&] {
                if (aos) {
                    gs_lines_ordered(g.ny, g.nz, true, t > 1,
                                     [&](std::int64_t lb, std::int64_t le) {
                                         for (std::int64_t l = lb; l < le; ++l) {
                                             kernels::gs_forward_aos(g, aos_values.data(), b.data(),
                                                                     x.data(), l);
                                         }
                                     });
                } else {
                    gs_sweep(a, b.data(), x.data(), forward);
                }
            });
            rec.add(forward ? "gs_forward" : "gs_backward", a.stencil().name(), type_name<S>(),
                    type_name<C>(), aos ? "aos" : "soa", t, sec, bytes);
        }
    }
}

/// Block SpMV and forward Gauss-Seidel, SgDiaMatrix path vs block SIMD kernels.
template <class S, class C>
void block_case(Recorder& rec, const SgDiaMatrix<double>& a64, const std::vector<int>& threads) {
    const SgDiaMatrix<S> a = convert<S>(a64);
    const kernels::BlockSoa<S, C> blk(a);
    const std::string pattern = fmt::format("{}-r{}", a.stencil().name(), a.block());
    const std::vector<C> b(static_cast<std::size_t>(a.rows()), C{1});
    std::vector<C> x(b.size(), C{1}), y(b.size());
    const double vec = static_cast<double>(a.rows()) * sizeof(C);
    const double spmv_bytes = static_cast<double>(a.bytes()) + 2.0 * vec;
    // Gauss-Seidel also reads the centre block inverses on the block-soa path.
    const double inv_bytes = static_cast<double>(blk.bytes() - a.bytes());
    const double gs_bytes = static_cast<double>(a.bytes()) + 3.0 * vec;
    for (const int t : threads) {
        omp_set_num_threads(t);
        for (const bool simd : {false, true}) {
            const char* layout = simd ? "block-soa" : "sgdia";
            double sec = time_median(rec.reps, [&] {
                if (simd) {
                    spmv(blk, x.data(), y.data());
                } else {
                    spmv(a, x.data(), y.data());
                }
            });
            rec.add("spmv", pattern, type_name<S>(), type_name<C>(), layout, t, sec, spmv_bytes,
                    a.block());
            sec = time_median(rec.reps, [&] {
                if (simd) {
                    gs_sweep(blk, b.data(), x.data(), true);
                } else {
                    gs_sweep(a, b.data(), x.data(), true);
                }
            });
            rec.add("gs_forward", pattern, type_name<S>(), type_name<C>(), layout, t, sec,
                    gs_bytes + (simd ? inv_bytes : 0.0), a.block());
        }
    }
}

#ifdef MPMG_HAVE_EIGEN
/// Eigen's row-major CSR SpMV on the same matrix (entries inside the box only; int32 indices).
template <class T>
void eigen_case(Recorder& rec, const SgDiaMatrix<double>& a, const std::vector<int>& threads) {
    const std::int64_t rows = a.rows();
    std::vector<int> outer(static_cast<std::size_t>(rows + 1), 0), inner;
    std::vector<T> vals;
    inner.reserve(static_cast<std::size_t>(a.nnz()));
    vals.reserve(inner.capacity());
    const Box& box = a.box();
    for (std::int64_t c = 0; c < rows; ++c) {
        for (int d = 0; d < a.stencil().size(); ++d) {
            if (!a.neighbour_inside(c, d)) continue;
            const Offset& o = a.stencil()[d];
            inner.push_back(static_cast<int>(
                c + o.dx + std::int64_t{box.nx} * (o.dy + std::int64_t{box.ny} * o.dz)));
            vals.push_back(static_cast<T>(a.value(d, c, 0, 0)));
        }
        outer[static_cast<std::size_t>(c + 1)] = static_cast<int>(inner.size());
    }
    using Csr = Eigen::SparseMatrix<T, Eigen::RowMajor, int>;
    const Eigen::Map<const Csr> m(rows, rows, static_cast<Eigen::Index>(inner.size()), outer.data(),
                                  inner.data(), vals.data());
    const Eigen::Matrix<T, Eigen::Dynamic, 1> x = Eigen::Matrix<T, Eigen::Dynamic, 1>::Ones(rows);
    Eigen::Matrix<T, Eigen::Dynamic, 1> y(rows);
    const double bytes = static_cast<double>(inner.size()) * (sizeof(T) + sizeof(int)) +
                         static_cast<double>(rows + 1) * sizeof(int) +
                         2.0 * static_cast<double>(rows) * sizeof(T);
    for (const int t : threads) {
        omp_set_num_threads(t);
        Eigen::setNbThreads(t);
        const double sec = time_median(rec.reps, [&] { y.noalias() = m * x; });
        rec.add("spmv", a.stencil().name(), type_name<T>(), type_name<T>(), "csr-eigen", t, sec,
                bytes);
    }
}
#endif

double fmt_or_nan(const json& j) { return j.is_number() ? j.get<double>() : NAN; }

}  // namespace

void Recorder::add(const std::string& kernel, const std::string& pattern,
                   const std::string& storage, const std::string& compute,
                   const std::string& layout, int threads, double seconds, double bytes,
                   int block) {
    const double gbs = bytes / seconds * 1e-9;
    rows.push_back({{"kernel", kernel},
                    {"pattern", pattern},
                    {"block", block},
                    {"storage", storage},
                    {"compute", compute},
                    {"layout", layout},
                    {"threads", threads},
                    {"seconds", seconds},
                    {"bytes", bytes},
                    {"gbs", gbs},
                    {"stream_fraction", gbs / stream.at(threads)}});
    fmt::print(stderr, "    {:<11} {:<5} {}/{} {:<9} {}T  {:8.3f} ms  {:6.2f} GB/s\n", kernel,
               pattern, storage, compute, layout, threads, seconds * 1e3, gbs);
}

void Recorder::finish() {
    const auto find = [&](const json& r, const char* kernel, const char* layout) -> const json* {
        for (const json& o : rows) {
            if (o["kernel"] == kernel && o["pattern"] == r["pattern"] &&
                o["threads"] == r["threads"] && o["storage"] == "fp32" && o["compute"] == "fp32" &&
                o["layout"] == layout)
                return &o;
        }
        return nullptr;
    };
    for (json& r : rows) {
        const std::string k = r["kernel"];
        // Backward sweeps are compared with the forward fp32 AOS sweep (same bytes and flops).
        const json* base = find(r, k == "gs_backward" ? "gs_forward" : k.c_str(), "aos");
        const json* soa = find(r, k.c_str(), "soa");
        r["speedup_vs_fp32_aos"] =
            base ? json(base->at("seconds").get<double>() / r["seconds"].get<double>()) : json();
        r["bound_vs_fp32"] =
            soa ? json(soa->at("bytes").get<double>() / r["bytes"].get<double>()) : json();
        // Fraction of the byte-ratio bound attained: (t_fp32_soa / t) / bound = GB/s ratio.
        r["bound_attained"] =
            soa ? json(r["gbs"].get<double>() / soa->at("gbs").get<double>()) : json();
    }
}

void run_spmv_cases(Recorder& rec, const SgDiaMatrix<double>& a, const std::vector<int>& threads,
                    bool eigen) {
    spmv_case<float, float>(rec, a, threads, true);
    spmv_case<half, float>(rec, a, threads, true);
    spmv_case<half, float>(rec, a, threads, false);
    spmv_case<float, float>(rec, a, threads, false);
    spmv_case<double, double>(rec, a, threads, false);
    spmv_case<bfloat16, float>(rec, a, threads, false);
#ifdef MPMG_HAVE_EIGEN
    if (eigen) {
        eigen_case<double>(rec, a, threads);
        eigen_case<float>(rec, a, threads);
    }
#else
    (void)eigen;
#endif
}

void run_gs_cases(Recorder& rec, const SgDiaMatrix<double>& l, const std::vector<int>& threads) {
    gs_case<float, float>(rec, l, threads, true);
    gs_case<half, float>(rec, l, threads, true);
    gs_case<half, float>(rec, l, threads, false);
    gs_case<float, float>(rec, l, threads, false);
    gs_case<double, double>(rec, l, threads, false);
    gs_case<bfloat16, float>(rec, l, threads, false);
}

void run_block_cases(Recorder& rec, const SgDiaMatrix<double>& a, const std::vector<int>& threads) {
    block_case<half, float>(rec, a, threads);
    block_case<float, float>(rec, a, threads);
    block_case<half, double>(rec, a, threads);
    block_case<double, double>(rec, a, threads);
}

std::string markdown_table(const json& doc) {
    std::string s = fmt::format(
        "CPU: {}; STREAM triad {:.1f} GB/s (1 thread), {:.1f} GB/s ({} threads); SIMD target {}; "
        "median of {} runs.\n\n",
        doc["machine"]["cpu"].get<std::string>(),
        doc["machine"]["stream_triad_gbs_1thread"].get<double>(),
        doc["machine"]["stream_triad_gbs"].get<double>(), doc["machine"]["threads"].get<int>(),
        doc["machine"]["simd_target"].get<std::string>(), doc["repetitions"].get<int>());
    s += "| kernel | pattern | storage/compute | layout | threads | ms | MB moved | GB/s | "
         "% STREAM | speedup vs fp32 AOS | bound vs fp32 | % of bound |\n";
    s += "|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const json& r : doc["rows"]) {
        const double att = fmt_or_nan(r["bound_attained"]);
        s += fmt::format(
            "| {} | {} | {}/{} | {} | {} | {:.2f} | {:.1f} | {:.2f} | {:.0f}% | {:.2f} "
            "| {:.2f} | {} |\n",
            r["kernel"].get<std::string>(), r["pattern"].get<std::string>(),
            r["storage"].get<std::string>(), r["compute"].get<std::string>(),
            r["layout"].get<std::string>(), r["threads"].get<int>(),
            r["seconds"].get<double>() * 1e3, r["bytes"].get<double>() * 1e-6,
            r["gbs"].get<double>(), 100 * r["stream_fraction"].get<double>(),
            fmt_or_nan(r["speedup_vs_fp32_aos"]), fmt_or_nan(r["bound_vs_fp32"]),
            r["layout"] == "soa" ? fmt::format("{:.0f}%", 100 * att) : "-");
    }
    return s;
}

std::string kernels_simd_target() { return kernels::simd::target_name(); }

}  // namespace mpmg::bench
