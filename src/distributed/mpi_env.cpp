#include "distributed/mpi_env.hpp"

#include <cstdlib>

#ifdef MPMG_HAVE_MPI
#include <fmt/format.h>
#include <mpi.h>

#include <type_traits>

#include "distributed/agree.hpp"
#include "mpmg/errors.hpp"
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

namespace {
bool mpi_running() {
    int initialised = 0, finalised = 0;
    MPI_Initialized(&initialised);
    MPI_Finalized(&finalised);
    return initialised != 0 && finalised == 0;
}
}  // namespace

MPI_Comm mpi_comm(const Communicator& c) {
    switch (c.kind()) {
        case Communicator::Kind::world:
            return MPI_COMM_WORLD;
        case Communicator::Kind::self:
            return MPI_COMM_SELF;
        case Communicator::Kind::fortran:
            break;
    }
    return MPI_Comm_f2c(c.fortran_handle());
}

void check_communicator(const Communicator& c, const char* who) {
    if (!mpi_running()) return;
    const MPI_Comm m = mpi_comm(c);
    bool known = m != MPI_COMM_NULL;
    // Open MPI's MPI_Comm_f2c gives a null pointer for a handle it does not know.
    if constexpr (std::is_pointer_v<MPI_Comm>) known = known && m != nullptr;
    if (known) return;
    throw InvalidInput(fmt::format(
        "{}: the communicator (Fortran handle {}) is MPI_COMM_NULL or not a communicator", who,
        c.fortran_handle()));
}

int rank(const Communicator& c) {
    if (!mpi_running()) return 0;
    int r = 0;
    MPI_Comm_rank(mpi_comm(c), &r);
    return r;
}

int size(const Communicator& c) {
    if (!mpi_running()) return 1;
    int s = 1;
    MPI_Comm_size(mpi_comm(c), &s);
    return s;
}

#else

Session::Session(int* /*argc*/, char*** /*argv*/) {}
Session::~Session() = default;
void check_communicator(const Communicator&, const char*) {}
int rank(const Communicator&) { return 0; }
int size(const Communicator&) { return 1; }

#endif

bool distributed(const Communicator& c) { return size(c) > 1; }

bool all_ranks(bool mine, [[maybe_unused]] const Communicator& c) {
#ifdef MPMG_HAVE_MPI
    if (distributed(c)) {
        int flag = mine ? 1 : 0;
        MPI_Allreduce(MPI_IN_PLACE, &flag, 1, MPI_INT, MPI_LAND, mpi_comm(c));
        return flag != 0;
    }
#endif
    return mine;
}

double max_all_ranks(double mine, [[maybe_unused]] const Communicator& c) {
#ifdef MPMG_HAVE_MPI
    if (distributed(c)) MPI_Allreduce(MPI_IN_PLACE, &mine, 1, MPI_DOUBLE, MPI_MAX, mpi_comm(c));
#endif
    return mine;
}

void sum_all_ranks([[maybe_unused]] std::span<double> v, [[maybe_unused]] const Communicator& c) {
#ifdef MPMG_HAVE_MPI
    if (distributed(c)) {
        MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_SUM,
                      mpi_comm(c));
    }
#endif
}

void agreed(const std::function<void()>& f, [[maybe_unused]] const Communicator& c) {
#ifdef MPMG_HAVE_MPI
    if (distributed(c)) {
        run_agreed(
            [&] {
                f();
                return 0;
            },
            mpi_comm(c));
        return;
    }
#endif
    f();
}

}  // namespace mpmg::dist
