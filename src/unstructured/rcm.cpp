#include "unstructured/rcm.hpp"

#include <algorithm>
#include <numeric>

namespace mpmg {
namespace {

// The symmetrised pattern of A without the diagonal, rows sorted: row i holds every j != i with
// a_ij or a_ji stored, the sorted rows of A and of its transpose merged. Only the pattern is
// read and no values are made: 8 bytes per column of the transpose and of the result (the
// pattern a process gathers from the others' rows has no values to read).
CsrMatrix symmetric_pattern(const CsrMatrix& a) {
    const auto n = static_cast<std::size_t>(a.rows);
    // The transpose's pattern: its rows come out sorted, A's rows being visited in order.
    std::vector<std::int64_t> t_ptr(n + 1, 0), t_col(static_cast<std::size_t>(a.nnz()));
    for (std::size_t p = 0; p < t_col.size(); ++p) ++t_ptr[static_cast<std::size_t>(a.col[p]) + 1];
    for (std::size_t i = 0; i < n; ++i) t_ptr[i + 1] += t_ptr[i];
    {
        std::vector<std::int64_t> next(t_ptr.begin(), t_ptr.end() - 1);
        for (std::size_t i = 0; i < n; ++i) {
            for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
                const auto j = static_cast<std::size_t>(a.col[static_cast<std::size_t>(p)]);
                t_col[static_cast<std::size_t>(next[j]++)] = static_cast<std::int64_t>(i);
            }
        }
    }
    CsrMatrix g;
    g.rows = g.cols = a.rows;
    g.row_ptr.reserve(n + 1);
    g.col.reserve(t_col.size() + t_col.size() / 8);
    for (std::size_t i = 0; i < n; ++i) {
        std::int64_t p = a.row_ptr[i], q = t_ptr[i];
        const std::int64_t pe = a.row_ptr[i + 1], qe = t_ptr[i + 1];
        while (p < pe || q < qe) {
            const std::int64_t cp = p < pe ? a.col[static_cast<std::size_t>(p)] : a.cols;
            const std::int64_t cq = q < qe ? t_col[static_cast<std::size_t>(q)] : a.cols;
            const std::int64_t c = std::min(cp, cq);
            p += cp == c;
            q += cq == c;
            if (c != static_cast<std::int64_t>(i)) g.col.push_back(c);
        }
        g.row_ptr.push_back(g.nnz());
    }
    return g;
}

// Breadth-first search from `root` over unvisited rows; appends the visit order (neighbours by
// increasing degree, then index) to `order` and returns the number of levels. `last_level`,
// when given, receives where the last level starts in `order`.
int bfs(const CsrMatrix& g, const std::vector<std::int64_t>& degree, std::int64_t root,
        std::vector<char>& seen, std::vector<std::int64_t>& order,
        std::size_t* last_level = nullptr) {
    std::size_t head = order.size();
    order.push_back(root);
    seen[static_cast<std::size_t>(root)] = 1;
    int levels = 0;
    std::vector<std::int64_t> next;
    while (head < order.size()) {
        const std::size_t level_end = order.size();
        if (last_level != nullptr) *last_level = head;
        ++levels;
        for (; head < level_end; ++head) {
            const std::int64_t i = order[head];
            next.clear();
            for (std::int64_t p = g.row_ptr[i]; p < g.row_ptr[i + 1]; ++p) {
                const std::int64_t j = g.col[p];
                if (!seen[static_cast<std::size_t>(j)]) {
                    seen[static_cast<std::size_t>(j)] = 1;
                    next.push_back(j);
                }
            }
            std::sort(next.begin(), next.end(), [&](std::int64_t x, std::int64_t y) {
                const std::int64_t dx = degree[static_cast<std::size_t>(x)];
                const std::int64_t dy = degree[static_cast<std::size_t>(y)];
                return dx != dy ? dx < dy : x < y;
            });
            order.insert(order.end(), next.begin(), next.end());
        }
    }
    return levels;
}

// A pseudo-peripheral row of root's component (George & Liu's algorithm): a BFS from the row
// of smallest degree in the last level of the previous BFS (the first such in its order),
// while the number of levels grows. The BFS's levels are the rows' distances from its root, so
// the last level is the farthest rows. `seen` is all clear on entry and on return (only the
// component is touched, so many small components cost no more than one large one).
std::int64_t pseudo_peripheral(const CsrMatrix& g, const std::vector<std::int64_t>& degree,
                               std::int64_t root, std::vector<char>& seen) {
    std::vector<std::int64_t> order, trial;
    std::size_t last = 0, trial_last = 0;
    int levels = bfs(g, degree, root, seen, order, &last);
    for (int round = 0; round < 8; ++round) {
        std::int64_t best = order[last];
        for (std::size_t k = last + 1; k < order.size(); ++k) {
            const auto i = static_cast<std::size_t>(order[k]);
            if (degree[i] < degree[static_cast<std::size_t>(best)]) best = order[k];
        }
        for (std::int64_t i : order) seen[static_cast<std::size_t>(i)] = 0;
        trial.clear();
        const int l = bfs(g, degree, best, seen, trial, &trial_last);
        if (l <= levels) {
            for (std::int64_t i : trial) seen[static_cast<std::size_t>(i)] = 0;
            return best;
        }
        levels = l;  // the trial, seen as it is, becomes the BFS to improve on
        order.swap(trial);
        last = trial_last;
    }
    for (std::int64_t i : order) seen[static_cast<std::size_t>(i)] = 0;
    return order.front();
}

}  // namespace

