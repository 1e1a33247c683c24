#include "distributed/dist_solve.hpp"

#include "distributed/mpi_env.hpp"
#include "mpmg/errors.hpp"

#ifdef MPMG_HAVE_MPI

#include <fmt/format.h>
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <new>
#include <optional>

#include "api/guarded_solve.hpp"
#include "api/operators.hpp"
#include "distributed/dist_amg.hpp"
#include "distributed/dist_galerkin.hpp"
#include "distributed/dist_hierarchy.hpp"
#include "distributed/dist_read.hpp"
#include "krylov/vector_ops.hpp"
#include "mpmg/errors.hpp"
#include "multigrid/truncate.hpp"
#include "structured/coarsen.hpp"
#include "structured/sgdia_ops.hpp"

namespace mpmg::dist {
namespace {

/// A over the partition in iterative precision K: y = A_local x + G x_ghost, inner products
/// summed over all processes. As the serial structured operator (api/solve.cpp), the products
/// read an exact FP16 copy of the process's block when FP16 holds every value of it: made
/// when level 0 of the hierarchy asks for it (exact_half(); the level then stores that same
/// matrix), else after products_before_half_copy products (not mirrored).
template <class K>
class DistOperator final : public LinearOperator<K> {
public:
    /// `rows`: this process's rows of A with a margin (dist_galerkin.hpp); it and `p` must
    /// outlive the operator.
    DistOperator(const GhostedRows& rows, const Partition& p, MPI_Comm comm,
                 TruncationCounts& counts)
        : rows_(rows),
          p_(p),
          comm_(comm),
          planes_(std::is_same_v<K, double> ? own_planes(rows, p) : std::nullopt),
          halo_(p, rows.a.block(), rows.a.stencil().offsets(), comm) {
        // K = FP64: the block is made when a product or the hierarchy first reads it; not at
        // all when the products and level 0 read the exact FP16 copy (a copy of this
        // process's rows, about as large as A's share of them, saved).
        if constexpr (!std::is_same_v<K, double>) a_ = truncate<K>(own_block(rows, p), counts);
        coupling_ = GhostCoupling::build<K>(rows.a, rows.lo, p, halo_, counts);
    }
    /// This process's FP64 block of A when K is FP64, made on the first call (the hierarchy's
    /// level 0 reuses it); null otherwise.
    const SgDiaMatrix<double>* fp64_block() const {
        if constexpr (std::is_same_v<K, double>) {
            return &block();
        } else {
            return nullptr;
        }
    }
    std::int64_t size() const override { return p_.local().cells() * rows_.a.block(); }
    void apply(const K* x, K* y) const override {
        const int product = products_ + 1;
        constexpr Precision reads = std::is_same_v<K, double> ? Precision::fp64 : Precision::fp32;
        if (!tried_half_ && product > products_before_half_copy(reads, all_mirrored_)) {
            (void)exact_half();  // collective: the same product on every process
        }
        if (!tried_symmetry_ && product > kProductsBeforeSymmetryCheck) {
            // As the serial operator (the FP16 copy checked when it was made). The block's own
            // entries only (a symmetric A has symmetric blocks; a product reads the coupling
            // apart), so each process decides for its block, and the wait for the FP16 copy,
            // which must be the same on all, counts as mirrored only where every process
            // mirrors.
            tried_symmetry_ = true;
            if (half_ ? half_symmetric_ : exactly_symmetric(products_view())) {
                mirrored_from_ = product;
            }
            int all = mirrored_from_ > 0 ? 1 : 0;
            MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_LAND, comm_);
            all_mirrored_ = all != 0;
        }
        products_ = product;
        halo_.exchange(x);
        if (half_) {
            if (mirrored_from_ > 0) {
                spmv_mirrored(*half_, x, y);
            } else {
                spmv(*half_, x, y);
            }
            // A x = c (M x) on this process's rows
            if (half_scale_ != 1.0) krylov_ops::scale_copy(size(), half_scale_, y, y);
        } else if (mirrored_from_ > 0) {
            spmv_mirrored(products_view(), x, y);
        } else {
            spmv(products_view(), x, y);
        }
        coupling_.add(halo_.values(), y, 1.0);
    }
    double global_sum(double local) const override { return allreduce_sum(local, comm_); }
    void global_sums(double* values, int count) const override {
        allreduce_sums(values, count, comm_);
    }
    /// The exact FP16 copy of this process's block, or of the block / c with one c for all
    /// processes (exact_multiple), made on the first call (collective: every process calls it
    /// at the same point, from level 0's setup or at the same product); null when FP16 holds
    /// neither. A copy of the block itself is decided per process: a product from it equals
    /// one from the block either way, and level 0 shares it only for this process's block (the
    /// coupling to other processes stays in K, and in the level's own storage). A multiple is
    /// taken only when every process holds its block / c (level 0 then stores them, scaled by
    /// the scalar c, on every process alike).
    ExactHalf exact_half() const {
        if (tried_half_) return {half_, half_scale_, half_facts_, half_symmetric_};
        tried_half_ = true;
        // Both tries read this process's rows as they are (own_block_holds_multiple), without
        // making its FP64 block.
        std::optional<SgDiaMatrix<half>> h;
        try {
            h.emplace(p_.local(), rows_.a.stencil(), rows_.a.block());
        } catch (const std::bad_alloc&) {
            h.reset();  // no copy here; the collectives below still run
        }
        HalfFacts facts;
        const bool itself = h && own_block_holds_multiple(rows_, p_, 1.0, *h, &facts);
        int some_not = itself ? 0 : 1;
        MPI_Allreduce(MPI_IN_PLACE, &some_not, 1, MPI_INT, MPI_LOR, comm_);
        double c = 1.0;
        if (some_not != 0) {
            c = h ? own_block_sampled_scale(rows_, p_) : std::numeric_limits<double>::infinity();
            MPI_Allreduce(MPI_IN_PLACE, &c, 1, MPI_DOUBLE, MPI_MIN, comm_);
            HalfFacts of_multiple;
            int all = h && std::isfinite(c) && c != 1.0 &&
                      own_block_holds_multiple(rows_, p_, c, *h, &of_multiple);
            MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_LAND, comm_);
            if (all != 0) {
                facts = of_multiple;
            } else {
                c = 1.0;
                if (itself) {
                    (void)own_block_holds_multiple(rows_, p_, 1.0, *h);  // the try with c wrote h
                } else {
                    h.reset();
                }
            }
        }
        if (h) {
            half_ = std::make_shared<const SgDiaMatrix<half>>(std::move(*h));
            half_scale_ = c;
            half_facts_ = facts;
            half_from_ = products_ + 1;
            half_symmetric_ = exactly_symmetric(*half_);  // this block's, as the serial copy's
        }
        return {half_, half_scale_, half_facts_, half_symmetric_};
    }
    /// The storage the last products read, and the first product that read it.
    Precision storage() const {
        return half_                       ? Precision::fp16
               : std::is_same_v<K, double> ? Precision::fp64
                                           : Precision::fp32;
    }
    int storage_from_product() const { return half_ ? half_from_ : 1; }
    /// The first product that read only the upper half of the block's offsets (the block
    /// exactly symmetric), or 0 when none did.
    int mirrored_from_product() const { return mirrored_from_; }
    /// The scale of the FP16 copy (the block = scale x copy), 1 without one.
    double storage_scale() const { return half_ ? half_scale_ : 1.0; }

private:
    const GhostedRows& rows_;
    const Partition& p_;
    MPI_Comm comm_;
    /// K = FP64: this process's block as planes of the rows (own_planes), on a z-split.
    std::optional<SgDiaView<double>> planes_;
    /// The block in K: made in the constructor when K is FP32, on first use when FP64.
    const SgDiaMatrix<K>& block() const {
        if constexpr (std::is_same_v<K, double>) {
            if (!a_made_) {
                a_ = own_block(rows_, p_);
                a_made_ = true;
            }
        }
        return a_;
    }

