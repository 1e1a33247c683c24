#include "multigrid/level.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "core/prefault.hpp"
#include "kernels/sgdia_block.hpp"
#include "mpmg/errors.hpp"
#include "multigrid/coarse_solver.hpp"
#include "multigrid/level_vectors.hpp"
#include "multigrid/truncate.hpp"
#include "smoothers/ilu0.hpp"
#include "structured/sgdia_ops.hpp"

namespace mpmg {
namespace {

template <class C>
constexpr Precision precision_of() {
    return std::is_same_v<C, double> ? Precision::fp64 : Precision::fp32;
}

/// The level's matrix in storage precision S (scaled inside the truncation when so set up), or
/// the shared exact FP16 copy when the level stores FP16 unscaled and its source gives one, or
/// the FP64 operator itself (LevelSetup::shared_fp64) when it stores FP64 unscaled.
/// *symmetric: the matrix returned is a shared exact FP16 copy known to be exactly symmetric.
template <class S>
std::shared_ptr<const SgDiaMatrix<S>> truncate_level(const LevelSetup& setup,
                                                     TruncationCounts& counts, bool* symmetric) {
    if constexpr (std::is_same_v<S, half>) {
        if (setup.truncated) {
            counts += setup.truncated_counts;
            return setup.truncated;
        }
        // What truncate<half> would count on values half holds exactly (found as they were
        // narrowed: HalfFacts).
        if (setup.shared_half.m) {  // A / c, exact
            counts.subnormal += setup.shared_half.facts.subnormal;
            *symmetric = setup.shared_half.symmetric;
            return setup.shared_half.m;
        }
        if (setup.exact_half && setup.s.empty() && !setup.owns) {
            if (ExactHalf e = setup.exact_half(); e.m && e.scale == 1.0) {
                counts.subnormal += e.facts.subnormal;
                *symmetric = e.symmetric;
                return e.m;
            }
        }
    }
    if constexpr (std::is_same_v<S, double>) {
        if (setup.shared_fp64 && setup.s.empty() && !setup.owns) {
            // Subnormals, as the copy's count would find them (none in a normal A).
            if (!setup.shared_fp64_normal) counts += count_truncation<double>(*setup.shared_fp64);
            return setup.shared_fp64;
        }
    }
    if constexpr (std::is_same_v<S, half> || std::is_same_v<S, bfloat16>) {
        if (setup.scale_in_truncation) {
            return std::make_shared<const SgDiaMatrix<S>>(
                truncate_scaled<S>(setup.matrix(), setup.s, counts));
        }
    }
    return std::make_shared<const SgDiaMatrix<S>>(truncate<S>(
        setup.fp64_view ? *setup.fp64_view : SgDiaView<double>(setup.matrix()), counts));
}

/// Whether the level reads setup.fp64_view in place (FP64 storage; a narrower one truncates
/// from the view). Checked: a level that reads its operator otherwise than through the SG-DIA
/// operations and the unscaled truncation must not get a view. (A level 0 of scale-then-setup
/// has s for its vectors only: its operator is scaled already.)
template <class S>
bool in_place(const LevelSetup& setup, bool direct) {
    if (!setup.fp64_view) return false;
    constexpr bool fp64 = std::is_same_v<S, double>;
    const bool ok =
        !direct && !setup.scale_in_truncation &&
        (setup.smoother == SmootherKind::symgs || setup.smoother == SmootherKind::jacobi) &&
        (!fp64 || (setup.s.empty() && setup.fp64_view->block == 1 && setup.shared_fp64_normal));
    if (!ok)
        throw std::logic_error("make_level: fp64_view for a level that must copy its operator");
    return fp64;
}

/// setup.fp64_view as the level's matrix (reached only where in_place<S> holds: S = double).
template <class S>
SgDiaView<S> view_of(const LevelSetup& setup) {
    if constexpr (std::is_same_v<S, double>) {
        return *setup.fp64_view;
    } else {
        (void)setup;
        throw std::logic_error("make_level: fp64_view for a level that does not store FP64");
    }
}

template <class S, class C>
class LevelImpl final : public Level {
public:
    LevelImpl(const LevelSetup& setup, bool direct, LevelReport& report)
        : a_ptr_(in_place<S>(setup, direct)
                     ? nullptr
                     : truncate_level<S>(setup, report.counts, &shared_symmetric_)),
          a_(a_ptr_ ? SgDiaView<S>(*a_ptr_) : view_of<S>(setup)),
          rows_(a_.rows()),
          block_(a_.block),
          to_coarse_(setup.to_coarse),
          smoother_(setup.smoother),
          omega_(static_cast<C>(setup.jacobi_weight)),
          scale_transfers_(setup.scale_transfers && !setup.s.empty()),
          boundary_(setup.boundary),
          f_(prefaulted<C>(static_cast<std::size_t>(rows_))),
          u_(prefaulted<C>(f_.size())),
          r_(prefaulted<C>(f_.size())) {
        if (!setup.s.empty()) {
            s_.assign(setup.s.begin(), setup.s.end());
            inv_s_.resize(s_.size());
            for (std::size_t i = 0; i < s_.size(); ++i)
                inv_s_[i] = static_cast<C>(1.0 / setup.s[i]);
        }
        if (setup.smoother == SmootherKind::ilu0 && !direct) factor_ilu(setup, report.counts);
        if (direct) {
            coarse_.emplace(setup.matrix());
            work_.resize(f_.size());
        } else if (kernels::BlockSoa<S, C>::supported(block_)) {
            if (!a_ptr_) throw std::logic_error("make_level: a block level read in place");
            blocks_ = kernels::BlockSoa<S, C>(*a_ptr_);  // the block SIMD kernels' layout
            // Every product and sweep now reads blocks_: the SG-DIA matrix is let go (freed
            // when the level owned it: half of an FP16 block level's bytes).
            a_ptr_.reset();
            a_ = {};
        }
        // An exactly symmetric point level is read from its upper half: every sweep, residual
        // and product takes each offset before the centre from its mirror after it (the same
        // values, bit for bit the same results). The check reads the matrix once (4 ms for
        // laplace27 n = 108 in FP16); a backward sweep of it then took 4.15-4.2 instead of
        // 4.7-4.8 ms, the sweep from zero 2.2 instead of 2.5 (throwaway driver, one thread).
        // Smoothing levels on one process (a distributed level's view reaches into its ghost
        // cells).
        // A shared exact FP16 copy (the Krylov operator's) was checked when it was made.
        if (!direct && blocks_.empty() && block_ == 1 && !boundary_ &&
            (shared_symmetric_ || exactly_symmetric(a_))) {
            a_.mirror_lower = true;
            report.upper_half = true;
        }
        // -U û needs the point Gauss-Seidel sweep on the SG-DIA matrix, and a level kept with
        // overflowed (infinite) entries (setup_fallback off, the ablation) must show them: b - A x
        // turns them into NaN for the guard, -U x would skip the centre.
        upper_residual_ok_ = blocks_.empty() && smoother_ != SmootherKind::jacobi &&
                             smoother_ != SmootherKind::ilu0 && report.counts.overflow == 0 &&
                             report.counts.nonfinite_input == 0;
        if (boundary_ && smoother_ == SmootherKind::symgs) {
            z_split_ = boundary_->z_split();
        }
    }

