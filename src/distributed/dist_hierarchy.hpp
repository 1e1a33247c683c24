// The distributed structured multigrid preconditioner (issue #8). Setup: the Galerkin
// hierarchy is built distributed (dist_galerkin.hpp): every process coarsens its own block
// with a margin of its neighbours' rows, and each level's storage decision (scaling, G, the
// fallbacks) is taken on every process's rows with the measures combined over the processes,
// so that it is the decision the whole level would get. No process holds a whole distributed
// level, with linear or operator-dependent weights, with or without scale-then-setup (level 0
// scaled row by row before coarsening). Solve: the fine levels are distributed over the
// partition. Each is the serial level (multigrid/level.hpp,
// with its kernels, zero-guess first sweep and upper-half residual) built on the process's
// block, plus a HaloBoundary for the entries that couple it to other processes: Gauss-Seidel
// is exact in a permuted order on a 1 x 1 x P split (each process's lowest plane last,
// level.cpp z_ordered_sweep), else hybrid (lexicographic inside a process, Jacobi across
// process boundaries with halo values from before the sweep), residuals and transfers exchange
// halos so they equal the serial ones. Once a level's process blocks get small, the remaining
// levels are agglomerated. Where merging 2 x 2 x 2 blocks into one (Partition::merged) leaves at
// least two processes with blocks large enough again, the holders of the merged blocks gather their
// rows and build the rest as a nested DistHierarchy over their own communicator (which agglomerates
// again in turn; the others wait for the correction in the scatter): the coarse levels of a run on
// many processes shrink onto 1/8 of them per stage instead of all onto one. Else rank 0
// gathers that level, coarsens it further and runs those levels with the serial hierarchy's
// cycle (with its LU on the coarsest); it broadcasts their reports. A coarsest level too large
// for that LU (max_levels reached while the blocks are still large) is not gathered: it stays
// distributed and takes its symmetric sweeps (coarse_sweeps) with the distributed smoother on every
// process, the distributed coarsest solve.
#pragma once

#ifdef MPMG_HAVE_MPI

#include <mpi.h>

#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "distributed/dist_galerkin.hpp"
#include "distributed/dist_ops.hpp"
#include "mpmg/options.hpp"
#include "mpmg/precision.hpp"
#include "multigrid/hierarchy.hpp"
#include "multigrid/level.hpp"

namespace mpmg::dist {

/// Gives this process's FP64 block of an operator (made on the first call, then the same).
using Fp64BlockSource = std::function<const SgDiaMatrix<double>*()>;

class DistHierarchy {
public:
    /// `rows0`: this process's rows of the fine operator grown by kGalerkinMargin
    /// (dist_galerkin.hpp); `p`: the partition; `block0`: gives this process's block of the
    /// operator when the caller has it (empty: taken from rows0), called only if level 0 reads
    /// it; the block and rows0 must outlive the hierarchy (an FP64 level 0 reads the block
    /// instead of a copy). `exact_half0`: the block in FP16 when FP16 holds it exactly (the
    /// Krylov operator's copy, LevelSetup::exact_half), shared by a level 0 that stores FP16
    /// unscaled, which then never asks for the FP64 block. `first_level`: the index of
    /// rows0's level in the whole hierarchy (the precision plan's; > 0 for the nested hierarchy
    /// of an agglomeration onto a subset, whose first level is not A). `a_normal`: every
    /// value of rows0 is zero or a normal FP64 number (StructuredProblem::a_normal), so that
    /// an FP64 level 0 needs no counting pass over its block.
    DistHierarchy(const GhostedRows& rows0, const Partition& p, const MultigridOptions& mg,
                  const PrecisionPlan& plan, MPI_Comm comm, Fp64BlockSource block0 = {},
                  ExactHalfSource exact_half0 = {}, int first_level = 0, bool a_normal = false);
    ~DistHierarchy();
    DistHierarchy(const DistHierarchy&) = delete;
    DistHierarchy& operator=(const DistHierarchy&) = delete;

    const std::vector<LevelReport>& report() const { return report_; }
    double grid_complexity() const;
    double operator_complexity() const;
    /// Levels 0 .. distributed_levels()-1 are distributed (over all processes, then over the
    /// merged partitions' holders; as rank 0 sees it); the rest live on rank 0.
    int distributed_levels() const;
    /// Per level, the processes that run it: all, then the merged partitions' holders, then 1
    /// for rank 0's levels (as rank 0 sees it).
    std::vector<int> level_ranks() const;

    /// z = M^{-1} r on this process's blocks (collective). K is double or float.
    template <class K>
    void apply(const K* r, K* z);

private:
    void setup(const GhostedRows& rows0, const Partition& p, const PrecisionPlan& plan,
               Fp64BlockSource block0, const ExactHalfSource& exact_half0);
    /// The agglomerated levels g.first, g.first + 1, ... (rank 0 builds them), their reports
    /// appended to `reports`.
    void build_tail(GalerkinLevels& g, const SgDiaMatrix<double>& first,
                    const std::shared_ptr<const SgDiaMatrix<double>>& shared_first,
                    const PrecisionPlan& plan, std::vector<LevelReport>& reports);
    void cycle(int l, CycleKind kind);
    /// Level l's right-hand side `v` (this process's block on parts_[l]) into the level that
    /// runs it (distributed here, the nested hierarchy's first, or rank 0's first tail level);
    /// leave() gives that level's solution back into `v`. Collective.
    void enter(int l, std::vector<double>& v);
    void leave(int l, std::vector<double>& v);
    void gather_to_root(const std::vector<double>& local, std::vector<double>& global);
    void scatter_from_root(const std::vector<double>& global, std::vector<double>& local);

    MPI_Comm comm_;
    MultigridOptions mg_;
    int first_ = 0;                             ///< the first level's index in the whole hierarchy
    bool a_normal_ = false;                     ///< rows0 holds only zero or normal values
    std::vector<Partition> parts_;              // parts_[l] for l <= distributed_levels()
    std::vector<std::unique_ptr<Level>> dist_;  // this process's blocks of the distributed levels
    std::vector<std::unique_ptr<DistTransfer>> dist_transfers_;  // dist_[l] -> level l + 1
    std::deque<Transfer> transfers_;            // transfers_[l]: level l -> l + 1 (stable)
    std::vector<std::unique_ptr<Level>> tail_;  // levels from distributed_levels() on
    std::vector<LevelReport> report_;
    int coarse_sweeps_ = 0;  // of the coarsest level (dist_.back() or the tail's) when smoothed
    /// The coarsest level is dist_.back(), smoothed on every process (coarse_sweeps_).
    bool distributed_coarsest_ = false;
    int block_ = 1;
    SgDiaMatrix<double> tail_first_;  // rank 0: the first agglomerated level, whole
    std::vector<double> buf_, global_, fine_;
    std::vector<std::vector<double>> coarse_;  // coarse_[l]: level l + 1's vector in FP64
    // Agglomeration onto the merged partition's holders (merging_): their communicator, and
    // on a holder the nested hierarchy of the levels from dist_.size() on and its vector.
    bool merging_ = false;
    Partition merged_;
    MPI_Comm sub_ = MPI_COMM_NULL;
    std::unique_ptr<DistHierarchy> nested_;
    std::vector<double> merged_v_;
};

}  // namespace mpmg::dist

#endif  // MPMG_HAVE_MPI
