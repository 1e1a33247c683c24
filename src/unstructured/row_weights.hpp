// Row weights for the AMG hierarchy of a nonsymmetric matrix.
//
// The Galerkin product of PGM aggregation sums the fine equations of an aggregate (R = P^T / 2,
// FGCS'23 §4.2.2). The sum is right when the equations share one scale, as a discretised PDE's
// do: its rows sum to about zero, so constants are a left near-null vector (1^T A ≈ 0). Equations
// in different units, or any row scaling S A, break this: the sum keeps the largest equation and
// loses the others, and the strength graph compares couplings across scales. BentPipe2D100
// converges in 16 GMRES iterations; with its rows scaled by 10^U(-2,2) it stalls at 0.99.
//
// The hierarchy is therefore built on W A, W = diag(w), with w an estimate of a positive left
// near-null vector (w^T A ≈ 0); for S A it is about S^{-1} 1. The smoothers are unchanged by W
// (Gauss-Seidel, ILU(0), Jacobi, l1-Jacobi, block Jacobi and Chebyshev on W A with W r are
// themselves on A with r), so W changes what the coarse levels see, nothing else.
//
// The estimate (constants in row_weights.cpp):
//   - Measure a candidate w by its cancellation
//       c(w) = ||A^T w||_2 / || |A|^T |w| ||_2,
//     0 for a null vector and about 1 when nothing cancels.
//   - Start from w = 1 and from w_i = 1 / max_j |a_ij|.
//   - Improve each start by up to 10 damped Jacobi sweeps on A^T w = 0,
//       w_i <- w_i - (2/3) (A^T w)_i / a_ii.
//     Each w_i stays within a factor 4 of its previous value, which keeps it positive.
//   - Keep the iterate of least c. The row-maximum start must beat the constant start by 2x to
//     be chosen; it is not swept at all when it starts no better than constants.
//   - W is used only when it cancels 2x better than constants, and not at all when constants
//     cancel to rounding (c(1) <= 1e-10). Otherwise A is left as it is, so matrices whose rows
//     already balance (anisotropic3d7816, sherman3) keep their hierarchy.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "mpmg/csr_matrix.hpp"

namespace mpmg {

struct RowWeights {
    /// The weights; empty when the hierarchy should keep A (constants cancel about as well, or
    /// A has a zero diagonal entry and no Jacobi sweep is defined).
    std::vector<double> w;
    double cancellation_ones = 0.0;  ///< c(1)
    double cancellation = 0.0;       ///< c(w) of the chosen w (c(1) when w is empty)
    bool from_row_max = false;       ///< the estimate started from 1 / max_j |a_ij|
    int sweeps = 0;                  ///< the Jacobi sweeps that led to the chosen w
};

/// What the estimate needs of A: of its rows that this process holds (all of them serially).
struct RowWeightsInput {
    std::vector<double> diag;     ///< a_ii
    std::vector<double> row_max;  ///< max_j |a_ij|
    bool zero_diagonal = false;   ///< some a_ii is 0, on any process
    /// atw = (A^T w) on the rows held; sums = {||A^T w||^2, || |A|^T |w| ||^2} over all of A
    /// (collective under MPI: every process gets the same sums).
    std::function<void(const std::vector<double>& w, std::vector<double>& atw, double sums[2])>
        transpose_product;
};

/// The estimate above. Every process that calls it with the same A takes the same decisions.
RowWeights row_weights(const RowWeightsInput& in);

/// The estimate above for a square A held whole (FP64, OpenMP over rows).
RowWeights row_weights(const CsrMatrix& a);

/// The level table's note for weights in use: where the estimate started, its sweeps, and its
/// cancellation against constants'.
std::string describe(const RowWeights& rw);

/// a_ij <- w_i a_ij.
void weight_rows(CsrMatrix& a, const std::vector<double>& w);

/// W r for a hierarchy built on W A (serial and distributed), in the Krylov precision K, with
/// buffers kept between cycles.
class RowWeighting {
public:
    RowWeighting() = default;
    explicit RowWeighting(std::vector<double> w) : w_(std::move(w)) {}
    const std::vector<double>& weights() const { return w_; }

    /// W r, or r itself without weights. K is double or float.
    template <class K>
    const K* apply(const K* r) {
        if (w_.empty()) return r;
        std::vector<K>& t = buffer<K>();
        t.resize(w_.size());  // allocates on the first call only
        const auto n = static_cast<std::int64_t>(w_.size());
#pragma omp parallel for schedule(static) if (n > 20000)
        for (std::int64_t i = 0; i < n; ++i) {
            const auto u = static_cast<std::size_t>(i);
            t[u] = static_cast<K>(w_[u] * static_cast<double>(r[i]));
        }
        return t.data();
    }

private:
    template <class K>
    std::vector<K>& buffer() {
        if constexpr (std::is_same_v<K, double>) {
            return r64_;
        } else {
            return r32_;
        }
    }

    std::vector<double> w_;
    std::vector<double> r64_;
    std::vector<float> r32_;
};

}  // namespace mpmg
