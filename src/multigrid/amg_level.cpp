#include "multigrid/amg_level.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <type_traits>

#include "mpmg/errors.hpp"
#include "multigrid/coarse_solver.hpp"
#include "multigrid/k_steps.hpp"
#include "unstructured/csr_smoothers.hpp"
#include "unstructured/csr_typed.hpp"

namespace mpmg {
namespace {

template <class S, class C>
class AmgLevelImpl final : public Level {
public:
    AmgLevelImpl(const AmgLevelSetup& setup, LevelReport& report)
        : a_(to_typed<S>(*setup.matrix, report.counts, encoding(setup))),
          to_coarse_(setup.to_coarse),
          boundary_(setup.boundary),
          sm_(setup.smoother),
          f_(static_cast<std::size_t>(a_.rows)),
          u_(f_.size()),
          w1_(f_.size()),
          w2_(f_.size()) {
        sm_.inv_diag.clear();  // kept in S below; the FP64 copies are dropped
        sm_.inv_blocks.clear();
        sm_.ilu_l = CsrMatrix{};
        sm_.ilu_u = CsrMatrix{};
        if (setup.smoother.kind == SmootherKind::ilu0) {
            il_ = to_typed<S>(setup.smoother.ilu_l, report.counts, encoding(setup));
            iu_ = to_typed<S>(setup.smoother.ilu_u, report.counts, encoding(setup));
            report.note += report.note.empty() ? "" : "; ";
            report.note += fmt::format("ILU(0) in {} row block{}, largest |l_ij| {:.3g}",
                                       sm_.block_ptr.size() - 1,
                                       sm_.block_ptr.size() == 2 ? "" : "s", sm_.ilu_largest_l);
        }
        inv_d_.resize(setup.smoother.inv_diag.size());
        for (std::size_t i = 0; i < inv_d_.size(); ++i) {
            inv_d_[i] = truncate_counted<S>(setup.smoother.inv_diag[i], report.counts);
        }
        inv_b_.resize(setup.smoother.inv_blocks.size());
        for (std::size_t i = 0; i < inv_b_.size(); ++i) {
            inv_b_[i] = truncate_counted<S>(setup.smoother.inv_blocks[i], report.counts);
        }
        if (!setup.row_scale.empty()) {
            inv_r_.resize(f_.size());
            r_.resize(f_.size());
            c_.resize(f_.size());
            inv_c_.resize(f_.size());
            for (std::size_t i = 0; i < f_.size(); ++i) {
                r_[i] = static_cast<C>(setup.row_scale[i]);
                inv_r_[i] = static_cast<C>(1.0 / setup.row_scale[i]);
                c_[i] = static_cast<C>(setup.col_scale[i]);
                inv_c_[i] = static_cast<C>(1.0 / setup.col_scale[i]);
            }
        }
        if (setup.direct) lu_.emplace(*setup.matrix);
        if (setup.k_cycle && !setup.direct && !boundary_) {    // distributed: dist_amg.cpp
            k_symmetric_ = is_symmetric(*setup.matrix, true);  // its zeros were dropped
            for (auto* v : {&kr_, &kc_, &kv_, &kw_}) v->resize(f_.size());
            if constexpr (sizeof(S) < sizeof(C)) {
                row_sum_errors(*setup.matrix, setup.col_scale, kd_);
            }
        }
        if (boundary_) f_ghost_.resize(f_.size());
        report.matrix_bytes = a_.bytes();
        if (a_.encoding() != IndexEncoding::int32) {
            report.note += report.note.empty() ? "" : "; ";
            report.note += a_.compact() ? "columns as row base + uint16 offsets" : "int64 columns";
        }
        if (sm_.kind == SmootherKind::block_jacobi) {
            report.note += report.note.empty() ? "" : "; ";
            report.note +=
                fmt::format("block Jacobi: {} blocks of <= {} rows, condition <= {:.2g}",
                            sm_.block_ptr.size() - 1, sm_.largest_block, sm_.max_condition);
            if (sm_.diagonal_blocks > 0) {
                report.note += fmt::format(" ({} near-singular ones replaced by their diagonal)",
                                           sm_.diagonal_blocks);
            }
        }
    }

