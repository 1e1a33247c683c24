// Matrix Market input and output (coordinate real/integer/pattern, general/symmetric/
// skew-symmetric; array for vectors; ".gz" files read through zlib). Errors name file and line.
#pragma once

#include <string>
#include <vector>

#include "mpmg/csr_matrix.hpp"

namespace mpmg {

/// Reads a sparse matrix. Symmetric storage is expanded; duplicate entries are summed (as the
/// format's coordinate convention); throws InvalidInput "<file>:<line>: <problem>" for any
/// malformed header, count, index, value (NaN/Inf) or premature end.
CsrMatrix read_matrix_market(const std::string& path);

/// Reads a dense vector: "array real general" n x 1, or coordinate n x 1.
std::vector<double> read_vector_market(const std::string& path);

/// Writes coordinate real general (17 significant digits), via a temporary file renamed into
/// place so that a failed write never leaves a partial file.
void write_matrix_market(const std::string& path, const CsrMatrix& a);

}  // namespace mpmg
