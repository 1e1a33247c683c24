// The C interface (include/mpmg/mpmg.h): mpmg::Solver behind an opaque handle, every exception
// turned into a status and a message.
#include "mpmg/mpmg.h"

#include <fmt/format.h>

#include <array>
#include <cstring>
#include <new>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "distributed/mpi_env.hpp"
#include "mpmg/errors.hpp"
#include "mpmg/solver.hpp"

struct mpmg_solver {
    mpmg::Solver solver;
    std::string report;
    mpmg::Communicator comm;  // the solver's processes, which agree on each call's checks
};

namespace {

thread_local std::string last_error;

/// Runs f; returns its status, or the status of what it threw with the message kept.
template <class F>
int guarded(const char* call, F&& f) {
    try {
        last_error.clear();
        return f();
    } catch (const mpmg::InvalidInput& e) {
        last_error = fmt::format("{}: {}", call, e.what());
        return MPMG_INVALID_INPUT;
    } catch (const mpmg::NumericalError& e) {
        last_error = fmt::format("{}: {}", call, e.what());
        return MPMG_NUMERICAL_ERROR;
    } catch (const mpmg::Unsupported& e) {
        last_error = fmt::format("{}: {}", call, e.what());
        return MPMG_UNSUPPORTED;
    } catch (const nlohmann::json::exception& e) {
        last_error = fmt::format("{}: options: {}", call, e.what());
        return MPMG_INVALID_INPUT;
    } catch (const std::bad_alloc&) {
        last_error = fmt::format("{}: out of memory", call);
        return MPMG_OUT_OF_MEMORY;
    } catch (const std::exception& e) {
        last_error = fmt::format("{}: internal error: {}", call, e.what());
        return MPMG_INTERNAL_ERROR;
    } catch (...) {
        last_error = fmt::format("{}: internal error", call);
        return MPMG_INTERNAL_ERROR;
    }
}

void check_handle(const mpmg_solver* s, const char* what) {
    if (s == nullptr) throw mpmg::InvalidInput(fmt::format("{} is NULL", what));
}

/// The processes of a solver's calls: its communicator's, MPI_COMM_WORLD's for a NULL handle
/// (each process then reports it).
mpmg::Communicator processes(const mpmg_solver* s) {
    return s != nullptr ? s->comm : mpmg::Communicator{};
}

void check_pointer(const void* p, const char* what) {
    if (p == nullptr) throw mpmg::InvalidInput(fmt::format("{} is NULL", what));
}

/// The options of an options_json argument (NULL or "": the defaults).
mpmg::SolverOptions options_of(const char* options_json) {
    if (options_json == nullptr || options_json[0] == '\0') return {};
    return mpmg::options_from_json(nlohmann::json::parse(options_json));
}

/// The SG-DIA matrix of mpmg_solver_setup_stencil's arguments; with `outward`, the entries
/// towards cells outside the box too (a process's box of a larger grid).
mpmg::SgDiaMatrix<double> stencil_matrix(int nx, int ny, int nz, int r, int n_offsets,
                                         const int* offsets, const double* values,
                                         bool outward = false) {
    if (nx < 1 || ny < 1 || nz < 1 || 1.0 * nx * ny * nz > 2e9) {
        throw mpmg::InvalidInput(
            fmt::format("grid {} x {} x {}: every extent >= 1, at most 2e9 cells", nx, ny, nz));
    }
    if (r < 1 || r > 8) throw mpmg::InvalidInput(fmt::format("r = {}: must be in 1..8", r));
    if (n_offsets < 1 || n_offsets > 27) {
        throw mpmg::InvalidInput(fmt::format("n_offsets = {}: must be in 1..27", n_offsets));
    }
    check_pointer(offsets, "offsets");
    check_pointer(values, "values");
    std::vector<mpmg::Offset> given;
    for (int d = 0; d < n_offsets; ++d) {
        given.push_back(mpmg::Offset{offsets[3 * d], offsets[3 * d + 1], offsets[3 * d + 2]});
    }
    mpmg::Stencil stencil(given);  // checks each offset and the centre
    if (stencil.size() != n_offsets) {
        throw mpmg::InvalidInput("offsets: an offset is given twice");
    }
    const mpmg::Box box{nx, ny, nz};
    mpmg::SgDiaMatrix<double> a(box, stencil, r);
    const std::int64_t block = std::int64_t{r} * r;
    for (int g = 0; g < n_offsets; ++g) {
        const int d = stencil.find(given[static_cast<std::size_t>(g)]);
        const double* from = values + g * box.cells() * block;
        double* to = a.diagonal(d);
        if (outward) {
            std::memcpy(to, from, sizeof(double) * block * box.cells());
            continue;
        }
        a.for_each_inside(d, [&](std::int64_t c) {
            std::memcpy(to + c * block, from + c * block, sizeof(double) * block);
        });
    }
    return a;
}

}  // namespace

