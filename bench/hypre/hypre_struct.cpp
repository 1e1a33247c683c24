// hypre's Struct interface: mpmg's SG-DIA matrix becomes a HYPRE_StructMatrix on the same box
// with one stencil entry per SG-DIA offset (nonsymmetric storage, every entry given), solved by
// Struct PCG or GMRES preconditioned with one PFMG or SMG V-cycle.
#include <HYPRE_struct_ls.h>
#include <HYPRE_struct_mv.h>
#include <mpi.h>

#include <array>
#include <vector>

#include "hypre/hypre_common.hpp"
#include "hypre/hypre_solvers.hpp"
#include "hypre/hypre_struct.hpp"

namespace mpmg::bench::hypre {

using detail::check;

namespace {

/// Values of SG-DIA offset d over the whole box, with entries that reach outside the box set
/// to zero explicitly (hypre requires them zero; mpmg stores zero there too).
std::vector<double> offset_values(const SgDiaMatrix<double>& a, int d) {
    std::vector<double> v(static_cast<std::size_t>(a.box().cells()), 0.0);
    const double* src = a.diagonal(d);
    a.for_each_inside(d, [&](std::int64_t c) {
        v[static_cast<std::size_t>(c)] = src[static_cast<std::size_t>(c)];
    });
    return v;
}

}  // namespace

StructSystem::StructSystem(const SgDiaMatrix<double>& a) {
    detail::ensure_started();
    detail::check_supported(a);
    const Box& box = a.box();
    lower_ = {0, 0, 0};
    upper_ = {box.nx - 1, box.ny - 1, box.nz - 1};
    check(HYPRE_StructGridCreate(MPI_COMM_WORLD, 3, &grid_), "StructGridCreate");
    check(HYPRE_StructGridSetExtents(grid_, lower_.data(), upper_.data()), "StructGridSetExtents");
    check(HYPRE_StructGridAssemble(grid_), "StructGridAssemble");

    const Stencil& st = a.stencil();
    check(HYPRE_StructStencilCreate(3, st.size(), &stencil_), "StructStencilCreate");
    for (int d = 0; d < st.size(); ++d) {
        std::array<HYPRE_Int, 3> off{st[d].dx, st[d].dy, st[d].dz};
        check(HYPRE_StructStencilSetElement(stencil_, d, off.data()), "StructStencilSetElement");
    }
    check(HYPRE_StructMatrixCreate(MPI_COMM_WORLD, grid_, stencil_, &a_), "StructMatrixCreate");
    check(HYPRE_StructMatrixSetSymmetric(a_, 0), "StructMatrixSetSymmetric");
    check(HYPRE_StructMatrixInitialize(a_), "StructMatrixInitialize");
    for (int d = 0; d < st.size(); ++d) {
        std::vector<double> v = offset_values(a, d);
        HYPRE_Int entry = d;
        check(HYPRE_StructMatrixSetBoxValues(a_, lower_.data(), upper_.data(), 1, &entry, v.data()),
              "StructMatrixSetBoxValues");
    }
    check(HYPRE_StructMatrixAssemble(a_), "StructMatrixAssemble");
    b_ = make_vector();
    x_ = make_vector();
}

HYPRE_StructVector StructSystem::make_vector() {
    HYPRE_StructVector v = nullptr;
    check(HYPRE_StructVectorCreate(MPI_COMM_WORLD, grid_, &v), "StructVectorCreate");
    check(HYPRE_StructVectorInitialize(v), "StructVectorInitialize");
    check(HYPRE_StructVectorSetConstantValues(v, 0.0), "StructVectorSetConstantValues");
    check(HYPRE_StructVectorAssemble(v), "StructVectorAssemble");
    return v;
}

StructSystem::~StructSystem() {
    if (x_ != nullptr) HYPRE_StructVectorDestroy(x_);
    if (b_ != nullptr) HYPRE_StructVectorDestroy(b_);
    if (a_ != nullptr) HYPRE_StructMatrixDestroy(a_);
    if (stencil_ != nullptr) HYPRE_StructStencilDestroy(stencil_);
    if (grid_ != nullptr) HYPRE_StructGridDestroy(grid_);
    HYPRE_ClearAllErrors();
}

void StructSystem::set(HYPRE_StructVector v, const std::vector<double>& values) {
    std::vector<double> copy = values;  // hypre's interface takes a non-const pointer
    check(HYPRE_StructVectorSetBoxValues(v, lower_.data(), upper_.data(), copy.data()),
          "StructVectorSetBoxValues");
    check(HYPRE_StructVectorAssemble(v), "StructVectorAssemble");
}

std::vector<double> StructSystem::get(HYPRE_StructVector v, std::int64_t cells) {
    std::vector<double> out(static_cast<std::size_t>(cells));
    check(HYPRE_StructVectorGetBoxValues(v, lower_.data(), upper_.data(), out.data()),
          "StructVectorGetBoxValues");
    return out;
}

std::vector<double> struct_matvec(const SgDiaMatrix<double>& a, const std::vector<double>& x) {
    StructSystem sys(a);
    sys.set(sys.x(), x);
    check(HYPRE_StructMatrixMatvec(1.0, sys.matrix(), sys.x(), 0.0, sys.b()), "StructMatrixMatvec");
    return sys.get(sys.b(), a.box().cells());
}

}  // namespace mpmg::bench::hypre