    /// The ILU(0) factors in the level's storage S. FP64 keeps ilu0_factor's (counted as
    /// truncate<double> would, without its copy). Narrower storage narrows them; a level scaled
    /// inside its truncation factorises A itself: ILU(0) commutes with the diagonal scaling
    /// S = diag(s) (the factors of S^{-1} A S^{-1} on the same pattern are S^{-1} L S and
    /// S^{-1} U S^{-1}, with the same pivots), so the factors are scaled as they are narrowed,
    /// L-hat_ij = l_ij / (s_i / s_j), U-hat_ij = u_ij / (s_i s_j), and no FP64 copy of the
    /// scaled level is made. Point levels narrow them line by line as the factorisation makes
    /// them (FactorNarrowing: bit for bit what truncating the FP64 factors gives), so no FP64
    /// factors of the whole level are held either; block levels truncate the FP64 factors.
    void factor_ilu(const LevelSetup& setup, TruncationCounts& counts) {
        const SgDiaMatrix<double>& a = setup.matrix();
        if constexpr (std::is_same_v<S, double>) {
            Ilu0Factors f = ilu0_factor(a);
            counts += count_truncation<double>(f.l);
            counts += count_truncation<double>(f.u);
            l_ = std::move(f.l);
            u_factor_ = std::move(f.u);
        } else {
            constexpr bool k16 = std::is_same_v<S, half> || std::is_same_v<S, bfloat16>;
            const bool scaled = k16 && !setup.s.empty() && setup.scale_in_truncation;
            if (a.block() == 1) {
                FactorNarrowing<S> factors(a, scaled ? &setup.s : nullptr);
                (void)ilu0_factor(a, &factors);
                l_ = factors.take_l();
                u_factor_ = factors.take_u();
                counts += factors.counts;
                return;
            }
            const Ilu0Factors f = ilu0_factor(a);
            if constexpr (k16) {
                if (scaled) {
                    const std::vector<double> inv_s = reciprocals(setup.s);
                    l_ = truncate_scaled<S>(f.l, setup.s, counts, {.s_col = &inv_s});
                    u_factor_ = truncate_scaled<S>(f.u, setup.s, counts);
                    return;
                }
            }
            l_ = truncate<S>(f.l, counts);
            u_factor_ = truncate<S>(f.u, counts);
        }
    }

