// A CSR matrix distributed by contiguous row blocks (issue #8, item 5: the AMG path over MPI).
// Each process holds its rows split into the block of the columns it owns (diag(), local
// column numbers: what the serial AMG level and smoothers run on) and the coupling to the
// columns other processes own (ghosts, whose values a halo exchange brings), as hypre's
// ParCSR does.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <utility>
#include <vector>

#include "mpmg/csr_matrix.hpp"

namespace mpmg::dist {

/// Contiguous row blocks of an n-row matrix over the processes: process q owns rows first(q) ..
/// first(q + 1) - 1. Pure arithmetic, the same on every process.
class RowPartition {
public:
    RowPartition() = default;
    /// Blocks about equal in nonzeros + rows (row i weighs its nonzeros + 1) of the matrix with
    /// these row pointers over `size` processes. Throws InvalidInput when there are fewer rows
    /// than processes.
    RowPartition(const std::vector<std::int64_t>& row_ptr, int size);
    /// Process q owns rows[q] rows (every count >= 0).
    static RowPartition from_counts(const std::vector<std::int64_t>& rows);
    /// n rows in blocks of equal counts (within one) over `size` processes; some are empty
    /// when n < size.
    static RowPartition equal(std::int64_t n, int size);

    int size() const { return static_cast<int>(first_.size()) - 1; }
    std::int64_t first(int q) const { return first_[static_cast<std::size_t>(q)]; }
    std::int64_t rows(int q) const { return first(q + 1) - first(q); }
    std::int64_t global_rows() const { return first_.back(); }
    /// The process that owns `row` (0 <= row < global_rows()).
    int owner(std::int64_t row) const;

    bool operator==(const RowPartition&) const = default;

private:
    std::vector<std::int64_t> first_{0};  // size() + 1 entries
};

}  // namespace mpmg::dist

#ifdef MPMG_HAVE_MPI

#include <mpi.h>

namespace mpmg::dist {

/// A process's rows of a distributed CSR matrix.
class DistCsr {
public:
    /// The entries of this process's coupling to other processes' columns, row by row: local
    /// row rows[q] has the entries ptr[q] .. ptr[q+1]-1, each a ghost slot (index into the
    /// ghost values exchange() returns) and a value.
    struct Coupling {
        std::vector<std::int64_t> rows, ptr{0}, slot;
        std::vector<double> val;
    };

    /// This process's rows are rows `at` .. `at` + p.rows(rank) - 1 of `m`, whose columns are
    /// global (m.cols = p.global_rows(); sorted within each row). Collective: the processes
    /// agree who sends which values in an exchange.
    DistCsr(const CsrMatrix& m, std::int64_t at, const RowPartition& p, MPI_Comm comm)
        : DistCsr(m, at, p, p, comm) {}
    /// A rectangular matrix (a transfer between two levels): its rows distributed by `rows`,
    /// the vectors it multiplies by `cols` (m.cols = cols.global_rows()). diag() holds the
    /// columns this process owns under `cols`, in their local numbers.
    DistCsr(const CsrMatrix& m, std::int64_t at, const RowPartition& rows, const RowPartition& cols,
            MPI_Comm comm);

    /// The rows' partition.
    const RowPartition& partition() const { return p_; }
    /// The columns' partition (partition() for a square matrix).
    const RowPartition& column_partition() const { return cp_; }
    int rank() const { return rank_; }
    MPI_Comm comm() const { return comm_; }
    /// First global row of this process.
    std::int64_t first() const { return p_.first(rank_); }
    std::int64_t local_rows() const { return diag_.rows; }
    /// This process's rows restricted to its own columns (local numbering).
    const CsrMatrix& diag() const { return diag_; }
    CsrMatrix& diag() { return diag_; }
    const Coupling& coupling() const { return coupling_; }
    /// Global column of each ghost slot (ascending).
    const std::vector<std::int64_t>& ghosts() const { return ghosts_; }
    /// The ghost slot of global column j (-1 when j is no ghost column of this process).
    std::int64_t ghost_slot(std::int64_t j) const;

    /// Row k of the result is the row of `mine` that the owner of ghost column ghosts()[k]
    /// holds: every process passes its own rows of a matrix distributed like the columns of
    /// this one (mine.rows = column_partition().rows(rank), any column numbering), and gets
    /// the rows its coupling reaches (collective). What the Galerkin product of a distributed
    /// prolongation needs of the neighbours' rows of P.
    CsrMatrix ghost_rows(const CsrMatrix& mine) const;

