#include "distributed/dist_read.hpp"

#include "distributed/mpi_env.hpp"

#ifdef MPMG_HAVE_MPI

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "core/power_of_two.hpp"
#include "core/prefault.hpp"
#include "distributed/agree.hpp"
#include "distributed/by_owner.hpp"
#include "distributed/dist_galerkin.hpp"
#include "distributed/dist_ops.hpp"
#include "io/matrix_market.hpp"
#include "kernels/setup_simd.hpp"
#include "mpmg/errors.hpp"
#include "structured/from_csr.hpp"
#include "structured/sgdia_ops.hpp"
#include "unstructured/drop_zeros.hpp"

namespace mpmg::dist {
namespace {

/// One stored entry of the file, mirrors of symmetric storage included: its row's cell, its
/// stencil slot (Stencil::lex) and its components in one key (16 bytes an entry, not 24).
struct Entry {
    std::int64_t key;
    double val;
};

/// Packs and unpacks Entry::key: ((cell * 27 + slot) * r + row component) * r + column component.
struct EntryKey {
    std::int64_t r;
    std::int64_t of(std::int64_t row, std::int64_t col, int slot) const {
        return ((row / r * 27 + slot) * r + row % r) * r + col % r;
    }
    std::int64_t cell(std::int64_t key) const { return key / (27 * r * r); }
    int slot(std::int64_t key) const { return static_cast<int>(key / (r * r) % 27); }
    int row_comp(std::int64_t key) const { return static_cast<int>(key / r % r); }
    int col_comp(std::int64_t key) const { return static_cast<int>(key % r); }
};

/// When some process met an error (its message, else empty), every process throws the
/// message of the lowest such process as InvalidInput (collective). Process p's part of the
/// file precedes p + 1's, so that is the error a whole read meets first.
void throw_first(const std::string& mine, MPI_Comm comm) {
    dist::throw_first(mine.empty() ? ErrorKind::none : ErrorKind::invalid_input, mine, comm);
}

std::int64_t sum_before(std::int64_t v, MPI_Comm comm) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    std::int64_t before = 0;
    MPI_Exscan(&v, &before, 1, MPI_INT64_T, MPI_SUM, comm);
    return rank == 0 ? 0 : before;  // MPI_Exscan leaves rank 0's result undefined
}

/// This process's part of the Matrix Market file `path` (collective): every process throws the
/// first process's header error; nothing when some process cannot read the file in parts (the
/// array format: it is then read whole).
std::optional<MatrixMarketPart> open_part(const std::string& path, MPI_Comm comm) {
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    std::string error;
    std::optional<MatrixMarketPart> mm;
    try {
        mm = MatrixMarketPart::open(path, rank, size);
    } catch (const InvalidInput& e) {
        error = e.what();
    }
    throw_first(error, comm);
    int split = mm ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &split, 1, MPI_INT, MPI_LAND, comm);
    if (split == 0) mm.reset();
    return mm;
}

/// Room for the entries of the part `mm`, mirrors included.
std::size_t lines_entries(const MatrixMarketPart& mm) {
    return static_cast<std::size_t>(mm.content_lines()) *
           static_cast<std::size_t>(mm.most_entries_per_line());
}

/// Calls f(i, j, v) for every entry of the part `mm` (mirrors included) with the whole file's
/// line numbers (collective): every process throws the first bad line's error in file order,
/// then that of a file holding fewer entries than it declares.
template <class F>
void read_part(MatrixMarketPart& mm, MPI_Comm comm, F&& f) {
    // Both sums are collective: taken in this order on every process.
    const std::int64_t lines_before = mm.header_lines() + sum_before(mm.lines(), comm);
    const std::int64_t entries_before = sum_before(mm.content_lines(), comm);
    std::string error;
    try {
        mm.for_each_entry(lines_before, entries_before, f);
    } catch (const InvalidInput& e) {
        error = e.what();
    }
    throw_first(error, comm);
    const std::int64_t entries = reduce(mm.content_lines(), MPI_SUM, comm);
    if (entries < mm.declared()) {
        mm.fail_truncated(mm.header_lines() + reduce(mm.lines(), MPI_SUM, comm), entries);
    }
}

