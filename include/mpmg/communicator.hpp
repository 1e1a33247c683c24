// The MPI processes of a Solver, without MPI's headers (mpmg/mpi.hpp converts an MPI_Comm).
#pragma once

#include <cstdint>

namespace mpmg {

/// The MPI processes that set up a Solver and solve with it together, as hypre's and PETSc's
/// objects take an MPI_Comm. Given by the communicator's Fortran handle, so that this header
/// needs no <mpi.h>: MPI_Comm_c2f(comm) in C and C++ (mpmg/mpi.hpp's mpmg::communicator(comm)
/// does it), the integer communicator of a Fortran program (comm%MPI_VAL with mpi_f08). The
/// default is MPI_COMM_WORLD. A communicator of one process (Communicator::self(), or any
/// without MPI initialised, or every one in a build of mpmg without MPI) makes a serial Solver,
/// also under mpirun: each process then solves its own system. The Solver sends its messages
/// on the communicator itself (no duplicate), so each call of it must find no wildcard receive
/// of the caller's pending there.
class Communicator {
public:
    Communicator() = default;  ///< MPI_COMM_WORLD
    static Communicator world() { return {}; }
    static Communicator self() { return Communicator(Kind::self, 0); }
    static Communicator from_fortran(int handle) { return Communicator(Kind::fortran, handle); }

    enum class Kind : std::uint8_t { world, self, fortran };
    Kind kind() const { return kind_; }
    int fortran_handle() const { return handle_; }

private:
    Communicator(Kind k, int handle) : kind_(k), handle_(handle) {}
    Kind kind_ = Kind::world;
    int handle_ = 0;
};

}  // namespace mpmg