    Precision compute() const override {
        return std::is_same_v<C, double> ? Precision::fp64 : Precision::fp32;
    }
    std::int64_t rows() const override { return a_.rows; }

    void set_rhs(const double* r) override { load(r); }
    void set_rhs(const float* r) override { load(r); }
    void get_solution(double* z) const override { store(z); }
    void get_solution(float* z) const override { store(z); }

    void smooth(int sweeps, bool pre) override {
        namespace cs = csr_smoothers;
        for (int s = 0; s < sweeps; ++s) {
            // A distributed level smooths A_diag u = f - G u_ghost, u_ghost from before the
            // sweep (zero, and not exchanged, while u is zero on every process).
            const C* f = f_.data();
            if (boundary_ && !u_zero_) {
                std::copy(f_.begin(), f_.end(), f_ghost_.begin());
                boundary_->subtract(u_.data(), f_ghost_.data());
                f = f_ghost_.data();
            }
            switch (sm_.kind) {
                case SmootherKind::automatic:  // unresolved (library use): the default, SymGS
                case SmootherKind::symgs:
                    cs::hybrid_gs(a_, inv_d_.data(), f, u_.data(), w1_.data(), pre);
                    break;
                case SmootherKind::block_jacobi:
                    cs::block_jacobi(a_, sm_.block_ptr.data(), sm_.inv_ptr.data(),
                                     static_cast<std::int64_t>(sm_.block_ptr.size()) - 1,
                                     inv_b_.data(), static_cast<C>(sm_.omega), f, u_.data(),
                                     w1_.data(), u_zero_);
                    break;
                case SmootherKind::ilu0:
                    cs::ilu0(a_, il_, iu_, inv_d_.data(), sm_.block_ptr.data(),
                             static_cast<std::int64_t>(sm_.block_ptr.size()) - 1, f, u_.data(),
                             w1_.data(), w2_.data(), u_zero_);
                    break;
                case SmootherKind::chebyshev:
                    cs::chebyshev(a_, inv_d_.data(), sm_.alpha, sm_.beta, kChebyshevDegree, f,
                                  u_.data(), w1_.data(), w2_.data());
                    break;
                default:            // jacobi, l1_jacobi (smoother_setup rejects the others)
                    if (u_zero_) {  // u = 0 after set_rhs/finish_rhs: A u needs no product
                        cs::jacobi_from_zero(a_, inv_d_.data(), static_cast<C>(sm_.omega), f,
                                             u_.data());
                    } else {
                        cs::jacobi(a_, inv_d_.data(), static_cast<C>(sm_.omega), f, u_.data(),
                                   w1_.data());
                        u_.swap(w1_);
                    }
                    break;
            }
            u_zero_ = false;
        }
    }

    void restrict_residual(Level& coarse) override {
        level_residual();
        const C* w = r_.empty() ? nullptr : r_.data();  // r = D_r r̂: the unscaled residual
        if (coarse.compute() == Precision::fp64) {
            to_coarse_->restrict_to(w1_.data(), static_cast<double*>(coarse.rhs_data()), w);
        } else {
            to_coarse_->restrict_to(w1_.data(), static_cast<float*>(coarse.rhs_data()), w);
        }
        coarse.finish_rhs();
    }

    // The level's variables carry sigma (f̂ = sigma f / r, û = sigma c u): divided out here.
    void residual_unscaled(std::vector<double>& r) override {
        level_residual();
        if (!r_.empty()) multiply(w1_, r_);
        r.resize(w1_.size());
        for (std::size_t i = 0; i < r.size(); ++i) r[i] = static_cast<double>(w1_[i]) / sigma_;
    }

