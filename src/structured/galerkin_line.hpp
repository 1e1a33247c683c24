// The directional Galerkin product one coarse x-line at a time (internal to src/structured;
// galerkin.cpp drives it over whole matrices and over windows of planes). The method is
// described at the top of galerkin.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "mpmg/sgdia_matrix.hpp"
#include "structured/coarsen.hpp"

namespace mpmg::galerkin {

using Int3 = std::array<int, 3>;

/// Where a directional step reads (T = const double) or writes (T = double) an operator: the
/// x-line (y, z) of offset d, in a whole matrix (ring = 0) or in a window of its z-planes held
/// in `ring` slots (plane z in slot z % ring).
template <class T>
struct Lines {
    std::vector<T*> base;    ///< per offset: where plane slot 0 starts
    std::int64_t plane = 0;  ///< values per plane
    std::int64_t row = 0;    ///< values per x-line
    int ring = 0;
    T* line(std::size_t d, int y, int z) const {
        return base[d] + (ring > 0 ? z % ring : z) * plane + y * row;
    }
};

/// The lines of a whole matrix.
Lines<const double> lines_of(const SgDiaMatrix<double>& a);
Lines<double> lines_of(SgDiaMatrix<double>& a);
/// A window of `ring` planes of an operator with `ndiag` offsets on `box`, in `buf` (resized).
Lines<double> window(std::vector<double>& buf, int ndiag, const Box& box, int block, int ring);

/// Which coarse neighbour an even or odd fine g reaches: J = (g + shift) / 2.
enum class Reach { odd, left, right };

/// One inner loop of accumulate(): the coarse x-indices [lo, hi) of a line whose fine
/// neighbours reach coarse J = I + delta along dir by `reach`.
struct Run {
    Reach reach = Reach::odd;
    int lo = 0, hi = 0, delta = 0;
};
/// The loops of one fine offset and fine row: an odd g reaches one coarse J, an even g two.
struct Runs {
    std::array<Run, 2> run{};
    int count = 0;
    void add(const Run& r) {
        if (r.lo < r.hi) run[static_cast<std::size_t>(count++)] = r;
    }
};

/// What one directional Galerkin product needs, fixed before the loops.
struct Plan {
    const DirectionalTransfer* s = nullptr;
    Lines<const double> in;  ///< the fine operator
    std::size_t dir = 0;
    int n = 0, nc = 0;                     ///< fine and coarse extents along dir
    std::int64_t rr = 1;                   ///< block entries
    std::int64_t line = 0;                 ///< values of one coarse x-line
    int ndc = 0;                           ///< coarse offsets
    Int3 ext{};                            ///< fine extents
    std::array<std::int64_t, 3> stride{};  ///< fine cell strides
    std::vector<Int3> off{};               ///< fine offsets
    std::vector<std::int64_t> lin{};       ///< fine offsets as cell-index differences
    std::vector<Int3> target{};            ///< [d][J - I + 1] -> coarse diagonal
    const double* wl = nullptr;            ///< nullptr: 1/2 everywhere
    const double* wr = nullptr;
    /// dir = 0: the loops of fine offset d and row sp, [3 d + sp]; along x they are the same
    /// on every line (only the line's y and z decide whether it has them at all).
    std::vector<Runs> xruns{};
    /// Coarse lines cj in [full_lo, full_hi) have every term (each fine offset, fine row and
    /// reach whose coarse neighbour lies inside along x), whatever their y: within one ck their
    /// terms differ only by where the fine lines start (LineCache).
    int full_lo = 0, full_hi = 0;
};

/// One weighted fine line that a coarse output line sums: w src[ci step] for ci in [lo, hi).
struct Term {
    const double* src;
    double w;
    int lo, hi;
};

/// The terms of an operator's coarse x-line with constant (1/2) weights, bucketed by
/// output offset, kept for the next line of the same plane: lines with every term share
/// them, the fine lines shifted by a whole number of rows (built once per plane instead of
/// once per line). One per thread.
struct LineCache {
    static constexpr int kMaxTerms = 27 * 3 * 2;  // offsets x fine rows x runs
    bool valid = false;
    int cj = 0, ck = 0;  ///< the line the terms were built for
    std::int64_t step = 1;
    int count = 0;
    std::array<Term, kMaxTerms> sorted{};
    std::array<int, 28> first{};  ///< terms of output dc: sorted[first[dc] .. first[dc + 1])
    /// Per output dc: the cells some term covers [lo, hi) and the cells all cover [all_lo,
    /// all_hi) (empty: all_lo = all_hi = hi).
    std::array<int, 27> lo{}, hi{}, all_lo{}, all_hi{};
};

/// Coarse structure: the perpendicular part of every fine offset with each J - I in {-1,0,1}.
Stencil coarse_stencil(const Stencil& fine, std::size_t dir);

/// The plan of step `s` from a fine operator with stencil `fine` read from `in` to the
/// coarse stencil `coarse`.
Plan make_plan(const Stencil& fine, int block, const DirectionalTransfer& s, const Stencil& coarse,
               Lines<const double> in);

/// Coarse x-line (cj, ck) of every coarse offset dc into out.line(dc, cj, ck), every value
/// written: with constant weights summed straight into it, with operator-dependent ones in
/// acc[dc * p.line ...] (p.ndc * p.line values of scratch) and copied. `cache` carries the
/// terms from one line to the next (LineCache).
void coarse_line(const Plan& p, int cj, int ck, const Lines<double>& out, double* acc,
                 LineCache& cache);

}  // namespace mpmg::galerkin