/// po.rhs, read whole by every process, for a matrix of `rows` rows (collective): the first
/// process's read error, or the serial read's error when the lengths differ, on every process.
std::vector<double> read_rhs(const ProblemOptions& po, std::int64_t rows, MPI_Comm comm) {
    std::vector<double> whole;
    std::string error;
    try {
        whole = read_vector_market(po.rhs);
    } catch (const InvalidInput& e) {
        error = e.what();
    }
    throw_first(error, comm);
    if (static_cast<std::int64_t>(whole.size()) != rows) {
        throw InvalidInput(fmt::format("{}: right-hand side has {} entries but {} has {} rows",
                                       po.rhs, whole.size(), po.matrix, rows));
    }
    return whole;
}

/// The rank that owns each cell of a partition: the process coordinate of every cell index
/// along each direction.
class Owners {
public:
    explicit Owners(const Partition& p) : p_(p) {
        for (int d = 0; d < 3; ++d) {
            coord_[d].resize(static_cast<std::size_t>(p.global().extent(d)));
            for (int c = 0; c < p.dims()[d]; ++c) {
                std::array<int, 3> pc{0, 0, 0};
                pc[static_cast<std::size_t>(d)] = c;
                const int r = p.rank_of(pc);
                const int lo = p.lo(r)[static_cast<std::size_t>(d)];
                std::fill_n(coord_[d].begin() + lo, p.box(r).extent(d), c);
            }
        }
    }
    int rank_of_cell(std::int64_t cell) const {
        const Box& g = p_.global();
        const auto i = static_cast<std::size_t>(cell % g.nx);
        const auto j = static_cast<std::size_t>(cell / g.nx % g.ny);
        const auto k = static_cast<std::size_t>(cell / (std::int64_t{g.nx} * g.ny));
        return p_.rank_of({coord_[0][i], coord_[1][j], coord_[2][k]});
    }

private:
    const Partition& p_;
    std::vector<int> coord_[3];
};

/// Index of global cell `cell` in the box whose first global cell is `lo`.
std::int64_t local_cell(std::int64_t cell, const Box& grid, const std::array<int, 3>& lo,
                        const Box& box) {
    const std::int64_t i = cell % grid.nx - lo[0], j = cell / grid.nx % grid.ny - lo[1];
    const std::int64_t k = cell / (std::int64_t{grid.nx} * grid.ny) - lo[2];
    return i + box.nx * (j + std::int64_t{box.ny} * k);
}

/// This process's rows of partition `p` with the margin kGalerkinMargin, from the entries every
/// process holds in `mine` (collective): each entry goes to the process that owns its row and
/// is added in there, duplicates in the order of the file (the parts in process order, each
/// in its order), as the whole read sums them; the ghost rows come from their owners.
/// `mine` is reordered by owner (stably: the entries of one row keep their order, so it can be
/// distributed again). `present` becomes 1 at the value of every stored entry of an own row.
GhostedRows distribute(std::vector<Entry>& mine, const Partition& p, const Stencil& stencil,
                       int block, MPI_Comm comm, std::vector<std::uint8_t>& present) {
    const Box& grid = p.global();
    const EntryKey key{block};
    const Owners owners(p);
    const std::vector<Entry> recv = send_to_owners(
        mine, p.size(), [&](std::size_t k) { return owners.rank_of_cell(key.cell(mine[k].key)); },
        comm);
    const auto [lo, box] = grown_box(p, p.rank(), kGalerkinMargin);
    GhostedRows g{lo, SgDiaMatrix<double>(box, stencil, block)};
    present.assign(g.a.values().size(), 0);
    double* const base = g.a.values().data();
    for (const Entry& e : recv) {
        const int t = key.slot(e.key);
        const int d = stencil.find(Offset{t % 3 - 1, t / 3 % 3 - 1, t / 9 - 1});
        double& v = g.a.value(d, local_cell(key.cell(e.key), grid, lo, box), key.row_comp(e.key),
                              key.col_comp(e.key));
        v += e.val;
        present[static_cast<std::size_t>(&v - base)] = 1;
    }
    fill_ghost_rows(g, p, kGalerkinMargin, comm);
    return g;
}