    /// What the products read without the FP16 copy: in K = FP64 this process's block in
    /// place where it is planes of the rows (planes_: no copy), else the block.
    SgDiaView<K> products_view() const {
        if constexpr (std::is_same_v<K, double>) {
            if (planes_) return *planes_;
        }
        return block();
    }

    mutable Halo halo_;  // receive buffers only
    mutable SgDiaMatrix<K> a_;
    mutable bool a_made_ = false;
    GhostCoupling coupling_;
    mutable int products_ = 0, half_from_ = 1, mirrored_from_ = 0;
    mutable bool tried_half_ = false, tried_symmetry_ = false, all_mirrored_ = false;
    mutable std::shared_ptr<const SgDiaMatrix<half>> half_;  ///< this block / half_scale_
    mutable double half_scale_ = 1.0;
    mutable HalfFacts half_facts_;
    mutable bool half_symmetric_ = false;  ///< half_ is exactly symmetric
};

/// How the last DistHierarchy built came out (for the partition report).
struct HierarchyShape {
    int distributed_levels = 0;
    std::vector<int> level_ranks;
};

/// The guard's view of a DistHierarchy; notes its shape.
class BuiltDist final : public BuiltPreconditioner {
public:
    BuiltDist(const GhostedRows& rows0, const Partition& p, const MultigridOptions& mg,
              const PrecisionPlan& plan, MPI_Comm comm, HierarchyShape* shape,
              Fp64BlockSource block0, ExactHalfSource exact_half0, bool a_normal)
        : h_(rows0, p, mg, plan, comm, std::move(block0), std::move(exact_half0), 0, a_normal) {
        shape->distributed_levels = h_.distributed_levels();
        shape->level_ranks = h_.level_ranks();
    }
    void apply(const double* r, double* z) override { h_.apply(r, z); }
    void apply(const float* r, float* z) override { h_.apply(r, z); }
    const std::vector<LevelReport>& report() const override { return h_.report(); }
    double grid_complexity() const override { return h_.grid_complexity(); }
    double operator_complexity() const override { return h_.operator_complexity(); }

private:
    DistHierarchy h_;
};

