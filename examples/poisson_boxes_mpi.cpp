// mpmg::Solver under mpirun on a structured grid decomposed into boxes (README "A structured
// grid in boxes"): the 7-point Poisson operator on an n^3 grid, the processes arranged by
// MPI_Cart_create, each holding one box of cells as an SG-DIA matrix. Each process fills only its
// box's rows (with the same seven values everywhere: the entries towards cells outside the grid
// are ignored by mpmg, so the boundary needs no special case), sets up collectively on the
// Cartesian communicator and solves for its cells of b and x. Exit code 0 on every process when
// the solve converged with ||b - A x|| / ||b|| <= 1e-8 (checked here with the whole x gathered).
//
// Usage: mpirun -np P mpmg_example_boxes [N]   (default 32)
#include <mpi.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "mpmg/errors.hpp"
#include "mpmg/mpi.hpp"
#include "mpmg/solver.hpp"

namespace {

/// The 7-point Poisson operator's value at offset o (6 on the diagonal, -1 to each neighbour).
double poisson(const mpmg::Offset& o) { return o.dx == 0 && o.dy == 0 && o.dz == 0 ? 6.0 : -1.0; }

int run(int n, MPI_Comm cart) {
    int rank = 0, size = 1;
    MPI_Comm_rank(cart, &rank);
    MPI_Comm_size(cart, &size);
    // MPI_Cart_create numbers the last dimension fastest: it is x here, so that the ranks are in
    // the boxes' order, x fastest, and mpmg needs no renumbering (any order would do).
    int dims[3] = {0, 0, 0}, periods[3] = {0, 0, 0}, coords[3] = {0, 0, 0};
    MPI_Cart_get(cart, 3, dims, periods, coords);
    const std::array<int, 3> process{coords[2], coords[1], coords[0]};  // x, y, z
    const std::array<int, 3> processes{dims[2], dims[1], dims[0]};
    std::array<int, 3> first{}, extent{};
    for (std::size_t d = 0; d < 3; ++d) {
        first[d] = n * process[d] / processes[d];
        extent[d] = n * (process[d] + 1) / processes[d] - first[d];
    }
    const mpmg::Box grid{n, n, n}, box{extent[0], extent[1], extent[2]};
    mpmg::SgDiaMatrix<double> mine(box, mpmg::Stencil::named("3d7"), 1);
    for (int d = 0; d < mine.stencil().size(); ++d) {
        double* values = mine.diagonal(d);
        for (std::int64_t c = 0; c < box.cells(); ++c) values[c] = poisson(mine.stencil()[d]);
    }

    mpmg::keep_freed_memory();
    mpmg::SolverOptions o;  // precision auto (FP16 levels where safe), rtol 1e-10
    mpmg::Solver solver(o, mpmg::communicator(cart));
    const mpmg::SetupResult setup = solver.setup(std::move(mine), first, grid);  // collective
    std::vector<double> b(static_cast<std::size_t>(box.cells()), 1.0);
    std::vector<double> x(b.size(), 0.0);
    const mpmg::SolveResult r = solver.solve(b, x);  // collective
    if (rank == 0) {
        const int distributed = setup.partition ? setup.partition->distributed_levels : 0;
        std::printf(
            "%d^3 cells on %d processes (%dx%dx%d boxes, %d distributed levels of %zu, level 0 "
            "in %s), %s: %d iterations, relative residual %.2e; setup %.3f s, solve %.3f s\n",
            n, size, processes[0], processes[1], processes[2], distributed, setup.levels.size(),
            std::string(mpmg::to_string(setup.levels.front().storage)).c_str(),
            r.converged ? "converged" : "not converged", r.iterations, r.final_relative_residual,
            setup.setup_s, r.total_s);
    }
    // Check: the whole x on every process (each process adds its box), then this process's
    // rows of b - A x.
    std::vector<double> all(static_cast<std::size_t>(grid.cells()), 0.0);
    const auto global = [&](int i, int j, int k) {
        return i + std::int64_t{n} * (j + std::int64_t{n} * k);
    };
    for (int k = 0; k < box.nz; ++k) {
        for (int j = 0; j < box.ny; ++j) {
            for (int i = 0; i < box.nx; ++i) {
                all[static_cast<std::size_t>(global(first[0] + i, first[1] + j, first[2] + k))] =
                    x[static_cast<std::size_t>(i + box.nx * (j + std::int64_t{box.ny} * k))];
            }
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, all.data(), static_cast<int>(all.size()), MPI_DOUBLE, MPI_SUM,
                  cart);
    double sums[2] = {0.0, 0.0};  // ||b - A x||^2 and ||b||^2 over this process's cells
    for (int k = first[2]; k < first[2] + box.nz; ++k) {
        for (int j = first[1]; j < first[1] + box.ny; ++j) {
            for (int i = first[0]; i < first[0] + box.nx; ++i) {
                double ax = 6.0 * all[static_cast<std::size_t>(global(i, j, k))];
                if (i > 0) ax -= all[static_cast<std::size_t>(global(i - 1, j, k))];
                if (i < n - 1) ax -= all[static_cast<std::size_t>(global(i + 1, j, k))];
                if (j > 0) ax -= all[static_cast<std::size_t>(global(i, j - 1, k))];
                if (j < n - 1) ax -= all[static_cast<std::size_t>(global(i, j + 1, k))];
                if (k > 0) ax -= all[static_cast<std::size_t>(global(i, j, k - 1))];
                if (k < n - 1) ax -= all[static_cast<std::size_t>(global(i, j, k + 1))];
                sums[0] += (1.0 - ax) * (1.0 - ax);
                sums[1] += 1.0;
            }
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, cart);
    const double check = std::sqrt(sums[0] / sums[1]);
    if (rank == 0) std::printf("checked: ||b - A x|| / ||b|| = %.2e\n", check);
    return r.converged && check <= 1e-8 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int n = argc > 1 ? std::atoi(argv[1]) : 32;
    int status = 2;
    int dims[3] = {0, 0, 0}, periods[3] = {0, 0, 0};
    MPI_Dims_create(size, 3, dims);
    if (n < dims[0] || n < dims[1] || n < dims[2] || n > 400) {
        if (rank == 0) std::fprintf(stderr, "usage: %s [N in P..400]\n", argv[0]);
    } else {
        MPI_Comm cart = MPI_COMM_NULL;
        MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
        try {
            status = run(n, cart);
        } catch (const mpmg::Error& e) {  // every process throws the same error
            if (rank == 0) std::fprintf(stderr, "mpmg: %s\n", e.what());
            status = 1;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
            status = 1;
        }
        MPI_Comm_free(&cart);
    }
    MPI_Finalize();
    return status;
}
