// Truncation of a level's FP64 matrix to its storage precision (ICPP'24 Algorithm 1 lines 8/11),
// counting overflow, underflow and subnormal results (DESIGN.md Safety §3). Both loops run
// one diagonal per OpenMP iteration (diagonals are disjoint slices of the value array).
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <new>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "core/float16.hpp"
#include "core/inside_runs.hpp"
#include "kernels/convert_simd.hpp"
#include "kernels/setup_simd.hpp"
#include "mpmg/sgdia_matrix.hpp"
#include "smoothers/ilu0.hpp"
#include "structured/sgdia_view.hpp"

namespace mpmg {

namespace detail {

/// Calls f(d, counts) for every diagonal d in parallel and sums the per-thread counts.
template <class F>
TruncationCounts for_diagonals_counted(int ndiag, F f) {
    TruncationCounts total;
#pragma omp parallel
    {
        TruncationCounts mine;
#pragma omp for schedule(dynamic, 1)
        for (int d = 0; d < ndiag; ++d) f(d, mine);
#pragma omp critical(mpmg_truncation_counts)
        total += mine;
    }
    return total;
}

}  // namespace detail

/// a's values in storage precision S, rounded to nearest even (SIMD, kernels/convert_simd.hpp;
/// bit for bit from_double<S>), adding what happened to `counts`. Entries whose neighbour lies
/// outside the box stay zero; only the others are read, so `a` may be a window of a larger
/// matrix (structured/sgdia_view.hpp).
template <class S>
SgDiaMatrix<S> truncate(const SgDiaView<double>& a, TruncationCounts& counts) {
    SgDiaMatrix<S> out(a.box, *a.stencil, a.block);
    const std::int64_t rr = std::int64_t{a.block} * a.block;
    counts += detail::for_diagonals_counted(a.stencil->size(), [&](int d, TruncationCounts& c) {
        const double* src = a.diagonal(d);
        S* dst = out.diagonal(d);
        for_each_inside_run(a.box, *a.stencil, d, [&](std::int64_t first, std::int64_t cells) {
            c += kernels::narrow(src + first * rr, dst + first * rr, cells * rr);
        });
    });
    return out;
}

/// What truncate_scaled does besides the scaled truncation itself.
struct ScaledTruncationOptions {
    /// Column scales when they differ from the row's: a_ij / (s_i s_col_j).
    const std::vector<double>* s_col = nullptr;
    /// Set to the largest |a_ij / (s_i s_j)| (NaN ignored), from the same pass.
    double* largest = nullptr;
    /// With `largest`: the pass stops once a value above this is seen (*largest is then above
    /// it, and the matrix and counts are incomplete: the caller discards them).
    double give_up_above = std::numeric_limits<double>::infinity();
};

/// truncate<S>(scale_matrix(a, s)) bit for bit, without the FP64 scaled matrix: each value is
/// scaled, a_ij / (s_i s_j), inside the narrowing (setup-then-scale, ICPP'24 §4.1). S is half
/// or bfloat16 (the storage formats that are scaled). The centre offset runs first: it holds
/// the largest values of most matrices (the diagonal, and in r x r blocks the couplings
/// between components), so a pass that gives up (ScaledTruncationOptions) does so early.
template <class S>
SgDiaMatrix<S> truncate_scaled(const SgDiaMatrix<double>& a, const std::vector<double>& s,
                               TruncationCounts& counts, const ScaledTruncationOptions& opt = {}) {
    SgDiaMatrix<S> out(a.box(), a.stencil(), a.block());
    const int ndiag = a.stencil().size(), centre = a.stencil().center();
    std::vector<double> per_diagonal(static_cast<std::size_t>(ndiag), 0.0);
    std::atomic<bool> gave_up{false};
    counts += detail::for_diagonals_counted(ndiag, [&](int k, TruncationCounts& c) {
        const int d = (k + centre) % ndiag;
        const double* v = a.diagonal(d);
        S* w = out.diagonal(d);
        double* top = &per_diagonal[static_cast<std::size_t>(d)];
        for_each_inside_scaled_run(
            a, s, opt.s_col ? *opt.s_col : s, d,
            [&](std::int64_t at, const double* si, const double* sj, std::int64_t n) {
                if (gave_up.load(std::memory_order_relaxed)) return;
                c += kernels::narrow_scaled(v + at, si, sj, w + at, n, opt.largest ? top : nullptr);
                if (*top > opt.give_up_above) gave_up.store(true, std::memory_order_relaxed);
            });
    });
    if (opt.largest) *opt.largest = *std::max_element(per_diagonal.begin(), per_diagonal.end());
    return out;
}

/// 1 / s, value by value: the column scales of L in a scaled ILU(0) level (L-hat = S^{-1} L S).
inline std::vector<double> reciprocals(const std::vector<double>& s) {
    std::vector<double> out(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) out[i] = 1.0 / s[i];
    return out;
}

/// An Ilu0Sink that narrows the factors into storage S line by line as ilu0_factor makes them:
/// L and U as truncate<S> would narrow the FP64 factors, or with `s` as the scaled ILU level
/// does (truncate_scaled<S>: L by s_i / s_j, {.s_col = 1 / s}; U by s_i s_j), bit for bit and
/// with the same counts, without FP64 factors of the whole box (weather n = 121's level 0 in
/// FP64: L and U 142 MB each). Point matrices only.
template <class S>
class FactorNarrowing final : public Ilu0Sink {
public:
    /// `a`: the matrix being factored; `s` null (plain) or its scaling (S half or bfloat16).
    explicit FactorNarrowing(const SgDiaMatrix<double>& a, const std::vector<double>* s = nullptr)
        : l_(a.box(), half_of(a.stencil(), true), 1),
          u_(a.box(), half_of(a.stencil(), false), 1),
          s_(s) {
        if constexpr (!std::is_same_v<S, half> && !std::is_same_v<S, bfloat16>) {
            if (s_ != nullptr) {
                throw std::logic_error("FactorNarrowing: only FP16 and BF16 factors are scaled");
            }
        }
        if (s_ != nullptr) inv_s_ = reciprocals(*s_);
    }