    Precision compute() const override { return precision_of<C>(); }
    std::int64_t rows() const override { return rows_; }

    /// Gauss-Seidel and Jacobi divide by the diagonal (the centre blocks' inverses on a block
    /// level): a zero diagonal entry of the operator would turn the first sweep into NaN, which
    /// the guard could only report as a preconditioner output that is not finite, and no
    /// rebuild repairs. Throws NumericalError naming the first such cell. Not for what the
    /// storage made of the values (a level kept with overflowed or underflowed entries, the
    /// ablation's, or an FP16 block rounded singular): the guard's rebuilds in wider precision
    /// repair those. ILU(0) checks its own pivots; the LU its own.
    void check_diagonal(int index, const std::array<int, 3>& origin,
                        const TruncationCounts& counts) const {
        if (smoother_ != SmootherKind::symgs && smoother_ != SmootherKind::jacobi) return;
        if (counts.overflow > 0 || counts.underflow > 0 || counts.nonfinite_input > 0) return;
        const std::string smoother(to_string(smoother_));
        constexpr std::string_view advice =
            "such as a saddle point, try --smoother ilu0 --solver gmres";
        if (!blocks_.empty()) {
            constexpr bool narrow = std::is_same_v<S, half> || std::is_same_v<S, bfloat16>;
            if (!narrow && blocks_.singular_blocks() > 0) {
                throw NumericalError(fmt::format(
                    "level {}: {} of its {}x{} diagonal blocks are singular or not finite; the {} "
                    "smoother inverts them (for a system with singular diagonal blocks, {})",
                    index, blocks_.singular_blocks(), block_, block_, smoother, advice));
            }
            return;
        }
        const SgDiaView<S>& a = a_;
        const Box& b = a.box;
        // The centre offset's values, entry (k, k) of cell c at c r^2 + k (r + 1): a plain scan
        // for zero bits (FP16/BF16: either sign); widening each value through
        // SgDiaMatrix::value took about 17 ms of rhd n = 160's setup (4.1M cells, perf samples).
        const S* diag = a.diagonal(a.stencil->center());
        const std::int64_t rr = std::int64_t{block_} * block_, cells = b.cells();
        const auto is_zero = [](S v) {
            if constexpr (std::is_same_v<S, half> || std::is_same_v<S, bfloat16>) {
                return (v.bits & 0x7fffu) == 0;
            } else {
                return v == S{0};
            }
        };
        // The first zero in cell order, the lowest unknown of that cell.
        std::int64_t c = cells;
        int k = 0;
        for (int q = 0; q < block_; ++q) {
            const S* first = diag + q * (block_ + 1);
            std::int64_t at = 0;
            while (at < c && !is_zero(first[at * rr])) ++at;
            if (at < c) {
                c = at;
                k = q;
            }
        }
        if (c == cells) return;
        const double v = to_double(diag[c * rr + k * (block_ + 1)]);
        const std::int64_t x = c % b.nx, y = (c / b.nx) % b.ny, z = c / (b.nx * b.ny);
        throw NumericalError(fmt::format(
            "level {}: diagonal {} at cell ({}, {}, {}){}; the {} smoother needs a "
            "nonzero diagonal (for a system with zero diagonal entries, {})",
            index, v, x + origin[0], y + origin[1], z + origin[2],
            block_ > 1 ? fmt::format(", unknown {}", k) : std::string(), smoother, advice));
    }

