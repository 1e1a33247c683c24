// MPI for the CLI and the library (issue #8). Everything here also exists in a build without
// MPI, where it describes one process.
#pragma once

#include <functional>

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
/// Rank and size in MPI_COMM_WORLD; 0 and 1 when MPI is not initialised or not built in.
int world_rank();
int world_size();
/// More than one process takes part (MPI initialised, world size > 1).
bool distributed();

/// `mine` on every process, combined with a logical and (collective when distributed(); `mine`
/// itself otherwise).
bool all_ranks(bool mine);

/// The largest of `mine` over the processes (collective when distributed()).
double max_all_ranks(double mine);

/// f() on every process; when it throws an mpmg::Error on some, every process throws the error
/// of the lowest such process, of its type and with its message (collective when
/// distributed(): checks of what one process was given, which must not leave the others
/// waiting in their next collective call). Otherwise f().
void agreed(const std::function<void()>& f);

}  // namespace mpmg::dist