/// The guard's builder of the distributed hierarchy on `rows0` (level 0 reading A's FP64 block
/// or exact FP16 copy from the Krylov operator `a`); rows0, part, a and shape must outlive it.
template <class K>
BuildFn dist_builder(const GhostedRows& rows0, const Partition& part, MPI_Comm comm,
                     HierarchyShape* shape, const DistOperator<K>& a, bool a_normal) {
    return [&rows0, &part, comm, shape, &a, a_normal](const PrecisionPlan& plan,
                                                      const MultigridOptions& mg) {
        return std::unique_ptr<BuiltPreconditioner>(std::make_unique<BuiltDist>(
            rows0, part, mg, plan, comm, shape,
            std::is_same_v<K, double> ? Fp64BlockSource([&a] { return a.fp64_block(); })
                                      : Fp64BlockSource{},
            [&a] { return a.exact_half(); }, a_normal));
    };
}

template <class K>
void run(StructuredProblem& p, const Partition& part, const SolverOptions& o, SolveResult& out,
         HierarchyShape* shape, std::chrono::steady_clock::time_point started) {
    const MPI_Comm comm = MPI_COMM_WORLD;
    const int r = p.a.block();
    const bool generated = !p.window.whole();
    // This process's rows with a margin: all that the Krylov operator and the setup read
    // (generated so, or copied out of the whole A, which is then released).
    GhostedRows rows0;
    std::vector<double> b;
    if (generated) {
        rows0 = GhostedRows{p.window.lo, std::move(p.a)};
        keep_own_values(p.b, rows0, part);
        b = std::move(p.b);
    } else {
        rows0 = ghosted_from_global(p.a, part, kGalerkinMargin);
        b = extract_local(p.b, part, r);
        p.a = SgDiaMatrix<double>();
    }
    p.b = std::vector<double>();
    out.rows = part.global().cells() * r;
    out.nnz = global_nnz(rows0, part, comm);
    TruncationCounts local;
    const DistOperator<K> a(rows0, part, comm, local);
    check_k(allreduce(local, comm), o.precision.krylov);
    const BuildFn build = dist_builder(rows0, part, comm, shape, a, p.a_normal);
    run_guarded<K>(a, b, build, o, structured_fallbacks(0), out);  // no direct solve of A whole
    out.operator_storage = a.storage();  // rank 0's (each process decides for its block)
    out.operator_storage_from = a.storage_from_product();
    out.operator_mirrored_from = a.mirrored_from_product();
    out.operator_scale = a.storage_scale();
    // The solution, whole, on every process (rank 0 reports it; the error is computed on all).
    // The solve ends here, with each process holding its block of x, as a distributed
    // application's solve would. Assembling x whole on every process (for the report) is
    // not timed: on the Zen 5 VM it took rank 0 14-23 ms of a 0.35 s 2-rank run, most of it
    // the first touch of the whole vector.
    out.total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::vector<double> all, buf;
    gather(out.x, part, r, comm, all, buf);
    all.resize(static_cast<std::size_t>(out.rows));
    MPI_Bcast(all.data(), static_cast<int>(all.size()), MPI_DOUBLE, 0, comm);
    out.x = std::move(all);
}

