// The measured cases of `mpmg bench kernels` (kernels_bench.cpp drives them).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mpmg/sgdia_matrix.hpp"

namespace mpmg::bench {

/// Collects result rows; finish() adds the ratios between rows.
struct Recorder {
    int reps = 5;
    std::map<int, double> stream;  ///< STREAM triad GB/s per thread count
    nlohmann::json rows = nlohmann::json::array();

    void add(const std::string& kernel, const std::string& pattern, const std::string& storage,
             const std::string& compute, const std::string& layout, int threads, double seconds,
             double bytes, int block = 1);
    /// speedup_vs_fp32_aos, bound_vs_fp32 and bound_attained (GB/s over fp32/fp32 SOA).
    void finish();
};

/// SpMV cases on `a` (values as built in FP64) for each thread count; Eigen CSR rows if `eigen`.
void run_spmv_cases(Recorder& rec, const SgDiaMatrix<double>& a, const std::vector<int>& threads,
                    bool eigen);
/// Forward and backward Gauss-Seidel sweep cases on `l` (a lower-half stencil).
void run_gs_cases(Recorder& rec, const SgDiaMatrix<double>& l, const std::vector<int>& threads);

/// r x r block cases on `a` (values as built in FP64, block r = 2..4): SpMV and the forward
/// Gauss-Seidel sweep (full stencil, as the multigrid smoother runs it), through the
/// SgDiaMatrix operations (layout "sgdia": plain loops, per-element conversion) and through the
/// block SIMD kernels on the re-laid-out copy (layout "block-soa", kernels/sgdia_block.hpp).
void run_block_cases(Recorder& rec, const SgDiaMatrix<double>& a, const std::vector<int>& threads);

/// The rows as a Markdown table.
std::string markdown_table(const nlohmann::json& doc);

/// Highway target the SOA kernels run on.
std::string kernels_simd_target();

}  // namespace mpmg::bench
