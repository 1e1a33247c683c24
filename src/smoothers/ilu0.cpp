#include "smoothers/ilu0.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "mpmg/errors.hpp"

namespace mpmg {
namespace {

int lex(const Offset& o) { return (o.dz + 1) * 9 + (o.dy + 1) * 3 + (o.dx + 1); }

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
        if (!(std::fabs(p) > 0.0) || !std::isfinite(p)) {
            throw NumericalError(fmt::format(
                "ILU(0): zero or non-finite pivot at row {}; use --smoother symgs", row + col));
        }
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

/// The factorisation with block size R known at compile time (R = 0: a.block() at run time), so
/// that the r x r helpers unroll for the common sizes.
template <int R>
Ilu0Factors factor(const SgDiaMatrix<double>& a) {
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
    Ilu0Factors f{SgDiaMatrix<double>(box, Stencil(lower), r),
                  SgDiaMatrix<double>(box, Stencil(upper), r)};
    for (int d = 0; d < nd; ++d) {
        double* to = d < center ? f.l.diagonal(d) : f.u.diagonal(d - center);
        std::copy(a.diagonal(d), a.diagonal(d) + a.diag_values(), to);
    }
    std::vector<double> lik(static_cast<std::size_t>(rr)), piv(lik.size());
    std::vector<double> pivot_inv(static_cast<std::size_t>(box.cells() * rr));
    const auto block = [&](int d, std::int64_t c) {
        return d < center ? &f.l.value(d, c, 0, 0) : &f.u.value(d - center, c, 0, 0);
    };
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
        for (int d = 0; d < nd; ++d) col[static_cast<std::size_t>(d)] = block(d, 0);
        std::array<double, 27> row{};
        int cx = 0, cy = 0, cz = 0;  // the coordinates of cell c
        for (std::int64_t c = 0; c < box.cells(); ++c) {
            const bool interior =
                cx > 0 && cx + 1 < box.nx && cy > 0 && cy + 1 < box.ny && cz > 0 && cz + 1 < box.nz;
            for (int d = 0; d < nd; ++d) {
                row[static_cast<std::size_t>(d)] = col[static_cast<std::size_t>(d)][c];
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
                        ack * col[static_cast<std::size_t>(u.dj)][k];
                }
            }
            for (int d = 0; d < nd; ++d) {
                col[static_cast<std::size_t>(d)][c] = row[static_cast<std::size_t>(d)];
            }
            double p = row[static_cast<std::size_t>(center)];
            invert(&p, 1, &pivot_inv[static_cast<std::size_t>(c)], c);
            if (++cx == box.nx) {
                cx = 0;
                if (++cy == box.ny) {
                    cy = 0;
                    ++cz;
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
    const int lc = f.l.stencil().center();
    for (std::int64_t c = 0; c < box.cells(); ++c) {
        for (int i = 0; i < r; ++i) f.l.value(lc, c, i, i) = 1.0;
    }
    return f;
}

}  // namespace

Ilu0Factors ilu0_factor(const SgDiaMatrix<double>& a) {
    switch (a.block()) {
        case 1:
            return factor<1>(a);
        case 2:
            return factor<2>(a);
        case 3:
            return factor<3>(a);
        case 4:
            return factor<4>(a);
        default:
            return factor<0>(a);
    }
}

}  // namespace mpmg
