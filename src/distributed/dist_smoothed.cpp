#include "distributed/dist_smoothed.hpp"

#ifdef MPMG_HAVE_MPI

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <utility>
#include <vector>

#include "distributed/dist_ops.hpp"
#include "unstructured/drop_zeros.hpp"
#include "unstructured/smoothed_aggregation.hpp"
#include "unstructured/smoother_setup.hpp"
#include "unstructured/spgemm.hpp"

namespace mpmg::dist {
namespace {

/// The coarse rows and columns a process reaches, in a compact numbering: `global` lists their
/// global numbers in increasing order, and compact(j) finds one (it must be listed). Every
/// product below works on these, so no process holds anything the size of the whole coarse
/// level (at 1024 ranks that level is a thousand times its share).
struct CompactColumns {
    std::vector<std::int64_t> global;
    /// The compact numbers of the columns of the listed matrices (sorted, unique).
    explicit CompactColumns(std::initializer_list<const CsrMatrix*> ms) {
        for (const CsrMatrix* m : ms) global.insert(global.end(), m->col.begin(), m->col.end());
        std::sort(global.begin(), global.end());
        global.erase(std::unique(global.begin(), global.end()), global.end());
    }
    std::int64_t size() const { return static_cast<std::int64_t>(global.size()); }
    std::int64_t compact(std::int64_t j) const {
        return std::lower_bound(global.begin(), global.end(), j) - global.begin();
    }
    /// m with its columns renumbered compactly.
    CsrMatrix renumbered(CsrMatrix m) const {
        for (std::int64_t& j : m.col) j = compact(j);
        m.cols = size();
        return m;
    }
};

/// Each process's share `mine` of a sum of matrices, rows and columns numbered by row_of(i)
/// and col_of(j), sent to the owners of its rows under `rows` and summed there in process
/// order: this process's rows of the sum, `cols` global columns (collective).
template <class RowOf, class ColOf>
CsrMatrix summed_at_owners(const CsrMatrix& mine, RowOf row_of, ColOf col_of,
                           const RowPartition& rows, std::int64_t cols, MPI_Comm comm) {
    std::vector<CooEntry> entries;
    entries.reserve(static_cast<std::size_t>(mine.nnz()));
    for (std::int64_t i = 0; i < mine.rows; ++i) {
        for (std::int64_t k = mine.row_ptr[static_cast<std::size_t>(i)];
             k < mine.row_ptr[static_cast<std::size_t>(i) + 1]; ++k) {
            entries.push_back({row_of(i), col_of(mine.col[static_cast<std::size_t>(k)]),
                               mine.val[static_cast<std::size_t>(k)]});
        }
    }
    std::vector<CooEntry> got = send_to_row_owners(entries, rows, comm);
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    return csr_rows(got, rows.first(rank), rows.rows(rank), cols);
}

}  // namespace

DistSmoothedLevel smoothed_level(const DistCsr& a, const Aggregation& g, const RowPartition& coarse,
                                 double theta, int block, bool symmetric) {
    const MPI_Comm comm = a.comm();
    const int rank = a.rank();
    const RowPartition& fine = a.partition();
    const std::int64_t n = a.local_rows(), first = a.first();
    const std::int64_t cfirst = coarse.first(rank), nc = coarse.rows(rank);
    const std::int64_t ncg = coarse.global_rows();
    if (static_cast<std::int64_t>(g.agg.size()) != n || g.coarse_rows != nc) {
        throw std::logic_error("smoothed_level: the aggregates do not match the partitions");
    }
    const auto own = [&](std::int64_t j) { return j >= first && j < first + n; };
    const auto slot = [&](std::int64_t j) {
        const std::int64_t s = a.ghost_slot(j);
        if (s < 0) throw std::logic_error("smoothed_level: a column outside the coupling");
        return static_cast<std::size_t>(s);
    };
    const CsrMatrix rows = a.rows_with_global_columns();  // what the filter and S read

    // A_F, with the diagonal of the neighbours' columns.
    const std::vector<double> d_own = diagonal_of(a.diag());
    const std::vector<double> d_ghost = a.exchange(d_own.data());  // a copy: reused below
    const CsrMatrix af =
        theta > 0.0
            ? filtered_rows(
                  rows, first,
                  [&](std::int64_t j) {
                      return own(j) ? d_own[static_cast<std::size_t>(j - first)] : d_ghost[slot(j)];
                  },
                  theta, block)
            : rows;

    DistSmoothedLevel out;
    const std::vector<double> inv_d = smoothing_inverse_diagonal(af, first);
    {
        const DistCsr daf(af, 0, fine, comm);
        out.rho = power_estimate_parts(
            n, first, inv_d, [&](const double* x, double* y) { daf.multiply(x, y); },
            [&](double* sums) { allreduce_sums(sums, 2, comm); });
    }
    out.omega = smoothing_omega(out.rho);
    const CsrMatrix s = jacobi_smoothing_rows(af, first, inv_d, out.omega);

    // P = S P_t: each column of S becomes its row's aggregate (the neighbours' from their
    // owners), summed in S's column order as spgemm sums.
    std::vector<double> agg_own(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t c = g.agg[static_cast<std::size_t>(i)];
        agg_own[static_cast<std::size_t>(i)] = c < 0 ? -1.0 : static_cast<double>(cfirst + c);
    }
    const std::vector<double> agg_ghost = a.exchange(agg_own.data());
    CsrMatrix p;
    p.rows = n;
    p.cols = ncg;
    std::vector<std::pair<std::int64_t, double>> row;
    for (std::int64_t i = 0; i < n; ++i) {
        row.clear();
        for (std::int64_t k = s.row_ptr[static_cast<std::size_t>(i)];
             k < s.row_ptr[static_cast<std::size_t>(i) + 1]; ++k) {
            const std::int64_t j = s.col[static_cast<std::size_t>(k)];
            const double c =
                own(j) ? agg_own[static_cast<std::size_t>(j - first)] : agg_ghost[slot(j)];
            if (c >= 0.0)
                row.emplace_back(static_cast<std::int64_t>(c), s.val[static_cast<std::size_t>(k)]);
        }
        append_summed_row(row, -1, p);
    }

    // R, transposed across the processes: the coarse rows' owners get their entries.
    CsrMatrix tentative = prolongation(g);  // P_t's rows (R = P_t^T for a nonsymmetric A)
    for (std::int64_t& c : tentative.col) c += cfirst;
    tentative.cols = ncg;
    // The rows of P that this process's coupling reaches, from their owners: A P needs them.
    const CsrMatrix p_ghost = a.ghost_rows(p);
    // Every coarse row and column this process touches, numbered compactly.
    const CompactColumns cc({&p, &p_ghost, &tentative});
    const auto to_global = [&](std::int64_t c) { return cc.global[static_cast<std::size_t>(c)]; };
    const CsrMatrix& restricted = symmetric ? p : tentative;         // R = restricted^T
    const CsrMatrix r_mine = cc.renumbered(restricted).transpose();  // compact x n
    out.r =
        std::make_unique<DistCsr>(summed_at_owners(
                                      r_mine, to_global, [&](std::int64_t j) { return j + first; },
                                      coarse, fine.global_rows(), comm),
                                  0, coarse, fine, comm);

    // R A P: A P on this process's rows, then R_mine (A P) summed at the coarse rows' owners.
    // A's rows over [own rows; ghost slots]: the diagonal block, then the coupling's entries
    // at n + their slot (spgemm takes a row's columns in any order).
    const CsrMatrix& da = a.diag();
    const DistCsr::Coupling& cpl = a.coupling();
    CsrMatrix a_ext;
    a_ext.rows = n;
    a_ext.cols = n + static_cast<std::int64_t>(a.ghosts().size());
    a_ext.row_ptr.reserve(static_cast<std::size_t>(n) + 1);
    for (std::int64_t i = 0, q = 0; i < n; ++i) {  // q: the next coupling row
        const auto ui = static_cast<std::size_t>(i);
        a_ext.col.insert(a_ext.col.end(), da.col.begin() + da.row_ptr[ui],
                         da.col.begin() + da.row_ptr[ui + 1]);
        a_ext.val.insert(a_ext.val.end(), da.val.begin() + da.row_ptr[ui],
                         da.val.begin() + da.row_ptr[ui + 1]);
        const auto uq = static_cast<std::size_t>(q);
        if (uq < cpl.rows.size() && cpl.rows[uq] == i) {
            for (std::int64_t k = cpl.ptr[uq]; k < cpl.ptr[uq + 1]; ++k) {
                a_ext.col.push_back(n + cpl.slot[static_cast<std::size_t>(k)]);
                a_ext.val.push_back(cpl.val[static_cast<std::size_t>(k)]);
            }
            ++q;
        }
        a_ext.row_ptr.push_back(a_ext.nnz());
    }
    CsrMatrix p_ext = cc.renumbered(p);  // [P's own rows; its ghost rows], compact columns
    p_ext.rows = a_ext.cols;
    for (std::int64_t k = 0; k < p_ghost.rows; ++k) {
        for (std::int64_t e = p_ghost.row_ptr[static_cast<std::size_t>(k)];
             e < p_ghost.row_ptr[static_cast<std::size_t>(k) + 1]; ++e) {
            p_ext.col.push_back(cc.compact(p_ghost.col[static_cast<std::size_t>(e)]));
            p_ext.val.push_back(p_ghost.val[static_cast<std::size_t>(e)]);
        }
        p_ext.row_ptr.push_back(p_ext.nnz());
    }
    const CsrMatrix ap = spgemm(a_ext, p_ext);          // n x compact
    const CsrMatrix contribution = spgemm(r_mine, ap);  // compact x compact
    out.coarse = summed_at_owners(contribution, to_global, to_global, coarse, ncg, comm);
    (void)drop_zeros(out.coarse, cfirst);  // cancelled entries go, the diagonal stays

    double counts[2] = {static_cast<double>(p.nnz()), static_cast<double>(n)};
    allreduce_sums(counts, 2, comm);
    out.entries_per_row = counts[1] > 0.0 ? counts[0] / counts[1] : 0.0;
    out.p = std::make_unique<DistCsr>(p, 0, fine, coarse, comm);
    return out;
}

}  // namespace mpmg::dist

#endif  // MPMG_HAVE_MPI
