// Helpers of the MPI unit tests (src/**/*_mpitest.cpp).
#pragma once

#include <mpi.h>

#include <string>

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

/// The message of the exception of type E that f throws ("" when none): under mpirun, for
/// errors every process throws alike.
template <class E, class F>
std::string thrown(F&& f) {
    try {
        f();
    } catch (const E& e) {
        return e.what();
    }
    return "";
}

inline bool contains(const std::string& m, const std::string& part) {
    return m.find(part) != std::string::npos;
}

}  // namespace mpmg::dist::testing
