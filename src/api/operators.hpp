// The system matrix as the Krylov solvers see it on each path (serial), shared by mpmg::solve
// and mpmg::Solver (api/solve.cpp, api/reusable_solver.cpp).
#pragma once

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "api/guarded_solve.hpp"
#include "kernels/setup_simd.hpp"
#include "krylov/krylov.hpp"
#include "krylov/vector_ops.hpp"
#include "mpmg/csr_matrix.hpp"
#include "mpmg/errors.hpp"
#include "mpmg/sgdia_matrix.hpp"
#include "multigrid/truncate.hpp"
#include "structured/sgdia_ops.hpp"
#include "unstructured/csr_typed.hpp"
#include "unstructured/nodes.hpp"
#include "unstructured/rcm.hpp"

namespace mpmg {

/// Krylov products before the operator makes an exact FP32 copy (FP64 iterations) that level 0
/// does not share (ski rental, as products_before_half_copy in api/guarded_solve.hpp). Measured
/// on laplace27 n = 128, one thread: an FP64-compute 3d27 product costs 47 ms from FP64 values
/// and ~30 ms from FP32; the FP32 copy ~270 ms: about 16 products' savings.
constexpr int kProductsBeforeSingleCopy = 16;

/// A on the structured path in iterative precision K: the problem's own FP64 matrix when K is
/// FP64 (no copy), else a truncated copy. When a narrower storage holds every value of A
/// exactly (FP16, or FP32 under FP64; constant-coefficient stencils such as Laplace's 26 and
/// -1), the products run on a copy in that storage, computing in K: the same products from a
/// quarter (half) of the matrix bytes of FP64, which dominate the memory-bound SpMV. FP16 also
/// takes A = c M with M exact in FP16 (the same stencil times 1/h^2 or a material constant):
/// the products read M and multiply by c, one more pass over y (exact_multiple). The FP16
/// copy is made when the hierarchy's level 0 asks for it (exact_half(): it then stores that
/// same matrix instead of truncating its own, so the copy costs nothing extra); otherwise the
/// copies are tried only once a solve has run long enough to pay for them. When A is exactly
/// symmetric (CG's problems; checked once, after the first product, unless the products read
/// the FP16 copy), the products read only the centre and the offsets after it, the lower ones
/// from their mirrors (spmv_mirrored): bit for bit the same products.
template <class K>
class SgDiaOperator final : public LinearOperator<K> {
public:
    SgDiaOperator(const SgDiaMatrix<double>& a, TruncationCounts& counts) : a_(a) {
        if constexpr (!std::is_same_v<K, double>) single_ = truncate<float>(a, counts);
    }
    std::int64_t size() const override { return a_.rows(); }
    void apply(const K* x, K* y) const override { multiply(x, y, nullptr); }
    bool apply_dot(const K* x, K* y, double* local_dot) const override {
        multiply(x, y, local_dot);
        return true;
    }
    /// The exact FP16 copy of A, or of A / c (exact_multiple), made on the first call; null
    /// when FP16 holds neither (or there is no memory for it). The products read it from then
    /// on, times c.
    ExactHalf exact_half() const {
        if (!tried_half_) {
            tried_half_ = true;
            if (std::optional<ExactHalfMultiple> h = exact_multiple_if_memory(a_)) {
                half_ = std::make_shared<const SgDiaMatrix<half>>(std::move(h->m));
                half_scale_ = h->scale;
                half_facts_ = h->facts;
                half_from_ = products_ + 1;
                // One check for the products and for level 0, which reads this copy when it
                // stores FP16 unscaled (a nonsymmetric copy costs about one plane).
                half_symmetric_ = exactly_symmetric(*half_);
            }
        }
        return {half_, half_scale_, half_facts_, half_symmetric_};
    }
    /// The storage of the matrix the last products read (K's own unless an exact copy is
    /// narrower).
    Precision storage() const {
        return half_ ? Precision::fp16 : single_ ? Precision::fp32 : Precision::fp64;
    }
    /// The scale of that storage's copy (A = scale x copy; 1 for FP64, FP32 and A's own FP16).
    double storage_scale() const { return half_ ? half_scale_ : 1.0; }
    /// The first product that read that storage (1: every product).
    int storage_from_product() const { return half_ ? half_from_ : single_ ? single_from_ : 1; }
    /// The first product that read only the upper half of the offsets (A exactly symmetric),
    /// or 0 when none did.
    int mirrored_from_product() const { return mirrored_from_; }
    /// The four above into the result (SolveResult::operator_storage ... operator_mirrored_from).
    void report(SolveResult& out) const {
        out.operator_storage = storage();
        out.operator_storage_from = storage_from_product();
        out.operator_scale = storage_scale();
        out.operator_mirrored_from = mirrored_from_product();
    }

private:
    /// y = A x, and *dot = (x, y) when dot is not null, from the matrix the products read now:
    /// first the copies and the symmetry check that this product's number asks for.
    void multiply(const K* x, K* y, double* dot) const {
        const int product = products_ + 1;
        if (!tried_half_ &&
            product > products_before_half_copy(single_ ? Precision::fp32 : Precision::fp64,
                                                mirrored_from_ > 0)) {
            (void)exact_half();
        }
        if constexpr (std::is_same_v<K, double>) {
            if (!half_ && !tried_single_ && product > kProductsBeforeSingleCopy) {
                tried_single_ = true;
                if ((single_ = exact_copy_if_memory<float>(a_))) single_from_ = product;
            }
        }
        if (!tried_symmetry_ && product > kProductsBeforeSymmetryCheck) {
            // On the matrix the products read: an exact copy is symmetric exactly when A is, a
            // truncated one (K = FP32) whenever it is itself, and a later exact copy holds A's
            // values. The FP16 copy was checked when it was made (exact_half).
            tried_symmetry_ = true;
            if (half_     ? half_symmetric_
                : single_ ? exactly_symmetric(*single_)
                          : exactly_symmetric(a_)) {
                mirrored_from_ = product;
            }
        }
        products_ = product;
        // scale: A x = c (M x) for the FP16 multiple.
        const auto product_of = [&](const auto& m, double scale) {
            const bool mirrored = mirrored_from_ > 0;
            if (dot != nullptr) {
                *dot = spmv_dot(m, x, y, mirrored, scale);
                return;
            }
            if (mirrored) {
                spmv_mirrored(m, x, y);
            } else {
                spmv(m, x, y);
            }
            if (scale != 1.0) krylov_ops::scale_copy(a_.rows(), scale, y, y);
        };
        if (half_) {
            product_of(*half_, half_scale_);
        } else if (single_) {
            product_of(*single_, 1.0);
        } else if constexpr (std::is_same_v<K, double>) {
            product_of(a_, 1.0);
        }
    }