    void add_correction(const std::vector<double>& e) override {
        for (std::size_t i = 0; i < u_.size(); ++i) {
            const C v = static_cast<C>(sigma_ * e[i]);
            u_[i] += c_.empty() ? v : c_[i] * v;
        }
        u_zero_ = false;
    }

    void correct_from(Level& coarse) override {
        coarse.unscale_solution();
        const C* w = c_.empty() ? nullptr : c_.data();  // û += D_c (P e)
        if (coarse.compute() == Precision::fp64) {
            to_coarse_->interpolate_add(static_cast<const double*>(coarse.solution_data()),
                                        u_.data(), w);
        } else {
            to_coarse_->interpolate_add(static_cast<const float*>(coarse.solution_data()),
                                        u_.data(), w);
        }
        u_zero_ = false;
    }

    void direct_solve() override {
        work_.assign(f_.begin(), f_.end());
        lu_->solve(work_.data());
        std::transform(work_.begin(), work_.end(), u_.begin(),
                       [](double v) { return static_cast<C>(v); });
        u_zero_ = false;
    }

    // The K-cycle's steps (multigrid/k_steps.hpp) on Â û = f̂, in the level's variables and
    // compute precision, each preconditioned by one cycle from this level.
    void k_correction(const std::function<void()>& cycle) override {
        if (kr_.empty()) {
            cycle();
            return;
        }
        const auto n = static_cast<std::int64_t>(f_.size());
        std::copy(f_.begin(), f_.end(), kr_.begin());  // r
        cycle();                                       // u = c1 = B r
        u_.swap(kc_);
        k_product(kc_.data(), kv_.data());  // v1 = Â c1
        double s1[3];
        k_steps::first_sums(k_symmetric_, n, kc_.data(), kv_.data(), kr_.data(), s1);
        const std::optional<double> alpha1 = k_steps::first_step(s1);
        if (!alpha1) {  // no Krylov step: the plain cycle
            u_.swap(kc_);
            return;
        }
        const double tt = k_steps::first_residual(n, *alpha1, kv_.data(), kr_.data(), f_.data());
        if (k_steps::first_enough(tt, s1[2])) {
            k_steps::combine(n, *alpha1, kc_.data(), 0.0, kc_.data(), u_.data());
            return;
        }
        std::fill(u_.begin(), u_.end(), C{0});
        u_zero_ = true;
        cycle();                           // u = c2 = B r~ (f = r~)
        k_product(u_.data(), kw_.data());  // v2 = Â c2
        double s2[3];
        k_steps::second_sums(k_symmetric_, n, u_.data(), kv_.data(), kw_.data(), f_.data(), s2);
        const auto beta = k_steps::second_step(s1[0], *alpha1, s2);
        if (beta) {
            k_steps::combine(n, (*beta)[0], kc_.data(), (*beta)[1], u_.data(), u_.data());
        } else {
            k_steps::combine(n, *alpha1, kc_.data(), 0.0, kc_.data(), u_.data());
        }
    }

    // y = Â x for the Krylov steps: the stored matrix, and where it is narrower than the
    // compute precision, plus its rows' rounding errors (kd_) times x.
    void k_product(const C* x, C* y) {
        spmv(a_, x, y);
        if (kd_.empty()) return;
        const auto n = static_cast<std::int64_t>(kd_.size());
        const C* d = kd_.data();
#pragma omp parallel for schedule(static) if (n > kParallelVector)
        for (std::int64_t i = 0; i < n; ++i) y[i] += d[i] * x[i];
    }