/// Calls f(c) for every own cell of `p`, c its index in g's box.
template <class F>
void for_each_own_cell(const GhostedRows& g, const Partition& p, F&& f) {
    const Box own = p.local(), box = g.a.box();
    const auto lo = p.lo();
    for (int k = lo[2]; k < lo[2] + own.nz; ++k) {
        for (int j = lo[1]; j < lo[1] + own.ny; ++j) {
            for (int i = lo[0]; i < lo[0] + own.nx; ++i) {
                f((i - g.lo[0]) + box.nx * ((j - g.lo[1]) + std::int64_t{box.ny} * (k - g.lo[2])));
            }
        }
    }
}

/// check_finite_sums (io/matrix_market.hpp) of the own cells' rows of `g` on `grid`
/// (collective): every process throws the error of the first entry in row order, then column,
/// whose summed value is not finite, with the whole matrix's indices.
void check_finite_cells(const GhostedRows& g, const Partition& p, const Box& grid,
                        const std::string& path, MPI_Comm comm) {
    const SgDiaMatrix<double>& a = g.a;
    const Box& box = a.box();
    const int r = a.block();
    constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();
    std::int64_t row = kNone, col = kNone;
    int sign = -2;  // of the first one's value: +1 inf, -1 -inf
    const auto cell_of = [&](std::int64_t i, std::int64_t j, std::int64_t k) {
        return i + grid.nx * (j + std::int64_t{grid.ny} * k);
    };
    for_each_own_cell(g, p, [&](std::int64_t c) {
        const std::int64_t i = g.lo[0] + c % box.nx, j = g.lo[1] + c / box.nx % box.ny,
                           k = g.lo[2] + c / box.nx / box.ny;
        for (int d = 0; d < a.stencil().size(); ++d) {
            const Offset o = a.stencil()[d];
            const std::int64_t ni = i + o.dx, nj = j + o.dy, nk = k + o.dz;
            if (ni < 0 || ni >= grid.nx || nj < 0 || nj >= grid.ny || nk < 0 || nk >= grid.nz) {
                continue;  // outwards: never stored
            }
            for (int bi = 0; bi < r; ++bi) {
                for (int bj = 0; bj < r; ++bj) {
                    const double x = a.value(d, c, bi, bj);
                    if (std::isfinite(x)) continue;
                    const std::int64_t at_row = cell_of(i, j, k) * r + bi;
                    const std::int64_t at_col = cell_of(ni, nj, nk) * r + bj;
                    if (at_row < row || (at_row == row && at_col < col)) {
                        row = at_row;
                        col = at_col;
                        sign = x > 0 ? 1 : -1;
                    }
                }
            }
        }
    });
    const std::int64_t first = reduce(row, MPI_MIN, comm);
    if (first == kNone) return;
    const std::int64_t first_col = reduce(row == first ? col : kNone, MPI_MIN, comm);
    int first_sign = row == first && col == first_col ? sign : -2;  // one process holds it
    MPI_Allreduce(MPI_IN_PLACE, &first_sign, 1, MPI_INT, MPI_MAX, comm);
    fail_sum_not_finite(path, first, first_col,
                        first_sign > 0 ? std::numeric_limits<double>::infinity()
                                       : -std::numeric_limits<double>::infinity());
}

}  // namespace