std::vector<std::int64_t> rcm_order(const CsrMatrix& a, bool symmetric) {
    // The graph: A's own pattern when it is symmetric (its diagonal is never followed, the row
    // itself being seen first), else the symmetrised one. Degrees count the other rows only.
    CsrMatrix merged;
    if (!symmetric) merged = symmetric_pattern(a);
    const CsrMatrix& g = symmetric ? a : merged;
    const auto n = static_cast<std::size_t>(a.rows);
    std::vector<std::int64_t> degree(n);
    for (std::size_t i = 0; i < n; ++i) {
        std::int64_t d = 0;
        for (std::int64_t p = g.row_ptr[i]; p < g.row_ptr[i + 1]; ++p) {
            d += g.col[static_cast<std::size_t>(p)] != static_cast<std::int64_t>(i);
        }
        degree[i] = d;
    }
    std::vector<char> seen(n, 0), probe(n, 0);
    std::vector<std::int64_t> order;
    order.reserve(n);
    // Each component in turn, found from its smallest row index.
    for (std::int64_t i = 0; i < a.rows; ++i) {
        if (seen[static_cast<std::size_t>(i)]) continue;
        std::int64_t root = pseudo_peripheral(g, degree, i, probe);
        // A pattern that is not quite symmetric (given as symmetric) can lead the probe into
        // rows already ordered, and the search from its root can miss row i: each is then
        // started from row i, so that every row is ordered once.
        if (seen[static_cast<std::size_t>(root)]) root = i;
        bfs(g, degree, root, seen, order);
        if (!seen[static_cast<std::size_t>(i)]) bfs(g, degree, i, seen, order);
    }
    std::reverse(order.begin(), order.end());
    return order;
}

CsrMatrix permute(const CsrMatrix& a, const std::vector<std::int64_t>& perm) {
    return permute_rows(a, perm, 0, a.rows);
}

CsrMatrix permute_rows(const CsrMatrix& a, const std::vector<std::int64_t>& perm,
                       std::int64_t first, std::int64_t end) {
    std::vector<std::int64_t> inv(perm.size());
    for (std::size_t k = 0; k < perm.size(); ++k) inv[static_cast<std::size_t>(perm[k])] = k;
    CsrMatrix b;
    b.rows = end - first;
    b.cols = a.cols;
    b.row_ptr.assign(static_cast<std::size_t>(b.rows) + 1, 0);
    for (std::int64_t i = 0; i < b.rows; ++i) {
        const std::int64_t old = perm[static_cast<std::size_t>(first + i)];
        b.row_ptr[i + 1] = b.row_ptr[i] + (a.row_ptr[old + 1] - a.row_ptr[old]);
    }
    b.col.resize(static_cast<std::size_t>(b.row_ptr.back()));
    b.val.resize(b.col.size());
#pragma omp parallel
    {
        std::vector<std::pair<std::int64_t, double>> row;  // one buffer per thread
#pragma omp for schedule(dynamic, 1024)
        for (std::int64_t i = 0; i < b.rows; ++i) {
            const std::int64_t old = perm[static_cast<std::size_t>(first + i)];
            row.clear();
            for (std::int64_t p = a.row_ptr[old]; p < a.row_ptr[old + 1]; ++p) {
                row.emplace_back(inv[static_cast<std::size_t>(a.col[p])], a.val[p]);
            }
            std::sort(row.begin(), row.end());
            std::int64_t at = b.row_ptr[i];
            for (const auto& [j, v] : row) {
                b.col[static_cast<std::size_t>(at)] = j;
                b.val[static_cast<std::size_t>(at++)] = v;
            }
        }
    }
    return b;
}

std::int64_t max_row_span(const CsrMatrix& a) {
    std::int64_t span = 0;
    for (std::int64_t i = 0; i < a.rows; ++i) {
        if (a.row_ptr[i + 1] == a.row_ptr[i]) continue;
        span = std::max(span, a.col[a.row_ptr[i + 1] - 1] - a.col[a.row_ptr[i]] + 1);
    }
    return span;
}

}  // namespace mpmg
