#include "smoothers/ilu0.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <vector>

#include "mpmg/errors.hpp"

namespace mpmg {
namespace {

int lex(const Offset& o) { return (o.dz + 1) * 9 + (o.dy + 1) * 3 + (o.dx + 1); }

// Small dense r x r helpers (row-major).
void invert(std::vector<double> m, int r, std::vector<double>& inv, std::int64_t row) {
    inv.assign(static_cast<std::size_t>(r * r), 0.0);
    for (int i = 0; i < r; ++i) inv[static_cast<std::size_t>(i * r + i)] = 1.0;
    for (int col = 0; col < r; ++col) {
        int piv = col;
        for (int i = col + 1; i < r; ++i) {
            if (std::fabs(m[i * r + col]) > std::fabs(m[piv * r + col])) piv = i;
        }
        const double p = m[static_cast<std::size_t>(piv * r + col)];
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
        const double d = m[static_cast<std::size_t>(i * r + i)];
        for (int j = 0; j < r; ++j) inv[static_cast<std::size_t>(i * r + j)] /= d;
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

/// L (unit diagonal) and U from the eliminated working copy.
Ilu0Factors split_factors(const SgDiaMatrix<double>& w) {
    const Box& box = w.box();
    const int r = w.block(), nd = w.stencil().size(), center = w.stencil().center();
    Ilu0Factors f{SgDiaMatrix<double>(box, w.stencil(), r),
                  SgDiaMatrix<double>(box, w.stencil(), r)};
    for (int d = 0; d < nd; ++d) {
        SgDiaMatrix<double>& dst = d < center ? f.l : f.u;
        std::copy(w.diagonal(d), w.diagonal(d) + w.diag_values(), dst.diagonal(d));
    }
    for (std::int64_t c = 0; c < box.cells(); ++c) {
        for (int i = 0; i < r; ++i) f.l.value(center, c, i, i) = 1.0;
    }
    return f;
}

/// The scalar (r = 1) elimination of ilu0_factor without the block helpers' allocations: the
/// same operations in the same order, so the same factors. `target[dk][dj]` is the offset of
/// row c that L_ck U_kj updates, or -1 when it is outside the pattern.
void eliminate_scalar(SgDiaMatrix<double>& w, const std::array<std::array<int, 27>, 27>& target) {
    const Box& box = w.box();
    const int nd = w.stencil().size(), center = w.stencil().center();
    std::vector<double> pivot_inv(static_cast<std::size_t>(box.cells()));
    std::array<std::int64_t, 27> shift{};
    for (int d = 0; d < nd; ++d) {
        const Offset& o = w.stencil()[d];
        shift[static_cast<std::size_t>(d)] =
            o.dx + std::int64_t{box.nx} * (o.dy + std::int64_t{box.ny} * o.dz);
    }
    for (std::int64_t c = 0; c < box.cells(); ++c) {
        for (int dk = 0; dk < center; ++dk) {
            if (!w.neighbour_inside(c, dk)) continue;
            const std::int64_t k = c + shift[static_cast<std::size_t>(dk)];
            double& ack = w.value(dk, c, 0, 0);
            ack = -(0.0 - ack * pivot_inv[static_cast<std::size_t>(k)]);  // L_ck = A_ck / U_kk
            for (int dj = center + 1; dj < nd; ++dj) {
                const int d = target[static_cast<std::size_t>(dk)][static_cast<std::size_t>(dj)];
                if (d < 0 || !w.neighbour_inside(k, dj)) continue;
                w.value(d, c, 0, 0) -= ack * w.value(dj, k, 0, 0);
            }
        }
        const double p = w.value(center, c, 0, 0);
        if (!(std::fabs(p) > 0.0) || !std::isfinite(p)) {
            throw NumericalError(
                fmt::format("ILU(0): zero or non-finite pivot at row {}; use --smoother symgs", c));
        }
        pivot_inv[static_cast<std::size_t>(c)] = 1.0 / p;
    }
}

}  // namespace

Ilu0Factors ilu0_factor(const SgDiaMatrix<double>& a) {
    const Box& box = a.box();
    const int r = a.block(), rr = r * r, nd = a.stencil().size(), center = a.stencil().center();
    std::array<int, 27> index{};  // lexicographic offset code -> stencil index, or -1
    index.fill(-1);
    for (int d = 0; d < nd; ++d) index[static_cast<std::size_t>(lex(a.stencil()[d]))] = d;
    SgDiaMatrix<double> w = a;  // working copy, becomes L (strict lower) and U
    if (r == 1) {
        std::array<std::array<int, 27>, 27> target{};
        for (int dk = 0; dk < nd; ++dk) {
            for (int dj = 0; dj < nd; ++dj) {
                const Offset ok = a.stencil()[dk], oj = a.stencil()[dj];
                const Offset oc{ok.dx + oj.dx, ok.dy + oj.dy, ok.dz + oj.dz};
                const bool near =
                    std::abs(oc.dx) <= 1 && std::abs(oc.dy) <= 1 && std::abs(oc.dz) <= 1;
                target[static_cast<std::size_t>(dk)][static_cast<std::size_t>(dj)] =
                    near ? index[static_cast<std::size_t>(lex(oc))] : -1;
            }
        }
        eliminate_scalar(w, target);
        return split_factors(w);
    }
    std::vector<double> inv, lik(static_cast<std::size_t>(rr));
    std::vector<double> pivot_inv(static_cast<std::size_t>(box.cells() * rr));
    const auto block = [&](int d, std::int64_t c) { return &w.value(d, c, 0, 0); };
    for (std::int64_t c = 0; c < box.cells(); ++c) {
        for (int dk = 0; dk < center; ++dk) {  // lower offsets in increasing order
            if (!w.neighbour_inside(c, dk)) continue;
            const Offset ok = w.stencil()[dk];
            const std::int64_t k =
                c + ok.dx + std::int64_t{box.nx} * (ok.dy + std::int64_t{box.ny} * ok.dz);
            // L_ck = A_ck U_kk^{-1}
            double* ack = block(dk, c);
            std::fill(lik.begin(), lik.end(), 0.0);
            sub_mul(lik.data(), ack, &pivot_inv[static_cast<std::size_t>(k * rr)], r);
            for (int t = 0; t < rr; ++t) ack[t] = -lik[static_cast<std::size_t>(t)];
            // A_cj -= L_ck U_kj for the upper entries of row k that are in row c's pattern
            for (int dj = center + 1; dj < nd; ++dj) {
                if (!w.neighbour_inside(k, dj)) continue;
                const Offset oj = w.stencil()[dj];
                const Offset oc{ok.dx + oj.dx, ok.dy + oj.dy, ok.dz + oj.dz};
                if (std::abs(oc.dx) > 1 || std::abs(oc.dy) > 1 || std::abs(oc.dz) > 1) continue;
                const int d = index[static_cast<std::size_t>(lex(oc))];
                if (d < 0) continue;
                sub_mul(block(d, c), ack, block(dj, k), r);
            }
        }
        std::vector<double> piv(block(center, c), block(center, c) + rr);
        invert(piv, r, inv, c * r);
        std::copy(inv.begin(), inv.end(), pivot_inv.begin() + c * rr);
    }
    return split_factors(w);
}

}  // namespace mpmg