    void set_rhs(const double* r) override { load(r); }
    void set_rhs(const float* r) override { load(r); }
    void get_solution(double* z) const override { solution_to(z); }
    void get_solution(float* z) const override { solution_to(z); }

    void smooth(int sweeps, bool pre) override {
        const bool from_zero = u_state_ == UState::zero;
        for (int s = 0; s < sweeps; ++s) {
            if (smoother_ == SmootherKind::ilu0) {
                ilu_step();
                u_state_ = UState::other;
                continue;
            }
            if (z_split_ != LevelBoundary::ZSplit::none) {
                clear_unwritten_u();  // the deferred lowest plane reads its own old values
                z_ordered_sweep(pre);
                u_state_ = UState::other;
                continue;
            }
            // Hybrid across processes: the neighbours' values from before the sweep enter as
            // f̂ - G û_ghost (nothing to fetch while û is zero: every process is in that state
            // at the same point of the cycle).
            const bool ghosts = boundary_ && u_state_ != UState::zero;
            if (ghosts) subtract_ghosts();
            if (smoother_ == SmootherKind::jacobi) {
                clear_unwritten_u();
                if (blocks_.empty()) {
                    jacobi(a_, f_.data(), u_.data(), r_.data(), omega_);
                } else {
                    jacobi(blocks_, f_.data(), u_.data(), r_.data(), omega_);
                }
                u_.swap(r_);
            } else {
                // The first sweep after a new right-hand side starts from û = 0 and reads only
                // the half of the stencil that it has already updated.
                // It writes every value of û without reading one: û's memory need not hold
                // the zeros.
                // Serial levels sweep in the block order (structured/gs_order.hpp): a slab of
                // planes per thread; a distributed level keeps the wavefront inside its block.
                const GsOrder order = boundary_ ? GsOrder::wavefront : GsOrder::blocks;
                const bool zero = u_state_ == UState::zero;
                swept_slabs_ = blocks_.empty()
                                   ? gs_sweep(a_, f_.data(), u_.data(), pre, zero, {}, order)
                                   : gs_sweep(blocks_, f_.data(), u_.data(), pre, zero, {}, order);
                u_unwritten_ = false;
            }
            if (ghosts) restore_ghost_rows();
            u_state_ = UState::other;
        }
        // One forward sweep from û = 0 leaves (D + L) û = f̂, so the residual is -U û (minus the
        // coupling to the neighbours' new values on a distributed level).
        if (upper_residual_ok_ && sweeps == 1 && pre && from_zero)
            u_state_ = UState::forward_from_zero;
    }

    void restrict_residual(Level& coarse) override {
        if (coarse.compute() == Precision::fp64) {
            restrict_into(static_cast<double*>(coarse.rhs_data()));
        } else {
            restrict_into(static_cast<float*>(coarse.rhs_data()));
        }
        coarse.finish_rhs();
    }

    void residual_unscaled(std::vector<double>& r) override {
        residual_to_r(true);
        const std::size_t n = r_.size();
        r.resize(n);
        if (scale_transfers_) {
#pragma omp parallel for schedule(static) if (n > 32768)
            for (std::size_t i = 0; i < n; ++i) r[i] = static_cast<double>(s_[i] * r_[i]);
        } else {
            std::copy(r_.begin(), r_.end(), r.begin());
        }
    }

    const void* residual_in_place() override {
        if (scale_transfers_) return nullptr;
        residual_to_r(true);
        return r_.data();
    }

