// One AMG level on a CSR operator, behind the same Level interface as the structured path
// (level.hpp), type-erased over its (storage S, compute C) pair. make_amg_level() is the one
// place that maps a runtime LevelPrecision onto AmgLevelImpl<S, C>.
//
// An equilibrated level (FGCS'23 Algorithm 2) stores Â = D_r^{-1} A D_c^{-1} and keeps f̂ = f / r
// and û = c ⊙ u; the conversions happen at the level's interfaces (restriction, correction,
// the preconditioner's input and output), exactly as the structured path's scaled levels.
// Residual-underflow guard (FGCS'23 §4.2.2, "the residual is too small in coarse levels"):
// an FP32 level scales its restricted right-hand side by a power of two sigma so that its
// largest entry is in [1, 2), and divides the solution by sigma before a finer level
// interpolates it (the cycle is linear in f, so this changes nothing but the range used).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "mpmg/csr_matrix.hpp"
#include "multigrid/amg_transfer.hpp"
#include "multigrid/level.hpp"
#include "unstructured/smoother_setup.hpp"

namespace mpmg {

struct AmgLevelSetup {
    const CsrMatrix* matrix = nullptr;  ///< FP64 operator, already equilibrated when scaled
    std::vector<double> row_scale;      ///< r of Algorithm 2; empty: not equilibrated
    std::vector<double> col_scale;      ///< c of Algorithm 2
    LevelPrecision precision;           ///< as finally decided
    const AmgTransfer* to_coarse = nullptr;
    SmootherData smoother;  ///< computed from *matrix in FP64
    bool direct = false;    ///< coarsest level solved by dense LU (FP64)
    /// Storage sizes (bytes per value) whose matrix uses the compact column encoding (per-row
    /// base + uint16 offsets, where every row fits; unstructured/csr_typed.hpp): 0 never.
    std::size_t compact_index_max_bytes = 0;
    /// A distributed level (issue #8): `matrix` is the process's diagonal block and this is
    /// the coupling to other processes' rows, in the level's (equilibrated) variables. The
    /// smoothers are hybrid: each sweep reads the neighbours' values from before it; residuals
    /// are exact. Null for a serial level.
    std::shared_ptr<LevelBoundary> boundary;
    /// The level takes the K-cycle's Krylov steps (Level::k_correction): four more vectors.
    /// Serial levels only: the distributed AMG takes them itself (dist_amg.cpp).
    bool k_cycle = false;
};

/// Builds the level (throws Unsupported naming `index` for an unsupported pair); truncates the
/// matrix and smoother data into the storage precision, adding the counts to `report.counts`.
std::unique_ptr<Level> make_amg_level(int index, const AmgLevelSetup& setup, LevelReport& report);

}  // namespace mpmg
