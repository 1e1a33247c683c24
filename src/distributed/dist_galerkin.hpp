// The Galerkin coarsening of a distributed structured operator (issue #8, "distributed Galerkin
// coarsening"): every process computes its own block of each coarse level from its own rows and
// a margin of its neighbours' rows, bit for bit the rows that the serial coarsen() gives for the
// whole grid, without any process holding a whole level.
//
// Why a margin suffices. A directional step along d makes coarse row I from fine rows 2I, 2I+1,
// 2I+2 and their entries to fine cells 2I-1 .. 2I+3 (structured/coarsen.hpp), which interpolate
// from coarse cells I-1 .. I+1. A process that owns fine cells lo .. hi-1 along d owns the
// coarse cells I with lo <= 2I+1 <= hi-1 (partition.hpp), so it needs the whole rows of fine
// cells lo-1 .. hi: the rows of a box grown by 2 cells (a row is whole only where all its
// neighbours are in the box, i.e. one cell inside it). Steps along the other directions of the
// same level keep the rows of a line together and need no more. The serial directional Galerkin
// product run on the grown box (cells outside it count as zero, as outside the grid) therefore
// gives the owned coarse rows exactly: the same sums in the same order. The grown box starts at
// an even cell, so its coarse cells are coarse cells of the whole grid.
//
// What stays global: the choice of directions (from the whole grid's coupling strengths,
// summed over the processes) and the coarse stencil (the offsets with a nonzero entry anywhere,
// a logical or over the processes).
//
// Operator-dependent weights (coarsen.hpp's operator_weights) at fine cell c come from row c
// alone, so they are exact wherever the row is whole; the product for an own coarse row reads
// weights at fine cells 2I, 2I+2 and at the neighbouring lines, all within one cell of the
// block: whole rows with a margin of 2. A second step's weights, though, would read the first
// step's rows one cell beyond the block, and those the grown box does not give exactly. So an
// operator-dependent level is coarsened one step at a time, each intermediate operator's ghost
// rows filled from their owners before the next step.
#pragma once

#ifdef MPMG_HAVE_MPI

#include <mpi.h>

#include <array>
#include <optional>
#include <vector>

#include "core/float16.hpp"
#include "distributed/dist_ops.hpp"
#include "distributed/partition.hpp"
#include "mpmg/sgdia_matrix.hpp"
#include "structured/coarsen.hpp"
#include "structured/sgdia_view.hpp"

