// Helpers of the MPI unit tests (src/**/*_mpitest.cpp).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "distributed/dist_csr.hpp"
#include "unstructured/pgm.hpp"

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

/// The whole aggregation of a decoupled one: every process's aggregates `g` of its rows
/// (partition p), offset by the coarse rows before it (partition cp), on every process.
inline Aggregation whole_aggregation(const Aggregation& g, const RowPartition& p,
                                     const RowPartition& cp) {
    std::vector<std::int64_t> local(g.agg.size());
    for (std::size_t i = 0; i < local.size(); ++i) {
        local[i] = g.agg[i] < 0 ? -1 : g.agg[i] + cp.first(rank());
    }
    std::vector<int> n(static_cast<std::size_t>(size())), first(n.size());
    for (int q = 0; q < size(); ++q) {
        n[static_cast<std::size_t>(q)] = static_cast<int>(p.rows(q));
        first[static_cast<std::size_t>(q)] = static_cast<int>(p.first(q));
    }
    Aggregation all;
    all.agg.resize(static_cast<std::size_t>(p.global_rows()));
    all.coarse_rows = cp.global_rows();
    MPI_Allgatherv(local.data(), static_cast<int>(local.size()), MPI_INT64_T, all.agg.data(),
                   n.data(), first.data(), MPI_INT64_T, MPI_COMM_WORLD);
    return all;
}

inline bool contains(const std::string& m, const std::string& part) {
    return m.find(part) != std::string::npos;
}

}  // namespace mpmg::dist::testing
