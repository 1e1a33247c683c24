// Iteration table of AMG-preconditioned CG over the shared SPD matrices and the FGCS'23
// precision configurations. Disabled by default (seconds to minutes); run with
//   mpmg_tests --gtest_also_run_disabled_tests --gtest_filter='AmgTable.*'
// Environment: AMG_TABLE_SMOOTHER (jacobi|l1-jacobi|symgs|chebyshev), AMG_TABLE_PASSES (1|2).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

#include "io/matrix_market.hpp"
#include "multigrid/amg_test_util.hpp"
#include "unstructured/csr_test_util.hpp"

namespace mpmg {
namespace {

TEST(AmgTable, DISABLED_Iterations) {
    const char* names[] = {"poisson2d",
                           "poisson3d",
                           "gr_30_30",
                           "nos4",
                           "1138_bus",
                           "pyamg_airfoil",
                           "nos6",
                           "hypre_beam_hex_dof459",
                           "bcsstk13",
                           "mfem/mfem_beam_o3_r1",
                           "mfem/mfem_lshape_o3_r5"};
    const char* configs[][3] = {{"(DP)", "DP", ""},
                                {"(DP-SP)", "DP-SP", ""},
                                {"(DP-SP,DP-SP-HP)", "DP-SP", "DP-SP-HP"},
                                {"(DP-SP,HP)", "DP-SP", "HP"},
                                {"(DP,HP)", "DP", "HP"}};
    MultigridOptions mg;
    mg.smoother = SmootherKind::jacobi;
    if (const char* s = std::getenv("AMG_TABLE_SMOOTHER")) mg.smoother = parse_smoother(s, "env");
    mg.jacobi_weight = 0.9;
    mg.max_coarse_rows = 64;
    AmgSettings settings;
    if (const char* p = std::getenv("AMG_TABLE_PASSES")) settings.pgm_passes = std::atoi(p);
    fmt::print("smoother {}, PGM passes {}, rtol 1e-10, max 700\n", to_string(mg.smoother),
               settings.pgm_passes);
    fmt::print("{:24}", "matrix");
    for (const auto& c : configs) fmt::print(" {:>17}", c[0]);
    fmt::print("\n");
    for (const char* name : names) {
        const std::string n = name;
        const CsrMatrix a = n == "poisson2d"   ? csr_test::poisson(128, 2)
                            : n == "poisson3d" ? csr_test::poisson(24, 3)
                                               : read_matrix_market(csr_test::shared_matrix(n));
        fmt::print("{:24}", name);
        std::string notes;
        for (const auto& c : configs) {
            try {
                const auto t0 = std::chrono::steady_clock::now();
                const auto run = amg_test::solve(a, parse_ginkgo_precision(c[1], c[2]), mg, false,
                                                 1e-10, 700, settings);
                const double s =
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                const char* mark = run.result.status == SolveStatus::converged ? "" : "*";
                fmt::print(" {:>8}{:1}{:3} {:4.1f}s", run.result.iterations, mark,
                           run.finite ? "" : "NaN", s);
                if (&c == &configs[3]) notes = run.notes;
                if (run.result.status != SolveStatus::converged) notes = run.result.message;
            } catch (const std::exception& e) {
                fmt::print(" {:>17}", "error");
                notes = e.what();
            }
        }
        if (std::getenv("AMG_TABLE_NOTES") != nullptr) fmt::print("\n    {}", notes.substr(0, 300));
        fmt::print("\n");
        std::fflush(stdout);
    }
}

TEST(AmgTable, DISABLED_GmresNonsymmetric) {
    const char* configs[][3] = {
        {"(DP)", "DP", ""}, {"(DP-SP)", "DP-SP", ""}, {"(DP-SP,HP)", "DP-SP", "HP"}};
    MultigridOptions mg;
    mg.smoother = SmootherKind::jacobi;
    mg.jacobi_weight = 0.9;
    mg.max_coarse_rows = 64;
    fmt::print("GMRES(30), jacobi, rtol 1e-10, max 700\n");
    for (const char* name : {"pde900", "pde2961", "BentPipe2D100", "sherman5", "cryg2500"}) {
        const CsrMatrix a = read_matrix_market(csr_test::shared_matrix(name));
        fmt::print("{:24}", name);
        for (const auto& c : configs) {
            try {
                const auto run =
                    amg_test::solve(a, parse_ginkgo_precision(c[1], c[2]), mg, true, 1e-10, 700);
                const char* mark = run.result.status == SolveStatus::converged ? "" : "*";
                fmt::print(" {:>10} {:>5}{:1}{:3}", c[0], run.result.iterations, mark,
                           run.finite ? "" : "NaN");
            } catch (const std::exception& e) {
                fmt::print(" {:>10} error({})", c[0], e.what());
            }
        }
        fmt::print("\n");
        std::fflush(stdout);
    }
}

}  // namespace
}  // namespace mpmg
