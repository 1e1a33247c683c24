// SG-DIA -> FP64 CSR, the reference format tests compare structured operators against.
#include "core/float16.hpp"
#include "structured/coarsen.hpp"

namespace mpmg {

/// Rows (cell c, component a) = c * block + a. The stencil is ordered by (dz, dy, dx), so the
/// in-box neighbours of a cell come in ascending cell order and the columns are sorted.
template <class T>
CsrMatrix to_csr(const SgDiaMatrix<T>& a) {
    const Box& b = a.box();
    const int r = a.block();
    const int nd = a.stencil().size();
    CsrMatrix m;
    m.rows = a.rows();
    m.cols = a.rows();
    m.row_ptr.assign(1, 0);
    m.col.reserve(static_cast<std::size_t>(a.nnz()));
    m.val.reserve(static_cast<std::size_t>(a.nnz()));
    for (int k = 0; k < b.nz; ++k) {
        for (int j = 0; j < b.ny; ++j) {
            for (int i = 0; i < b.nx; ++i) {
                const std::int64_t cell = (std::int64_t{k} * b.ny + j) * b.nx + i;
                for (int ca = 0; ca < r; ++ca) {
                    for (int d = 0; d < nd; ++d) {
                        const Offset& o = a.stencil()[d];
                        const int x = i + o.dx, y = j + o.dy, z = k + o.dz;
                        if (x < 0 || x >= b.nx || y < 0 || y >= b.ny || z < 0 || z >= b.nz) {
                            continue;
                        }
                        const std::int64_t nb = (std::int64_t{z} * b.ny + y) * b.nx + x;
                        for (int cb = 0; cb < r; ++cb) {
                            m.col.push_back(nb * r + cb);
                            m.val.push_back(to_double(a.value(d, cell, ca, cb)));
                        }
                    }
                    m.row_ptr.push_back(m.nnz());
                }
            }
        }
    }
    return m;
}

template CsrMatrix to_csr<double>(const SgDiaMatrix<double>&);
template CsrMatrix to_csr<float>(const SgDiaMatrix<float>&);
template CsrMatrix to_csr<half>(const SgDiaMatrix<half>&);
template CsrMatrix to_csr<bfloat16>(const SgDiaMatrix<bfloat16>&);

}  // namespace mpmg
