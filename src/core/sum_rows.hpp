// CSR rows whose entries were placed in some order (each row's in its row_ptr range): sorted by
// column and repeated columns summed, in that order. What builds a matrix from triplets (the
// Matrix Market reader, the distributed rows sent to their owners) ends with.
#pragma once

#include "mpmg/csr_matrix.hpp"

namespace mpmg {

/// Sorts each row of `a` by column, stably (entries of the same column keep their order, so
/// they are summed in it: the bits do not depend on the rows' other entries), sums them into
/// one entry, and closes the gaps this leaves. Rows run in parallel (OpenMP).
void sort_and_sum_rows(CsrMatrix& a);

}  // namespace mpmg
