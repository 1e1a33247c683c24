// Helpers of the MPI unit tests (src/**/*_mpitest.cpp).
#pragma once

#include <mpi.h>

namespace mpmg::dist::testing {

/// This process's rank and the number of processes in MPI_COMM_WORLD.
inline int rank() {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}
inline int size() {
    int s = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &s);
    return s;
}

}  // namespace mpmg::dist::testing
