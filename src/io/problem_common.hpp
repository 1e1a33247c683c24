// Building blocks shared by the built-in problem generators (problem_*.cpp): a fixed PRNG,
// cell coordinates, cell-centred finite-volume diffusion with harmonic face means, upwind
// fluxes, a smooth exact solution and the right-hand side b = A x_exact.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "io/problems.hpp"
#include "mpmg/sgdia_matrix.hpp"

namespace mpmg::problem_detail {

/// SplitMix64 (Steele, Lea, Flood 2014), written out so that every platform draws the same
/// numbers (std::uniform_*_distribution differs across standard libraries).
class SplitMix64 {
public:
    explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next() {
        state_ += 0x9E3779B97F4A7C15ULL;
        std::uint64_t z = state_;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    /// Uniform in [0, 1) with 53 random bits: (z >> 11) * 2^-53.
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    /// Uniform in [lo, hi).
    double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

private:
    std::uint64_t state_;
};

/// Cell (i, j, k) of `box`.
struct Ijk {
    int i, j, k;
};
inline Ijk ijk(const Box& box, std::int64_t c) {
    return Ijk{static_cast<int>(c % box.nx), static_cast<int>((c / box.nx) % box.ny),
               static_cast<int>(c / (std::int64_t{box.nx} * box.ny))};
}
inline std::int64_t cell_index(const Box& box, int i, int j, int k) {
    return i + std::int64_t{box.nx} * (j + std::int64_t{box.ny} * k);
}

/// The box of opt.grid, or n^3.
Box problem_box(const ProblemOptions& opt);

/// The cells lo..hi-1 of a grid along each direction (a box of it), visited in the grid's order
/// (i fastest, then j, then k).
struct CellRange {
    Box grid;
    std::array<int, 3> lo{}, hi{};
    template <class F>
    void for_each(F&& f) const {
        for (int k = lo[2]; k < hi[2]; ++k) {
            for (int j = lo[1]; j < hi[1]; ++j) {
                for (int i = lo[0]; i < hi[0]; ++i) f(cell_index(grid, i, j, k));
            }
        }
    }
};

/// 2ab / (a + b) (0 when both are 0).
inline double harmonic(double a, double b) { return a + b > 0.0 ? 2.0 * a * b / (a + b) : 0.0; }

/// The matrix a generator assembles: the rows of a window of the grid (the whole grid when the
/// window is empty). Generators address cells by their index in the whole grid and may visit
/// every cell: writes to rows outside the window go to a scratch entry and are dropped.
class Assembly {
public:
    Assembly(Box grid, Stencil stencil, int block, const GridWindow& window);
    /// The whole grid (what the generators iterate over).
    const Box& box() const { return grid_; }
    const Stencil& stencil() const { return m_.stencil(); }
    int block() const { return m_.block(); }
    /// A[(cell, a), (cell + offset d, b)], cell in the whole grid.
    double& value(int d, std::int64_t cell, int a, int b) {
        if (whole_) return m_.value(d, cell, a, b);
        if (cell != last_cell_) {
            last_cell_ = cell;
            last_ = stored_cell(cell);
        }
        if (last_ < 0) {
            sink_ = 0.0;
            return sink_;
        }
        return m_.value(d, last_, a, b);
    }
    /// The cells whose rows are stored, grown by `grow` on every side and clipped to the grid
    /// (all cells when the whole grid is stored). A generator loop whose writes from cell c
    /// reach the rows c + o with |o| <= grow visits cells(grow): every stored row then gets
    /// all its terms, added in the whole grid's order, and the writes to other rows are
    /// dropped. A field read at neighbours up to distance t of the visited cells is needed
    /// on cells(grow + t) only.
    CellRange cells(int grow) const;
    /// The stored rows (the window's cells, in their own box).
    SgDiaMatrix<double>& stored() { return m_; }
    /// The global cell of stored cell 0.
    const std::array<int, 3>& stored_lo() const { return lo_; }

private:
    std::int64_t stored_cell(std::int64_t cell) const;

    Box grid_;
    bool whole_ = true;
    std::array<int, 3> lo_{};  // first stored cell
    SgDiaMatrix<double> m_;
    std::int64_t last_cell_ = -1, last_ = -1;
    double sink_ = 0.0;
};

/// Adds `v` to A[(cell, ca), (cell + o, cb)]; `o` must be in the stencil.
void add(Assembly& a, std::int64_t cell, Offset o, int ca, int cb, double v);

/// Cell-centred finite-volume diffusion -div(k grad u) of component `comp` (rows and columns),
/// k diagonal per cell (kx, ky, kz; each of size cells). Face weight between neighbours p, q in
/// direction d: geom[d] * harmonic(k_d[p], k_d[q]), geom[d] = face area / centre distance.
/// A face on the domain boundary side s (0: x-, 1: x+, 2: y-, 3: y+, 4: z-, 5: z+) with
/// dirichlet[s] adds boundary_factor * geom[d] * k_d[p] to the diagonal (boundary_factor 2 for
/// a Dirichlet value on the face, half a cell away); otherwise it is a no-flux face.
struct FvDiffusion {
    const std::vector<double>* k[3] = {nullptr, nullptr, nullptr};
    std::array<double, 3> geom{1.0, 1.0, 1.0};
    std::array<bool, 6> dirichlet{true, true, true, true, true, true};
    double boundary_factor = 2.0;
};
void add_fv_diffusion(Assembly& a, int comp, const FvDiffusion& f);

/// First-order upwind flux of component `comp`: a flux F >= 0 from cell p to its neighbour
/// p + o leaves p (A[p,p] += F) and enters p + o (A[p+o, p] -= F). Conservative; the column
/// sums of the added part are zero.
void add_upwind(Assembly& a, int comp, std::int64_t p, Offset o, double flux);

/// A smooth, non-constant exact solution: 1 + 0.5 sin(pi x) sin(pi y) sin(pi z) + 0.25 x
/// - 0.1 c with x, y, z the cell centres in (0, 1) and c the component (the sines from one
/// table per direction).
std::vector<double> smooth_solution(const Box& box, int block);

/// Sets p.a to the window's rows of `a` (entries to cells outside the window zeroed),
/// p.x_exact (given, whole grid) and p.b = A x_exact (FP64) on the window's cells, exact on
/// those whose neighbours all lie in the window (one cell inside it, or on the grid's
/// boundary).
void finish(StructuredProblem& p, Assembly& a, std::vector<double> x_exact);

}  // namespace mpmg::problem_detail
