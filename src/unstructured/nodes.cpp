#include "unstructured/nodes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "mpmg/errors.hpp"

namespace mpmg {
namespace {

constexpr std::int64_t kParallelNodes = 4096;

// The sorted, distinct nodes row i's columns belong to, into `out` (cleared first).
void row_nodes(const CsrMatrix& a, std::int64_t i, int block, std::vector<std::int64_t>& out) {
    out.clear();
    for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
        const std::int64_t c = a.col[p] / block;
        if (out.empty() || out.back() != c) out.push_back(c);  // columns are sorted
    }
}

// True when the `block` rows of every node reach the same nodes and some node reaches another.
bool fits(const CsrMatrix& a, int block) {
    const std::int64_t nodes = a.rows / block;
    bool coupled = false, same = true;
#pragma omp parallel reduction(|| : coupled) reduction(&& : same) if (nodes > kParallelNodes)
    {
        std::vector<std::int64_t> first, other;
#pragma omp for schedule(static)
        for (std::int64_t node = 0; node < nodes; ++node) {
            if (!same) continue;  // another node failed already
            row_nodes(a, node * block, block, first);
            for (int k = 1; k < block && same; ++k) {
                row_nodes(a, node * block + k, block, other);
                same = other == first;
            }
            coupled = coupled || first.size() > 1 || (first.size() == 1 && first.front() != node);
        }
    }
    return same && coupled;
}

}  // namespace

CsrMatrix node_matrix(const CsrMatrix& a, int block) {
    const std::int64_t nodes = a.rows / block;
    CsrMatrix m;
    m.rows = nodes;
    m.cols = a.cols / block;
    m.row_ptr.assign(static_cast<std::size_t>(nodes) + 1, 0);
    // Two passes over the nodes: count each node's distinct column nodes, then fill.
    std::vector<std::vector<std::int64_t>> cols(static_cast<std::size_t>(nodes));
#pragma omp parallel if (nodes > kParallelNodes)
    {
        std::vector<std::int64_t> one;
#pragma omp for schedule(static)
        for (std::int64_t node = 0; node < nodes; ++node) {
            auto& c = cols[static_cast<std::size_t>(node)];
            for (int k = 0; k < block; ++k) {
                row_nodes(a, node * block + k, block, one);
                c.insert(c.end(), one.begin(), one.end());
            }
            std::sort(c.begin(), c.end());
            c.erase(std::unique(c.begin(), c.end()), c.end());
            m.row_ptr[static_cast<std::size_t>(node) + 1] = static_cast<std::int64_t>(c.size());
        }
    }
    for (std::int64_t node = 0; node < nodes; ++node) m.row_ptr[node + 1] += m.row_ptr[node];
    const std::vector<double> d = diagonal_of(a);
    m.col.resize(static_cast<std::size_t>(m.row_ptr.back()));
    m.val.assign(m.col.size(), 0.0);
#pragma omp parallel for schedule(static) if (nodes > kParallelNodes)
    for (std::int64_t node = 0; node < nodes; ++node) {
        auto& c = cols[static_cast<std::size_t>(node)];
        const std::int64_t base = m.row_ptr[node];
        std::copy(c.begin(), c.end(), m.col.begin() + base);
        for (int k = 0; k < block; ++k) {
            const std::int64_t i = node * block + k;
            for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
                const auto at = std::lower_bound(c.begin(), c.end(), a.col[p] / block) - c.begin();
                const double dd = std::sqrt(std::fabs(d[static_cast<std::size_t>(i)] *
                                                      d[static_cast<std::size_t>(a.col[p])]));
                const double v = dd > 0.0 ? a.val[p] / dd : a.val[p];
                m.val[static_cast<std::size_t>(base + at)] += v * v;
            }
        }
        for (std::int64_t p = base; p < m.row_ptr[node + 1]; ++p) m.val[p] = std::sqrt(m.val[p]);
        std::vector<std::int64_t>().swap(c);
    }
    return m;
}

int detect_block_size(const CsrMatrix& a) {
    if (a.rows != a.cols) return 1;
    for (int r = kMaxDetectedBlock; r >= 2; --r) {
        if (a.rows % r == 0 && a.rows / r >= 2 && fits(a, r)) return r;
    }
    return 1;
}

double cross_component_share(const CsrMatrix& a, int block) {
    const std::vector<double> d = diagonal_of(a);
    double cross = 0.0, all = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : cross, all) if (a.rows > kParallelNodes)
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            const std::int64_t j = a.col[p];
            if (j / block == i / block) continue;
            const double dd = std::sqrt(
                std::fabs(d[static_cast<std::size_t>(i)] * d[static_cast<std::size_t>(j)]));
            const double s = dd > 0.0 ? std::fabs(a.val[p]) / dd : 0.0;
            all += s;
            if (j % block != i % block) cross += s;
        }
    }
    return all > 0.0 ? cross / all : 0.0;
}

BlockSizeChoice choose_block_size(const CsrMatrix& a, int requested) {
    if (requested > 0) {
        if (a.rows % requested != 0) {
            throw InvalidInput(fmt::format(
                "--block-size {} (multigrid.block_size): does not divide the {} rows of A; give "
                "the number of unknowns per node of a matrix numbered node by node, 1 for a "
                "scalar problem, or auto",
                requested, a.rows));
        }
        return {requested, "given"};
    }
    const int r = detect_block_size(a);
    if (r == 1) return {1, "no nodes in A's pattern"};
    const double share = cross_component_share(a, r);
    if (share < kMinCrossShare) {
        return {1, fmt::format("A's pattern has nodes of {} unknowns, but only {:.2g} of the "
                               "couplings between nodes join different components: scalar "
                               "aggregation (--block-size {} aggregates by nodes)",
                               r, share, r)};
    }
    return {r, fmt::format("read from A's pattern; {:.2g} of the couplings between nodes join "
                           "different components",
                           share)};
}

std::vector<std::int64_t> expand_to_unknowns(const std::vector<std::int64_t>& node_perm,
                                             int block) {
    std::vector<std::int64_t> perm(node_perm.size() * static_cast<std::size_t>(block));
    for (std::size_t node = 0; node < node_perm.size(); ++node) {
        for (int k = 0; k < block; ++k) perm[node * block + k] = node_perm[node] * block + k;
    }
    return perm;
}

}  // namespace mpmg
