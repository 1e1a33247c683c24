#include "unstructured/pgm.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "core/prefault.hpp"
#include "unstructured/nodes.hpp"
#include "unstructured/spgemm.hpp"

namespace mpmg {
namespace {

constexpr int kMatchRounds = 15;  // Ginkgo's PGM default max_iterations
constexpr std::int64_t kParallelRows = 4096;
constexpr std::int64_t kIsolated = -2;  // agg mark during a pass (-1: not yet aggregated)

/// PGM's strength graph: row i's edges (j != i, weight > 0), columns in I (int32 below 2^31
/// rows: 12 bytes an edge instead of a CsrMatrix's 16, 44 MB less on mfem_lshape_o3_r7's level
/// 0, and less to read in every scan for the strongest neighbour).
template <class I>
struct Graph {
    std::int64_t rows = 0;
    std::vector<std::int64_t> row_ptr;
    std::vector<I> col;
    std::vector<double> val;
};

/// Row i of `from` into (row_ptr, col, val) from `out` on: the diagonal (halved when `halve`,
/// else its magnitude) into d, the other nonzeros kept (the same). The arrays may be from's own:
/// entries only move towards the front.
template <class J>
void compact_rows(const CsrMatrix& from, bool halve, std::vector<std::int64_t>& row_ptr,
                  std::vector<J>& col, std::vector<double>& val, std::vector<double>& d) {
    std::int64_t out = 0;
    for (std::int64_t i = 0; i < from.rows; ++i) {
        const std::int64_t begin = from.row_ptr[i], end = from.row_ptr[i + 1];
        row_ptr[i] = out;
        for (std::int64_t p = begin; p < end; ++p) {
            const std::int64_t c = from.col[p];
            const double v = halve ? from.val[p] / 2 : std::fabs(from.val[p]);
            if (c == i) {
                d[static_cast<std::size_t>(i)] = v;
            } else if (v != 0.0) {
                col[out] = static_cast<J>(c);
                val[out] = v;
                ++out;
            }
        }
    }
    row_ptr[static_cast<std::size_t>(from.rows)] = out;
    col.resize(static_cast<std::size_t>(out));
    val.resize(static_cast<std::size_t>(out));
}

// Normalised strength graph: w_ij = (|a_ij| + |a_ji|) / 2 / max(d_i, d_j), no diagonal, with
// d_i = |a_ii|. A symmetric A's is |a_ij| / max(d_i, d_j), taken from A's rows as they are
// (the same bits: (2 |a_ij|) / 2 is |a_ij|); a nonsymmetric A's from |A| + |A^T|. Copying it
// into a new graph entry by entry moved and faulted in its contents several times over as the
// arrays grew (with |A| + |A^T| built the same way, about a quarter of the AMG setup of a
// 1M-row 2D Poisson matrix, in copies and page faults); copying a symmetric A whole before
// compacting it read A once more than this.
template <class I>
Graph<I> strength_graph(const CsrMatrix& a, std::optional<bool> exactly_symmetric) {
    const bool symmetric =
        exactly_symmetric.has_value() ? *exactly_symmetric : is_symmetric(a, false, 0.0);
    Graph<I> w;
    w.rows = a.rows;
    std::vector<double> d(static_cast<std::size_t>(a.rows), 0.0);
    if (symmetric) {  // A's rows, |a_ij|
        w.row_ptr.resize(a.row_ptr.size());
        assign_prefaulted(w.col, a.col.size(), I{0});
        assign_prefaulted(w.val, a.val.size(), 0.0);
        compact_rows(a, false, w.row_ptr, w.col, w.val, d);
    } else {  // |A| + |A^T|'s, halved, compacted in place; then its columns narrowed to I
        CsrMatrix sum = abs_plus_transpose(a, false);
        compact_rows(sum, true, sum.row_ptr, sum.col, sum.val, d);
        w.row_ptr = std::move(sum.row_ptr);
        if constexpr (std::is_same_v<I, std::int64_t>) {
            w.col = std::move(sum.col);
        } else {
            assign_prefaulted(w.col, sum.col.size(), I{0});
            for (std::size_t p = 0; p < sum.col.size(); ++p) w.col[p] = static_cast<I>(sum.col[p]);
            sum.col = std::vector<std::int64_t>();
        }
        w.val = std::move(sum.val);
    }
    for (std::int64_t i = 0; i < w.rows; ++i) {
        for (std::int64_t p = w.row_ptr[i]; p < w.row_ptr[i + 1]; ++p) {
            const double m = std::max(d[static_cast<std::size_t>(i)], d[w.col[p]]);
            if (m > 0.0) w.val[p] /= m;
        }
    }
    return w;
}

// Tie-break key of the undirected edge {i, j} (SplitMix64 finaliser of the ordered pair).
// Equal weights are common (Laplacians); breaking ties by column index makes chains i -> i+1 ->
// ... with few mutual picks, while a key that is the same seen from both ends gives a total
// order on edges, so every round matches at least the locally heaviest edges (Naumov et al.).
std::uint64_t edge_key(std::int64_t i, std::int64_t j) {
    std::uint64_t z = static_cast<std::uint64_t>(std::min(i, j)) * 0x9E3779B97F4A7C15ull ^
                      static_cast<std::uint64_t>(std::max(i, j));
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Strongest neighbour j of row i with (agg[j] < 0) == unaggregated; -1 when there is none.
template <class I>
std::int64_t strongest(const Graph<I>& w, std::int64_t i, const std::vector<std::int64_t>& agg,
                       bool unaggregated) {
    std::int64_t best = -1;
    double best_w = -1.0;
    std::uint64_t best_key = 0;
    for (std::int64_t p = w.row_ptr[i]; p < w.row_ptr[i + 1]; ++p) {
        const std::int64_t j = w.col[p];
        if ((agg[j] < 0) != unaggregated) continue;
        if (w.val[p] < best_w) continue;
        const std::uint64_t key = edge_key(i, j);
        if (w.val[p] > best_w || key > best_key) {
            best_w = w.val[p];
            best_key = key;
            best = j;
        }
    }
    return best;
}

// One PGM pass; agg[i] is the id (a representative row) of i's aggregate. `coupled`: rows
// that are never isolated (pgm_aggregate).
template <class I>
Aggregation one_pass_in(const CsrMatrix& a, std::optional<bool> exactly_symmetric,
                        std::span<const char> coupled) {
    const Graph<I> w = strength_graph<I>(a, exactly_symmetric);
    const std::int64_t n = a.rows;
    Aggregation g;
    g.agg.assign(static_cast<std::size_t>(n), -1);
    std::vector<std::int64_t> pick(g.agg.size(), -1);
    // Isolated rows (no edge in the strength graph, and not coupled outside `a`): kIsolated,
    // never matched or attached. A coupled row without an edge finds no partner and stays alone.
    std::int64_t isolated = 0;
#pragma omp parallel for schedule(static) reduction(+ : isolated) if (n > kParallelRows)
    for (std::int64_t i = 0; i < n; ++i) {
        if (w.row_ptr[i] == w.row_ptr[i + 1] &&
            (coupled.empty() || coupled[static_cast<std::size_t>(i)] == 0)) {
            g.agg[i] = kIsolated;
            ++isolated;
        }
    }
    g.isolated = isolated;
    for (int round = 0; round < kMatchRounds; ++round) {
        // A row's strongest unaggregated neighbour stays its pick while that neighbour is
        // unaggregated: the candidates only leave, and the first maximum of (weight, key) over
        // the row is still the first maximum of what is left. Only rows whose pick was matched
        // away are scanned again (the same picks as a scan of every row).
#pragma omp parallel for schedule(static) if (n > kParallelRows)
        for (std::int64_t i = 0; i < n; ++i) {
            if (g.agg[i] != -1) {  // aggregated or isolated
                pick[i] = -1;
            } else if (round == 0 || (pick[i] >= 0 && g.agg[pick[i]] >= 0)) {
                pick[i] = strongest(w, i, g.agg, true);
            }
        }
        std::int64_t paired = 0;
#pragma omp parallel for schedule(static) reduction(+ : paired) if (n > kParallelRows)
        for (std::int64_t i = 0; i < n; ++i) {
            const std::int64_t j = pick[i];
            if (j >= 0 && pick[j] == i) {
                g.agg[i] = std::min(i, j);
                ++paired;
            }
        }
        g.matched += paired;
        if (paired == 0) break;
    }
    const std::vector<std::int64_t> snapshot = g.agg;
    std::int64_t attached = 0, singles = 0;
#pragma omp parallel for schedule(static) reduction(+ : attached, singles) if (n > kParallelRows)
    for (std::int64_t i = 0; i < n; ++i) {
        if (snapshot[i] != -1) continue;  // in an aggregate, or isolated
        const std::int64_t j = strongest(w, i, snapshot, false);
        g.agg[i] = j >= 0 ? snapshot[j] : i;
        if (j >= 0) {
            ++attached;
        } else {
            ++singles;
        }
    }
    g.attached = attached;
    g.singles = singles;
    // Number the aggregates by their representative row.
    std::vector<std::int64_t> id(g.agg.size(), -1);
    for (std::int64_t i = 0; i < n; ++i) {
        if (g.agg[i] == i) id[i] = g.coarse_rows++;
    }
    for (std::int64_t i = 0; i < n; ++i) g.agg[i] = g.agg[i] >= 0 ? id[g.agg[i]] : -1;
    return g;
}

Aggregation one_pass(const CsrMatrix& a, std::optional<bool> exactly_symmetric,
                     std::span<const char> coupled) {
    return a.rows <= std::numeric_limits<std::int32_t>::max()
               ? one_pass_in<std::int32_t>(a, exactly_symmetric, coupled)
               : one_pass_in<std::int64_t>(a, exactly_symmetric, coupled);
}

// One pass on the nodes of `block` rows: the node aggregation, component k of node i mapped to
// component k of its aggregate.
Aggregation nodal_pass(const CsrMatrix& a, int block, std::optional<bool> exactly_symmetric,
                       std::span<const char> coupled) {
    if (block == 1) return one_pass(a, exactly_symmetric, coupled);
    std::vector<char> node_coupled;  // a node is coupled when one of its rows is
    if (!coupled.empty()) {
        node_coupled.assign(static_cast<std::size_t>(a.rows / block), 0);
        for (std::size_t i = 0; i < coupled.size(); ++i) {
            if (coupled[i] != 0) node_coupled[i / static_cast<std::size_t>(block)] = 1;
        }
    }
    // Block norms: symmetry measured.
    Aggregation g = one_pass(node_matrix(a, block), std::nullopt, node_coupled);
    std::vector<std::int64_t> agg(static_cast<std::size_t>(a.rows));
    for (std::size_t node = 0; node < g.agg.size(); ++node) {
        const std::int64_t c = g.agg[node];
        for (int k = 0; k < block; ++k) agg[node * block + k] = c >= 0 ? c * block + k : -1;
    }
    g.agg = std::move(agg);
    g.coarse_rows *= block;
    g.block = block;
    return g;
}

}  // namespace

Aggregation pgm_one_pass_int64(const CsrMatrix& a) {
    return one_pass_in<std::int64_t>(a, std::nullopt, {});
}

Aggregation pgm_aggregate(const CsrMatrix& a, int passes, int block,
                          std::optional<bool> exactly_symmetric, std::span<const char> coupled) {
    if (!coupled.empty() && static_cast<std::int64_t>(coupled.size()) != a.rows) {
        throw std::logic_error("pgm_aggregate: one coupled flag per row");
    }
    Aggregation g = nodal_pass(a, block, exactly_symmetric, coupled);
    std::vector<char> coarse_coupled;  // an aggregate is coupled when one of its rows is
    for (int pass = 1; pass < passes; ++pass) {
        const CsrMatrix ac = aggregate_galerkin(a, g, 1.0);
        if (!coupled.empty()) {
            coarse_coupled.assign(static_cast<std::size_t>(g.coarse_rows), 0);
            for (std::size_t i = 0; i < coupled.size(); ++i) {
                if (coupled[i] != 0 && g.agg[i] >= 0) {
                    coarse_coupled[static_cast<std::size_t>(g.agg[i])] = 1;
                }
            }
        }
        Aggregation h = nodal_pass(ac, block, std::nullopt, coarse_coupled);
        for (auto& v : g.agg) v = v >= 0 ? h.agg[static_cast<std::size_t>(v)] : -1;
        g.isolated += h.isolated;
        g.coarse_rows = h.coarse_rows;
        g.matched = h.matched;
        g.attached = h.attached;
        g.singles = h.singles;
    }
    return g;
}

CsrMatrix prolongation(const Aggregation& g) {
    CsrMatrix p;
    p.rows = static_cast<std::int64_t>(g.agg.size());
    p.cols = g.coarse_rows;
    p.row_ptr.reserve(g.agg.size() + 1);
    p.col.reserve(g.agg.size());
    for (const std::int64_t c : g.agg) {
        if (c >= 0) p.col.push_back(c);
        p.row_ptr.push_back(p.nnz());
    }
    p.val.assign(p.col.size(), 1.0);
    return p;
}

CsrMatrix restriction(const Aggregation& g, double scale) {
    CsrMatrix r = prolongation(g).transpose();
    for (double& v : r.val) v *= scale;
    return r;
}

CsrMatrix aggregate_galerkin(const CsrMatrix& a, const Aggregation& g, double scale) {
    const std::int64_t nc = g.coarse_rows;
    // The rows of each aggregate, ascending (the rows of R = scale P^T).
    std::vector<std::int64_t> first(static_cast<std::size_t>(nc) + 1, 0), member;
    for (const std::int64_t c : g.agg) {
        if (c >= 0) ++first[static_cast<std::size_t>(c) + 1];
    }
    for (std::size_t c = 0; c < static_cast<std::size_t>(nc); ++c) first[c + 1] += first[c];
    member.resize(static_cast<std::size_t>(first.back()));
    {
        std::vector<std::int64_t> next(first.begin(), first.end() - 1);
        for (std::size_t i = 0; i < g.agg.size(); ++i) {
            if (g.agg[i] >= 0) {
                member[static_cast<std::size_t>(next[static_cast<std::size_t>(g.agg[i])]++)] =
                    static_cast<std::int64_t>(i);
            }
        }
    }
    CsrMatrix c;
    c.rows = c.cols = nc;
    c.row_ptr.assign(static_cast<std::size_t>(nc) + 1, 0);
    const auto width = static_cast<std::size_t>(nc);
    constexpr std::int64_t kParallelRows = 1024;
    // Pass 1: the coarse columns of each coarse row.
#pragma omp parallel if (nc > kParallelRows)
    {
        std::vector<std::int64_t> marker(width, -1);
#pragma omp for schedule(static)
        for (std::int64_t ci = 0; ci < nc; ++ci) {
            std::int64_t count = 0;
            for (std::int64_t m = first[static_cast<std::size_t>(ci)];
                 m < first[static_cast<std::size_t>(ci) + 1]; ++m) {
                const std::int64_t i = member[static_cast<std::size_t>(m)];
                for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
                    const std::int64_t cj = g.agg[static_cast<std::size_t>(a.col[k])];
                    if (cj >= 0 && marker[static_cast<std::size_t>(cj)] != ci) {
                        marker[static_cast<std::size_t>(cj)] = ci;
                        ++count;
                    }
                }
            }
            c.row_ptr[static_cast<std::size_t>(ci) + 1] = count;
        }
    }
    for (std::size_t ci = 0; ci < width; ++ci) c.row_ptr[ci + 1] += c.row_ptr[ci];
    assign_prefaulted(c.col, static_cast<std::size_t>(c.row_ptr.back()), std::int64_t{0});
    assign_prefaulted(c.val, c.col.size(), 0.0);
    // Pass 2: each fine row's sums per coarse column (A P's row, in A's order), then scale
    // times them added to the coarse row (R (A P)'s order: the rows ascending).
#pragma omp parallel if (nc > kParallelRows)
    {
        std::vector<std::int64_t> marker(width, -1), row_marker(width, -1), touched;
        std::vector<double> acc(width, 0.0), row_sum(width, 0.0);
#pragma omp for schedule(static)
        for (std::int64_t ci = 0; ci < nc; ++ci) {
            const std::int64_t begin = c.row_ptr[static_cast<std::size_t>(ci)];
            std::int64_t end = begin;
            for (std::int64_t m = first[static_cast<std::size_t>(ci)];
                 m < first[static_cast<std::size_t>(ci) + 1]; ++m) {
                const std::int64_t i = member[static_cast<std::size_t>(m)];
                touched.clear();
                for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
                    const std::int64_t cj = g.agg[static_cast<std::size_t>(a.col[k])];
                    if (cj < 0) continue;
                    const auto j = static_cast<std::size_t>(cj);
                    if (row_marker[j] != i) {
                        row_marker[j] = i;
                        row_sum[j] = 0.0;
                        touched.push_back(cj);
                    }
                    row_sum[j] += a.val[static_cast<std::size_t>(k)];
                }
                for (const std::int64_t cj : touched) {
                    const auto j = static_cast<std::size_t>(cj);
                    if (marker[j] != ci) {
                        marker[j] = ci;
                        acc[j] = 0.0;
                        c.col[static_cast<std::size_t>(end++)] = cj;
                    }
                    acc[j] += scale * row_sum[j];
                }
            }
            std::sort(c.col.begin() + begin, c.col.begin() + end);
            for (std::int64_t q = begin; q < end; ++q) {
                c.val[static_cast<std::size_t>(q)] = acc[static_cast<std::size_t>(c.col[q])];
            }
        }
    }
    return c;
}

}  // namespace mpmg