    /// The ghost values of the per-row vector x (this process's rows), in FP64: one halo
    /// exchange (collective). The returned buffer is overwritten by the next exchange.
    template <class T>
    const std::vector<double>& exchange(const T* x) const;
    /// y += (coupling) x_ghost, summed in FP64 (exchanges x; collective).
    template <class T>
    void add_coupling(const T* x, T* y) const {
        add_coupling(x, y, 1.0, coupling_.val);
    }
    /// y += sign (coupling with the values `val`, one per coupling entry) x_ghost, summed in
    /// FP64 (exchanges x; collective): a level's coupling in its scaled variables.
    template <class T>
    void add_coupling(const T* x, T* y, double sign, const std::vector<double>& val) const;
    /// y = A x for this process's rows, in FP64 (exchanges x; collective): the K-cycle's
    /// products and smoothed aggregation's transfers. The rows are split over the threads.
    void multiply(const double* x, double* y) const;
    /// This process's rows with global columns (diag and coupling merged, columns sorted).
    CsrMatrix rows_with_global_columns() const;
    /// 1 for every local row that is coupled to another process (square matrices): a nonzero
    /// in its coupling, or a column that another process's coupling reaches (its value is
    /// sent in an exchange); 0 otherwise. Local and cheap: the send lists are known.
    std::vector<char> coupled_rows() const;

private:
    struct Peer {
        int rank = 0;
        std::vector<std::int64_t> send_rows;          // local rows whose values it needs
        std::int64_t recv_first = 0, recv_count = 0;  // its values' place among the ghosts
        mutable std::vector<double> buf;
    };

    RowPartition p_, cp_;
    int rank_ = 0;
    MPI_Comm comm_;
    CsrMatrix diag_;
    Coupling coupling_;
    std::vector<std::int64_t> ghosts_;
    std::vector<Peer> peers_;
    mutable std::vector<double> ghost_values_;
};

/// The rows of the Galerkin operator R A P that this process owns, with global columns (a
/// CsrMatrix of local rows and p_coarse.global_rows() columns), for a decoupled aggregation:
/// `agg` maps every local row of `a` to a local coarse row (-1: left out), the aggregates never
/// cross processes, P is piecewise constant (1) and R = r_scale P^T. The coupling to other
/// processes' aggregates uses their aggregate of each ghost column (one exchange; collective).
/// `p_coarse`: the coarse rows' partition (process q owns its aggregates, numbered after those
/// of processes < q).
CsrMatrix galerkin_rows(const DistCsr& a, const std::vector<std::int64_t>& agg, double r_scale,
                        const RowPartition& p_coarse);

/// Appends one row to `out` from its (global column, value) pairs (emptied order aside): sorted
/// by column (stably), the values of a repeated column summed in the pairs' order, exact zeros
/// dropped as drop_zeros drops them except at column `keep` (a row's diagonal; -1: none); then
/// out.row_ptr gets the row's end.
void append_summed_row(std::vector<std::pair<std::int64_t, double>>& row, std::int64_t keep,
                       CsrMatrix& out);

/// One entry of a matrix in coordinates.
struct CooEntry {
    std::int64_t row, col;
    double val;
};

/// Sends every entry of `mine` (emptied) to the process of `p` that owns its row and returns the
/// entries this process received, in process order, each process's in the order of its `mine`
/// (collective). Throws Unsupported beyond MPI's int counts.
std::vector<CooEntry> send_to_row_owners(std::vector<CooEntry>& mine, const RowPartition& p,
                                         MPI_Comm comm);

/// Rows first .. first + rows - 1 as CSR (local rows, `cols` columns, sorted in each row) from
/// their entries (emptied), duplicates summed in the entries' order as read_matrix_market sums
/// a file's.
CsrMatrix csr_rows(std::vector<CooEntry>& entries, std::int64_t first, std::int64_t rows,
                   std::int64_t cols);
/// csr_rows of the entries of `pieces` one after the other (in that order: the order of the
/// sums), none of them emptied.
CsrMatrix csr_rows(std::initializer_list<std::span<const CooEntry>> pieces, std::int64_t first,
                   std::int64_t rows, std::int64_t cols);

/// Rank 0 receives the whole matrix of every process's rows `mine` (local rows, global
/// columns; process q's are rows p.first(q) ..); other processes get an empty matrix
/// (collective). Without `values` only the pattern travels and rank 0's matrix has no values
/// (val empty), for what reads only the pattern (rcm_order).
CsrMatrix gather_rows(const CsrMatrix& mine, const RowPartition& p, MPI_Comm comm,
                      bool values = true);

}  // namespace mpmg::dist

#endif  // MPMG_HAVE_MPI
