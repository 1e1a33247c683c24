// AMG transfers, converting between the two levels' working precisions on the fly (FGCS'23 §3:
// "the precision conversion happens on-the-fly in the restriction and prolongation
// operations"). Piecewise constant from a PGM aggregation (FGCS'23 §3, §4.2.2): prolongation
// u_i += e_{agg(i)} (nothing for an isolated row, agg -1), restriction g_I = scale * sum_{i in I}
// r_i with scale = 1/2. Or general (smoothed aggregation): P and R = P^T as FP64 CSR matrices,
// summed in double.
#pragma once

#include <cstdint>
#include <vector>

#include "mpmg/csr_matrix.hpp"
#include "unstructured/csr_typed.hpp"
#include "unstructured/pgm.hpp"

namespace mpmg {

struct AmgTransfer {
    std::vector<std::int64_t> agg;    ///< fine row -> coarse row
    std::vector<std::int64_t> r_ptr;  ///< coarse row I -> its fine rows r_idx[r_ptr[I]..]
    std::vector<std::int64_t> r_idx;
    double r_scale = 0.5;
    CsrMatrix p, r;  ///< general transfers (rows > 0): P (fine x coarse) and R = P^T

    static AmgTransfer from(const Aggregation& g, double scale) {
        AmgTransfer t;
        t.agg = g.agg;
        t.r_scale = scale;
        t.r_ptr.assign(static_cast<std::size_t>(g.coarse_rows + 1), 0);
        for (std::int64_t c : g.agg) {
            if (c >= 0) ++t.r_ptr[static_cast<std::size_t>(c + 1)];
        }
        for (std::size_t i = 1; i < t.r_ptr.size(); ++i) t.r_ptr[i] += t.r_ptr[i - 1];
        t.r_idx.resize(static_cast<std::size_t>(t.r_ptr.back()));
        std::vector<std::int64_t> next(t.r_ptr.begin(), t.r_ptr.end() - 1);
        for (std::size_t i = 0; i < g.agg.size(); ++i) {
            if (g.agg[i] < 0) continue;  // isolated row: zero row of P
            t.r_idx[static_cast<std::size_t>(next[static_cast<std::size_t>(g.agg[i])]++)] =
                static_cast<std::int64_t>(i);
        }
        return t;
    }
    /// General transfers: P and R = P^T (r_scale 1).
    static AmgTransfer from(CsrMatrix p) {
        CsrMatrix r = p.transpose();
        return from(std::move(p), std::move(r));
    }
    /// General transfers with a separate R (coarse x fine; Petrov-Galerkin).
    static AmgTransfer from(CsrMatrix p, CsrMatrix r) {
        AmgTransfer t;
        t.p = std::move(p);
        t.r = std::move(r);
        t.r_scale = 1.0;
        return t;
    }
    bool general() const { return p.rows > 0; }
    std::int64_t coarse_rows() const {
        return general() ? p.cols : static_cast<std::int64_t>(r_ptr.size()) - 1;
    }

    /// g = R (w r) (fine precision F, coarse precision G; w r rounded in F, as a separate
    /// scaling pass would leave it, then summed in double; w null: weight 1).
    template <class F, class G>
    void restrict_to(const F* r_in, G* g, const F* w = nullptr) const {
        if (w != nullptr) {  // the weight test out of the loops
            restrict_rows(g, [&](std::int64_t j) { return static_cast<F>(w[j] * r_in[j]); });
        } else {
            restrict_rows(g, [&](std::int64_t j) { return r_in[j]; });
        }
    }

    /// u_i += w_i e_{agg(i)} (w null: weight 1).
    template <class G, class F>
    void interpolate_add(const G* e, F* u, const F* w) const {
        if (general()) {
            const std::int64_t n = p.rows;
#pragma omp parallel for schedule(static) if (n > kParallelVector)
            for (std::int64_t i = 0; i < n; ++i) {
                double s = 0.0;
                for (std::int64_t k = p.row_ptr[i]; k < p.row_ptr[i + 1]; ++k) {
                    s += p.val[k] * static_cast<double>(e[p.col[k]]);
                }
                const F v = static_cast<F>(s);
                u[i] += w ? w[i] * v : v;
            }
            return;
        }
        const auto n = static_cast<std::int64_t>(agg.size());
#pragma omp parallel for schedule(static) if (n > kParallelVector)
        for (std::int64_t i = 0; i < n; ++i) {
            if (agg[i] < 0) continue;  // isolated row: zero row of P
            const F v = static_cast<F>(e[agg[i]]);
            u[i] += w ? w[i] * v : v;
        }
    }

    /// g_c = sum over row c of R of its entries times at(j), in double.
    template <class G, class At>
    void restrict_rows(G* g, At at) const {
        const std::int64_t nc = coarse_rows();
        if (general()) {
#pragma omp parallel for schedule(static) if (nc > kParallelVector)
            for (std::int64_t c = 0; c < nc; ++c) {
                double s = 0.0;
                for (std::int64_t k = r.row_ptr[c]; k < r.row_ptr[c + 1]; ++k) {
                    s += r.val[k] * static_cast<double>(at(r.col[k]));
                }
                g[c] = static_cast<G>(s);
            }
            return;
        }
#pragma omp parallel for schedule(static) if (nc > kParallelVector)
        for (std::int64_t c = 0; c < nc; ++c) {
            double s = 0.0;
            for (std::int64_t k = r_ptr[c]; k < r_ptr[c + 1]; ++k) {
                s += static_cast<double>(at(r_idx[k]));
            }
            g[c] = static_cast<G>(r_scale * s);
        }
    }
};

}  // namespace mpmg
