// MPI for the CLI and the library (issue #8). Everything here also exists in a build without
// MPI, where it describes one process.
#pragma once

#include <functional>
#include <span>

#include "mpmg/communicator.hpp"

#ifdef MPMG_HAVE_MPI
#include <mpi.h>
#endif

namespace mpmg::dist {

/// Initialises MPI (MPI_THREAD_FUNNELED: only the main thread calls MPI, OpenMP inside each
/// process) when the process was started by an MPI launcher (mpirun sets OMPI_COMM_WORLD_SIZE,
/// PMI_SIZE or PMIX_RANK), unless something initialised it already; finalises what it
/// initialised. A plain `mpmg` run never touches MPI.
class Session {
public:
    Session(int* argc, char*** argv);
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

private:
    bool owns_ = false;
};

/// True when the environment says an MPI launcher started this process with more than one rank.
bool launched_in_parallel();
/// Rank and size in `c` (MPI_COMM_WORLD by default); 0 and 1 when MPI is not initialised or
/// not built in.
int rank(const Communicator& c = {});
int size(const Communicator& c = {});
inline int world_rank() { return rank(); }
inline int world_size() { return size(); }
/// InvalidInput naming `who` when MPI is running and `c` is not a communicator (MPI_COMM_NULL,
/// or a Fortran handle MPI does not know).
void check_communicator(const Communicator& c, const char* who);
/// More than one process of `c` takes part (MPI initialised, its size > 1).
bool distributed(const Communicator& c = {});

/// `mine` on every process of `c`, combined with a logical and (collective when
/// distributed(c); `mine` itself otherwise).
bool all_ranks(bool mine, const Communicator& c = {});

/// The largest of `mine` over the processes of `c` (collective when distributed(c)).
double max_all_ranks(double mine, const Communicator& c = {});
/// Each value of `v` summed over the processes of `c`, in place (collective when
/// distributed(c)).
void sum_all_ranks(std::span<double> v, const Communicator& c = {});

/// f() on every process of `c`; when it throws an mpmg::Error on some, every process throws the
/// error of the lowest such process, of its type and with its message (collective when
/// distributed(c): checks of what one process was given, which must not leave the others
/// waiting in their next collective call). Otherwise f().
void agreed(const std::function<void()>& f, const Communicator& c = {});

#ifdef MPMG_HAVE_MPI
/// `c` as an MPI_Comm (MPI initialised): MPI_COMM_WORLD, MPI_COMM_SELF or MPI_Comm_f2c of the
/// handle.
MPI_Comm mpi_comm(const Communicator& c);
#endif

}  // namespace mpmg::dist