    void line(std::int64_t c0, const double* const* lower, const double* const* upper) override {
        narrow_line(l_, c0, lower, s_ != nullptr ? &inv_s_ : nullptr);
        narrow_line(u_, c0, upper, s_);
    }
    /// The factors in S, once the factorisation is done.
    SgDiaMatrix<S> take_l() { return std::move(l_); }
    SgDiaMatrix<S> take_u() { return std::move(u_); }
    TruncationCounts counts;  ///< what the narrowing did, as truncate's

private:
    static Stencil half_of(const Stencil& st, bool lower) {
        const auto first = st.offsets().begin();
        return lower ? Stencil(std::vector<Offset>(first, first + st.center() + 1))
                     : Stencil(std::vector<Offset>(first + st.center(), st.offsets().end()));
    }
    /// The values of line c0 of `m`'s offsets whose neighbour lies inside, narrowed (scaled by
    /// s_row = s_ and s_col when s_col is set).
    void narrow_line(SgDiaMatrix<S>& m, std::int64_t c0, const double* const* values,
                     const std::vector<double>* s_col) {
        const Box& b = m.box();
        for (int d = 0; d < m.stencil().size(); ++d) {
            const Offset& o = m.stencil()[d];
            const std::int64_t lin = o.dx + b.nx * (o.dy + std::int64_t{b.ny} * o.dz);
            for_each_inside_run(
                b, m.stencil(), d, c0, c0 + b.nx, [&](std::int64_t at, std::int64_t n) {
                    const double* from = values[d] + (at - c0);
                    S* to = m.diagonal(d) + at;
                    if (s_col == nullptr) {
                        counts += kernels::narrow(from, to, n);
                    } else if constexpr (std::is_same_v<S, half> || std::is_same_v<S, bfloat16>) {
                        counts += kernels::narrow_scaled(from, s_->data() + at,
                                                         s_col->data() + at + lin, to, n);
                    }
                });
        }
    }
    SgDiaMatrix<S> l_, u_;
    const std::vector<double>* s_;
    std::vector<double> inv_s_;
};

/// What truncate<S>(a) would count, without building the matrix: comparisons against the
/// rounding thresholds of S (range_limits), one memory-bound pass with no conversion.
template <class S>
TruncationCounts count_truncation(const SgDiaMatrix<double>& a) {
    static_assert(std::is_same_v<S, half> || std::is_same_v<S, bfloat16> ||
                  std::is_same_v<S, double>);
    constexpr RangeLimits lim = range_limits<S>();
    const std::int64_t rr = std::int64_t{a.block()} * a.block();
    return detail::for_diagonals_counted(a.stencil().size(), [&](int d, TruncationCounts& c) {
        const double* src = a.diagonal(d);
        for_each_inside_run(a, d, [&](std::int64_t first, std::int64_t cells) {
            c += kernels::count_range(src + first * rr, cells * rr, lim);
        });
    });
}

namespace detail {

/// narrow(src, dst, n, facts) over the values of every offset of `a` whose neighbour is inside
/// the box, into `out` (a's shape), in parallel over the offsets; true when every call returned
/// true, `facts` (when not null) then the sum of what the calls added to theirs. Stops at the
/// first run whose call returns false (out then partly written).
template <class S, class Narrow>
bool narrow_all_exact(const SgDiaMatrix<double>& a, SgDiaMatrix<S>& out, Narrow narrow,
                      HalfFacts* facts = nullptr) {
    const std::int64_t rr = std::int64_t{a.block()} * a.block();
    std::atomic<bool> exact{true};
    std::vector<HalfFacts> per(static_cast<std::size_t>(a.stencil().size()));
#pragma omp parallel for schedule(dynamic, 1)
    for (int d = 0; d < a.stencil().size(); ++d) {
        const double* src = a.diagonal(d);
        S* dst = out.diagonal(d);
        HalfFacts& f = per[static_cast<std::size_t>(d)];
        for_each_inside_run(a, d, [&](std::int64_t first, std::int64_t cells) {
            if (!exact.load(std::memory_order_relaxed)) return;
            const std::int64_t at = first * rr;
            if (!narrow(src + at, dst + at, cells * rr, f)) {
                exact.store(false, std::memory_order_relaxed);
            }
        });
    }
    if (!exact.load()) return false;
    if (facts != nullptr) {
        for (const HalfFacts& f : per) *facts += f;
    }
    return true;
}

}  // namespace detail

/// An exact copy of a in storage S (float or half) if S holds every entry whose neighbour is
/// inside the box exactly (kernels::narrow_exact), else nothing; stops at the first diagonal
/// with a value it does not hold. Constant-coefficient stencils (Laplace's 26 and -1) pass.
template <class S>
std::optional<SgDiaMatrix<S>> exact_copy(const SgDiaMatrix<double>& a) {
    SgDiaMatrix<S> out(a.box(), a.stencil(), a.block());
    const bool exact = detail::narrow_all_exact(
        a, out, [](const double* src, S* dst, std::int64_t n, HalfFacts& /*facts: unused*/) {
            return kernels::narrow_exact(src, dst, n);
        });
    if (!exact) return std::nullopt;
    return out;
}

/// A matrix that is a scalar multiple of one FP16 holds exactly: A = scale x m, value by value
/// (m = A / scale, and m scale gives A back in FP64); `facts`: m's (HalfFacts).
struct ExactHalfMultiple {
    SgDiaMatrix<half> m;
    double scale = 1.0;
    HalfFacts facts;
};

inline constexpr std::int64_t kScaleSample = 4096;  ///< values per offset sampled_scale reads

/// The scale exact_multiple tries when A itself is not exact in FP16: the smallest nonzero
/// |a_ij| among the first values of each offset (a sample; a wrong guess only fails the check).
/// For a constant-coefficient stencil times a constant (Laplace's 26 and -1 times 1/h^2 or a
/// material's coefficient) it is that constant times the smallest coefficient. +inf when the
/// sample holds no nonzero finite value.
inline double sampled_scale(const SgDiaMatrix<double>& a) {
    const std::int64_t per = std::min(kScaleSample, a.box().cells() * a.block() * a.block());
    double c = std::numeric_limits<double>::infinity();
    for (int d = 0; d < a.stencil().size(); ++d) {
        const double* v = a.diagonal(d);
        for (std::int64_t k = 0; k < per; ++k) {
            const double x = std::fabs(v[k]);
            if (x > 0.0 && x < c) c = x;  // NaN and 0 never
        }
    }
    return c;
}

/// out = A / c, true when FP16 holds every such value whose neighbour is inside the box exactly
/// (and each gives a_ij back times c; kernels::narrow_exact_multiple), `facts` (when not null)
/// then added the HalfFacts of out's values. Stops at the first run with a value it does not
/// hold (out then partly written). `out` has a's shape.
inline bool holds_multiple(const SgDiaMatrix<double>& a, double c, SgDiaMatrix<half>& out,
                           HalfFacts* facts = nullptr) {
    return detail::narrow_all_exact(
        a, out,
        [c](const double* src, half* dst, std::int64_t n, HalfFacts& f) {
            return c == 1.0 ? kernels::narrow_exact(src, dst, n, &f)
                            : kernels::narrow_exact_multiple(src, c, dst, n, &f);
        },
        facts);
}

/// A as scale x m with m exact in FP16: scale 1 when FP16 holds A itself (exact_copy<half>),
/// else the sampled_scale, or nothing when neither holds every value whose neighbour is inside
/// the box. Each try stops at the first run with a value it does not hold.
inline std::optional<ExactHalfMultiple> exact_multiple(const SgDiaMatrix<double>& a) {
    ExactHalfMultiple out{SgDiaMatrix<half>(a.box(), a.stencil(), a.block()), 1.0, {}};
    if (holds_multiple(a, 1.0, out.m, &out.facts)) return out;
    const double c = sampled_scale(a);
    if (!std::isfinite(c) || c == 1.0 || !holds_multiple(a, c, out.m, &out.facts)) {
        return std::nullopt;
    }
    out.scale = c;
    return out;
}

/// exact_multiple(a), or nothing when its memory cannot be allocated either (the Krylov
/// operators' copy, which only speeds products up).
inline std::optional<ExactHalfMultiple> exact_multiple_if_memory(const SgDiaMatrix<double>& a) {
    try {
        return exact_multiple(a);
    } catch (const std::bad_alloc&) {
        return std::nullopt;
    }
}

/// exact_copy<S>(a), or nothing when its memory cannot be allocated either: for an exact copy
/// that only speeds products up (the Krylov operators), without which they read A.
template <class S>
std::optional<SgDiaMatrix<S>> exact_copy_if_memory(const SgDiaMatrix<double>& a) {
    try {
        return exact_copy<S>(a);
    } catch (const std::bad_alloc&) {
        return std::nullopt;
    }
}

}  // namespace mpmg