/// The partition report of a distributed structured hierarchy of `shape` on `part`, with the
/// communication counted since the last reset (but `input`).
PartitionInfo grid_info(const Partition& part, const HierarchyShape& shape) {
    PartitionInfo info;
    info.ranks = part.size();
    info.threads_per_rank = omp_get_max_threads();
    info.dims = part.dims();
    for (int r = 0; r < part.size(); ++r) {
        const auto lo = part.lo(r);
        const Box b = part.box(r);
        info.boxes.push_back({lo[0], lo[1], lo[2], b.nx, b.ny, b.nz});
    }
    info.distributed_levels = shape.distributed_levels;
    info.level_ranks = shape.level_ranks;
    report_comm(info);
    info.smoother =
        "hybrid: the smoother runs inside each rank's block; across rank boundaries it uses the "
        "neighbours' values from before the sweep (Jacobi-like); residuals and transfers are exact";
    info.setup =
        "distributed: every rank holds only its own rows with a margin, coarsens its own blocks "
        "(with a margin of its neighbours' rows), and each level's storage decision combines all "
        "ranks' measures; coarse levels with small blocks are gathered onto 1/8 of the ranks "
        "(2x2x2 blocks into one) while the merged blocks stay large, then onto rank 0 "
        "(level_ranks)";
    return info;
}

GridWindow window_of(const Partition& p) {
    const auto [lo, box] = grown_box(p, p.rank(), kGalerkinMargin);
    return GridWindow{lo, box};
}

}  // namespace

std::optional<StructuredProblem> generate(const ProblemOptions& opt,
                                          std::optional<Partition>& part) {
    if (!distributed()) return std::nullopt;
    const Box grid = problem_grid(opt);
    // A first split (surface only) measures the operator's direction strengths; the partition
    // then weighs them (Partition), and the rows are generated again if it differs.
    const Partition first(grid, world_size(), world_rank());
    StructuredProblem p = make_problem_rows(opt, window_of(first));
    GhostedRows rows{p.window.lo, std::move(p.a)};
    part.emplace(grid, world_size(), world_rank(),
                 direction_strengths(rows, first, MPI_COMM_WORLD));
    if (part->dims() == first.dims()) {
        p.a = std::move(rows.a);
        return p;
    }
    return make_problem_rows(opt, window_of(*part));
}

bool solve_structured(StructuredProblem& p, const std::optional<Partition>& given,
                      const SolverOptions& o, SolveResult& out,
                      std::chrono::steady_clock::time_point started) {
    if (!distributed()) return false;
    const Partition part =
        given ? *given : Partition(p.a.box(), world_size(), world_rank(), direction_strengths(p.a));
    const bool own_rows = !p.window.whole();  // generated or read per process
    HierarchyShape shape;
    comm_stats() = CommStats{};
    if (o.precision.krylov == Precision::fp64) {
        run<double>(p, part, o, out, &shape, started);
    } else {
        run<float>(p, part, o, out, &shape, started);
    }
    PartitionInfo info = grid_info(part, shape);
    const bool file = !o.problem.matrix.empty();
    info.input = !own_rows ? (file ? "file read whole by every rank (array format)"
                                   : "problem generated whole by every rank")
                 : file    ? "file read in parts: every rank read only its share of the lines and "
                             "sent each entry to the rank that owns its row"
                           : "every rank generated only its own rows with a margin";
    out.partition = info;
    return true;
}

