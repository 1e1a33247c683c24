// A hierarchy applied again starts every level from û = 0 whatever the last application left in
// its vectors: the second application of a hierarchy gives the bits of a fresh hierarchy's
// first, for every smoother, the coarsest level solved or smoothed, scaled and unscaled levels,
// scalar and block grids, one thread and two. (The levels leave clearing û to its first reader,
// and a Gauss-Seidel sweep from zero writes û without reading it: a reader that forgot would
// see the last application's values here.)
#include <gtest/gtest.h>

#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "io/problems.hpp"
#include "multigrid/hierarchy.hpp"

namespace mpmg {
namespace {

std::vector<double> wavy(std::int64_t n, double phase) {
    std::vector<double> v(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        v[static_cast<std::size_t>(i)] = std::sin(0.37 * static_cast<double>(i) + phase) + 0.25;
    }
    return v;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

struct Case {
    const char* problem;
    int n;
    const char* precision;
    SmootherKind smoother;
    CoarseSolverKind coarse;
};

std::string describe(const Case& c) {
    return std::string(c.problem) + " n=" + std::to_string(c.n) + " " + c.precision + " " +
           std::string(to_string(c.smoother)) +
           (c.coarse == CoarseSolverKind::smoother ? " coarsest smoothed" : "");
}

TEST(HierarchyReuse, SecondApplicationGivesTheBitsOfAFreshFirst) {
    const SmootherKind gs = SmootherKind::symgs, jac = SmootherKind::jacobi,
                       ilu = SmootherKind::ilu0;
    const CoarseSolverKind lu = CoarseSolverKind::automatic, sm = CoarseSolverKind::smoother;
    const Case cases[] = {
        {"laplace27", 12, "K64P64D64", gs, lu},    {"laplace27", 12, "K64P32D16", gs, lu},
        {"laplace27e8", 12, "K64P32D16", gs, lu},  {"laplace27e8", 12, "K64P32D16", gs, sm},
        {"laplace27e8", 12, "K64P32D16", jac, lu}, {"laplace27e8", 12, "K64P32D16", ilu, lu},
        {"rhd", 14, "K64P32D16", gs, lu},          {"weather", 14, "K64P32D16", gs, lu},
        {"oil4c", 10, "K64P64D64", gs, lu},        {"oil4c", 10, "K64P32D16", gs, lu},
        {"oil4c", 10, "K64P32D16", jac, sm},       {"oil4c", 10, "K64P32D16", ilu, lu},
        {"rhd3t", 10, "K64P32D16", gs, lu},        {"solid3d", 10, "K64P32D16", gs, sm},
    };
    const int threads_before = omp_get_max_threads();
    for (const Case& c : cases) {
        ProblemOptions po;
        po.name = c.problem;
        po.n = c.n;
        const StructuredProblem p = make_problem(po);
        MultigridOptions mg;
        mg.smoother = c.smoother;
        mg.coarse_solver = c.coarse;
        mg.coarse_sweeps = 3;
        const PrecisionPlan plan = parse_precision(c.precision);
        const std::int64_t n = p.a.rows();
        const std::vector<double> r1 = wavy(n, 0.0), r2 = wavy(n, 1.3);
        for (const int threads : {1, 2}) {
            SCOPED_TRACE(describe(c) + ", " + std::to_string(threads) + " thread(s)");
            omp_set_num_threads(threads);
            Hierarchy used(p.a, mg, plan), fresh(p.a, mg, plan);
            std::vector<double> z1(r1.size()), again(r1.size()), first(r1.size());
            used.apply(r1.data(), z1.data());
            used.apply(r2.data(), again.data());
            fresh.apply(r2.data(), first.data());
            EXPECT_TRUE(same_bits(again, first));
            EXPECT_FALSE(same_bits(z1, first));  // the first application left other values
        }
    }
    omp_set_num_threads(threads_before);
}

}  // namespace
}  // namespace mpmg
