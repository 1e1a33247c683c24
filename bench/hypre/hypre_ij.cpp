// hypre's IJ interface: mpmg's SG-DIA matrix becomes a ParCSR matrix with the same
// coefficients, set one z-plane of rows per HYPRE_IJMatrixSetValues call.
#include "hypre/hypre_ij.hpp"

#include <mpi.h>

#include <numeric>

#include "hypre/hypre_common.hpp"

namespace mpmg::bench::hypre {

using detail::check;

namespace {

/// Column offset of SG-DIA offset o in mpmg's cell order.
std::int64_t column_shift(const Box& box, const Offset& o) {
    return o.dx + std::int64_t{box.nx} * (o.dy + std::int64_t{box.ny} * o.dz);
}

}  // namespace

IjSystem::IjSystem(const SgDiaMatrix<double>& a) {
    detail::ensure_started();
    detail::check_supported(a);
    const Box& box = a.box();
    const Stencil& st = a.stencil();
    rows_ = static_cast<HYPRE_BigInt>(a.rows());
    index_.resize(static_cast<std::size_t>(rows_));
    std::iota(index_.begin(), index_.end(), HYPRE_BigInt{0});

    // Row sizes and each cell's mask of inside neighbours.
    std::vector<HYPRE_Int> ncols(static_cast<std::size_t>(rows_), 0);
    for (int d = 0; d < st.size(); ++d) {
        a.for_each_inside(d, [&](std::int64_t c) { ++ncols[static_cast<std::size_t>(c)]; });
    }
    check(HYPRE_IJMatrixCreate(MPI_COMM_WORLD, 0, rows_ - 1, 0, rows_ - 1, &a_), "IJMatrixCreate");
    check(HYPRE_IJMatrixSetObjectType(a_, HYPRE_PARCSR), "IJMatrixSetObjectType");
    check(HYPRE_IJMatrixSetRowSizes(a_, ncols.data()), "IJMatrixSetRowSizes");
    check(HYPRE_IJMatrixInitialize(a_), "IJMatrixInitialize");

    const std::int64_t plane = std::int64_t{box.nx} * box.ny;
    std::vector<HYPRE_BigInt> cols;
    std::vector<double> vals;
    for (int k = 0; k < box.nz; ++k) {
        cols.clear();
        vals.clear();
        const std::int64_t c0 = k * plane;
        for (std::int64_t c = c0; c < c0 + plane; ++c) {
            for (int d = 0; d < st.size(); ++d) {
                if (!a.neighbour_inside(c, d)) continue;
                cols.push_back(static_cast<HYPRE_BigInt>(c + column_shift(box, st[d])));
                vals.push_back(a.value(d, c, 0, 0));
            }
        }
        check(HYPRE_IJMatrixSetValues(a_, static_cast<HYPRE_Int>(plane), ncols.data() + c0,
                                      index_.data() + c0, cols.data(), vals.data()),
              "IJMatrixSetValues");
    }
    check(HYPRE_IJMatrixAssemble(a_), "IJMatrixAssemble");
    void* obj = nullptr;
    check(HYPRE_IJMatrixGetObject(a_, &obj), "IJMatrixGetObject");
    par_a_ = static_cast<HYPRE_ParCSRMatrix>(obj);
    b_ = make_vector(par_b_);
    x_ = make_vector(par_x_);
}

HYPRE_IJVector IjSystem::make_vector(HYPRE_ParVector& par) {
    HYPRE_IJVector v = nullptr;
    check(HYPRE_IJVectorCreate(MPI_COMM_WORLD, 0, rows_ - 1, &v), "IJVectorCreate");
    check(HYPRE_IJVectorSetObjectType(v, HYPRE_PARCSR), "IJVectorSetObjectType");
    check(HYPRE_IJVectorInitialize(v), "IJVectorInitialize");
    const std::vector<double> zero(static_cast<std::size_t>(rows_), 0.0);
    check(HYPRE_IJVectorSetValues(v, static_cast<HYPRE_Int>(rows_), index_.data(), zero.data()),
          "IJVectorSetValues");
    check(HYPRE_IJVectorAssemble(v), "IJVectorAssemble");
    void* obj = nullptr;
    check(HYPRE_IJVectorGetObject(v, &obj), "IJVectorGetObject");
    par = static_cast<HYPRE_ParVector>(obj);
    return v;
}

IjSystem::~IjSystem() {
    if (x_ != nullptr) HYPRE_IJVectorDestroy(x_);
    if (b_ != nullptr) HYPRE_IJVectorDestroy(b_);
    if (a_ != nullptr) HYPRE_IJMatrixDestroy(a_);
    HYPRE_ClearAllErrors();
}

void IjSystem::set(HYPRE_IJVector v, const std::vector<double>& values) {
    check(HYPRE_IJVectorSetValues(v, static_cast<HYPRE_Int>(rows_), index_.data(), values.data()),
          "IJVectorSetValues");
    check(HYPRE_IJVectorAssemble(v), "IJVectorAssemble");
}

std::vector<double> IjSystem::get(HYPRE_IJVector v) const {
    std::vector<double> out(static_cast<std::size_t>(rows_));
    check(HYPRE_IJVectorGetValues(v, static_cast<HYPRE_Int>(rows_), index_.data(), out.data()),
          "IJVectorGetValues");
    return out;
}

std::vector<double> ij_matvec(const SgDiaMatrix<double>& a, const std::vector<double>& x) {
    IjSystem sys(a);
    sys.set(sys.ij_x(), x);
    check(HYPRE_ParCSRMatrixMatvec(1.0, sys.matrix(), sys.x(), 0.0, sys.b()), "ParCSRMatrixMatvec");
    return sys.get(sys.ij_b());
}

}  // namespace mpmg::bench::hypre