namespace {

/// The processes' boxes as a Partition (collective): every process checks the same gathered
/// corners and extents, so each throws the same InvalidInput.
Partition caller_boxes(const SgDiaMatrix<double>& mine, const std::array<int, 3>& first,
                       const Box& grid, MPI_Comm comm, Stencil& stencil, bool* in_order) {
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    // Per process: first cell, extents, grid, unknowns per cell, and its stencil's slots.
    constexpr int kFields = 11;
    int slots = 0;
    for (const Offset& o : mine.stencil().offsets()) {
        slots |= 1 << ((o.dx + 1) + 3 * (o.dy + 1) + 9 * (o.dz + 1));
    }
    const Box& box = mine.box();
    const std::array<int, kFields> head{first[0], first[1], first[2], box.nx,       box.ny, box.nz,
                                        grid.nx,  grid.ny,  grid.nz,  mine.block(), slots};
    std::vector<int> all(static_cast<std::size_t>(kFields) * size);
    MPI_Allgather(head.data(), kFields, MPI_INT, all.data(), kFields, MPI_INT, comm);
    const auto field = [&](int q, int f) { return all[static_cast<std::size_t>(q * kFields + f)]; };
    int union_slots = 0;
    bool same_stencil = true;
    for (int q = 0; q < size; ++q) {
        if (field(q, 6) != grid.nx || field(q, 7) != grid.ny || field(q, 8) != grid.nz) {
            throw InvalidInput(fmt::format(
                "Solver::setup: rank {} gave the grid {}x{}x{}, rank {} {}x{}x{}; every process "
                "gives the same grid",
                q, field(q, 6), field(q, 7), field(q, 8), rank, grid.nx, grid.ny, grid.nz));
        }
        if (field(q, 9) != field(0, 9)) {
            throw InvalidInput(fmt::format(
                "Solver::setup: rank {}'s block has {} unknowns per cell, rank 0's {}; every "
                "process gives the same",
                q, field(q, 9), field(0, 9)));
        }
        union_slots |= field(q, 10);
        same_stencil = same_stencil && field(q, 10) == slots;
    }
    if (!same_stencil) {  // the union: each process's missing offsets hold zeros
        std::vector<Offset> offsets;
        for (int t = 0; t < 27; ++t) {
            if ((union_slots >> t & 1) != 0)
                offsets.push_back(Offset{t % 3 - 1, t / 3 % 3 - 1, t / 9 - 1});
        }
        stencil = Stencil(offsets);
    } else {
        stencil = mine.stencil();
    }
    // The cuts along each direction: the boxes' first cells there, and the grid's end.
    std::array<std::vector<int>, 3> cuts;
    for (int d = 0; d < 3; ++d) {
        std::vector<int>& c = cuts[static_cast<std::size_t>(d)];
        for (int q = 0; q < size; ++q) c.push_back(field(q, d));
        c.push_back(grid.extent(d));
        std::sort(c.begin(), c.end());
        c.erase(std::unique(c.begin(), c.end()), c.end());
    }
    const auto boxes = [&](int q) {
        return fmt::format("cells ({},{},{}) .. ({},{},{})", field(q, 0), field(q, 1), field(q, 2),
                           field(q, 0) + field(q, 3) - 1, field(q, 1) + field(q, 4) - 1,
                           field(q, 2) + field(q, 5) - 1);
    };
    const std::size_t dims[3] = {cuts[0].size() - 1, cuts[1].size() - 1, cuts[2].size() - 1};
    if (cuts[0][0] != 0 || cuts[1][0] != 0 || cuts[2][0] != 0 ||
        dims[0] * dims[1] * dims[2] != static_cast<std::size_t>(size)) {
        throw InvalidInput(fmt::format(
            "Solver::setup: the {} processes' boxes do not form a grid of boxes covering the "
            "{}x{}x{} grid (their first cells cut it into {}x{}x{} pieces from ({},{},{})); rank "
            "0 holds {}",
            size, grid.nx, grid.ny, grid.nz, dims[0], dims[1], dims[2], cuts[0][0], cuts[1][0],
            cuts[2][0], boxes(0)));
    }
    // Each box's place in the grid of boxes (x fastest), checked against its extents.
    std::vector<int> place(static_cast<std::size_t>(size), -1), holder(place.size(), -1);
    for (int q = 0; q < size; ++q) {
        std::array<int, 3> c{};
        for (std::size_t d = 0; d < 3; ++d) {
            const std::vector<int>& cd = cuts[d];
            c[d] = static_cast<int>(
                std::lower_bound(cd.begin(), cd.end(), field(q, static_cast<int>(d))) - cd.begin());
        }
        const int at = c[0] + static_cast<int>(dims[0]) * (c[1] + static_cast<int>(dims[1]) * c[2]);
        bool fits = true;
        for (std::size_t d = 0; d < 3; ++d) {
            const auto i = static_cast<std::size_t>(c[d]);
            fits = fits && cuts[d][i + 1] - cuts[d][i] == field(q, static_cast<int>(d) + 3);
        }
        const int other = holder[static_cast<std::size_t>(at)];
        if (!fits || other >= 0) {
            const auto i = [&](std::size_t d) { return static_cast<std::size_t>(c[d]); };
            throw InvalidInput(fmt::format(
                "Solver::setup: rank {} holds {}; the boxes' first cells cut the grid into "
                "{}x{}x{} boxes, and the one from its first cell is cells ({},{},{}) .. "
                "({},{},{}){}",
                q, boxes(q), dims[0], dims[1], dims[2], cuts[0][i(0)], cuts[1][i(1)], cuts[2][i(2)],
                cuts[0][i(0) + 1] - 1, cuts[1][i(1) + 1] - 1, cuts[2][i(2) + 1] - 1,
                other >= 0 ? fmt::format(", which rank {} holds too", other) : std::string()));
        }
        holder[static_cast<std::size_t>(at)] = q;
        place[static_cast<std::size_t>(q)] = at;
    }
    *in_order = true;
    for (int q = 0; q < size; ++q) *in_order = *in_order && place[static_cast<std::size_t>(q)] == q;
    return Partition::from_cuts(grid, cuts, place[static_cast<std::size_t>(rank)]);
}

}  // namespace