extern "C" {

const char* mpmg_last_error(void) { return last_error.c_str(); }

int mpmg_keep_freed_memory(void) { return mpmg::keep_freed_memory() ? 1 : 0; }

int mpmg_solver_create(const char* options_json, mpmg_solver** solver) {
    if (solver != nullptr) *solver = nullptr;
    return guarded("mpmg_solver_create", [&] {
        check_pointer(solver, "solver");
        *solver = new mpmg_solver{mpmg::Solver(options_of(options_json)), {}, {}};
        return MPMG_OK;
    });
}

int mpmg_solver_create_comm(const char* options_json, int comm, mpmg_solver** solver) {
    if (solver != nullptr) *solver = nullptr;
    return guarded("mpmg_solver_create_comm", [&] {
        check_pointer(solver, "solver");
        const auto c = mpmg::Communicator::from_fortran(comm);
        *solver = new mpmg_solver{mpmg::Solver(options_of(options_json), c), {}, c};
        return MPMG_OK;
    });
}

void mpmg_solver_destroy(mpmg_solver* solver) { delete solver; }

}  // extern "C"

namespace {

/// The CSR rows the caller gave: `rows` (>= 0) rows of a matrix with `cols` columns, copied
/// (the indices widened to 64 bits). InvalidInput for a NULL array that must hold something or
/// row pointers that do not start at 0; rows 0 may come with NULL arrays.
template <class I>
mpmg::CsrMatrix copied_csr(I rows, std::int64_t cols, const I* row_ptr, const I* col,
                           const double* val) {
    mpmg::CsrMatrix a;
    a.rows = rows;
    a.cols = cols;
    if (rows == 0 && row_ptr == nullptr) {
        a.row_ptr.assign(1, 0);
        return a;
    }
    check_pointer(row_ptr, "row_ptr");
    const I nnz = row_ptr[rows];
    if (row_ptr[0] != 0 || nnz < 0) {
        throw mpmg::InvalidInput(fmt::format(
            "row_ptr runs from {} to {}: it must start at 0 and not decrease", row_ptr[0], nnz));
    }
    if (nnz > 0) {
        check_pointer(col, "col");
        check_pointer(val, "val");
    }
    a.row_ptr.assign(row_ptr, row_ptr + rows + 1);
    a.col.assign(col, col + nnz);
    a.val.assign(val, val + nnz);
    return a;
}

/// mpmg_solver_setup_csr for either index width.
template <class I>
int setup_csr(const char* call, mpmg_solver* solver, I rows, const I* row_ptr, const I* col,
              const double* val) {
    return guarded(call, [&] {
        check_handle(solver, "solver");
        if (rows < 1) throw mpmg::InvalidInput(fmt::format("rows = {}: must be >= 1", rows));
        mpmg::CsrMatrix a = copied_csr(rows, rows, row_ptr, col, val);
        solver->report = mpmg::to_json(solver->solver.setup(std::move(a))).dump();
        return MPMG_OK;
    });
}

}  // namespace

