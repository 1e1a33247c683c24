#include "multigrid/level_precision.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

#include "kernels/convert_simd.hpp"
#include "kernels/setup_simd.hpp"
#include "multigrid/scaling.hpp"
#include "multigrid/truncate.hpp"

namespace mpmg {
namespace {

// Fraction of entries that may underflow or turn subnormal before "auto" widens the storage.
constexpr double kAutoUnderflowFraction = 1e-3;

TruncationCounts count_for(Precision p, const SgDiaMatrix<double>& a) {
    return p == Precision::fp16 ? count_truncation<half>(a) : count_truncation<bfloat16>(a);
}

RangeLimits limits_for(Precision p) {
    return p == Precision::fp16 ? range_limits<half>() : range_limits<bfloat16>();
}

// True when the values do not fit the storage's normal range as they are (or are not finite).
// The centre offset goes first (the diagonal is where most levels leave the range), and the
// pass stops everywhere at the first value outside: a level far outside FP16's range would
// otherwise scan every offset whose own values happen to lie inside it (oil4c n = 64: 15 ms).
bool needs_scaling(const SgDiaMatrix<double>& a, Precision p) {
    const double max = p == Precision::fp16 ? kHalfMax : kBf16Max;
    const double min = p == Precision::fp16 ? kHalfMinNormal : kBf16MinNormal;
    const std::int64_t rr = std::int64_t{a.block()} * a.block();
    const int ndiag = a.stencil().size(), centre = a.stencil().center();
    std::atomic<bool> outside{false};
#pragma omp parallel for schedule(dynamic, 1)
    for (int k = 0; k < ndiag; ++k) {
        const int d = (k + centre) % ndiag;
        const double* v = a.diagonal(d);
        for_each_inside_run(a, d, [&](std::int64_t first, std::int64_t n) {
            if (outside.load(std::memory_order_relaxed)) return;
            // NaN counts as outside
            if (kernels::any_outside(v + first * rr, n * rr, min, max / 2)) {
                outside.store(true, std::memory_order_relaxed);
            }
        });
    }
    return outside.load();
}

// On a scaled level every diagonal entry is G (s_i = sqrt(a_ii / G)). An entry that underflows
// or turns subnormal changes by less than the smallest normal number, which is below the
// rounding of its row's diagonal, u G, once G >= min normal / u (FP16: 2^-14 / 2^-11 = 1/8):
// such entries are lost in the rounding the level makes anyway and are no reason to widen.
// (rhd3t n = 24: 702 of 353736 entries of level 1 turn subnormal at G = 16384; stored in FP16
// the solve takes the same 16 iterations as in FP32.) Unscaled levels keep the count rule.
bool underflow_below_rounding(Precision st, bool scaled, double g) {
    const double min_normal = st == Precision::fp16 ? kHalfMinNormal : kBf16MinNormal;
    const double u = st == Precision::fp16 ? 0x1p-11 : 0x1p-8;
    return scaled && g >= min_normal / u;
}

// The first of cells [c0, c1) whose block does not survive rounding, or -1 (see below).
template <int R, class S>
std::int64_t first_ill_block(const SgDiaMatrix<double>& a, const std::vector<double>* s,
                             std::int64_t c0, std::int64_t c1) {
    const int r = R > 0 ? R : a.block();
    const int rr = r * r;
    const int c_ = a.stencil().center();
    constexpr std::int64_t kBatch = 128;  // cells rounded by one SIMD narrowing
    // The blocks of a batch side by side (entry k of cell c at k nb + c), as pivot_ratios
    // takes them: exact (scaled) and rounded to S.
    std::vector<double> exact(static_cast<std::size_t>(kBatch * rr)), after(exact.size());
    std::vector<S> rounded(exact.size());
    std::vector<double> exact_ratio(kBatch), after_ratio(kBatch);
    for (std::int64_t b0 = c0; b0 < c1; b0 += kBatch) {
        const std::int64_t nb = std::min(kBatch, c1 - b0);
        for (std::int64_t c = 0; c < nb; ++c) {
            const double* v = &a.value(c_, b0 + c, 0, 0);  // the cell's centre block
            const double* sc = s ? s->data() + (b0 + c) * r : nullptr;
            for (int i = 0; i < r; ++i) {
                for (int j = 0; j < r; ++j) {
                    // a_ij / (s_i s_j), the scaled matrix's entry
                    const double x = sc ? v[i * r + j] / (sc[i] * sc[j]) : v[i * r + j];
                    exact[static_cast<std::size_t>((i * r + j) * nb + c)] = x;
                }
            }
        }
        const std::int64_t values = nb * rr;
        kernels::narrow(exact.data(), rounded.data(), values);  // bit for bit from_double<S>
        for (std::int64_t k = 0; k < values; ++k) {
            after[static_cast<std::size_t>(k)] = to_double(rounded[static_cast<std::size_t>(k)]);
        }
        kernels::pivot_ratios(exact.data(), nb, r, exact_ratio.data());
        kernels::pivot_ratios(after.data(), nb, r, after_ratio.data());
        for (std::int64_t c = 0; c < nb; ++c) {
            const double e = exact_ratio[static_cast<std::size_t>(c)];
            if (!(std::fabs(after_ratio[static_cast<std::size_t>(c)] - e) < 0.5 * e)) {
                return b0 + c;
            }
        }
    }
    return -1;
}

// The first cell whose r x r centre block does not survive rounding to the storage precision,
// or -1: block Gauss-Seidel and ILU invert these blocks, and a nearly singular block rounded to
// FP16 can become singular. A block survives when its smallest elimination pivot (relative to
// its largest entry) changes by less than half under the rounding. With `s`, the blocks are
// those of the scaled matrix Q^{-1/2} A Q^{-1/2} (s = diag(Q^{1/2})), computed here. Cells in
// parallel, in batches rounded by the SIMD narrowing.
std::int64_t ill_conditioned_block(const SgDiaMatrix<double>& a, Precision p,
                                   const std::vector<double>* s) {
    const int r = a.block();
    if (r == 1) return -1;
    const std::int64_t cells = a.box().cells();
    const auto scan = [&](std::int64_t c0, std::int64_t c1) {
        const bool h = p == Precision::fp16;
        switch (r) {
            case 2:
                return h ? first_ill_block<2, half>(a, s, c0, c1)
                         : first_ill_block<2, bfloat16>(a, s, c0, c1);
            case 3:
                return h ? first_ill_block<3, half>(a, s, c0, c1)
                         : first_ill_block<3, bfloat16>(a, s, c0, c1);
            case 4:
                return h ? first_ill_block<4, half>(a, s, c0, c1)
                         : first_ill_block<4, bfloat16>(a, s, c0, c1);
            default:
                return h ? first_ill_block<0, half>(a, s, c0, c1)
                         : first_ill_block<0, bfloat16>(a, s, c0, c1);
        }
    };
    constexpr std::int64_t kPart = 4096;  // cells per OpenMP iteration
    const std::int64_t parts = (cells + kPart - 1) / kPart;
    std::int64_t first = cells;
#pragma omp parallel for schedule(static) reduction(min : first)
    for (std::int64_t q = 0; q < parts; ++q) {
        const std::int64_t c0 = q * kPart;
        if (c0 >= first) continue;  // a bad cell before this part is known on this thread
        const std::int64_t bad = scan(c0, std::min(cells, c0 + kPart));
        if (bad >= 0) first = std::min(first, bad);
    }
    return first < cells ? first : -1;
}

// Setup-then-scale of an FP16 level in one pass over its FP64 values (pretruncate): tries G =
// largest_g(FP16 max), the G of every level whose min ratio is >= ~1/2 (every SPD level), or
// the lower G that the largest ratio inside the centre r x r blocks asks for, and truncates. The
// same pass measures the largest |â_ij|, and G stands when it is <= FP16 max / 2: the factor-2
// margin that compute_scaling's G <= G_max / 2 gives, checked on the scaled values themselves
// (|â_ij| = G / ratio_ij, so it is that rule, up to the last bit of the ratio). Otherwise the pass
// stops at the first value above FP16 max / 2 (the centre offset, where the couplings inside r x r
// blocks that exceed their diagonals lie, goes first) and the level takes compute_scaling's G, from
// its min-ratio pass (read only, cheaper than a truncation): the power of two below G_max / 2 that
// the measurement would have asked for. Returns why the level cannot be scaled, or nothing with
// `out` set (scaled, g, g_max, s, truncated and its counts).
std::string scale_and_truncate_half(const SgDiaMatrix<double>& a, StorageDecision& out) {
    const auto keep = [&](LevelScaling& sc, SgDiaMatrix<half> t, const TruncationCounts& tc) {
        out.scaled = true;
        out.g = sc.g;
        out.g_max = sc.g_max;
        out.s = std::move(sc.s);
        out.truncated = std::make_shared<const SgDiaMatrix<half>>(std::move(t));
        out.truncated_counts = tc;
    };
    {
        double g = largest_g(kHalfMax);
        // Couplings inside a cell's r x r block may exceed its diagonal (oil4c's up to 2.75
        // sqrt(a_ii a_jj)): G from the top would give up, often far into the pass (oil4c
        // n = 64: 27-32 ms on the Zen 5 VM), and the min-ratio pass follow (43-56 ms). The
        // centre blocks' largest ratio (1 / offsets of the values) gives the G that rule
        // chooses whenever it is the level's largest, which the try below checks as before.
        if (const double rc = centre_ratio(a); rc > 0.0 && g * rc > kHalfMax / 2) {
            g = largest_g(kHalfMax * (1.0 / rc));
        }
        LevelScaling sc = scaling_for(a, g);
        if (!sc.ok) return sc.problem;
        TruncationCounts tc;
        double largest = 0.0;
        SgDiaMatrix<half> t = truncate_scaled<half>(
            a, sc.s, tc, {.largest = &largest, .give_up_above = kHalfMax / 2});
        if (largest > 0.0 && largest <= kHalfMax / 2) {
            sc.g_max = kHalfMax * g / largest;  // FP16 max x min ratio
            keep(sc, std::move(t), tc);
            return {};
        }
    }
    LevelScaling sc = compute_scaling(a, kHalfMax);
    if (!sc.ok) return sc.problem;
    TruncationCounts tc;
    SgDiaMatrix<half> t = truncate_scaled<half>(a, sc.s, tc);
    keep(sc, std::move(t), tc);
    return {};
}

}  // namespace

StorageDecision decide_storage(const SgDiaMatrix<double>& a, LevelPrecision requested,
                               bool may_scale, bool automatic, bool fallback, bool pretruncate,
                               const LevelReductions* dist, const HalfFacts* a_in_fp16) {
    if (dist != nullptr && pretruncate) {
        throw std::logic_error("decide_storage: pretruncate needs the whole level");
    }
    StorageDecision out;
    out.precision = requested;
    const Precision st = requested.storage;
    if (st != Precision::fp16 && st != Precision::bf16) return out;
    const auto widen = [&](std::string why) {
        out = StorageDecision{};
        out.precision = LevelPrecision{requested.compute, requested.compute};
        out.note = fmt::format("{}; stored in {} instead", why, to_string(requested.compute));
        return out;
    };
    // Values in {0} ∪ [min normal, max/2] cannot overflow, underflow or turn subnormal: the
    // common in-range level needs no counting pass.
    bool outside =
        a_in_fp16 != nullptr && st == Precision::fp16 ? a_in_fp16->outside : needs_scaling(a, st);
    if (dist != nullptr) outside = dist->any(outside);
    // The counts of what will be truncated: Â's, computed while scaling (or without building
    // Â when the level scales inside its truncation), or a's own.
    TruncationCounts c;
    if (may_scale && outside && pretruncate && st == Precision::fp16) {
        if (std::string why = scale_and_truncate_half(a, out); !why.empty()) {
            return widen(fmt::format("cannot scale for {}: {}", to_string(st), why));
        }
    } else if (may_scale && outside) {
        const LevelScaling sc =
            compute_scaling(a, st == Precision::fp16 ? kHalfMax : kBf16Max, dist);
        if (!sc.ok) return widen(fmt::format("cannot scale for {}: {}", to_string(st), sc.problem));
        out.scaled = true;
        out.g = sc.g;
        out.g_max = sc.g_max;
        out.s = sc.s;
    }
    // (None when unscaled and in range, distributed too: `outside` covers every process's
    // rows, their coupling to other processes included.)
    if (out.truncated) {
        c = out.truncated_counts;
    } else if (out.scaled) {
        c = dist != nullptr ? dist->counts(st, &out.s)
                            : count_scaled_truncation(a, out.s, limits_for(st));
    } else if (outside) {
        c = dist != nullptr ? dist->counts(st, nullptr) : count_for(st, a);
    }
    if (c.overflow > 0 && !fallback) {
        out.note = fmt::format("{} entries overflow {}; kept (setup_fallback off, ablation)",
                               c.overflow, to_string(st));
        return out;
    }
    if (c.overflow > 0) {
        return widen(fmt::format("{} entries overflow {}{}", c.overflow, to_string(st),
                                 out.scaled ? " after scaling" : " without scaling"));
    }
    const std::int64_t cell = ill_conditioned_block(a, st, out.scaled ? &out.s : nullptr);
    if (dist != nullptr ? dist->any(cell >= 0) : cell >= 0) {
        const std::string where =
            cell < 0
                ? std::string("a cell of another process")
                : fmt::format("cell {}{}", cell, dist != nullptr ? " of a process's rows" : "");
        return widen(fmt::format("the {}x{} diagonal block of {} is too close to singular for {}",
                                 a.block(), a.block(), where, to_string(st)));
    }
    const std::int64_t nnz = dist != nullptr ? dist->nnz() : a.nnz();
    const double lost = static_cast<double>(c.underflow + c.subnormal);
    if (automatic && !underflow_below_rounding(st, out.scaled, out.g) &&
        lost > kAutoUnderflowFraction * static_cast<double>(nnz)) {
        return widen(fmt::format("{} of {} entries underflow or turn subnormal in {}",
                                 c.underflow + c.subnormal, nnz, to_string(st)));
    }
    if (out.scaled) out.note = fmt::format("scaled: G = {:g} (G_max = {:.4g})", out.g, out.g_max);
    if (automatic) {
        out.note = fmt::format("auto: {} ({}{} of {} entries underflow or subnormal)",
                               to_string(st), out.scaled ? out.note + "; " : "in range; ",
                               c.underflow + c.subnormal, nnz);
    }
    return out;
}

}  // namespace mpmg