bool ghosted_symmetric(const GhostedRows& g, const GhostedRows* present, const Partition& p,
                       double scale, MPI_Comm comm) {
    const SgDiaMatrix<double>& a = g.a;
    const Stencil& s = a.stencil();
    const Box& box = a.box();
    const Box own = p.local();
    const auto lo = p.lo();
    const int r = a.block();
    const std::int64_t rr = std::int64_t{r} * r;
    const double tol = 1e-12 * scale;
    bool ok = true;
    // Offset by offset, x-line by x-line of the own cells: entry (i, j) of cell c at offset d
    // against entry (j, i) of its neighbour q = c + d at the mirrored offset. The neighbour
    // lies in the box (own cells lie at least kGalerkinMargin inside it unless on the grid's
    // face, where an entry outwards is never stored), or the entry is skipped.
    for (int d = 0; d < s.size() && ok; ++d) {
        const Offset o = s[d];
        const int m = s.find(Offset{-o.dx, -o.dy, -o.dz});
        const double* vd = a.diagonal(d);
        const double* vm = m >= 0 ? a.diagonal(m) : nullptr;
        const double* sd = present != nullptr ? present->a.diagonal(d) : vd;  // stored where != 0
        const double* sm = m < 0 ? nullptr : present != nullptr ? present->a.diagonal(m) : vm;
        const std::int64_t shift = o.dx + box.nx * (o.dy + std::int64_t{box.ny} * o.dz);
        // The own cells' x-range in the box whose neighbour along x stays in it.
        const int i0 = std::max(lo[0] - g.lo[0], -o.dx);
        const int i1 = std::min(lo[0] - g.lo[0] + own.nx, box.nx - o.dx);
        for (int k = lo[2] - g.lo[2]; k < lo[2] - g.lo[2] + own.nz && ok; ++k) {
            if (k + o.dz < 0 || k + o.dz >= box.nz) continue;
            for (int j = lo[1] - g.lo[1]; j < lo[1] - g.lo[1] + own.ny && ok; ++j) {
                if (j + o.dy < 0 || j + o.dy >= box.ny) continue;
                const std::int64_t line = box.nx * (j + std::int64_t{box.ny} * k);
                unsigned differ = 0;  // branch-free over the line
                for (std::int64_t c = line + i0; c < line + i1; ++c) {
                    const std::int64_t q = c + shift;
                    for (int bi = 0; bi < r; ++bi) {
                        for (int bj = 0; bj < r; ++bj) {
                            const std::int64_t at = c * rr + bi * r + bj,
                                               mirror = q * rr + bj * r + bi;
                            const double w = vm != nullptr ? vm[mirror] : 0.0;
                            const bool sw = sm != nullptr && sm[mirror] != 0.0;
                            differ |= static_cast<unsigned>((sd[at] != 0.0) != sw) |
                                      static_cast<unsigned>(std::fabs(vd[at] - w) > tol);
                        }
                    }
                }
                ok = ok && differ == 0;
            }
        }
    }
    int flag = ok ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &flag, 1, MPI_INT, MPI_LAND, comm);
    return flag != 0;
}

