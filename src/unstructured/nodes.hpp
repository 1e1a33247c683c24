// Vector PDEs on the AMG path: unknowns grouped in nodes.
//
// A system of PDEs discretised with r unknowns per mesh node (linear elasticity: the r = 2 or 3
// displacements; multi-component flow) and numbered node by node ("interleaved", MFEM's byVDIM,
// PETSc's block size r) couples the unknowns of one node more strongly than any of them to a
// neighbour's. Scalar aggregation then pairs the x and y displacement of one node, and its
// piecewise-constant P cannot hold the rigid translations (the near-null space) component by
// component. Nodal ("unknown-based") aggregation (Vaněk, Mandel, Brezina, Computing 56 (1996)
// §4; hypre's and AmgX's block size; PETSc GAMG's block size) aggregates the nodes on a graph
// of r x r block norms, and P = P_node (x) I_r keeps every component apart: coarse unknown
// (c, k) holds component k of aggregate c. The Galerkin product of such a P keeps the block
// structure, so every level is again a system with r unknowns per node.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mpmg/csr_matrix.hpp"

namespace mpmg {

/// Largest block size the automatic detection tries (hypre's systems AMG sees up to about 6
/// functions per node in practice: 3D elasticity with rotations is 6).
inline constexpr int kMaxDetectedBlock = 8;

/// The node matrix of `a` (rows and columns a multiple of `block`): entry (I, J) is the
/// Frobenius norm of block (I, J) of A scaled to a unit diagonal, |a_ij| / sqrt(|a_ii a_jj|)
/// (|a_ij| where a diagonal is zero), rows I*block .. I*block+block-1 and the same columns;
/// blocks without a stored entry are absent. The scaling keeps components in different units
/// (displacements and rotations, a gas and a liquid phase) equally heard.
CsrMatrix node_matrix(const CsrMatrix& a, int block);

/// The block size `a` is stored with, read from its pattern: the largest r in 2 ..
/// kMaxDetectedBlock that divides the rows and for which the r rows of every node couple to the
/// same set of nodes (column j belongs to node j / r) and at least one node couples to another;
/// 1 when no such r exists (a scalar problem, or unknowns not numbered node by node). A scalar
/// stencil's neighbouring rows reach different nodes (row 2I reaches node I - 1 where row
/// 2I + 1 reaches I + 1), so it is not mistaken for a system.
int detect_block_size(const CsrMatrix& a);

/// Of the couplings between different nodes of `block` rows, weighed by |a_ij| /
/// sqrt(|a_ii a_jj|), the share that couples different components (i % block != j % block).
double cross_component_share(const CsrMatrix& a, int block);

/// Below this cross_component_share the automatic choice keeps scalar aggregation.
inline constexpr double kMinCrossShare = 0.05;

struct BlockSizeChoice {
    int block = 1;    ///< unknowns per node the hierarchy aggregates by
    std::string why;  ///< how it was chosen, for the report
};

/// The block size the AMG path aggregates `a` by. `requested` > 0: that (InvalidInput naming
/// --block-size when it does not divide the rows). 0 (auto): the pattern's block size
/// (detect_block_size) when its nodes are a vector field whose components couple across nodes
/// (cross_component_share >= kMinCrossShare: elasticity 0.18-0.65 on the matrices measured),
/// else 1. Systems whose components couple only inside a node (each diffusing on its own:
/// rhd3t and oil4c's CSR forms, share 0) stay scalar: nodal aggregation took rhd3t from 20 to
/// 99 CG iterations with SymGS (oil4c 44 -> 34: --block-size 4 asks for it).
BlockSizeChoice choose_block_size(const CsrMatrix& a, int requested);

/// Expands a permutation of the nodes (new node I is old node perm[I]) to their `block`
/// unknowns each, keeping the order within a node.
std::vector<std::int64_t> expand_to_unknowns(const std::vector<std::int64_t>& node_perm, int block);

}  // namespace mpmg
