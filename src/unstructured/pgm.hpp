// Parallel graph match (PGM) aggregation (Naumov et al., AmgX; FGCS'23 §4.2: Ginkgo's
// deterministic PGM with aggregates of size 2) and the piecewise-constant transfers it defines.
//
// One pass on the graph of A:
//   1. weights w_ij = (|a_ij| + |a_ji|) / 2 / max(w_ii, w_jj)   (Ginkgo's normalised |A|+|A^T|);
//   2. up to kMatchRounds rounds: every unaggregated row picks its strongest unaggregated
//      neighbour (ties: a hash of the edge, the same
//      from both ends); mutual picks become a pair (aggregate id = smaller row);
//   3. rows left unmatched join the aggregate of their strongest aggregated neighbour (Ginkgo's
//      "assign to existing aggregate"), or stay alone when they have none.
// Isolated rows (no nonzero off the diagonal in their row or column, e.g. eliminated Dirichlet
// rows stored as a diagonal only) join no aggregate: their row of P is zero, so they are left
// out of the coarse level, where they would otherwise stay singleton aggregates on every level
// and stall the coarsening (the mfem beam matrices: thousands of such rows). They are decoupled
// from all other unknowns, so the smoother alone treats them (exactly for l1-Jacobi and GS).
// Everything reads the previous round's state only, so the result is deterministic and
// independent of the thread count. `passes` > 1 repeats the pass on the Galerkin matrix of the
// previous pass and composes the maps (double pairwise aggregation, aggregates of <= 4 pairs).
// With `block` r > 1 (a system with r unknowns per node, unstructured/nodes.hpp) every pass
// runs on the node matrix of r x r block norms, and component k of fine node i goes to
// component k of its node's aggregate: P = P_node (x) I_r.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "mpmg/csr_matrix.hpp"

namespace mpmg {

struct Aggregation {
    std::vector<std::int64_t> agg;  ///< coarse index of every fine row; -1: isolated, left out
    std::int64_t coarse_rows = 0;
    std::int64_t matched = 0;   ///< rows placed in a pair by the matching rounds (last pass)
    std::int64_t attached = 0;  ///< rows that joined an existing aggregate (last pass)
    std::int64_t singles = 0;   ///< rows left alone (last pass)
    std::int64_t isolated = 0;  ///< isolated rows left out (agg -1; all passes)
    int block = 1;              ///< unknowns per node; the four counts above count nodes when > 1
};

/// Aggregates the rows of square `a` with `passes` >= 1 PGM passes; `block` > 1 aggregates
/// nodes of `block` consecutive rows (it must divide a.rows). `exactly_symmetric`: whether `a`
/// is (abs_plus_transpose), when the caller has measured it; empty: the first pass measures it.
/// `coupled` (empty, or one flag per row): rows coupled to unknowns outside `a` (a distributed
/// level's diagonal block: rows coupled to other processes). Such a row is never isolated: with
/// no neighbour in `a` it stays a singleton aggregate, so that the coarse levels keep it.
Aggregation pgm_aggregate(const CsrMatrix& a, int passes = 1, int block = 1,
                          std::optional<bool> exactly_symmetric = std::nullopt,
                          std::span<const char> coupled = {});

/// One pass of pgm_aggregate (passes = 1, block = 1) on the int64 strength graph of matrices
/// with 2^31 rows or more, whatever the size: for tests of that path on small matrices.
Aggregation pgm_one_pass_int64(const CsrMatrix& a);

/// P (fine_rows x coarse_rows): p_{i, agg[i]} = 1 (no entry in the row of an isolated row).
CsrMatrix prolongation(const Aggregation& g);
/// R = scale * P^T (FGCS'23 §4.2.2 uses scale = 1/2 against growth of the coarse values).
CsrMatrix restriction(const Aggregation& g, double scale);
/// R A P with P = prolongation(g) and R = restriction(g, scale), bit for bit what
/// galerkin_product (unstructured/spgemm.hpp) gives from them, without forming R, P or A P:
/// c_IJ = sum over the rows i of aggregate I (ascending) of scale * (sum over row i's entries
/// a_ij with agg[j] = J, in A's order). The same pattern (explicit zeros of the sums kept) and
/// the same roundings; about half the work of the two products and none of A P's memory.
/// `a` is square with g.agg.size() rows.
CsrMatrix aggregate_galerkin(const CsrMatrix& a, const Aggregation& g, double scale);

}  // namespace mpmg