std::optional<StructuredProblem> load_structured(const ProblemOptions& po,
                                                 std::optional<Partition>& part) {
    if (!distributed()) return std::nullopt;
    const MPI_Comm comm = MPI_COMM_WORLD;
    const int rank = world_rank(), size = world_size();
    const int block = std::max(po.components, 1);
    const Box grid{po.grid[0], po.grid[1], po.grid[2]};
    // The header: every process reads it, so its errors are everyone's.
    std::optional<MatrixMarketPart> mm = open_part(po.matrix, comm);
    if (!mm) return std::nullopt;  // array format: read whole
    // Entry keys fit in 64 bits (else: an error once the file is known to fit the grid), and
    // stencil slots are taken only for a matrix that fits it (else: check_fits_grid's error
    // after the parse).
    const bool fits =
        mm->rows() == mm->cols() && grid.cells() > 0 && mm->rows() == grid.cells() * block;
    const bool keyable =
        grid.cells() <= std::numeric_limits<std::int64_t>::max() / (27 * block * block);
    // The entries of this part, checked with the line numbers of the whole file, each with its
    // stencil slot; an entry beyond the 27-point neighbourhood is noted (an error once the
    // whole file has been read and summed: the first in row order, then column, as
    // sgdia_from_csr finds it).
    const EntryKey key{block};
    std::vector<Entry> mine;
    std::array<int, 27> used{};
    constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();
    std::int64_t bad_row = kNone, bad_col = kNone;
    if (fits) reserve_prefaulted(mine, lines_entries(*mm));
    read_part(*mm, comm, [&](std::int64_t i, std::int64_t j, double v) {
        if (!fits) return;
        const int t = stencil_slot(i, j, grid, block);
        if (t >= 0) {
            used[static_cast<std::size_t>(t)] = 1;
            if (keyable) mine.push_back(Entry{key.of(i, j, t), v});
        } else if (i < bad_row || (i == bad_row && j < bad_col)) {
            bad_row = i;
            bad_col = j;
        }
    });
    const std::int64_t rows = mm->rows();
    check_fits_grid(rows, mm->cols(), grid, block, po.matrix);
    const bool stored_symmetric = mm->stored_symmetric();  // the same header on every process
    mm.reset();
    if (!keyable) {
        throw Unsupported(
            fmt::format("{}: {} components per cell on {} cells are too many to read "
                        "in parts; run without mpirun",
                        po.matrix, block, grid.cells()));
    }
    MPI_Allreduce(MPI_IN_PLACE, used.data(), 27, MPI_INT, MPI_LOR, comm);
    std::array<bool, 27> in{};
    for (std::size_t t = 0; t < 27; ++t) in[t] = used[t] != 0;
    const Stencil stencil = stencil_of_slots(in);
    // The partition, as for a built-in problem: a first split measures the direction strengths.
    const Partition first(grid, size, rank);
    std::vector<std::uint8_t> present;
    GhostedRows g = distribute(mine, first, stencil, block, comm, present);
    part.emplace(grid, size, rank, direction_strengths(g, first, comm));
    if (part->dims() != first.dims()) g = distribute(mine, *part, stencil, block, comm, present);
    mine = std::vector<Entry>();
    // Sums that overflow first, then entries beyond the neighbourhood: the serial read refuses
    // the first as it reads, the second when it lays the matrix out on the grid.
    check_finite_cells(g, *part, grid, po.matrix, comm);
    const std::int64_t first_bad = reduce(bad_row, MPI_MIN, comm);
    if (first_bad != kNone) {
        const std::int64_t col = reduce(bad_row == first_bad ? bad_col : kNone, MPI_MIN, comm);
        fail_beyond_neighbourhood(first_bad, col, grid, block, po.matrix);
    }
    const int r = block;
    // The solver: CG when A is symmetric (is_symmetric's test on the whole), which a file stored
    // symmetric is by construction (io/matrix_market.hpp): it is not tested.
    double scale = 0.0;
    int zero_stored = 0;
    const auto& values = g.a.values();
    for (std::size_t v = 0; v < values.size(); ++v) {
        scale = std::max(scale, std::fabs(values[v]));
        if (present[v] != 0 && values[v] == 0.0) zero_stored = 1;
    }
    MPI_Allreduce(MPI_IN_PLACE, &scale, 1, MPI_DOUBLE, MPI_MAX, comm);
    MPI_Allreduce(MPI_IN_PLACE, &zero_stored, 1, MPI_INT, MPI_LOR, comm);
    std::optional<GhostedRows> pattern;
    if (!stored_symmetric && zero_stored != 0) {  // the values do not tell the pattern
        pattern = GhostedRows{g.lo, SgDiaMatrix<double>(g.a.box(), stencil, block)};
        auto& pv = pattern->a.values();
        for (std::size_t v = 0; v < pv.size(); ++v) pv[v] = present[v];
        fill_ghost_rows(*pattern, *part, kGalerkinMargin, comm);
    }
    present = std::vector<std::uint8_t>();
    const bool sym =
        stored_symmetric || ghosted_symmetric(g, pattern ? &*pattern : nullptr, *part, scale, comm);
    pattern.reset();
    // b: the file's, or A 1 (A x with x_i = 1 + (i mod 10) / 10 when 1 is in A's null space),
    // as right_hand_side() (api/problem_input.cpp) makes it: the row sums of the CSR product.
    const Box& box = g.a.box();
    StructuredProblem p;
    if (po.rhs.empty()) {
        std::vector<double> x(static_cast<std::size_t>(rows), 1.0);
        window_product(g.a, g.lo, grid, x, p.b);
        const double f = inverse_power_of_two(scale);  // the test at any scale of A
        double b2 = 0.0, a2 = 0.0;
        for_each_own_cell(g, *part, [&](std::int64_t c) {
            for (int a = 0; a < r; ++a) {
                const double bc = f * p.b[static_cast<std::size_t>(c * r + a)];
                b2 += bc * bc;
                for (int d = 0; d < stencil.size(); ++d) {
                    for (int j = 0; j < r; ++j) {
                        const double v = f * g.a.value(d, c, a, j);
                        a2 += v * v;
                    }
                }
            }
        });
        b2 = allreduce_sum(b2, comm);
        a2 = allreduce_sum(a2, comm);
        if (b2 <= 1e-20 * a2) {
            for (std::size_t i = 0; i < x.size(); ++i) {
                x[i] = 1.0 + static_cast<double>(i % 10) / 10.0;
            }
            window_product(g.a, g.lo, grid, x, p.b);
        } else {
            p.x_exact = std::move(x);
        }
    } else {
        const std::vector<double> whole = read_rhs(po, rows, comm);
        p.b.resize(static_cast<std::size_t>(box.cells() * r));
        copy_cells(whole.data(), grid, {0, 0, 0}, p.b.data(), box, g.lo, g.lo, box, r);
    }
    p.name = po.matrix;
    p.solver = sym ? SolverKind::cg : SolverKind::gmres;
    p.window = GridWindow{g.lo, box};
    p.a = std::move(g.a);
    return p;
}