struct GridBlockSystem::Impl {
    Impl() = default;
    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;
    ~Impl() {
        int finalised = 0;
        MPI_Finalized(&finalised);
        if (renumbered != MPI_COMM_NULL && finalised == 0) MPI_Comm_free(&renumbered);
    }
    MPI_Comm comm = MPI_COMM_NULL;        // the processes in the boxes' order (x fastest)
    MPI_Comm renumbered = MPI_COMM_NULL;  // owned: comm, when the caller's ranks are in another
    Partition part;
    GhostedRows rows0;
    std::unique_ptr<DistOperator<double>> op64;
    std::unique_ptr<DistOperator<float>> op32;
    BuildFn build;
    GuardFallbacks fallbacks;
    HierarchyShape shape;
    std::int64_t nnz = 0;
};

GridBlockSystem::GridBlockSystem(SgDiaMatrix<double> mine, std::array<int, 3> first_cell, Box grid,
                                 const Communicator& c, SolverOptions& o, PreparedMatrix& prepared)
    : impl_(std::make_unique<Impl>()) {
    Impl& s = *impl_;
    s.comm = mpi_comm(c);
    check_same_options(o, s.comm);
    Stencil stencil;
    bool in_order = true;
    s.part = caller_boxes(mine, first_cell, grid, s.comm, stencil, &in_order);
    if (!in_order) {  // the same processes numbered by their boxes' places, x fastest
        MPI_Comm_split(s.comm, 0, s.part.rank(), &s.renumbered);
        s.comm = s.renumbered;
    }
    // This process's rows with the setup's margin: its own from `mine`, the margin's from the
    // processes that own them.
    const int r = mine.block();
    const auto [lo, box] = grown_box(s.part, s.part.rank(), kGalerkinMargin);
    s.rows0 = GhostedRows{lo, SgDiaMatrix<double>(box, stencil, r)};
    for (int d = 0; d < mine.stencil().size(); ++d) {
        copy_cells(mine.diagonal(d), mine.box(), first_cell,
                   s.rows0.a.diagonal(stencil.find(mine.stencil()[d])), box, lo, first_cell,
                   mine.box(), std::int64_t{r} * r);
    }
    mine = SgDiaMatrix<double>();
    fill_ghost_rows(s.rows0, s.part, kGalerkinMargin, s.comm);
    // The choices of setup(SgDiaMatrix), from the whole operator.
    const bool symmetric = ghosted_symmetric(s.rows0, nullptr, s.part, 0.0, s.comm);
    o.method = MethodKind::structured;
    prepared = prepare_matrix(s.rows0.a, c);
    if (o.solver == SolverKind::automatic) {
        o.solver = symmetric ? SolverKind::cg : SolverKind::gmres;
    }
    if (o.multigrid.smoother == SmootherKind::automatic) o.multigrid.smoother = SmootherKind::symgs;
    if (o.multigrid.interpolation == InterpolationKind::automatic) {
        o.multigrid.interpolation = InterpolationKind::linear;
    }
    o.multigrid.cycle = resolve_cycle(o.multigrid.cycle, false, 0);
    s.nnz = dist::global_nnz(s.rows0, s.part, s.comm);
    TruncationCounts local;
    if (o.precision.krylov == Precision::fp64) {
        s.op64 = std::make_unique<DistOperator<double>>(s.rows0, s.part, s.comm, local);
        s.build = dist_builder(s.rows0, s.part, s.comm, &s.shape, *s.op64, prepared.a_normal);
    } else {
        s.op32 = std::make_unique<DistOperator<float>>(s.rows0, s.part, s.comm, local);
        s.build = dist_builder(s.rows0, s.part, s.comm, &s.shape, *s.op32, prepared.a_normal);
    }
    check_k(allreduce(local, s.comm), o.precision.krylov);
    s.fallbacks = structured_fallbacks(0);  // no direct solve of A whole
}

