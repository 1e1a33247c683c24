// Per-level storage decision of the AMG path (FGCS'23 §4.2.2 protections, DESIGN.md Safety):
//   1. a level whose values do not fit the FP16/BF16 normal range is equilibrated
//      (Algorithm 2) unless scaling is "none";
//   2. the (equilibrated) values must truncate without overflow;
//   3. the smoother's inverted diagonal must fit the storage range too (FGCS'23: "for some
//      diagonal values that are within the range of half precision, the inverted values are
//      not") - checked in FP64 before truncating;
//   4. "auto" also widens when more than kAutoUnderflowFraction of the entries underflow.
// A level failing 2-4 is stored in its compute precision, unscaled, and the note says why.
#pragma once

#include <string>
#include <vector>

#include "mpmg/csr_matrix.hpp"
#include "mpmg/options.hpp"
#include "mpmg/precision.hpp"
#include "unstructured/smoother_setup.hpp"

namespace mpmg {

struct AmgStorageDecision {
    LevelPrecision precision;  ///< storage possibly widened to compute
    bool scaled = false;       ///< equilibrated
    std::vector<double> row_scale, col_scale;
    CsrMatrix equilibrated;            ///< the equilibrated operator, when `scaled`
    const CsrMatrix* given = nullptr;  ///< the matrix decided on (not owned)
    SmootherData smoother;             ///< computed from matrix()
    std::string note;                  ///< decision and reason, empty when nothing to say

    /// The operator to truncate: `equilibrated` when scaled, else the matrix given.
    const CsrMatrix& matrix() const { return scaled ? equilibrated : *given; }
};

/// Decides storage for AMG level `index`. `automatic` is plan.automatic. `row_ids` (may be
/// null): the user's number of each row, for messages (smoother_setup). The decision refers to
/// `a` (no copy of the level, where it is kept unscaled): `a` must outlive it.
AmgStorageDecision decide_amg_storage(const CsrMatrix& a, LevelPrecision requested,
                                      const MultigridOptions& mg, bool automatic, int index,
                                      const std::int64_t* row_ids = nullptr);

}  // namespace mpmg
