// Per-level storage decision (DESIGN.md Safety): whether a level is scaled, by which G, and
// whether it must fall back to a wider storage precision — with the reason, for the report.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/float16.hpp"
#include "mpmg/options.hpp"
#include "mpmg/precision.hpp"
#include "mpmg/sgdia_matrix.hpp"
#include "multigrid/scaling.hpp"

namespace mpmg {

struct StorageDecision {
    LevelPrecision precision;  ///< storage possibly widened to compute
    bool scaled = false;
    double g = 0.0, g_max = 0.0;
    std::vector<double> s;  ///< diag(Q^{1/2}) when scaled
    /// With `pretruncate`, a scaled FP16 level's storage matrix (truncate_scaled<half>), built by
    /// the pass that counts for the decision, and its counts; null otherwise.
    std::shared_ptr<const SgDiaMatrix<half>> truncated;
    TruncationCounts truncated_counts;
    std::string note;  ///< decision and reason, empty when nothing to say
};

/// Decides storage for one level. `requested` comes from the precision plan; `automatic`
/// is plan.automatic ("auto": fall back also when too many entries underflow). `may_scale` is
/// false for scaling none and for the coarse levels of scale-then-setup.
/// `fallback` false (ablation only): an overflowing level keeps the requested storage.
/// A scaled level's Â is never built: its counts and checks are computed from a and s, and the
/// level scales inside its truncation (truncate_scaled).
/// `pretruncate` (FP16): the counts come from that truncation itself,
/// kept in `truncated` for the level (one pass over a instead of a counting pass and then the
/// truncation); a widened decision drops it.
/// `dist` (distributed levels, collective): `a` is this process's rows grown by ghost cells
/// (LevelReductions), every measure is combined over the processes, so all take the decision
/// the whole level would get; `s` covers a's rows, ghost cells included. Not with
/// `pretruncate`.
/// `a_in_fp16`: the HalfFacts of a's values exactly in FP16 (the Krylov operator's copy), when
/// there is one: the FP16 range check is theirs (found while the copy was made), no pass over a.
StorageDecision decide_storage(const SgDiaMatrix<double>& a, LevelPrecision requested,
                               bool may_scale, bool automatic, bool fallback = true,
                               bool pretruncate = false, const LevelReductions* dist = nullptr,
                               const HalfFacts* a_in_fp16 = nullptr);

}  // namespace mpmg