    void* correction_in_place() override {
        if (scale_transfers_) return nullptr;
        clear_unwritten_u();
        u_state_ = UState::other;
        return u_.data();
    }

    void add_correction(const std::vector<double>& e) override {
        clear_unwritten_u();
        u_state_ = UState::other;
        const std::size_t n = u_.size();
        if (scale_transfers_) {
#pragma omp parallel for schedule(static) if (n > 32768)
            for (std::size_t i = 0; i < n; ++i) u_[i] += s_[i] * static_cast<C>(e[i]);
        } else {
#pragma omp parallel for schedule(static) if (n > 32768)
            for (std::size_t i = 0; i < n; ++i) u_[i] += static_cast<C>(e[i]);
        }
    }

    void correct_from(Level& coarse) override {
        coarse.unscale_solution();
        clear_unwritten_u();
        u_state_ = UState::other;
        // Unscaled: u += P e. Scaled: û += s ⊙ (P e), inside the interpolation's pass.
        const C* scale = scale_transfers_ ? s_.data() : nullptr;
        if (coarse.compute() == Precision::fp64) {
            to_coarse_->interpolate_add(static_cast<const double*>(coarse.solution_data()),
                                        u_.data(), scale);
        } else {
            to_coarse_->interpolate_add(static_cast<const float*>(coarse.solution_data()),
                                        u_.data(), scale);
        }
    }

    /// The correction inside the first backward sweep (gs_sweep_prepared): each plane of û
    /// takes P e (scaled: s ⊙ P e) just before the sweep first reads it, so û is read and
    /// written once less than by correct_from and then the sweep (8 bytes a row at FP32). The
    /// same values: bit for bit correct_from then smooth. SymGS point levels on one process
    /// with full linear coarsening; the others take the two steps.
    void correct_and_smooth(Level& coarse, int sweeps) override {
        if (sweeps < 1 || smoother_ != SmootherKind::symgs || !blocks_.empty() || boundary_ ||
            !to_coarse_->restricts_by_planes()) {
            Level::correct_and_smooth(coarse, sweeps);
            return;
        }
        coarse.unscale_solution();
        if (coarse.compute() == Precision::fp64) {
            correct_in_sweep(static_cast<const double*>(coarse.solution_data()));
        } else {
            correct_in_sweep(static_cast<const float*>(coarse.solution_data()));
        }
        smooth(sweeps - 1, false);
    }

    void direct_solve() override {
        // The LU is of the level's (possibly scaled) operator, so it maps f̂ to û directly.
        std::copy(f_.begin(), f_.end(), work_.begin());
        coarse_->solve(work_.data());
        std::transform(work_.begin(), work_.end(), u_.begin(),
                       [](double v) { return static_cast<C>(v); });
        u_unwritten_ = false;
        u_state_ = UState::other;
    }

