// The main of mpmg_mpi_tests: the library's MPI unit tests (src/**/*_mpitest.cpp), which ctest
// runs under `mpirun -np 2`, `-np 3` and `-np 4`. Every process runs every test; a failure on
// any process makes mpirun exit non-zero. Only rank 0 prints gtest's report.
#include <gtest/gtest.h>
#include <mpi.h>

int main(int argc, char** argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    ::testing::InitGoogleTest(&argc, argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) {
        auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
        delete listeners.Release(listeners.default_result_printer());
    }
    const int failed = RUN_ALL_TESTS();
    // Every process learns whether any failed, so all exit alike.
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return any;
}
