#include "multigrid/level_precision.hpp"

#include <fmt/format.h>

#include <cmath>

#include "multigrid/scaling.hpp"
#include "multigrid/truncate.hpp"

namespace mpmg {
namespace {

// Fraction of entries that may underflow or turn subnormal before "auto" widens the storage.
constexpr double kAutoUnderflowFraction = 1e-3;

TruncationCounts count_for(Precision p, const SgDiaMatrix<double>& a) {
    return p == Precision::fp16 ? count_truncation<half>(a) : count_truncation<bfloat16>(a);
}

// True when the values do not fit the storage's normal range as they are.
bool needs_scaling(const SgDiaMatrix<double>& a, Precision p) {
    const double max = p == Precision::fp16 ? kHalfMax : kBf16Max;
    const double min = p == Precision::fp16 ? kHalfMinNormal : kBf16MinNormal;
    const std::int64_t cells = a.box().cells();
    const int rr = a.block() * a.block();
    for (int d = 0; d < a.stencil().size(); ++d) {
        const double* v = a.diagonal(d);
        for (std::int64_t c = 0; c < cells; ++c) {
            if (!a.neighbour_inside(c, d)) continue;
            for (int k = 0; k < rr; ++k) {
                const double x = std::fabs(v[c * rr + k]);
                if (x > max / 2 || (x != 0.0 && x < min)) return true;
            }
        }
    }
    return false;
}

}  // namespace

StorageDecision decide_storage(const SgDiaMatrix<double>& a, LevelPrecision requested,
                               bool may_scale, bool automatic, bool fallback) {
    StorageDecision out;
    out.precision = requested;
    const Precision st = requested.storage;
    if (st != Precision::fp16 && st != Precision::bf16) {
        out.matrix = a;
        return out;
    }
    const auto widen = [&](std::string why) {
        out = StorageDecision{};
        out.precision = LevelPrecision{requested.compute, requested.compute};
        out.matrix = a;
        out.note = fmt::format("{}; stored in {} instead", why, to_string(requested.compute));
        return out;
    };
    if (may_scale && needs_scaling(a, st)) {
        const LevelScaling sc = compute_scaling(a, st == Precision::fp16 ? kHalfMax : kBf16Max);
        if (!sc.ok) return widen(fmt::format("cannot scale for {}: {}", to_string(st), sc.problem));
        out.scaled = true;
        out.g = sc.g;
        out.g_max = sc.g_max;
        out.s = sc.s;
        out.matrix = scale_matrix(a, sc.s);
    } else {
        out.matrix = a;
    }
    const TruncationCounts c = count_for(st, out.matrix);
    if (c.overflow > 0 && !fallback) {
        out.note = fmt::format("{} entries overflow {}; kept (setup_fallback off, ablation)",
                               c.overflow, to_string(st));
        return out;
    }
    if (c.overflow > 0) {
        return widen(fmt::format("{} entries overflow {}{}", c.overflow, to_string(st),
                                 out.scaled ? " after scaling" : " without scaling"));
    }
    const double lost = static_cast<double>(c.underflow + c.subnormal);
    if (automatic && lost > kAutoUnderflowFraction * static_cast<double>(a.nnz())) {
        return widen(fmt::format("{} of {} entries underflow or turn subnormal in {}",
                                 c.underflow + c.subnormal, a.nnz(), to_string(st)));
    }
    if (out.scaled) out.note = fmt::format("scaled: G = {:g} (G_max = {:.4g})", out.g, out.g_max);
    if (automatic) {
        out.note = fmt::format("auto: {} ({}{} of {} entries underflow or subnormal)",
                               to_string(st), out.scaled ? out.note + "; " : "in range; ",
                               c.underflow + c.subnormal, a.nnz());
    }
    return out;
}

}  // namespace mpmg