    void* rhs_data() override { return f_.data(); }
    void* solution_data() override {
        clear_unwritten_u();
        return u_.data();
    }
    void finish_rhs() override {
        if (scale_transfers_) level_vectors::multiply(f_, inv_s_);
        set_u_zero();
    }
    void unscale_solution() override {
        clear_unwritten_u();
        if (scale_transfers_) level_vectors::multiply(u_, inv_s_);
        u_state_ = UState::other;
    }

private:
    template <class T>
    void load(const T* r) {
        level_vectors::load_scaled(r, inv_s_, f_);
        set_u_zero();
    }
    // û = 0 for a new right-hand side, with its memory left as it is: the first sweep from zero
    // (every level's pre-smoothing) overwrites it without reading it, and every other reader
    // clears it first. Saves a pass that writes û (measured in the README, "Structured path").
    void set_u_zero() {
        u_state_ = UState::zero;
        u_unwritten_ = true;
    }
    void clear_unwritten_u() {
        if (!u_unwritten_) return;
        const std::size_t n = u_.size();
#pragma omp parallel for schedule(static) if (n > 32768)
        for (std::size_t i = 0; i < n; ++i) u_[i] = C{0};
        u_unwritten_ = false;
    }
    template <class T>
    void solution_to(T* z) const {
        if (u_unwritten_) {
            std::fill(z, z + u_.size(), T{0});
        } else {
            level_vectors::store_unscaled(u_, inv_s_, z);
        }
    }
    /// f(q) for every deferred plane q of the last sweep's block order (swept_slabs_): q was
    /// swept after q + 1, so -U û does not hold on the planes q and q + 1, which take b - A û.
    template <class F>
    void for_deferred_planes(F&& f) const {
        for (int t = 1; t < swept_slabs_; ++t) f(gs_block_first(a_.box.nz, swept_slabs_, t));
    }
    /// coarse_rhs = R r̂ (scaled: R (s ⊙ r̂), formed inside the restriction's pass). Point
    /// levels on one process with full linear coarsening form r̂ plane by plane inside that
    /// pass (Transfer::restrict_planes): residual_to_r's values, never written to r_ and read
    /// back (8 bytes a row less per cycle at FP32); the others restrict r_.
    template <class CC>
    void restrict_into(CC* coarse_rhs) {
        const C* scale = scale_transfers_ ? s_.data() : nullptr;
        if (blocks_.empty() && !boundary_) {
            clear_unwritten_u();
            const bool upper = u_state_ == UState::forward_from_zero;
            const auto deferred = [&](int z) {
                bool near = false;
                for_deferred_planes([&](int q) { near = near || z == q || z == q + 1; });
                return near;
            };
            const std::function<void(int, C*)> plane = [&](int z, C* out) {
                plane_residual(a_, f_.data(), u_.data(), out, z, upper && !deferred(z));
            };
            if (to_coarse_->restrict_planes(plane, coarse_rhs, scale)) return;
        }
        residual_to_r(true);
        to_coarse_->restrict_to(r_.data(), coarse_rhs, scale);
    }
    /// û += P e (scaled: s ⊙ P e) and one backward sweep, each plane's correction just before
    /// the sweep first reads it (correct_and_smooth).
    template <class CC>
    void correct_in_sweep(const CC* e) {
        clear_unwritten_u();
        const C* scale = scale_transfers_ ? s_.data() : nullptr;
        const std::function<void(int, int)> prepare = [&](int z0, int z1) {
            to_coarse_->interpolate_add_planes(e, u_.data(), scale, z0, z1);
        };
        swept_slabs_ = gs_sweep_prepared(a_, f_.data(), u_.data(), false, GsOrder::blocks, prepare);
        u_state_ = UState::other;
    }
    // r̂ = f̂ - Â û (with the coupling to other processes on a distributed level); after one
    // forward sweep from zero, when `upper` allows, -U û (half the stencil's values).
    void residual_to_r(bool upper) {
        clear_unwritten_u();
        if (upper && u_state_ == UState::forward_from_zero &&
            z_split_ == LevelBoundary::ZSplit::above) {
            // The permuted order (z_ordered_sweep) swept plane 0 after plane 1: -U û holds from
            // plane 2 on, planes 0 and 1 take b - A û.
            residual(a_, f_.data(), u_.data(), r_.data(), PlaneRange{0, 2});
            upper_residual(a_, u_.data(), r_.data(), PlaneRange{2, -1});
        } else if (upper && u_state_ == UState::forward_from_zero) {
            upper_residual(a_, u_.data(), r_.data());
            for_deferred_planes([&](int q) {
                residual(a_, f_.data(), u_.data(), r_.data(), PlaneRange{q, q + 2});
            });
        } else if (blocks_.empty()) {
            residual(a_, f_.data(), u_.data(), r_.data());
        } else {
            residual(blocks_, f_.data(), u_.data(), r_.data());
        }
        if (boundary_) boundary_->subtract(u_.data(), r_.data());
    }
    // u += U^{-1} L^{-1} (f - A u): the triangular solves are one-triangle Gauss-Seidel sweeps.
    // From û = 0 (on one process) the residual is f̂ and the step is û = U^{-1} L^{-1} f̂,
    // solved straight into û: no product A·0, no pass that clears û and none that adds r.
    void ilu_step() {
        if (u_state_ == UState::zero && !boundary_) {
            if (t_.size() != f_.size()) t_.assign(f_.size(), C{0});
            gs_sweep(l_, f_.data(), t_.data(), true);
            gs_sweep(u_factor_, t_.data(), u_.data(), false);
            u_unwritten_ = false;
            return;
        }
        residual_to_r(false);
        if (t_.size() != r_.size()) t_.assign(r_.size(), C{0});
        gs_sweep(l_, r_.data(), t_.data(), true);
        gs_sweep(u_factor_, t_.data(), r_.data(), false);
        const std::size_t n = u_.size();
#pragma omp parallel for schedule(static) if (n > 32768)
        for (std::size_t i = 0; i < n; ++i) u_[i] += r_[i];
    }
    // Gauss-Seidel on a z-split level (LevelBoundary::z_split) in an order that every process
    // can follow at once, exactly: each process above the bottom one takes its lowest plane
    // last. Forward, every process sweeps its other planes, all of whose neighbours are either
    // its own or (the plane above its box) the next process's lowest plane, not yet swept; then
    // the values of the planes below are exchanged and the lowest planes are swept, reading
    // their neighbours' new values on both sides. Backward is the same order reversed: the
    // lowest planes first (reading old values on both sides), then, with those exchanged, the
    // other planes from the top. A V-cycle of such sweeps is a symmetric Gauss-Seidel in one
    // fixed global order, where the hybrid sweep of other partitions lets every process read
    // its neighbours' values from before the sweep (laplace27 n = 128 on 2 processes: 9 CG
    // iterations hybrid against 8 serially). Costs one more halo exchange and one plane of
    // waiting per sweep.
    void z_ordered_sweep(bool forward) {
        const bool above = z_split_ == LevelBoundary::ZSplit::above;
        const bool zero = u_state_ == UState::zero;  // the same on every process
        const PlaneRange lowest{0, 1}, rest{above ? 1 : 0, -1};
        // Every process exchanges as often as the others (the bottom one, which has no lowest
        // plane to defer, for its neighbour's sake); from û = 0 the part before the deferred
        // planes reads no neighbour's values (those it would read are still 0).
        if (forward) {
            if (!zero) subtract_ghosts();
            sweep(true, zero, rest);
            if (!zero) restore_ghost_rows();
            subtract_ghosts();
            if (above) sweep(true, false, lowest);
            restore_ghost_rows();
        } else {
            if (!zero) subtract_ghosts();
            if (above) sweep(false, zero, lowest);
            if (!zero) restore_ghost_rows();
            subtract_ghosts();
            sweep(false, false, rest);
            restore_ghost_rows();
        }
    }
    // One Gauss-Seidel sweep over `planes` of the point or block matrix.
    void sweep(bool forward, bool zero_guess, PlaneRange planes) {
        if (blocks_.empty()) {
            gs_sweep(a_, f_.data(), u_.data(), forward, zero_guess, planes);
        } else {
            gs_sweep(blocks_, f_.data(), u_.data(), forward, zero_guess, planes);
        }
    }
    // f̂ -= G û_ghost on the rows coupled to other processes, keeping their f̂ to restore.
    void subtract_ghosts() {
        const std::vector<std::int64_t>& rows = boundary_->rows();
        const auto r = static_cast<std::size_t>(block_);
        saved_.resize(rows.size() * r);
        for (std::size_t q = 0; q < rows.size(); ++q) {
            const auto c = static_cast<std::size_t>(rows[q]) * r;
            std::copy_n(f_.begin() + static_cast<std::ptrdiff_t>(c), r, saved_.begin() + q * r);
        }
        boundary_->subtract(u_.data(), f_.data());
    }
    void restore_ghost_rows() {
        const std::vector<std::int64_t>& rows = boundary_->rows();
        const auto r = static_cast<std::size_t>(block_);
        for (std::size_t q = 0; q < rows.size(); ++q) {
            const auto c = static_cast<std::size_t>(rows[q]) * r;
            std::copy_n(saved_.begin() + q * r, r, f_.begin() + static_cast<std::ptrdiff_t>(c));
        }
    }

