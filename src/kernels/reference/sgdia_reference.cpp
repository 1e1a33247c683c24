#include "kernels/reference/sgdia_reference.hpp"

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace mpmg::reference {
namespace {

/// sum over offsets d (optionally not `skip`) and block columns of A_d(c)[ra][rb] x_{c+d}[rb]
/// for the neighbours inside the box.
template <class S>
double row_product(const SgDiaMatrix<S>& a, const double* x, std::int64_t c, int ra,
                   int skip = -1) {
    const int r = a.block();
    const Box& box = a.box();
    double sum = 0.0;
    for (int d = 0; d < a.stencil().size(); ++d) {
        if (d == skip || !a.neighbour_inside(c, d)) continue;
        const Offset& o = a.stencil()[d];
        const std::int64_t nb =
            c + o.dx + std::int64_t{box.nx} * (o.dy + std::int64_t{box.ny} * o.dz);
        for (int rb = 0; rb < r; ++rb) sum += to_double(a.value(d, c, ra, rb)) * x[nb * r + rb];
    }
    return sum;
}

/// z <- D_c^{-1} z, Gaussian elimination with partial pivoting in double.
template <class S>
void solve_centre(const SgDiaMatrix<S>& a, std::int64_t c, double* z) {
    const int r = a.block();
    const int ctr = a.stencil().center();
    std::vector<std::vector<double>> m(static_cast<std::size_t>(r),
                                       std::vector<double>(static_cast<std::size_t>(r)));
    for (int p = 0; p < r; ++p) {
        for (int q = 0; q < r; ++q) m[p][q] = to_double(a.value(ctr, c, p, q));
    }
    for (int p = 0; p < r; ++p) {
        int piv = p;
        for (int q = p + 1; q < r; ++q) {
            if (std::fabs(m[q][p]) > std::fabs(m[piv][p])) piv = q;
        }
        std::swap(m[p], m[piv]);
        std::swap(z[p], z[piv]);
        for (int q = p + 1; q < r; ++q) {
            const double f = m[q][p] / m[p][p];
            for (int s = p; s < r; ++s) m[q][s] -= f * m[p][s];
            z[q] -= f * z[p];
        }
    }
    for (int p = r - 1; p >= 0; --p) {
        for (int q = p + 1; q < r; ++q) z[p] -= m[p][q] * z[q];
        z[p] /= m[p][p];
    }
}

}  // namespace

template <class S>
void spmv(const SgDiaMatrix<S>& a, const double* x, double* y) {
    const int r = a.block();
    for (std::int64_t c = 0; c < a.box().cells(); ++c) {
        for (int ra = 0; ra < r; ++ra) y[c * r + ra] = row_product(a, x, c, ra);
    }
}

template <class S>
void residual(const SgDiaMatrix<S>& a, const double* b, const double* x, double* r) {
    const int nb = a.block();
    for (std::int64_t c = 0; c < a.box().cells(); ++c) {
        for (int ra = 0; ra < nb; ++ra) r[c * nb + ra] = b[c * nb + ra] - row_product(a, x, c, ra);
    }
}

template <class S>
void upper_residual(const SgDiaMatrix<S>& a, const double* x, double* r) {
    const int nb = a.block();
    const Box& box = a.box();
    for (std::int64_t c = 0; c < box.cells(); ++c) {
        for (int ra = 0; ra < nb; ++ra) {
            double sum = 0.0;
            for (int d = 0; d < a.stencil().size(); ++d) {
                const Offset& o = a.stencil()[d];
                const std::int64_t shift =
                    o.dx + std::int64_t{box.nx} * (o.dy + std::int64_t{box.ny} * o.dz);
                if (shift <= 0 || !a.neighbour_inside(c, d)) continue;
                for (int rb = 0; rb < nb; ++rb)
                    sum += to_double(a.value(d, c, ra, rb)) * x[(c + shift) * nb + rb];
            }
            r[c * nb + ra] = -sum;
        }
    }
}

template <class S>
void gs_sweep(const SgDiaMatrix<S>& a, const double* b, double* x, bool forward) {
    const int r = a.block();
    const std::int64_t n = a.box().cells();
    for (std::int64_t t = 0; t < n; ++t) {
        const std::int64_t c = forward ? t : n - 1 - t;
        double z[8];
        for (int ra = 0; ra < r; ++ra) {
            z[ra] = b[c * r + ra] - row_product(a, x, c, ra, a.stencil().center());
        }
        solve_centre(a, c, z);
        for (int ra = 0; ra < r; ++ra) x[c * r + ra] = z[ra];
    }
}

template <class S>
void jacobi(const SgDiaMatrix<S>& a, const double* b, const double* x, double* x_new,
            double omega) {
    const int r = a.block();
    for (std::int64_t c = 0; c < a.box().cells(); ++c) {
        double z[8];
        for (int ra = 0; ra < r; ++ra) z[ra] = b[c * r + ra] - row_product(a, x, c, ra);
        solve_centre(a, c, z);
        for (int ra = 0; ra < r; ++ra) x_new[c * r + ra] = x[c * r + ra] + omega * z[ra];
    }
}

template void spmv<double>(const SgDiaMatrix<double>&, const double*, double*);
template void spmv<float>(const SgDiaMatrix<float>&, const double*, double*);
template void spmv<half>(const SgDiaMatrix<half>&, const double*, double*);
template void spmv<bfloat16>(const SgDiaMatrix<bfloat16>&, const double*, double*);

template void residual<double>(const SgDiaMatrix<double>&, const double*, const double*, double*);
template void residual<float>(const SgDiaMatrix<float>&, const double*, const double*, double*);
template void residual<half>(const SgDiaMatrix<half>&, const double*, const double*, double*);
template void residual<bfloat16>(const SgDiaMatrix<bfloat16>&, const double*, const double*,
                                 double*);

template void upper_residual<double>(const SgDiaMatrix<double>&, const double*, double*);
template void upper_residual<float>(const SgDiaMatrix<float>&, const double*, double*);
template void upper_residual<half>(const SgDiaMatrix<half>&, const double*, double*);
template void upper_residual<bfloat16>(const SgDiaMatrix<bfloat16>&, const double*, double*);

template void gs_sweep<double>(const SgDiaMatrix<double>&, const double*, double*, bool);
template void gs_sweep<float>(const SgDiaMatrix<float>&, const double*, double*, bool);
template void gs_sweep<half>(const SgDiaMatrix<half>&, const double*, double*, bool);
template void gs_sweep<bfloat16>(const SgDiaMatrix<bfloat16>&, const double*, double*, bool);

template void jacobi<double>(const SgDiaMatrix<double>&, const double*, const double*, double*,
                             double);
template void jacobi<float>(const SgDiaMatrix<float>&, const double*, const double*, double*,
                            double);
template void jacobi<half>(const SgDiaMatrix<half>&, const double*, const double*, double*, double);
template void jacobi<bfloat16>(const SgDiaMatrix<bfloat16>&, const double*, const double*, double*,
                               double);

}  // namespace mpmg::reference