namespace {

/// Whether the matrix whose rows the processes hold in `mine` (partition rp) is symmetric as
/// is_symmetric() decides it for the whole matrix: the same stored pattern as its transpose and
/// |a_ij - a_ji| <= 1e-12 max |a| (collective). Every entry whose mirror another process holds
/// is sent to it. When every entry's mirror is stored, the pattern is its transpose's. `scale`:
/// max |a| over all processes.
bool symmetric(const CsrMatrix& mine, const RowPartition& rp, double scale, MPI_Comm comm) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    const std::int64_t first = rp.first(rank), end = rp.first(rank + 1);
    const double tol = 1e-12 * scale;
    // The value of (row, col) of an own row, or nothing when it is not stored.
    const auto find = [&](std::int64_t row, std::int64_t col) -> const double* {
        const auto i = static_cast<std::size_t>(row - first);
        const auto b = mine.col.begin() + mine.row_ptr[i],
                   e = mine.col.begin() + mine.row_ptr[i + 1];
        const auto it = std::lower_bound(b, e, col);
        return it != e && *it == col ? &mine.val[static_cast<std::size_t>(it - mine.col.begin())]
                                     : nullptr;
    };
    bool ok = true;
    std::vector<CooEntry> far;  // mirrors: (col, row, value) for the process holding row col
    for (std::int64_t i = 0; i < mine.rows; ++i) {
        for (std::int64_t p = mine.row_ptr[static_cast<std::size_t>(i)];
             p < mine.row_ptr[static_cast<std::size_t>(i) + 1]; ++p) {
            const std::int64_t j = mine.col[static_cast<std::size_t>(p)];
            const double v = mine.val[static_cast<std::size_t>(p)];
            if (j >= first && j < end) {
                const double* w = find(j, first + i);
                ok = ok && w != nullptr && std::fabs(v - *w) <= tol;
            } else {
                far.push_back({j, first + i, v});
            }
        }
    }
    std::vector<CooEntry> asked = send_to_row_owners(far, rp, comm);
    for (const CooEntry& e : asked) {
        const double* w = find(e.row, e.col);
        ok = ok && w != nullptr && std::fabs(e.val - *w) <= tol;
    }
    int flag = ok ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &flag, 1, MPI_INT, MPI_LAND, comm);
    return flag != 0;
}

}  // namespace

bool rows_symmetric(const CsrMatrix& mine, const RowPartition& rp, double scale, MPI_Comm comm) {
    return symmetric(mine, rp, scale, comm);
}