    // d_i = sum_j (a_ij - fl(a_ij)) w_j / w_i: what rounding to S took from (Â w)_i, w = D_c 1
    // (1 unscaled), A's near-null vector in the level's variables. Â + diag(d) keeps Â w, and
    // its energy (x = w y, Â symmetric) x^T Â x = sum_{i<j} -â_ij w_i w_j (y_i - y_j)^2 +
    // sum_i (Â w)_i w_i y_i^2 changes by at most the relative rounding of each â_ij. Without
    // it FP16's rounding of the large entries of a high-contrast problem made coarse levels
    // indefinite (400² checkerboard diffusion of contrast 1e3, level 2: smallest eigenvalue
    // 2.3e-3, of the FP16 copy -1.1e-3, with d 2.3e-3), and the steps then went wrong.
    static void row_sum_errors(const CsrMatrix& a, const std::vector<double>& w,
                               std::vector<C>& d) {
        d.assign(static_cast<std::size_t>(a.rows), C{0});
        for (std::int64_t i = 0; i < a.rows; ++i) {
            double e = 0.0;
            for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
                const double lost = a.val[p] - to_double(from_double<S>(a.val[p]));
                e += w.empty() ? lost : lost * w[static_cast<std::size_t>(a.col[p])];
            }
            d[static_cast<std::size_t>(i)] =
                static_cast<C>(w.empty() ? e : e / w[static_cast<std::size_t>(i)]);
        }
    }

    void* rhs_data() override { return f_.data(); }
    void* solution_data() override { return u_.data(); }

    // f̂ = D_r^{-1} f and, with FP32 vectors, the residual-underflow guard (f̂ scaled by a
    // power of two sigma so that its largest entry is in [1, 2)): one pass for the scaling and
    // the maximum, one for sigma (and the zero initial guess), each fused.
    void finish_rhs() override {
        const auto n = static_cast<std::int64_t>(f_.size());
        const C* ir = inv_r_.empty() ? nullptr : inv_r_.data();
        // A distributed level scales by the same sigma on every process, whatever each one's
        // compute precision (the neighbours' values it reads carry theirs; a power of two is
        // exact in FP64 too).
        const bool guard = std::is_same_v<C, float> || boundary_ != nullptr;
        C m{0};
        if (guard) {
#pragma omp parallel for schedule(static) reduction(max : m) if (n > kParallelVector)
            for (std::int64_t i = 0; i < n; ++i) {
                if (ir != nullptr) f_[i] *= ir[i];
                m = std::max(m, std::fabs(f_[i]));
            }
        } else if (ir != nullptr) {
#pragma omp parallel for schedule(static) if (n > kParallelVector)
            for (std::int64_t i = 0; i < n; ++i) f_[i] *= ir[i];
        }
        if (boundary_) m = static_cast<C>(boundary_->global_max(static_cast<double>(m)));
        sigma_ = 1.0;
        if (guard && m > C{0} && std::isfinite(m)) sigma_ = std::ldexp(1.0, -std::ilogb(m));
        const auto s = static_cast<C>(sigma_);
#pragma omp parallel for schedule(static) if (n > kParallelVector)
        for (std::int64_t i = 0; i < n; ++i) {
            if (s != C{1}) f_[i] *= s;
            u_[i] = C{0};
        }
        u_zero_ = true;
    }

    // u = D_c û / sigma in one pass (sigma a power of two: the same as two passes).
    void unscale_solution() override {
        const C* ic = inv_c_.empty() ? nullptr : inv_c_.data();
        if (ic == nullptr && sigma_ == 1.0) return;
        const auto n = static_cast<std::int64_t>(u_.size());
        const auto s = static_cast<C>(1.0 / sigma_);
#pragma omp parallel for schedule(static) if (n > kParallelVector)
        for (std::int64_t i = 0; i < n; ++i) u_[i] = (ic != nullptr ? u_[i] * ic[i] : u_[i]) * s;
    }

private:
    static IndexEncoding encoding(const AmgLevelSetup& setup) {
        return sizeof(S) <= setup.compact_index_max_bytes ? IndexEncoding::compact
                                                          : IndexEncoding::int32;
    }
    // w1 = f - A u (and - G u_ghost on a distributed level).
    void level_residual() {
        residual(a_, f_.data(), u_.data(), w1_.data());
        if (boundary_) boundary_->subtract(u_.data(), w1_.data());
    }
    static void multiply(std::vector<C>& v, const std::vector<C>& w) {
        const auto n = static_cast<std::int64_t>(v.size());
#pragma omp parallel for schedule(static) if (n > kParallelVector)
        for (std::int64_t i = 0; i < n; ++i) v[i] *= w[i];
    }
    template <class T>
    void load(const T* r) {
        const auto n = static_cast<std::int64_t>(f_.size());
        const C* ir = inv_r_.empty() ? nullptr : inv_r_.data();
#pragma omp parallel for schedule(static) if (n > kParallelVector)
        for (std::int64_t i = 0; i < n; ++i) {
            f_[i] = static_cast<C>(ir ? r[i] * ir[i] : r[i]);
            u_[i] = C{0};
        }
        sigma_ = 1.0;
        u_zero_ = true;
    }
    template <class T>
    void store(T* z) const {
        const auto n = static_cast<std::int64_t>(u_.size());
        const C* ic = inv_c_.empty() ? nullptr : inv_c_.data();
#pragma omp parallel for schedule(static) if (n > kParallelVector)
        for (std::int64_t i = 0; i < n; ++i) z[i] = static_cast<T>(ic ? u_[i] * ic[i] : u_[i]);
    }

