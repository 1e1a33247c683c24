// Reverse Cuthill-McKee ordering (Cuthill & McKee 1969; George & Liu, "Computer Solution of Large
// Sparse Positive Definite Systems", 1981, §4.3) of a square CSR matrix, on the symmetrised
// pattern of A + A^T: breadth-first search from a pseudo-peripheral row, neighbours in order of
// increasing degree, each connected component in turn, the whole order reversed. It shrinks the
// bandwidth, so that the rows of the AMG path's FP16/BF16 levels span fewer than 65536 columns
// and store their columns as 16-bit offsets (csr_typed.hpp), and x is read with locality.
#pragma once

#include <cstdint>
#include <vector>

#include "mpmg/csr_matrix.hpp"

namespace mpmg {

/// perm[new] = old. Deterministic (ties broken by row index). Reads only a's pattern (its
/// values may be absent). `symmetric`: the caller knows that A's pattern is symmetric, so the
/// search runs on it as it is and the symmetrised copy (most of the time on a large matrix)
/// is not made; the order is the same. Should the pattern not be quite symmetric (a mirror of
/// an exact zero dropped), the result is still a permutation, of slightly different quality.
std::vector<std::int64_t> rcm_order(const CsrMatrix& a, bool symmetric = false);

/// B = Q A Q^T with Q the permutation perm (b_{new i, new j} = a_{perm[i], perm[j]}), columns
/// sorted in each row.
CsrMatrix permute(const CsrMatrix& a, const std::vector<std::int64_t>& perm);

/// Rows first .. end-1 of permute(a, perm) (columns renumbered over the whole matrix), without
/// renumbering the rest: a process's rows of the renumbered matrix.
CsrMatrix permute_rows(const CsrMatrix& a, const std::vector<std::int64_t>& perm,
                       std::int64_t first, std::int64_t end);

/// Largest column span (last - first column + 1) of any row: what decides the 16-bit encoding.
std::int64_t max_row_span(const CsrMatrix& a);

}  // namespace mpmg