std::optional<CsrRows> load_csr(const ProblemOptions& po) {
    if (!distributed() || po.matrix.empty()) return std::nullopt;
    const MPI_Comm comm = MPI_COMM_WORLD;
    const int rank = world_rank(), size = world_size();
    std::optional<MatrixMarketPart> mm = open_part(po.matrix, comm);
    if (!mm) return std::nullopt;  // array format: read whole
    // The entries of this part. A matrix that is not square is an error once the whole file
    // has been read, as read_matrix_market and load_csr find it.
    const std::int64_t n = mm->rows();
    const bool square = mm->rows() == mm->cols();
    std::vector<CooEntry> mine;
    if (square) reserve_prefaulted(mine, lines_entries(*mm));
    read_part(*mm, comm, [&](std::int64_t i, std::int64_t j, double v) {
        if (square) mine.push_back(CooEntry{i, j, v});
    });
    if (!square) {
        throw InvalidInput(
            fmt::format("{}: matrix is {} x {}; a linear solve needs a square matrix", po.matrix,
                        mm->rows(), mm->cols()));
    }
    const bool stored_symmetric = mm->stored_symmetric();
    mm.reset();
    CsrRows p;
    p.name = po.matrix;
    p.rows = RowPartition::equal(n, size);
    const std::int64_t first = p.rows.first(rank);
    {  // the entries of this process's rows stay; the others travel
        std::int64_t last = -1;
        int at = 0;
        const Received<CooEntry> got = send_keeping(
            mine, size, rank,
            [&](std::size_t k) {
                if (mine[k].row != last) at = p.rows.owner(last = mine[k].row);
                return at;
            },
            comm);
        const std::span<const CooEntry> all(got.items);
        p.mine = csr_rows({all.first(got.before), mine, all.subspan(got.before)}, first,
                          p.rows.rows(rank), n);
        mine = std::vector<CooEntry>();
    }
    {  // a sum of repeated entries that overflowed: the whole read's error (the first row's)
        std::string error;
        try {
            check_finite_sums(p.mine, po.matrix, first);
        } catch (const InvalidInput& e) {
            error = e.what();
        }
        throw_first(error, comm);
    }
    // max |a| over all processes: the symmetry tolerance's scale and the null-space test's.
    double largest = kernels::largest_finite_abs(p.mine.val.data(), p.mine.nnz());
    MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_DOUBLE, MPI_MAX, comm);
    // A file stored symmetric is symmetric by construction (the entries and their mirrors
    // summed in the same order on their owners); any other is measured, its stored patterns
    // compared before its zeros are dropped.
    p.exactly_symmetric = stored_symmetric;
    p.solver = p.exactly_symmetric || symmetric(p.mine, p.rows, largest, comm) ? SolverKind::cg
                                                                               : SolverKind::gmres;
    drop_zeros(p.mine, first);
    p.nnz = reduce(p.mine.nnz(), MPI_SUM, comm);
    // b: the file's, or A 1 (A x with x_i = 1 + (i mod 10) / 10 when 1 is in A's null space),
    // as load_csr's right_hand_side() makes it.
    p.b.resize(static_cast<std::size_t>(p.mine.rows));
    if (po.rhs.empty()) {
        p.x_exact.assign(static_cast<std::size_t>(n), 1.0);
        p.mine.multiply(p.x_exact.data(), p.b.data());
        const double f = inverse_power_of_two(largest);  // the test at any scale of A
        double b2 = 0.0, a2 = 0.0;
        for (double v : p.b) b2 += (f * v) * (f * v);
        for (double v : p.mine.val) a2 += (f * v) * (f * v);
        b2 = allreduce_sum(b2, comm);
        a2 = allreduce_sum(a2, comm);
        if (b2 <= 1e-20 * a2) {  // |A 1| <= 1e-10 |A|_F
            for (std::size_t i = 0; i < p.x_exact.size(); ++i) {
                p.x_exact[i] = 1.0 + static_cast<double>(i % 10) / 10.0;
            }
            p.mine.multiply(p.x_exact.data(), p.b.data());
            p.x_exact.clear();
        }
        return p;
    }
    const std::vector<double> whole = read_rhs(po, n, comm);
    std::copy_n(whole.begin() + first, p.b.size(), p.b.begin());
    return p;
}

}  // namespace mpmg::dist

#else

namespace mpmg::dist {

std::optional<StructuredProblem> load_structured(const ProblemOptions&, std::optional<Partition>&) {
    return std::nullopt;
}

std::optional<CsrRows> load_csr(const ProblemOptions&) { return std::nullopt; }

}  // namespace mpmg::dist

#endif