    TypedCsr<S> a_;
    TypedCsr<S> il_, iu_;   // ILU(0) factors (smoother ilu0) in storage precision
    std::vector<S> inv_d_;  // smoother data in storage precision
    std::vector<S> inv_b_;  // block Jacobi: the inverse blocks in storage precision
    const AmgTransfer* to_coarse_;
    std::shared_ptr<LevelBoundary> boundary_;  // distributed levels only
    SmootherData sm_;
    std::vector<C> f_, u_, w1_, w2_;
    std::vector<C> f_ghost_;                // f - G u_ghost (distributed levels)
    std::vector<C> r_, inv_r_, c_, inv_c_;  // equilibration factors (empty: none)
    double sigma_ = 1.0;                    // rhs scale of the underflow guard
    bool u_zero_ = false;                   // u_ is zero (set by set_rhs / finish_rhs)
    std::optional<CoarseSolver> lu_;
    std::vector<double> work_;
    // K-cycle (k_correction): r, c1, Â c1, Â c2; empty when the level takes no Krylov steps.
    std::vector<C> kr_, kc_, kv_, kw_;
    std::vector<C> kd_;         // rounding errors of Â's row sums (S narrower than C), else empty
    bool k_symmetric_ = false;  // flexible CG steps, else GCR
};

template <class S, class C>
std::unique_ptr<Level> build(int index, const AmgLevelSetup& setup, LevelReport& report) {
    try {
        return std::make_unique<AmgLevelImpl<S, C>>(setup, report);
    } catch (const NumericalError& e) {
        if (!setup.direct) throw;
        throw NumericalError(coarse_lu_failure(e, index, "the other --aggregation"));
    }
}

}  // namespace

std::unique_ptr<Level> make_amg_level(int index, const AmgLevelSetup& setup, LevelReport& report) {
    using P = Precision;
    const LevelPrecision lp = setup.precision;
    if (lp.compute == P::fp64) {
        switch (lp.storage) {
            case P::fp64:
                return build<double, double>(index, setup, report);
            case P::fp32:
                return build<float, double>(index, setup, report);
            case P::fp16:
                return build<half, double>(index, setup, report);
            case P::bf16:
                return build<bfloat16, double>(index, setup, report);
        }
    } else if (lp.compute == P::fp32) {
        switch (lp.storage) {
            case P::fp32:
                return build<float, float>(index, setup, report);
            case P::fp16:
                return build<half, float>(index, setup, report);
            case P::bf16:
                return build<bfloat16, float>(index, setup, report);
            case P::fp64:
                break;
        }
    }
    throw Unsupported(fmt::format(
        "AMG level {}: compute {} with storage {} is not supported; compute must be fp64 or fp32 "
        "and storage no wider than compute",
        index, to_string(lp.compute), to_string(lp.storage)));
}

}  // namespace mpmg