    const SgDiaMatrix<double>& a_;
    mutable int products_ = 0;
    mutable bool tried_half_ = false, tried_single_ = false, tried_symmetry_ = false;
    mutable std::shared_ptr<const SgDiaMatrix<half>> half_;  ///< A / half_scale_, exact
    mutable double half_scale_ = 1.0;
    mutable HalfFacts half_facts_;
    mutable bool half_symmetric_ = false;  ///< half_ is exactly symmetric
    /// Exact FP32 copy (K = FP64), or A truncated to K = FP32.
    mutable std::optional<SgDiaMatrix<float>> single_;
    mutable int half_from_ = 1, single_from_ = 1, mirrored_from_ = 0;
};

/// A on the AMG path in iterative precision K.
template <class K>
class CsrOperator final : public LinearOperator<K> {
public:
    explicit CsrOperator(TypedCsr<K> a) : a_(std::move(a)) {}
    std::int64_t size() const override { return a_.rows; }
    void apply(const K* x, K* y) const override { spmv(a_, x, y); }
    const TypedCsr<K>& matrix() const { return a_; }

private:
    TypedCsr<K> a_;
};

inline void check_k(const TruncationCounts& counts, Precision k) {
    if (counts.overflow > 0) {
        throw NumericalError(fmt::format("{} entries of A overflow the iterative precision K = {}",
                                         counts.overflow, to_string(k)));
    }
}

/// check_k for a CSR A before its Krylov operator is made (the AMG path makes it after the
/// setup): counted, not truncated. A's values are finite, so K = FP64 holds them all.
inline void check_k(const CsrMatrix& a, Precision k) {
    if (k == Precision::fp64) return;
    check_k(kernels::count_range(a.val.data(), a.nnz(), range_limits<float>()), k);
}

// The AMG path's renumbering (options.hpp ReorderKind): the permutation, or empty to keep the
// given order (auto). A system's nodes are renumbered whole, so its unknowns stay node by node.
// `symmetric`: A is (is_symmetric), so its pattern is and RCM searches it as it is.
inline std::vector<std::int64_t> amg_order(const CsrMatrix& a, ReorderKind k, int block,
                                           bool symmetric) {
    if (k != ReorderKind::rcm) return {};
    if (block == 1) return rcm_order(a, symmetric);
    return expand_to_unknowns(rcm_order(node_matrix(a, block), symmetric), block);
}

}  // namespace mpmg