namespace mpmg::dist {

/// Ghost cells on each side that coarsen() needs around a process's block.
constexpr int kGalerkinMargin = 2;

/// A level's FP64 operator as one process holds it during the distributed setup: the rows of
/// the cells of `a.box()`, whose first cell is the global cell `lo`. The box is the process's
/// block grown by a margin (grown_box()). Rows of the process's own cells and of the ghost
/// cells are the operator's rows, except that entries to cells outside the box are zero
/// (SG-DIA's convention: a ghost row on the box's edge lacks its outward entries).
struct GhostedRows {
    std::array<int, 3> lo{};
    SgDiaMatrix<double> a;
};

/// Process `rank`'s block of partition `p` grown by `margin` cells on every side, clipped to
/// the grid, its lower corner moved down to an even cell where needed: first global cell and
/// box. `margin` 0 gives the block itself.
std::pair<std::array<int, 3>, Box> grown_box(const Partition& p, int rank, int margin);

/// This process's GhostedRows with `margin` taken from the whole operator `global` (what every
/// process holds while the problem is still generated whole on each).
GhostedRows ghosted_from_global(const SgDiaMatrix<double>& global, const Partition& p, int margin);

/// Sets the ghost rows of `g` (box: this process's block grown by `margin`) from the processes
/// that own them, whose own rows must be set (collective; every process passes the same
/// stencil and block). Entries to cells outside the box are zeroed.
void fill_ghost_rows(GhostedRows& g, const Partition& p, int margin, MPI_Comm comm);

/// direction_strengths() of the whole operator, from every process's own rows (collective).
/// The same sums added in another order: equal up to rounding.
std::array<double, 3> direction_strengths(const GhostedRows& g, const Partition& p, MPI_Comm comm);

/// This process's block of the operator (its own rows, entries to other processes' cells
/// zero), what its level is built from.
SgDiaMatrix<double> own_block(const GhostedRows& g, const Partition& p);

/// This process's block of the operator read in place, as a window of g's rows (sgdia_view.hpp),
/// when the block spans the x-y planes of g's box (a z-split, the partition of 2 and 3 ranks of
/// a cube): bit for bit own_block(g, p) for the SG-DIA operations, without the copy. nullopt
/// otherwise. g must outlive the window.
std::optional<SgDiaView<double>> own_planes(const GhostedRows& g, const Partition& p);

/// Whether FP16 holds every entry of own_block(g, p) divided by c exactly (as
/// holds_multiple(own_block(g, p), c, out)), read from g without making the FP64 block; `out`
/// (shaped as the block, zero) then holds them, and `facts` (when not null) is added their
/// HalfFacts. Stops at the first entry it does not hold.
bool own_block_holds_multiple(const GhostedRows& g, const Partition& p, double c,
                              SgDiaMatrix<half>& out, HalfFacts* facts = nullptr);

/// sampled_scale(own_block(g, p)), read from g without making the block.
double own_block_sampled_scale(const GhostedRows& g, const Partition& p);

/// The own cells' entries of `v` (block values per cell of g's box).
std::vector<double> own_values(const std::vector<double>& v, const GhostedRows& g,
                               const Partition& p);
/// The same in place: `v` is cut down to the own cells' entries and keeps its allocation (a
/// new vector's first touch costs about 4 ms per MiB on the Zen 5 VM).
void keep_own_values(std::vector<double>& v, const GhostedRows& g, const Partition& p);

/// The whole operator's structural nonzeros (SgDiaMatrix::nnz() of the whole), from every
/// process's own rows (collective).
std::int64_t global_nnz(const GhostedRows& g, const Partition& p, MPI_Comm comm);

/// The whole operator on rank 0, from the processes' own rows (collective; the other processes
/// get an empty matrix): the first agglomerated level, which rank 0 coarsens on.
SgDiaMatrix<double> gather_whole(const GhostedRows& g, const Partition& p, MPI_Comm comm);

/// The operator onto the processes of `merged` (Partition::merged of p): every process sends
/// its own rows to the holder of its merged block, and each holder gets its GhostedRows on
/// `merged` grown by `margin`, the ghost rows filled from the other holders over `sub` (the
/// holders' communicator, ranked as in `merged`). Collective over `comm`; a process that holds
/// no merged block gets empty rows.
GhostedRows gather_merged_rows(const GhostedRows& g, const Partition& p, const Partition& merged,
                               int margin, MPI_Comm comm, MPI_Comm sub);

struct DistCoarseLevel {
    Partition coarse;  ///< the coarse grid's partition (Partition::coarsened per step)
    GhostedRows rows;  ///< this process's coarse rows, grown by the margin asked for
    /// The whole grid's steps (boxes and directions, linear weights), as DistTransfer takes.
    Transfer transfer;
    /// Operator-dependent interpolation: this process's weights of each step (DistTransfer's
    /// `weights`); empty for linear weights.
    std::vector<StepWeights> weights;
};

/// One coarse level of the distributed operator whose rows `fine` holds (grown by at least
/// kGalerkinMargin), collective: the directions coarsen() would choose for the whole operator,
/// every process's coarse rows by the serial coarsen_along() on its grown box, the coarse
/// stencil agreed over the processes; `margin` ghost rows around the coarse block are then
/// filled from their owners (`margin` >= kGalerkinMargin). Returns nothing where coarsen() would
/// (no direction eligible) and where a process's coarse block would be empty (the caller
/// agglomerates instead). Operator-dependent weights go one directional step at a time, the
/// intermediate operators' ghost rows exchanged in between; each process's weights are exactly
/// the serial step's on its weight region.
std::optional<DistCoarseLevel> coarsen(const GhostedRows& fine, const Partition& p,
                                       const CoarseningOptions& opt, int margin, MPI_Comm comm);

}  // namespace mpmg::dist

#endif  // MPMG_HAVE_MPI
