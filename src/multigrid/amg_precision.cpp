#include "multigrid/amg_precision.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/float16.hpp"
#include "kernels/setup_simd.hpp"
#include "unstructured/equilibrate.hpp"

namespace mpmg {
namespace {

constexpr double kAutoUnderflowFraction = 1e-3;

// What truncating v to the storage would count, by comparisons (the SIMD pass the structured
// path counts with; a conversion per value took 4 % of laplace27 n = 96's AMG run).
TruncationCounts count_for(Precision p, const std::vector<double>& v) {
    return kernels::count_range(
        v.data(), static_cast<std::int64_t>(v.size()),
        p == Precision::fp16 ? range_limits<half>() : range_limits<bfloat16>());
}

// True when some value lies outside [min_normal, max/2] of the storage (or is NaN).
bool needs_scaling(const CsrMatrix& a, Precision p) {
    const double max = p == Precision::fp16 ? kHalfMax : kBf16Max;
    const double min = p == Precision::fp16 ? kHalfMinNormal : kBf16MinNormal;
    return kernels::any_outside(a.val.data(), a.nnz(), min, max / 2);
}

// The inverse blocks of block Jacobi: no entry may overflow, and no entry's rounding error may
// exceed u times its row's largest entry (u the format's unit roundoff), which only entries
// that underflow or turn subnormal can do, and only in rows whose largest entry is itself near
// the bottom of the range: an inverse's tiny off-diagonal entries lose their bits harmlessly
// (laplace27's blocks of 32 rows: thousands of subnormal entries, all below the rounding of
// their row). `underflow` and `subnormal` count the entries whose loss matters.
TruncationCounts block_counts(Precision p, const SmootherData& s) {
    const double u = p == Precision::fp16 ? 0x1p-11 : 0x1p-8;
    TruncationCounts out;
    if (s.kind != SmootherKind::block_jacobi) return out;  // ilu0's row blocks invert nothing
    const std::size_t nb = s.block_ptr.size() - 1;
    for (std::size_t b = 0; b < nb; ++b) {
        const std::int64_t m = s.block_ptr[b + 1] - s.block_ptr[b];
        const double* blk = s.inv_blocks.data() + s.inv_ptr[b];  // column-major
        for (std::int64_t i = 0; i < m; ++i) {
            const auto at = [&](std::int64_t j) { return blk[j * m + i]; };  // row i, column j
            double big = 0.0;
            for (std::int64_t j = 0; j < m; ++j) big = std::max(big, std::fabs(at(j)));
            for (std::int64_t j = 0; j < m; ++j) {
                TruncationCounts c;
                const double r = p == Precision::fp16
                                     ? to_double(truncate_counted<half>(at(j), c))
                                     : to_double(truncate_counted<bfloat16>(at(j), c));
                out.overflow += c.overflow;
                if (std::fabs(r - at(j)) > u * big) {
                    out.underflow += c.underflow;
                    out.subnormal += c.subnormal;
                }
            }
        }
    }
    return out;
}

// `auto`: B^{-1} rounded to unit roundoff u applies with a relative error up to ~kappa(B) u;
// beyond 1 the smoother loses its accuracy (494_bus, blocks of kappa 5.7e4 in FP16: 28 CG
// iterations against 20 in FP64).
constexpr double kMaxBlockRoundingError = 1.0;

}  // namespace

AmgStorageDecision decide_amg_storage(const CsrMatrix& a, LevelPrecision requested,
                                      const MultigridOptions& mg, bool automatic, int index,
                                      const std::int64_t* row_ids) {
    AmgStorageDecision out;
    out.precision = requested;
    out.given = &a;
    const Precision st = requested.storage;
    // A level that cannot be stored in FP16/BF16 has values spanning a range FP32 vectors also
    // resolve poorly: with `auto` it computes in FP64 (storage FP32). fs_183_1 (entries 1e-25 ..
    // 8e8): FP32 vectors 146 GMRES iterations, FP64 vectors with FP32 storage 33, Full64 35.
    // With `auto`, a level FP32 cannot hold either (values beyond 1e+-38 after the input's
    // power-of-two normalisation: a D A D with D spread over 1e+-40 failed as "AMG level 0: 5144
    // entries overflow fp32 storage") is stored in FP64.
    const auto keep = [&](std::string note) {
        out.precision = automatic ? LevelPrecision{Precision::fp64, Precision::fp32}
                                  : LevelPrecision{requested.compute, requested.compute};
        if (automatic) {
            const TruncationCounts c32 =
                kernels::count_range(a.val.data(), a.nnz(), range_limits<float>());
            const double lost32 = static_cast<double>(c32.underflow + c32.subnormal);
            if (c32.overflow > 0 ||
                lost32 > kAutoUnderflowFraction * static_cast<double>(a.nnz())) {
                out.precision.storage = Precision::fp64;
                note += fmt::format(" (and {} overflow, {} underflow or turn subnormal in fp32)",
                                    c32.overflow, c32.underflow + c32.subnormal);
            }
        }
        out.scaled = false;
        out.row_scale.clear();
        out.col_scale.clear();
        out.equilibrated = CsrMatrix{};
        out.smoother =
            smoother_setup(a, mg.smoother, mg.jacobi_weight, index, kMaxJacobiBlock, row_ids);
        out.note = fmt::format("{}; stored in {} instead{}", note, to_string(out.precision.storage),
                               automatic ? ", vectors in fp64" : "");
        return std::move(out);
    };
    if (st != Precision::fp16 && st != Precision::bf16) {
        out.smoother =
            smoother_setup(a, mg.smoother, mg.jacobi_weight, index, kMaxJacobiBlock, row_ids);
        return out;
    }
    if (mg.scaling != ScalingKind::none && needs_scaling(a, st)) {
        const Equilibration e = equilibrate(a);
        if (!e.ok) return keep(fmt::format("cannot equilibrate: {}", e.problem));
        out.scaled = true;
        out.equilibrated = apply_equilibration(a, e);
        out.row_scale = e.r;
        out.col_scale = e.c;
    }
    const TruncationCounts c = count_for(st, out.matrix().val);
    if (c.overflow > 0) {
        return keep(fmt::format("{} entries overflow {}{}", c.overflow, to_string(st),
                                out.scaled ? " after equilibration" : " (no scaling)"));
    }
    const double lost = static_cast<double>(c.underflow + c.subnormal);
    const std::int64_t nnz = out.matrix().nnz();  // a's, equilibrated or not
    if (automatic && lost > kAutoUnderflowFraction * static_cast<double>(nnz)) {
        return keep(fmt::format("{} of {} entries underflow or turn subnormal in {}",
                                c.underflow + c.subnormal, nnz, to_string(st)));
    }
    out.smoother = smoother_setup(out.matrix(), mg.smoother, mg.jacobi_weight, index,
                                  kMaxJacobiBlock, row_ids);
    const TruncationCounts d = count_for(st, out.smoother.inv_diag);
    if (const TruncationCounts b = block_counts(st, out.smoother);
        b.overflow + b.underflow + b.subnormal > 0) {
        return keep(
            fmt::format("inverted diagonal blocks out of {} range ({} overflow, {} entries "
                        "underflow or turn subnormal)",
                        to_string(st), b.overflow, b.underflow + b.subnormal));
    }
    if (const double u = st == Precision::fp16 ? 0x1p-11 : 0x1p-8;
        automatic && out.smoother.kind == SmootherKind::block_jacobi &&
        out.smoother.max_condition * u > kMaxBlockRoundingError) {
        return keep(
            fmt::format("auto: block Jacobi blocks of condition up to {:.2g} lose their "
                        "accuracy in {}",
                        out.smoother.max_condition, to_string(st)));
    }
    if (out.smoother.kind == SmootherKind::ilu0) {
        TruncationCounts f = count_for(st, out.smoother.ilu_l.val);
        f += count_for(st, out.smoother.ilu_u.val);
        const std::int64_t entries = out.smoother.ilu_l.nnz() + out.smoother.ilu_u.nnz();
        if (f.overflow > 0 ||
            (automatic && static_cast<double>(f.underflow + f.subnormal) >
                              kAutoUnderflowFraction * static_cast<double>(entries))) {
            return keep(fmt::format(
                "ILU(0) factors out of {} range ({} of {} entries overflow, {} underflow or "
                "turn subnormal)",
                to_string(st), f.overflow, entries, f.underflow + f.subnormal));
        }
    }
    if (d.overflow + d.underflow + d.subnormal > 0) {
        return keep(
            fmt::format("inverted diagonal out of {} range ({} overflow, {} underflow, "
                        "{} subnormal)",
                        to_string(st), d.overflow, d.underflow, d.subnormal));
    }
    if (out.scaled) out.note = "equilibrated (FGCS'23 Algorithm 2)";
    return out;
}

}  // namespace mpmg