    /// a_ptr_ is a shared exact FP16 copy known to be exactly symmetric (ExactHalf::symmetric);
    /// declared before a_ptr_, whose initialiser sets it.
    bool shared_symmetric_ = false;
    /// The level's matrix, owned or shared (LevelSetup::exact_half); null once blocks_ holds it.
    std::shared_ptr<const SgDiaMatrix<S>> a_ptr_;  ///< null when the level reads a window
    SgDiaView<S> a_;  ///< what the SG-DIA operations read: *a_ptr_, or LevelSetup::fp64_view
    std::int64_t rows_;
    int block_;
    /// The matrix re-laid out for the block SIMD kernels when r = 2..4 (empty otherwise); the
    /// smoother and the residual run on it.
    kernels::BlockSoa<S, C> blocks_;
    SgDiaMatrix<S> l_, u_factor_;  // ILU(0) factors when the smoother is ilu0
    std::vector<C> t_;
    const Transfer* to_coarse_;
    SmootherKind smoother_;
    C omega_;
    bool scale_transfers_;
    std::shared_ptr<LevelBoundary> boundary_;  // distributed levels only
    std::vector<C> saved_;                     // f̂ of the coupled rows during a hybrid sweep
    /// What is known about û: zero (set with a new right-hand side: the first sweep reads only
    /// the updated half of the stencil), or one forward Gauss-Seidel sweep on f̂ from zero with
    /// nothing changed since (the residual to restrict is -U û, sgdia_ops.hpp upper_residual).
    enum class UState { other, zero, forward_from_zero };
    UState u_state_ = UState::other;
    /// û = 0 (u_state_ zero) but its memory still holds what was there before (set_u_zero).
    bool u_unwritten_ = false;
    bool upper_residual_ok_ = false;  ///< this level may restrict -U û (see the constructor)
    int swept_slabs_ = 1;  ///< slabs of the last smoothing sweep's block order (1: lexicographic)
    /// A distributed SymGS level (point or block) on a z-split: sweeps in the exact permuted
    /// order (z_ordered_sweep).
    LevelBoundary::ZSplit z_split_ = LevelBoundary::ZSplit::none;
    std::vector<C> f_, u_, r_;  // r_ doubles as scratch for Jacobi and corrections
    std::vector<C> s_, inv_s_;
    std::optional<CoarseSolver> coarse_;  // the FP64 dense LU of the (scaled) operator
    std::vector<double> work_;
};

template <class S, class C>
std::unique_ptr<Level> build(int index, const LevelSetup& setup, bool direct, LevelReport& report) {
    std::unique_ptr<LevelImpl<S, C>> level;
    try {
        level = std::make_unique<LevelImpl<S, C>>(setup, direct, report);
    } catch (const NumericalError& e) {
        if (!direct) throw;
        throw NumericalError(coarse_lu_failure(e, index, "the other --interpolation"));
    }
    if (!direct) level->check_diagonal(index, setup.origin, report.counts);
    return level;
}

}  // namespace

std::unique_ptr<Level> make_level(int index, const LevelSetup& setup, bool direct,
                                  LevelReport& report) {
    using P = Precision;
    const LevelPrecision lp = setup.precision;
    if (lp.compute == P::fp64) {
        switch (lp.storage) {
            case P::fp64:
                return build<double, double>(index, setup, direct, report);
            case P::fp32:
                return build<float, double>(index, setup, direct, report);
            case P::fp16:
                return build<half, double>(index, setup, direct, report);
            case P::bf16:
                return build<bfloat16, double>(index, setup, direct, report);
        }
    } else if (lp.compute == P::fp32) {
        switch (lp.storage) {
            case P::fp32:
                return build<float, float>(index, setup, direct, report);
            case P::fp16:
                return build<half, float>(index, setup, direct, report);
            case P::bf16:
                return build<bfloat16, float>(index, setup, direct, report);
            case P::fp64:
                break;
        }
    }
    throw Unsupported(fmt::format(
        "level {}: compute {} with storage {} is not supported; compute must be fp64 or fp32 and "
        "storage no wider than compute",
        index, to_string(lp.compute), to_string(lp.storage)));
}

}  // namespace mpmg
