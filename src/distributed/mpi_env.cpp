#include "distributed/mpi_env.hpp"

#include <cstdlib>

#ifdef MPMG_HAVE_MPI
#include <mpi.h>

#include "distributed/agree.hpp"
#endif

namespace mpmg::dist {
namespace {

int env_int(const char* name) {
    const char* v = std::getenv(name);
    return v == nullptr ? -1 : std::atoi(v);
}

[[maybe_unused]] bool launched() {
    return env_int("OMPI_COMM_WORLD_SIZE") >= 1 || env_int("PMI_SIZE") >= 1 ||
           std::getenv("PMIX_RANK") != nullptr;
}

}  // namespace

bool launched_in_parallel() {
    return env_int("OMPI_COMM_WORLD_SIZE") > 1 || env_int("PMI_SIZE") > 1;
}

#ifdef MPMG_HAVE_MPI

Session::Session(int* argc, char*** argv) {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (initialised != 0 || !launched()) return;
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    owns_ = true;
}

Session::~Session() {
    if (!owns_) return;
    int finalised = 0;
    MPI_Finalized(&finalised);
    if (finalised == 0) MPI_Finalize();
}

int world_rank() {
    int initialised = 0, finalised = 0;
    MPI_Initialized(&initialised);
    MPI_Finalized(&finalised);
    if (initialised == 0 || finalised != 0) return 0;
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

int world_size() {
    int initialised = 0, finalised = 0;
    MPI_Initialized(&initialised);
    MPI_Finalized(&finalised);
    if (initialised == 0 || finalised != 0) return 1;
    int s = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &s);
    return s;
}

#else

Session::Session(int* /*argc*/, char*** /*argv*/) {}
Session::~Session() = default;
int world_rank() { return 0; }
int world_size() { return 1; }

#endif

bool distributed() { return world_size() > 1; }

bool all_ranks(bool mine) {
#ifdef MPMG_HAVE_MPI
    if (distributed()) {
        int flag = mine ? 1 : 0;
        MPI_Allreduce(MPI_IN_PLACE, &flag, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        return flag != 0;
    }
#endif
    return mine;
}

double max_all_ranks(double mine) {
#ifdef MPMG_HAVE_MPI
    if (distributed()) MPI_Allreduce(MPI_IN_PLACE, &mine, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
#endif
    return mine;
}

void agreed(const std::function<void()>& f) {
#ifdef MPMG_HAVE_MPI
    if (distributed()) {
        run_agreed(
            [&] {
                f();
                return 0;
            },
            MPI_COMM_WORLD);
        return;
    }
#endif
    f();
}

}  // namespace mpmg::dist
