#include "smoothers/ilu0.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "mpmg/errors.hpp"

namespace mpmg {
namespace {

int lex(const Offset& o) { return (o.dz + 1) * 9 + (o.dy + 1) * 3 + (o.dx + 1); }

[[noreturn]] void bad_pivot(std::int64_t row) {
    throw NumericalError(
        fmt::format("ILU(0): zero or non-finite pivot at row {}; use --smoother symgs", row));
}

// Small dense r x r helpers (row-major), on caller-owned storage: the factorisation calls
// them once per cell, so they allocate nothing.

/// inv = m^{-1} by Gauss-Jordan with partial pivoting; m (r x r) is overwritten.
void invert(double* m, int r, double* inv, std::int64_t row) {
    std::fill(inv, inv + r * r, 0.0);
    for (int i = 0; i < r; ++i) inv[i * r + i] = 1.0;
    for (int col = 0; col < r; ++col) {
        int piv = col;
        for (int i = col + 1; i < r; ++i) {
            if (std::fabs(m[i * r + col]) > std::fabs(m[piv * r + col])) piv = i;
        }
        const double p = m[piv * r + col];
        if (!(std::fabs(p) > 0.0) || !std::isfinite(p)) bad_pivot(row + col);
        for (int j = 0; j < r; ++j) {
            std::swap(m[col * r + j], m[piv * r + j]);
            std::swap(inv[col * r + j], inv[piv * r + j]);
        }
        for (int i = 0; i < r; ++i) {
            if (i == col) continue;
            const double f = m[i * r + col] / m[col * r + col];
            for (int j = 0; j < r; ++j) {
                m[i * r + j] -= f * m[col * r + j];
                inv[i * r + j] -= f * inv[col * r + j];
            }
        }
    }
    for (int i = 0; i < r; ++i) {
        const double d = m[i * r + i];
        for (int j = 0; j < r; ++j) inv[i * r + j] /= d;
    }
}

// c -= a * b for r x r blocks given as pointers.
void sub_mul(double* c, const double* a, const double* b, int r) {
    for (int i = 0; i < r; ++i) {
        for (int k = 0; k < r; ++k) {
            const double aik = a[i * r + k];
            for (int j = 0; j < r; ++j) c[i * r + j] -= aik * b[k * r + j];
        }
    }
}

}  // namespace

namespace {

/// Bit lex(o) of every offset o of a named stencil (the rule of Stencil::named).
constexpr std::uint32_t named_mask(int max_nonzero, bool corners) {
    std::uint32_t m = 0;
    for (int l = 0; l < 27; ++l) {
        const int nonzero = (l % 3 != 1) + (l / 3 % 3 != 1) + (l / 9 != 1);
        if (nonzero <= max_nonzero || (corners && nonzero == 3)) m |= std::uint32_t{1} << l;
    }
    return m;
}
constexpr std::uint32_t kMask3d7 = named_mask(1, false), kMask3d15 = named_mask(1, true),
                        kMask3d19 = named_mask(2, false), kMask3d27 = named_mask(3, false);

/// The offsets of a named stencil (by its mask: bit lex(o) for each offset o, in increasing lex
/// order as Stencil sorts them) and the updates of the factorisation among them (factor's
/// `updates`, by the same rule in the same order), at compile time.
template <std::uint32_t Mask>
struct Shape {
    static constexpr int nd = std::popcount(Mask);
    struct Update {
        int dj = 0, d = 0;
    };
    struct Tables {
        std::array<int, nd> lex{};  ///< lex code of each offset
        int center = 0;
        std::array<int, nd> count{};  ///< updates of each lower offset
        std::array<std::array<Update, nd>, nd> updates{};
    };
    static constexpr Tables tables = [] {
        Tables t;
        std::array<int, 27> index{};
        index.fill(-1);
        int d = 0;
        for (int l = 0; l < 27; ++l) {
            if ((Mask >> l & 1u) == 0) continue;
            t.lex[d] = l;
            index[l] = d;
            if (l == 13) t.center = d;
            ++d;
        }
        for (int dk = 0; dk < t.center; ++dk) {
            for (int dj = t.center + 1; dj < nd; ++dj) {
                const int x = t.lex[dk] % 3 + t.lex[dj] % 3 - 2;
                const int y = t.lex[dk] / 3 % 3 + t.lex[dj] / 3 % 3 - 2;
                const int z = t.lex[dk] / 9 + t.lex[dj] / 9 - 2;
                if (x < -1 || x > 1 || y < -1 || y > 1 || z < -1 || z > 1) continue;
                const int at = index[(z + 1) * 9 + (y + 1) * 3 + (x + 1)];
                if (at >= 0) t.updates[dk][t.count[dk]++] = Update{dj, at};
            }
        }
        return t;
    }();
};

/// f(std::integral_constant<int, 0>), ..., f(std::integral_constant<int, N - 1>).
template <int N, class F>
inline void static_for(F&& f) {
    [&]<int... I>(std::integer_sequence<int, I...>) { (f(std::integral_constant<int, I>{}), ...); }
    (std::make_integer_sequence<int, N>{});
}

/// The point factorisation of the cells [c0, c1) of one line, all of whose neighbours (and the
/// cells their updates reach) lie inside the box: factor<1>'s loop body, unrolled at compile
/// time over the offsets of the named stencil Super, which holds the matrix's (`mask`), so
/// that the row stays in registers. Offsets of Super outside the matrix's stencil are skipped,
/// and so are updates whose offsets it lacks: what remains are the matrix's own updates in
/// their order, so the same operations in the same order as the general loop and the same
/// bits (Ilu0.InteriorPathEqualsTheGeneralLoop). The skips test `mask`, the same for every
/// cell (branches the processor predicts); with Exact (mask == Super) there are none. `src`,
/// `col`, `shift` and `rshift` are indexed by the matrix's offsets: col[d] of a lower offset d
/// is factor<1>'s line buffer (cell c at c - line), of the centre and an upper one U's values
/// (cell c at c + rline: U itself, or its ring of lines), where the neighbour of c at lower
/// offset dk reads them at c + rline + rshift[dk] (and its pivot at c + shift[dk]).
///
/// One thread of the Zen 5 VM, a throwaway driver (best of 3, against detail::
/// ilu0_factor_general, which is what every cell took before; page faults of the new factors
/// included): weather n = 121, level 0 (3d19) 269 -> 159 ms, levels 1-4 (15 offsets inside
/// 3d19, no named stencil) 205 -> 145 ms; oil n = 140, level 0 (3d7) 128 -> 86 ms, level 1 (15
/// offsets inside 3d27) 147 -> 119 ms, level 2 (3d27) 92 -> 54 ms. The general loop kept the
/// row in memory and indexed it at run time, every update waiting on a store; a list of steps
/// without its per-offset branches (a fixed loop, the row still in memory) was no faster.
template <std::uint32_t Super, bool Exact>
void factor_interior_run(std::uint32_t mask, const std::array<const double*, 27>& src,
                         const std::array<double*, 27>& col,
                         const std::array<std::int64_t, 27>& shift,
                         const std::array<std::int64_t, 27>& rshift, double* pivot_inv,
                         std::int64_t line, std::int64_t rline, std::int64_t c0, std::int64_t c1) {
    using Sh = Shape<Super>;
    constexpr auto& t = Sh::tables;
    // The matrix's arrays and shifts by Super's offsets (absent ones: never read); the lower
    // offsets' col is the line's buffer, from the line's first cell `line` on.
    std::array<const double*, Sh::nd> sp{};
    std::array<double*, Sh::nd> cp{};
    std::array<std::int64_t, Sh::nd> sh{}, rs{};
    for (int e = 0, d = 0; e < Sh::nd; ++e) {
        if ((mask >> t.lex[static_cast<std::size_t>(e)] & 1u) == 0) continue;
        sp[static_cast<std::size_t>(e)] = src[static_cast<std::size_t>(d)];
        cp[static_cast<std::size_t>(e)] = col[static_cast<std::size_t>(d)];
        sh[static_cast<std::size_t>(e)] = shift[static_cast<std::size_t>(d)];
        rs[static_cast<std::size_t>(e)] = rshift[static_cast<std::size_t>(d)];
        ++d;
    }
    const auto has = [mask](int e) {
        return Exact || (mask >> t.lex[static_cast<std::size_t>(e)] & 1u) != 0;
    };
    // Indices from the integral constants' types, and the tables named directly, not through a
    // reference: GCC 12 with -fsanitize=undefined crashed (internal compiler error) on
    // t.count[dk] as a template argument.
    for (std::int64_t c = c0; c < c1; ++c) {
        double row[Sh::nd] = {};  // absent offsets: never read (the compiler cannot tell)
        static_for<Sh::nd>([&](auto dc) {
            constexpr int d = decltype(dc)::value;
            if (has(d)) row[d] = sp[d][c];
        });
        static_for<Sh::tables.center>([&](auto kc) {
            constexpr int dk = decltype(kc)::value;
            if (!has(dk)) return;
            const std::int64_t k = c + sh[dk], rk = c + rline + rs[dk];
            double& ack = row[dk];
            ack = -(0.0 - ack * pivot_inv[k]);
            static_for<Sh::tables.count[dk]>([&](auto qc) {
                constexpr typename Sh::Update u = Sh::tables.updates[dk][decltype(qc)::value];
                if (has(u.dj) && has(u.d)) row[u.d] -= ack * cp[u.dj][rk];
            });
        });
        static_for<Sh::nd>([&](auto dc) {
            constexpr int d = decltype(dc)::value;
            if constexpr (d < Sh::tables.center) {
                if (has(d)) cp[d][c - line] = row[d];
            } else {
                if (has(d)) cp[d][c + rline] = row[d];
            }
        });
        const double p = row[t.center];
        if (!(std::fabs(p) > 0.0) || !std::isfinite(p)) bad_pivot(c);
        pivot_inv[c] = 1.0 / p;  // invert(&p, 1, ...): 1.0 divided by the pivot
    }
}

/// factor_interior_run over the smallest named stencil that holds `mask` (every point stencil
/// is inside 3d27).
void factor_interior(std::uint32_t mask, const std::array<const double*, 27>& src,
                     const std::array<double*, 27>& col, const std::array<std::int64_t, 27>& shift,
                     const std::array<std::int64_t, 27>& rshift, double* pivot_inv,
                     std::int64_t line, std::int64_t rline, std::int64_t c0, std::int64_t c1) {
    const auto run = [&]<std::uint32_t Super>() {
        if (mask == Super) {
            factor_interior_run<Super, true>(mask, src, col, shift, rshift, pivot_inv, line, rline,
                                             c0, c1);
        } else {
            factor_interior_run<Super, false>(mask, src, col, shift, rshift, pivot_inv, line, rline,
                                              c0, c1);
        }
    };
    if ((mask & ~kMask3d7) == 0) {
        run.template operator()<kMask3d7>();
    } else if ((mask & ~kMask3d15) == 0) {
        run.template operator()<kMask3d15>();
    } else if ((mask & ~kMask3d19) == 0) {
        run.template operator()<kMask3d19>();
    } else {
        run.template operator()<kMask3d27>();
    }
}

/// The factorisation with block size R known at compile time (R = 0: a.block() at run time), so
/// that the r x r helpers unroll for the common sizes.
template <int R>
Ilu0Factors factor(const SgDiaMatrix<double>& a, bool unrolled, Ilu0Sink* sink) {
    const Box& box = a.box();
    const int r = R > 0 ? R : a.block(), rr = r * r, nd = a.stencil().size(),
              center = a.stencil().center();
    std::array<int, 27> index{};  // lexicographic offset code -> stencil index, or -1
    index.fill(-1);
    for (int d = 0; d < nd; ++d) index[static_cast<std::size_t>(lex(a.stencil()[d]))] = d;
    // updates[dk]: for lower offset dk (k = c + dk), the upper offsets dj of row k whose
    // L_ck U_kj lands in row c's pattern, at offset d = dk + dj of row c; shift[d]: the cell
    // index step of offset d.
    struct Update {
        int dj, d;
        Offset oc;  ///< dk + dj, within one step in each direction
    };
    std::array<std::vector<Update>, 27> updates;
    std::array<std::int64_t, 27> shift{};
    for (int dk = 0; dk < nd; ++dk) {
        const Offset ok = a.stencil()[dk];
        shift[static_cast<std::size_t>(dk)] =
            ok.dx + std::int64_t{box.nx} * (ok.dy + std::int64_t{box.ny} * ok.dz);
        if (dk >= center) continue;
        for (int dj = center + 1; dj < nd; ++dj) {
            const Offset oj = a.stencil()[dj];
            const Offset oc{ok.dx + oj.dx, ok.dy + oj.dy, ok.dz + oj.dz};
            const bool near = std::abs(oc.dx) <= 1 && std::abs(oc.dy) <= 1 && std::abs(oc.dz) <= 1;
            const int d = near ? index[static_cast<std::size_t>(lex(oc))] : -1;
            if (d >= 0) updates[static_cast<std::size_t>(dk)].push_back(Update{dj, d, oc});
        }
    }
    // L keeps the lower offsets and the centre, U the centre and the upper offsets: each
    // triangular solve then reads only its own half of the values. The factorisation works in
    // them: a's lower offsets in L, its centre and upper ones in U (L's centre, the unit
    // diagonal, is set at the end). No whole working copy of a.
    std::vector<Offset> lower, upper;
    for (int d = 0; d < nd; ++d) {
        if (d <= center) lower.push_back(a.stencil()[d]);
        if (d >= center) upper.push_back(a.stencil()[d]);
    }
    Ilu0Factors f;
    if (sink == nullptr) {
        f.l = SgDiaMatrix<double>(box, Stencil(lower), r);
        f.u = SgDiaMatrix<double>(box, Stencil(upper), r);
    }
    // Point stencils read each row of a in the loop below; blocks work in place on a copy.
    for (int d = 0; d < nd && R != 1; ++d) {
        double* to = d < center ? f.l.diagonal(d) : f.u.diagonal(d - center);
        std::copy(a.diagonal(d), a.diagonal(d) + a.diag_values(), to);
    }
    std::vector<double> lik(static_cast<std::size_t>(rr)), piv(lik.size());
    std::vector<double> pivot_inv(static_cast<std::size_t>(box.cells() * rr));
    const auto block = [&](int d, std::int64_t c) {
        return d < center ? &f.l.value(d, c, 0, 0) : &f.u.value(d - center, c, 0, 0);
    };
    // Point stencils: L's values of the line being factored (its lower offsets, then the
    // unit centre), copied into f.l or given to `sink` at the line's end. U's values go to
    // f.u, or with a sink to a ring of the last `ring` lines (a row reads U of the rows up to a
    // plane and a line back, so ny + 2 lines hold all it reads and its own), and to the sink
    // as each line is done. Cell c of line q sits at (q % ring) nx + c - q nx of the ring.
    std::vector<double> lbuf, ubuf;
    const std::int64_t lines = std::int64_t{box.ny} * box.nz;
    const std::int64_t ring = sink != nullptr ? std::min<std::int64_t>(lines, box.ny + 2) : lines;
    if constexpr (R == 1) {
        lbuf.assign(static_cast<std::size_t>((center + 1) * box.nx), 0.0);
        std::fill(lbuf.begin() + center * box.nx, lbuf.end(), 1.0);
        if (sink != nullptr) ubuf.resize(static_cast<std::size_t>((nd - center) * ring * box.nx));
    }
    // Whether cell (x, y, z) lies in the box. A cell at least one away from every face has all
    // its neighbours inside, and so has every cell c + dk + dj an update reaches (within one
    // step of c).
    const auto inside = [&](int x, int y, int z) {
        return static_cast<unsigned>(x) < static_cast<unsigned>(box.nx) &&
               static_cast<unsigned>(y) < static_cast<unsigned>(box.ny) &&
               static_cast<unsigned>(z) < static_cast<unsigned>(box.nz);
    };
    if constexpr (R == 1) {
        // Point stencils: row c in registers (a local copy), so the updates of one entry do
        // not wait on each other through memory; the same operations in the same order as
        // the block code below, so the same bits (L_ck = -(0 - a_ck / u_kk) keeps the sign
        // of a zero as the block code's fill-then-subtract does). The block loop on a local
        // row (a vector, through sub_mul) was tried for r = 1 too: weather n = 121 setup
        // 0.42 -> 0.61-0.69 s, slower than before either change (0.58 s).
        std::array<double*, 27> col{};
        std::array<const double*, 27> src{};
        std::uint32_t mask = 0;
        for (int d = 0; d < nd; ++d) {
            col[static_cast<std::size_t>(d)] = d < center ? lbuf.data() + d * box.nx
                                               : sink == nullptr
                                                   ? f.u.diagonal(d - center)
                                                   : ubuf.data() + (d - center) * ring * box.nx;
            src[static_cast<std::size_t>(d)] = a.diagonal(d);
            mask |= std::uint32_t{1} << lex(a.stencil()[d]);
        }
        // The ring index of the current line's first cell, and of each lower offset's
        // neighbour relative to the cell's (the cell shifts when U is not a ring).
        std::int64_t rbase = 0;
        std::array<std::int64_t, 27> rshift = shift;
        const auto cell = [&](std::int64_t c, int cx, int cy, int cz) {
            const std::int64_t rc = rbase + cx;
            const bool interior =
                cx > 0 && cx + 1 < box.nx && cy > 0 && cy + 1 < box.ny && cz > 0 && cz + 1 < box.nz;
            std::array<double, 27> row{};
            for (int d = 0; d < nd; ++d) {
                row[static_cast<std::size_t>(d)] = src[static_cast<std::size_t>(d)][c];
            }
            for (int dk = 0; dk < center; ++dk) {
                const Offset& ok = a.stencil()[dk];
                if (!interior && !inside(cx + ok.dx, cy + ok.dy, cz + ok.dz)) continue;
                const std::int64_t k = c + shift[static_cast<std::size_t>(dk)];
                double& ack = row[static_cast<std::size_t>(dk)];
                ack = -(0.0 - ack * pivot_inv[static_cast<std::size_t>(k)]);
                for (const Update& u : updates[static_cast<std::size_t>(dk)]) {
                    if (!interior && !inside(cx + u.oc.dx, cy + u.oc.dy, cz + u.oc.dz)) continue;
                    row[static_cast<std::size_t>(u.d)] -=
                        ack * col[static_cast<std::size_t>(u.dj)]
                                 [rc + rshift[static_cast<std::size_t>(dk)]];
                }
            }
            for (int d = 0; d < nd; ++d) {
                col[static_cast<std::size_t>(d)][d < center ? cx : rc] =
                    row[static_cast<std::size_t>(d)];
            }
            double p = row[static_cast<std::size_t>(center)];
            invert(&p, 1, &pivot_inv[static_cast<std::size_t>(c)], c);
        };
        // Cells in order, line by line; the cells between the ends of a line away from the
        // faces go through the loop unrolled at compile time (factor_interior).
        std::array<const double*, 27> lower_values{}, upper_values{};
        for (int d = 0; d <= center; ++d) {
            lower_values[static_cast<std::size_t>(d)] = lbuf.data() + d * box.nx;
        }
        const auto slot = [ring](std::int64_t q) { return (q % ring + ring) % ring; };
        std::int64_t c = 0, q = 0;
        for (int cz = 0; cz < box.nz; ++cz) {
            for (int cy = 0; cy < box.ny; ++cy, c += box.nx, ++q) {
                rbase = slot(q) * box.nx;
                for (int dk = 0; dk < center; ++dk) {
                    const Offset& ok = a.stencil()[dk];
                    const std::int64_t to = q + ok.dy + std::int64_t{box.ny} * ok.dz;
                    rshift[static_cast<std::size_t>(dk)] = (slot(to) - slot(q)) * box.nx + ok.dx;
                }
                const bool inner = cy > 0 && cy + 1 < box.ny && cz > 0 && cz + 1 < box.nz;
                if (unrolled && inner && box.nx >= 3) {
                    cell(c, 0, cy, cz);
                    factor_interior(mask, src, col, shift, rshift, pivot_inv.data(), c, rbase - c,
                                    c + 1, c + box.nx - 1);
                    cell(c + box.nx - 1, box.nx - 1, cy, cz);
                } else {
                    for (int cx = 0; cx < box.nx; ++cx) cell(c + cx, cx, cy, cz);
                }
                if (sink != nullptr) {
                    for (int d = center; d < nd; ++d) {
                        upper_values[static_cast<std::size_t>(d - center)] =
                            col[static_cast<std::size_t>(d)] + rbase;
                    }
                    sink->line(c, lower_values.data(), upper_values.data());
                } else {
                    for (int d = 0; d < center; ++d) {
                        const double* from = lbuf.data() + d * box.nx;
                        std::copy(from, from + box.nx, f.l.diagonal(d) + c);
                    }
                }
            }
        }
    } else {
        int cx = 0, cy = 0, cz = 0;  // the coordinates of cell c
        for (std::int64_t c = 0; c < box.cells(); ++c) {
            const bool interior =
                cx > 0 && cx + 1 < box.nx && cy > 0 && cy + 1 < box.ny && cz > 0 && cz + 1 < box.nz;
            for (int dk = 0; dk < center; ++dk) {  // lower offsets in increasing order
                const Offset& ok = a.stencil()[dk];
                if (!interior && !inside(cx + ok.dx, cy + ok.dy, cz + ok.dz)) continue;
                const std::int64_t k = c + shift[static_cast<std::size_t>(dk)];
                // L_ck = A_ck U_kk^{-1}
                double* ack = block(dk, c);
                std::fill(lik.begin(), lik.end(), 0.0);
                sub_mul(lik.data(), ack, &pivot_inv[static_cast<std::size_t>(k * rr)], r);
                for (int t = 0; t < rr; ++t) ack[t] = -lik[static_cast<std::size_t>(t)];
                // A_cj -= L_ck U_kj for the upper entries of row k that are in row c's pattern
                for (const Update& u : updates[static_cast<std::size_t>(dk)]) {
                    if (!interior && !inside(cx + u.oc.dx, cy + u.oc.dy, cz + u.oc.dz)) continue;
                    sub_mul(block(u.d, c), ack, block(u.dj, k), r);
                }
            }
            std::copy(block(center, c), block(center, c) + rr, piv.begin());
            invert(piv.data(), r, &pivot_inv[static_cast<std::size_t>(c * rr)], c * r);
            if (++cx == box.nx) {
                cx = 0;
                if (++cy == box.ny) {
                    cy = 0;
                    ++cz;
                }
            }
        }
    }
    if (sink != nullptr) return f;
    const int lc = f.l.stencil().center();
    for (std::int64_t c = 0; c < box.cells(); ++c) {
        for (int i = 0; i < r; ++i) f.l.value(lc, c, i, i) = 1.0;
    }
    return f;
}

}  // namespace

namespace {

Ilu0Factors factor_any(const SgDiaMatrix<double>& a, bool unrolled, Ilu0Sink* sink) {
    if (sink != nullptr && a.block() != 1) {
        throw std::invalid_argument("ilu0_factor: a sink takes the factors of point matrices only");
    }
    switch (a.block()) {
        case 1:
            return factor<1>(a, unrolled, sink);
        case 2:
            return factor<2>(a, unrolled, sink);
        case 3:
            return factor<3>(a, unrolled, sink);
        case 4:
            return factor<4>(a, unrolled, sink);
        default:
            return factor<0>(a, unrolled, sink);
    }
}

}  // namespace

Ilu0Factors ilu0_factor(const SgDiaMatrix<double>& a, Ilu0Sink* sink) {
    return factor_any(a, true, sink);
}

namespace detail {
Ilu0Factors ilu0_factor_general(const SgDiaMatrix<double>& a) {
    return factor_any(a, false, nullptr);
}
}  // namespace detail

}  // namespace mpmg
