#include "distributed/dist_csr.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "mpmg/errors.hpp"

namespace mpmg::dist {

RowPartition::RowPartition(const std::vector<std::int64_t>& row_ptr, int size) {
    const auto n = static_cast<std::int64_t>(row_ptr.size()) - 1;
    if (size < 1 || n < size) {
        throw InvalidInput(fmt::format(
            "the matrix has {} rows, fewer than the {} processes: run with at most {} ranks", n,
            size, std::max<std::int64_t>(n, 1)));
    }
    // Cut q is the first row whose weight before it (nonzeros + rows) reaches q/size of the
    // total, kept so that every process gets at least one row.
    const auto weight_before = [&](std::int64_t i) {
        return row_ptr[static_cast<std::size_t>(i)] + i;
    };
    const std::int64_t total = weight_before(n);
    first_.assign(static_cast<std::size_t>(size) + 1, 0);
    first_.back() = n;
    for (int q = 1; q < size; ++q) {
        const std::int64_t target = total / size * q + total % size * q / size;
        std::int64_t lo = 0, hi = n;
        while (lo < hi) {
            const std::int64_t mid = lo + (hi - lo) / 2;
            if (weight_before(mid) < target) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        const std::int64_t prev = first_[static_cast<std::size_t>(q) - 1];
        first_[static_cast<std::size_t>(q)] = std::clamp(lo, prev + 1, n - (size - q));
    }
}

RowPartition RowPartition::from_counts(const std::vector<std::int64_t>& rows) {
    RowPartition p;
    p.first_.assign(rows.size() + 1, 0);
    for (std::size_t q = 0; q < rows.size(); ++q) p.first_[q + 1] = p.first_[q] + rows[q];
    return p;
}

RowPartition RowPartition::equal(std::int64_t n, int size) {
    std::vector<std::int64_t> counts(static_cast<std::size_t>(size));
    const auto cut = [&](std::int64_t q) { return n / size * q + n % size * q / size; };
    for (int q = 0; q < size; ++q) counts[static_cast<std::size_t>(q)] = cut(q + 1) - cut(q);
    return from_counts(counts);
}

int RowPartition::owner(std::int64_t row) const {
    const auto it = std::upper_bound(first_.begin(), first_.end() - 1, row);
    return static_cast<int>(it - first_.begin()) - 1;
}

}  // namespace mpmg::dist

#ifdef MPMG_HAVE_MPI

#include <climits>
#include <utility>

#include "core/prefault.hpp"
#include "core/sum_rows.hpp"
#include "distributed/by_owner.hpp"
#include "distributed/dist_ops.hpp"
#include "unstructured/drop_zeros.hpp"
#include "unstructured/pgm.hpp"
#include "unstructured/spgemm.hpp"

namespace mpmg::dist {
namespace {

constexpr int kGhostTag = 7401;

int as_int(std::int64_t n, const char* what) {
    if (n > INT_MAX) {
        throw Unsupported(fmt::format("distributed AMG: {} ({}) exceed MPI's int counts", what, n));
    }
    return static_cast<int>(n);
}

}  // namespace

DistCsr::DistCsr(const CsrMatrix& m, std::int64_t at, const RowPartition& rows,
                 const RowPartition& cols, MPI_Comm comm)
    : p_(rows), cp_(cols), comm_(comm) {
    MPI_Comm_rank(comm, &rank_);
    const std::int64_t n = rows.rows(rank_);
    if (m.cols != cols.global_rows() || rows.size() != cols.size() || at < 0 || at + n > m.rows) {
        throw std::logic_error("DistCsr: the rows do not match the partition");
    }
    // The columns this process owns (the vectors' entries it holds).
    const std::int64_t first = cols.first(rank_), end = cols.first(rank_ + 1);
    diag_.rows = n;
    diag_.cols = end - first;
    diag_.row_ptr.assign(static_cast<std::size_t>(n) + 1, 0);
    struct Far {
        std::int64_t row, col;
        double val;
    };
    std::vector<Far> far;
    {  // the storage at once (not grown by doubling), fresh pages faulted in by one call
        const auto begin = static_cast<std::size_t>(m.row_ptr[static_cast<std::size_t>(at)]);
        const auto stop = static_cast<std::size_t>(m.row_ptr[static_cast<std::size_t>(at + n)]);
        const auto inside = static_cast<std::size_t>(
            std::count_if(m.col.begin() + static_cast<std::ptrdiff_t>(begin),
                          m.col.begin() + static_cast<std::ptrdiff_t>(stop),
                          [&](std::int64_t j) { return j >= first && j < end; }));
        reserve_prefaulted(diag_.col, inside);
        reserve_prefaulted(diag_.val, inside);
        far.reserve(stop - begin - inside);
    }
    for (std::int64_t i = 0; i < n; ++i) {
        const auto r = static_cast<std::size_t>(at + i);
        for (std::int64_t k = m.row_ptr[r]; k < m.row_ptr[r + 1]; ++k) {
            const std::int64_t j = m.col[static_cast<std::size_t>(k)];
            const double v = m.val[static_cast<std::size_t>(k)];
            if (j >= first && j < end) {
                diag_.col.push_back(j - first);
                diag_.val.push_back(v);
            } else {
                far.push_back({i, j, v});
            }
        }
        diag_.row_ptr[static_cast<std::size_t>(i) + 1] = diag_.nnz();
    }
    for (const Far& f : far) ghosts_.push_back(f.col);
    std::sort(ghosts_.begin(), ghosts_.end());
    ghosts_.erase(std::unique(ghosts_.begin(), ghosts_.end()), ghosts_.end());
    for (const Far& f : far) {  // rows ascending, as collected
        if (coupling_.rows.empty() || coupling_.rows.back() != f.row) {
            if (!coupling_.rows.empty()) {
                coupling_.ptr.push_back(static_cast<std::int64_t>(coupling_.slot.size()));
            }
            coupling_.rows.push_back(f.row);
        }
        coupling_.slot.push_back(std::lower_bound(ghosts_.begin(), ghosts_.end(), f.col) -
                                 ghosts_.begin());
        coupling_.val.push_back(f.val);
    }
    if (!coupling_.rows.empty()) {
        coupling_.ptr.push_back(static_cast<std::int64_t>(coupling_.slot.size()));
    }

    // Each process asks the owners of its ghost columns for their values.
    const int size = cols.size();
    std::vector<int> want(static_cast<std::size_t>(size), 0), give(want.size(), 0);
    for (std::int64_t g : ghosts_) ++want[static_cast<std::size_t>(cols.owner(g))];
    MPI_Alltoall(want.data(), 1, MPI_INT, give.data(), 1, MPI_INT, comm);
    std::vector<int> want_at(want.size(), 0), give_at(want.size(), 0);
    for (std::size_t q = 1; q < want.size(); ++q) {
        want_at[q] = want_at[q - 1] + want[q - 1];
        give_at[q] = give_at[q - 1] + give[q - 1];
    }
    std::vector<std::int64_t> asked(static_cast<std::size_t>(give_at.back() + give.back()));
    MPI_Alltoallv(ghosts_.data(), want.data(), want_at.data(), MPI_INT64_T, asked.data(),
                  give.data(), give_at.data(), MPI_INT64_T, comm);
    for (int q = 0; q < size; ++q) {
        const auto uq = static_cast<std::size_t>(q);
        if (want[uq] == 0 && give[uq] == 0) continue;
        Peer peer;
        peer.rank = q;
        peer.recv_first = want_at[uq];
        peer.recv_count = want[uq];
        for (int k = 0; k < give[uq]; ++k) {
            peer.send_rows.push_back(asked[static_cast<std::size_t>(give_at[uq] + k)] - first);
        }
        peers_.push_back(std::move(peer));
    }
    ghost_values_.resize(ghosts_.size());
}

template <class T>
const std::vector<double>& DistCsr::exchange(const T* x) const {
    const double t0 = MPI_Wtime();
    std::vector<MPI_Request> req;
    req.reserve(2 * peers_.size());
    long long sent = 0;
    for (const Peer& q : peers_) {
        if (q.recv_count == 0) continue;
        MPI_Request r;
        MPI_Irecv(ghost_values_.data() + q.recv_first, as_int(q.recv_count, "ghost values"),
                  MPI_DOUBLE, q.rank, kGhostTag, comm_, &r);
        req.push_back(r);
    }
    for (const Peer& q : peers_) {
        if (q.send_rows.empty()) continue;
        q.buf.resize(q.send_rows.size());
        for (std::size_t k = 0; k < q.send_rows.size(); ++k) {
            q.buf[k] = static_cast<double>(x[q.send_rows[k]]);
        }
        MPI_Request r;
        MPI_Isend(q.buf.data(), as_int(static_cast<std::int64_t>(q.buf.size()), "ghost values"),
                  MPI_DOUBLE, q.rank, kGhostTag, comm_, &r);
        req.push_back(r);
        sent += static_cast<long long>(q.buf.size());
    }
    MPI_Waitall(static_cast<int>(req.size()), req.data(), MPI_STATUSES_IGNORE);
    CommStats& cs = comm_stats();
    cs.halo_s += MPI_Wtime() - t0;
    ++cs.halo_exchanges;
    cs.halo_values += sent;
    return ghost_values_;
}

template <class T>
void DistCsr::add_coupling(const T* x, T* y, double sign, const std::vector<double>& val) const {
    const std::vector<double>& g = exchange(x);
    const Coupling& c = coupling_;
    const auto nrows = static_cast<std::int64_t>(c.rows.size());
#pragma omp parallel for schedule(static) if (nrows > 4096)
    for (std::int64_t q = 0; q < nrows; ++q) {
        const auto uq = static_cast<std::size_t>(q);
        double acc = 0.0;
        for (std::int64_t e = c.ptr[uq]; e < c.ptr[uq + 1]; ++e) {
            const auto ue = static_cast<std::size_t>(e);
            acc += val[ue] * g[static_cast<std::size_t>(c.slot[ue])];
        }
        T& out = y[c.rows[uq]];
        out = static_cast<T>(static_cast<double>(out) + sign * acc);
    }
}

std::vector<char> DistCsr::coupled_rows() const {
    if (!(p_ == cp_)) throw std::logic_error("DistCsr::coupled_rows: a square matrix only");
    std::vector<char> coupled(static_cast<std::size_t>(local_rows()), 0);
    for (std::size_t q = 0; q < coupling_.rows.size(); ++q) {
        for (std::int64_t e = coupling_.ptr[q]; e < coupling_.ptr[q + 1]; ++e) {
            if (coupling_.val[static_cast<std::size_t>(e)] != 0.0) {
                coupled[static_cast<std::size_t>(coupling_.rows[q])] = 1;
                break;
            }
        }
    }
    for (const Peer& q : peers_) {
        for (const std::int64_t r : q.send_rows) coupled[static_cast<std::size_t>(r)] = 1;
    }
    return coupled;
}

std::int64_t DistCsr::ghost_slot(std::int64_t j) const {
    const auto it = std::lower_bound(ghosts_.begin(), ghosts_.end(), j);
    return it != ghosts_.end() && *it == j ? it - ghosts_.begin() : -1;
}

CsrMatrix DistCsr::ghost_rows(const CsrMatrix& mine) const {
    if (mine.rows != cp_.rows(rank_)) {
        throw std::logic_error("DistCsr::ghost_rows: one row per column this process owns");
    }
    // Each owner sends the rows its peers asked for at construction (their ghost values'
    // rows), tagged with their global number.
    std::vector<CooEntry> items;
    std::vector<int> to;
    const std::int64_t first = cp_.first(rank_);
    for (const Peer& q : peers_) {
        for (const std::int64_t r : q.send_rows) {
            const auto ur = static_cast<std::size_t>(r);
            for (std::int64_t k = mine.row_ptr[ur]; k < mine.row_ptr[ur + 1]; ++k) {
                const auto uk = static_cast<std::size_t>(k);
                items.push_back({first + r, mine.col[uk], mine.val[uk]});
                to.push_back(q.rank);
            }
        }
    }
    std::vector<CooEntry> got = send_to_owners(
        items, p_.size(), [&](std::size_t k) { return to[k]; }, comm_);
    for (CooEntry& e : got) e.row = ghost_slot(e.row);
    return csr_rows(got, 0, static_cast<std::int64_t>(ghosts_.size()), mine.cols);
}

void DistCsr::multiply(const double* x, double* y) const {
    const CsrMatrix& d = diag_;
#pragma omp parallel for schedule(static) if (d.rows > 4096)
    for (std::int64_t i = 0; i < d.rows; ++i) {
        double s = 0.0;
        for (std::int64_t k = d.row_ptr[static_cast<std::size_t>(i)];
             k < d.row_ptr[static_cast<std::size_t>(i) + 1]; ++k) {
            s += d.val[static_cast<std::size_t>(k)] * x[d.col[static_cast<std::size_t>(k)]];
        }
        y[i] = s;
    }
    add_coupling(x, y);
}

CsrMatrix DistCsr::rows_with_global_columns() const {
    CsrMatrix out;
    out.rows = diag_.rows;
    out.cols = cp_.global_rows();
    out.row_ptr.assign(static_cast<std::size_t>(out.rows) + 1, 0);
    std::size_t q = 0;  // the next coupling row
    std::vector<std::pair<std::int64_t, double>> row;
    for (std::int64_t i = 0; i < diag_.rows; ++i) {
        row.clear();
        const auto ui = static_cast<std::size_t>(i);
        for (std::int64_t k = diag_.row_ptr[ui]; k < diag_.row_ptr[ui + 1]; ++k) {
            row.emplace_back(cp_.first(rank_) + diag_.col[static_cast<std::size_t>(k)],
                             diag_.val[static_cast<std::size_t>(k)]);
        }
        if (q < coupling_.rows.size() && coupling_.rows[q] == i) {
            for (std::int64_t e = coupling_.ptr[q]; e < coupling_.ptr[q + 1]; ++e) {
                const auto ue = static_cast<std::size_t>(e);
                row.emplace_back(ghosts_[static_cast<std::size_t>(coupling_.slot[ue])],
                                 coupling_.val[ue]);
            }
            ++q;
        }
        std::sort(row.begin(), row.end(),
                  [](const auto& x, const auto& y) { return x.first < y.first; });
        for (const auto& [j, v] : row) {
            out.col.push_back(j);
            out.val.push_back(v);
        }
        out.row_ptr[ui + 1] = out.nnz();
    }
    return out;
}

template const std::vector<double>& DistCsr::exchange<double>(const double*) const;
template const std::vector<double>& DistCsr::exchange<float>(const float*) const;
template void DistCsr::add_coupling<double>(const double*, double*, double,
                                            const std::vector<double>&) const;
template void DistCsr::add_coupling<float>(const float*, float*, double,
                                           const std::vector<double>&) const;

CsrMatrix galerkin_rows(const DistCsr& a, const std::vector<std::int64_t>& agg, double r_scale,
                        const RowPartition& p_coarse) {
    const int rank = a.rank();
    const std::int64_t cfirst = p_coarse.first(rank), nc = p_coarse.rows(rank);
    if (static_cast<std::int64_t>(agg.size()) != a.local_rows()) {
        throw std::logic_error("galerkin_rows: one aggregate per local row");
    }
    // Every ghost column's global aggregate (-1: left out), from its owner.
    std::vector<double> global_agg(agg.size());
    for (std::size_t i = 0; i < agg.size(); ++i) {
        global_agg[i] = agg[i] < 0 ? -1.0 : static_cast<double>(cfirst + agg[i]);
    }
    const std::vector<double>& ghost_agg = a.exchange(global_agg.data());

    // The part inside this process: R_local A_diag P_local.
    Aggregation g;
    g.agg = agg;
    g.coarse_rows = nc;
    const CsrMatrix local = aggregate_galerkin(a.diag(), g, r_scale);

    // The coupling's contributions (coarse row, global coarse column, value) in the order of
    // its entries, then ordered by row and column stably: a repeated column sums in that order.
    // Their columns are other processes' aggregates, so they never meet the local part's.
    std::vector<CooEntry> ghost;
    const DistCsr::Coupling& c = a.coupling();
    for (std::size_t q = 0; q < c.rows.size(); ++q) {
        const std::int64_t I = agg[static_cast<std::size_t>(c.rows[q])];
        if (I < 0) continue;
        for (std::int64_t e = c.ptr[q]; e < c.ptr[q + 1]; ++e) {
            const auto ue = static_cast<std::size_t>(e);
            const double J = ghost_agg[static_cast<std::size_t>(c.slot[ue])];
            if (J < 0) continue;
            ghost.push_back({I, static_cast<std::int64_t>(J), r_scale * c.val[ue]});
        }
    }
    std::stable_sort(ghost.begin(), ghost.end(), [](const CooEntry& x, const CooEntry& y) {
        return x.row < y.row || (x.row == y.row && x.col < y.col);
    });
    // Each row: the coupling's columns before this process's, the local part's (sorted and
    // distinct), the coupling's after; entries that cancelled to zero then go, as the serial
    // hierarchy's drop_zeros drops them (the diagonal stays).
    CsrMatrix out;
    out.rows = nc;
    out.cols = p_coarse.global_rows();
    out.row_ptr.reserve(static_cast<std::size_t>(nc) + 1);
    reserve_prefaulted(out.col, local.col.size() + ghost.size());
    reserve_prefaulted(out.val, out.col.capacity());
    const auto add = [&](std::int64_t j, double v, std::int64_t row_start) {
        if (out.nnz() > row_start && out.col.back() == j) {
            out.val.back() += v;
        } else {
            out.col.push_back(j);
            out.val.push_back(v);
        }
    };
    std::size_t e = 0;
    for (std::int64_t r = 0; r < nc; ++r) {
        const std::int64_t start = out.nnz();
        for (; e < ghost.size() && ghost[e].row == r && ghost[e].col < cfirst; ++e) {
            add(ghost[e].col, ghost[e].val, start);
        }
        for (std::int64_t k = local.row_ptr[static_cast<std::size_t>(r)];
             k < local.row_ptr[static_cast<std::size_t>(r) + 1]; ++k) {
            out.col.push_back(cfirst + local.col[static_cast<std::size_t>(k)]);
            out.val.push_back(local.val[static_cast<std::size_t>(k)]);
        }
        for (; e < ghost.size() && ghost[e].row == r; ++e) add(ghost[e].col, ghost[e].val, start);
        out.row_ptr.push_back(out.nnz());
    }
    drop_zeros(out, cfirst);
    return out;
}

void append_summed_row(std::vector<std::pair<std::int64_t, double>>& row, std::int64_t keep,
                       CsrMatrix& out) {
    std::stable_sort(row.begin(), row.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    const std::int64_t start = out.nnz();
    for (std::size_t k = 0; k < row.size(); ++k) {
        if (k > 0 && row[k].first == row[k - 1].first) {
            out.val.back() += row[k].second;
        } else {
            out.col.push_back(row[k].first);
            out.val.push_back(row[k].second);
        }
    }
    std::int64_t kept = start;
    for (std::int64_t k = start; k < out.nnz(); ++k) {
        const auto uk = static_cast<std::size_t>(k);
        if (out.val[uk] == 0.0 && out.col[uk] != keep) continue;
        out.col[static_cast<std::size_t>(kept)] = out.col[uk];
        out.val[static_cast<std::size_t>(kept)] = out.val[uk];
        ++kept;
    }
    out.col.resize(static_cast<std::size_t>(kept));
    out.val.resize(static_cast<std::size_t>(kept));
    out.row_ptr.push_back(out.nnz());
}

std::vector<CooEntry> send_to_row_owners(std::vector<CooEntry>& mine, const RowPartition& rp,
                                         MPI_Comm comm) {
    // Each entry's process found once (a search in the partition); runs of one row share it.
    int last = 0;
    std::vector<CooEntry> recv = send_to_owners(
        mine, rp.size(),
        [&](std::size_t k) {
            if (k == 0 || mine[k].row != mine[k - 1].row) last = rp.owner(mine[k].row);
            return last;
        },
        comm);
    mine = std::vector<CooEntry>();
    return recv;
}

namespace {

/// The entries of `pieces`, in their order, placed in their rows (not yet sorted).
CsrMatrix placed_rows(std::initializer_list<std::span<const CooEntry>> pieces, std::int64_t first,
                      std::int64_t rows, std::int64_t cols) {
    CsrMatrix a;
    a.rows = rows;
    a.cols = cols;
    a.row_ptr.assign(static_cast<std::size_t>(rows) + 1, 0);
    std::size_t n = 0;
    for (const std::span<const CooEntry> piece : pieces) {
        for (const CooEntry& e : piece) ++a.row_ptr[static_cast<std::size_t>(e.row - first) + 1];
        n += piece.size();
    }
    for (std::size_t i = 0; i < static_cast<std::size_t>(rows); ++i) {
        a.row_ptr[i + 1] += a.row_ptr[i];
    }
    assign_prefaulted(a.col, n, std::int64_t{0});
    assign_prefaulted(a.val, n, 0.0);
    std::vector<std::int64_t> next(a.row_ptr.begin(), a.row_ptr.end() - 1);
    for (const std::span<const CooEntry> piece : pieces) {
        for (const CooEntry& e : piece) {
            const auto q =
                static_cast<std::size_t>(next[static_cast<std::size_t>(e.row - first)]++);
            a.col[q] = e.col;
            a.val[q] = e.val;
        }
    }
    return a;
}

}  // namespace

CsrMatrix csr_rows(std::vector<CooEntry>& entries, std::int64_t first, std::int64_t rows,
                   std::int64_t cols) {
    CsrMatrix a = placed_rows({entries}, first, rows, cols);
    entries = std::vector<CooEntry>();
    sort_and_sum_rows(a);
    return a;
}

CsrMatrix csr_rows(std::initializer_list<std::span<const CooEntry>> pieces, std::int64_t first,
                   std::int64_t rows, std::int64_t cols) {
    CsrMatrix a = placed_rows(pieces, first, rows, cols);
    sort_and_sum_rows(a);
    return a;
}

CsrMatrix gather_rows(const CsrMatrix& mine, const RowPartition& p, MPI_Comm comm, bool values) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    const int size = p.size();
    int nnz = as_int(mine.nnz(), "nonzeros");
    std::vector<int> nnz_of(static_cast<std::size_t>(size)), rows_of(nnz_of.size()),
        nnz_at(nnz_of.size()), rows_at(nnz_of.size());
    MPI_Gather(&nnz, 1, MPI_INT, nnz_of.data(), 1, MPI_INT, 0, comm);
    std::int64_t total = 0;
    for (int q = 0; q < size; ++q) {
        const auto uq = static_cast<std::size_t>(q);
        rows_of[uq] = as_int(p.rows(q), "rows");
        rows_at[uq] = as_int(p.first(q), "rows");
        nnz_at[uq] = as_int(total, "nonzeros");
        total += nnz_of[uq];
    }
    std::vector<std::int64_t> lengths(static_cast<std::size_t>(mine.rows));
    for (std::int64_t i = 0; i < mine.rows; ++i) {
        lengths[static_cast<std::size_t>(i)] = mine.row_ptr[static_cast<std::size_t>(i) + 1] -
                                               mine.row_ptr[static_cast<std::size_t>(i)];
    }
    CsrMatrix whole;
    std::vector<std::int64_t> all_lengths;
    if (rank == 0) {
        whole.rows = p.global_rows();
        whole.cols = mine.cols;
        all_lengths.resize(static_cast<std::size_t>(whole.rows));
        assign_prefaulted(whole.col, static_cast<std::size_t>(total), std::int64_t{0});
        if (values) assign_prefaulted(whole.val, static_cast<std::size_t>(total), 0.0);
    }
    MPI_Gatherv(lengths.data(), as_int(mine.rows, "rows"), MPI_INT64_T, all_lengths.data(),
                rows_of.data(), rows_at.data(), MPI_INT64_T, 0, comm);
    MPI_Gatherv(mine.col.data(), nnz, MPI_INT64_T, whole.col.data(), nnz_of.data(), nnz_at.data(),
                MPI_INT64_T, 0, comm);
    if (values) {
        MPI_Gatherv(mine.val.data(), nnz, MPI_DOUBLE, whole.val.data(), nnz_of.data(),
                    nnz_at.data(), MPI_DOUBLE, 0, comm);
    }
    if (rank == 0) {
        whole.row_ptr.assign(static_cast<std::size_t>(whole.rows) + 1, 0);
        for (std::int64_t i = 0; i < whole.rows; ++i) {
            whole.row_ptr[static_cast<std::size_t>(i) + 1] =
                whole.row_ptr[static_cast<std::size_t>(i)] +
                all_lengths[static_cast<std::size_t>(i)];
        }
    }
    return whole;
}

}  // namespace mpmg::dist

#endif  // MPMG_HAVE_MPI