extern "C" {

int mpmg_solver_setup_csr(mpmg_solver* solver, int64_t rows, const int64_t* row_ptr,
                          const int64_t* col, const double* val) {
    return setup_csr("mpmg_solver_setup_csr", solver, rows, row_ptr, col, val);
}

int mpmg_solver_setup_csr32(mpmg_solver* solver, int32_t rows, const int32_t* row_ptr,
                            const int32_t* col, const double* val) {
    return setup_csr("mpmg_solver_setup_csr32", solver, rows, row_ptr, col, val);
}

int mpmg_solver_setup_rows(mpmg_solver* solver, int64_t first_row, int64_t rows, int64_t n,
                           const int64_t* row_ptr, const int64_t* col, const double* val) {
    return guarded("mpmg_solver_setup_rows", [&] {
        mpmg::CsrMatrix a;
        // What one process was given wrong, every process reports (the others would wait).
        mpmg::dist::agreed(
            [&] {
                check_handle(solver, "solver");
                if (rows < 0 || n < 1) {
                    throw mpmg::InvalidInput(
                        fmt::format("rows = {} of n = {}: rows must be >= 0 and n >= 1", rows, n));
                }
                a = copied_csr(rows, n, row_ptr, col, val);
            },
            processes(solver));
        solver->report = mpmg::to_json(solver->solver.setup(std::move(a), first_row)).dump();
        return MPMG_OK;
    });
}

int mpmg_solver_setup_stencil(mpmg_solver* solver, int nx, int ny, int nz, int r, int n_offsets,
                              const int* offsets, const double* values) {
    return guarded("mpmg_solver_setup_stencil", [&] {
        check_handle(solver, "solver");
        solver->report = mpmg::to_json(solver->solver.setup(stencil_matrix(nx, ny, nz, r, n_offsets,
                                                                           offsets, values)))
                             .dump();
        return MPMG_OK;
    });
}

int mpmg_solver_setup_stencil_box(mpmg_solver* solver, const int* first_cell, const int* grid,
                                  int nx, int ny, int nz, int r, int n_offsets, const int* offsets,
                                  const double* values) {
    return guarded("mpmg_solver_setup_stencil_box", [&] {
        mpmg::SgDiaMatrix<double> a;
        std::array<int, 3> first{};
        mpmg::Box whole;
        mpmg::dist::agreed(  // what one process was given wrong, every process reports
            [&] {
                check_handle(solver, "solver");
                check_pointer(first_cell, "first_cell");
                check_pointer(grid, "grid");
                a = stencil_matrix(nx, ny, nz, r, n_offsets, offsets, values, true);
                first = {first_cell[0], first_cell[1], first_cell[2]};
                whole = mpmg::Box{grid[0], grid[1], grid[2]};
            },
            processes(solver));
        solver->report = mpmg::to_json(solver->solver.setup(std::move(a), first, whole)).dump();
        return MPMG_OK;
    });
}

int mpmg_solver_solve(mpmg_solver* solver, const double* b, double* x, int* iterations,
                      double* relative_residual) {
    return guarded("mpmg_solver_solve", [&] {
        check_handle(solver, "solver");
        if (!solver->solver.ready()) {
            throw mpmg::InvalidInput("no matrix yet; call a mpmg_solver_setup_* first");
        }
        const auto n = static_cast<std::size_t>(solver->solver.rows());
        mpmg::dist::agreed(
            [&] {  // under mpirun, every process reports what one found
                if (n > 0) check_pointer(b, "b");
                if (n > 0) check_pointer(x, "x");
            },
            solver->comm);
        const mpmg::SolveResult r =
            solver->solver.solve(std::span<const double>(b, n), std::span<double>(x, n));
        solver->report = mpmg::to_json(r).dump();
        if (iterations != nullptr) *iterations = r.iterations;
        if (relative_residual != nullptr) *relative_residual = r.final_relative_residual;
        if (r.converged) return MPMG_OK;
        last_error = fmt::format("mpmg_solver_solve: {}", r.message);
        return MPMG_NOT_CONVERGED;
    });
}

int mpmg_solver_update_values(mpmg_solver* solver, int64_t nnz, const double* values) {
    return guarded("mpmg_solver_update_values", [&] {
        check_handle(solver, "solver");
        check_pointer(values, "values");
        if (nnz < 0) throw mpmg::InvalidInput(fmt::format("nnz = {} is negative", nnz));
        const mpmg::SetupResult r = solver->solver.update_values(
            std::span<const double>(values, static_cast<std::size_t>(nnz)));
        solver->report = mpmg::to_json(r).dump();
        return MPMG_OK;
    });
}

int mpmg_solver_apply(mpmg_solver* solver, const double* r, double* z) {
    return guarded("mpmg_solver_apply", [&] {
        check_handle(solver, "solver");
        if (!solver->solver.ready()) {
            throw mpmg::InvalidInput("no matrix yet; call a mpmg_solver_setup_* first");
        }
        const auto n = static_cast<std::size_t>(solver->solver.rows());
        mpmg::dist::agreed(
            [&] {
                if (n > 0) check_pointer(r, "r");
                if (n > 0) check_pointer(z, "z");
            },
            solver->comm);
        solver->solver.apply(std::span<const double>(r, n), std::span<double>(z, n));
        return MPMG_OK;
    });
}

const char* mpmg_solver_report(const mpmg_solver* solver) {
    return solver != nullptr ? solver->report.c_str() : "";
}

}  // extern "C"