GridBlockSystem::~GridBlockSystem() = default;

std::int64_t GridBlockSystem::local_rows() const {
    return impl_->part.local().cells() * impl_->rows0.a.block();
}
std::int64_t GridBlockSystem::global_rows() const {
    return impl_->part.global().cells() * impl_->rows0.a.block();
}
std::int64_t GridBlockSystem::global_nnz() const { return impl_->nnz; }
const LinearOperator<double>* GridBlockSystem::op64() const { return impl_->op64.get(); }
const LinearOperator<float>* GridBlockSystem::op32() const { return impl_->op32.get(); }
const BuildFn& GridBlockSystem::build() const { return impl_->build; }
const GuardFallbacks& GridBlockSystem::fallbacks() const { return impl_->fallbacks; }
void GridBlockSystem::reset_comm() const { comm_stats() = CommStats{}; }

void GridBlockSystem::report(SolveResult& out) const {
    const auto fill = [&out](const auto& a) {
        out.operator_storage = a.storage();  // this process's (each decides for its block)
        out.operator_storage_from = a.storage_from_product();
        out.operator_mirrored_from = a.mirrored_from_product();
        out.operator_scale = a.storage_scale();
    };
    if (impl_->op64) fill(*impl_->op64);
    if (impl_->op32) fill(*impl_->op32);
}

PartitionInfo GridBlockSystem::partition(std::size_t) const {
    PartitionInfo info = grid_info(impl_->part, impl_->shape);
    info.input = "boxes given by each process (Solver::setup with a first cell)";
    return info;
}

}  // namespace mpmg::dist

#else

namespace mpmg::dist {

std::optional<StructuredProblem> generate(const ProblemOptions&, std::optional<Partition>&) {
    return std::nullopt;
}

bool solve_structured(StructuredProblem&, const std::optional<Partition>&, const SolverOptions&,
                      SolveResult&, std::chrono::steady_clock::time_point) {
    return false;
}

struct GridBlockSystem::Impl {};

GridBlockSystem::GridBlockSystem(SgDiaMatrix<double>, std::array<int, 3>, Box, const Communicator&,
                                 SolverOptions&, PreparedMatrix&) {
    throw Unsupported("Solver::setup with a first cell: this build of mpmg has no MPI");
}
GridBlockSystem::~GridBlockSystem() = default;
std::int64_t GridBlockSystem::local_rows() const { return 0; }
std::int64_t GridBlockSystem::global_rows() const { return 0; }
std::int64_t GridBlockSystem::global_nnz() const { return 0; }
const LinearOperator<double>* GridBlockSystem::op64() const { return nullptr; }
const LinearOperator<float>* GridBlockSystem::op32() const { return nullptr; }
const BuildFn& GridBlockSystem::build() const { throw Unsupported("no MPI"); }
const GuardFallbacks& GridBlockSystem::fallbacks() const { throw Unsupported("no MPI"); }
void GridBlockSystem::report(SolveResult&) const {}
PartitionInfo GridBlockSystem::partition(std::size_t) const { return {}; }
void GridBlockSystem::reset_comm() const {}

}  // namespace mpmg::dist

#endif
