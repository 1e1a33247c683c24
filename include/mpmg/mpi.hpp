// mpmg::Communicator from an MPI_Comm, for C++ programs that include <mpi.h> themselves
// (mpmg/solver.hpp takes the communicator's Fortran handle so as to need no MPI headers).
#pragma once

#include <mpi.h>

#include "mpmg/communicator.hpp"

namespace mpmg {

/// The Solver's processes: those of `comm` (MPI_Comm_c2f, which needs MPI initialised).
inline Communicator communicator(MPI_Comm comm) {
    return Communicator::from_fortran(static_cast<int>(MPI_Comm_c2f(comm)));
}

}  // namespace mpmg
