// Precision model of mpmg (DESIGN.md "Precision model", ICPP'24 §4):
//   K   iterative precision of the Krylov solver and of A (fp64 or fp32),
//   P_l compute (working-vector) precision of multigrid level l (fp64 or fp32),
//   D_l storage precision of level l's matrix and smoother data (fp64, fp32, fp16, bf16).
// Notations are parsed here, at the boundary, and printed back in the same notation.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mpmg {

enum class Precision : std::uint8_t { fp64, fp32, fp16, bf16 };

/// "fp64", "fp32", "fp16", "bf16".
std::string_view to_string(Precision p);
/// Ginkgo-style name: "DP", "SP", "HP", "BF".
std::string_view ginkgo_name(Precision p);
/// Bytes of one value stored in precision p.
int bytes_of(Precision p);

/// The precisions of one multigrid level.
struct LevelPrecision {
    Precision compute = Precision::fp64;  ///< P_l: working vectors and arithmetic
    Precision storage = Precision::fp64;  ///< D_l: matrix and smoother data
    friend bool operator==(const LevelPrecision&, const LevelPrecision&) = default;
};

/// The precision of the Krylov solver and of every multigrid level.
struct PrecisionPlan {
    /// True for "auto": the hierarchy decides storage per level from the values (levels holds
    /// the compute precision and the most aggressive storage auto may pick).
    bool automatic = false;
    Precision krylov = Precision::fp64;  ///< K
    /// Per level, finest first; the last entry repeats for all coarser levels. Never empty.
    std::vector<LevelPrecision> levels{LevelPrecision{}};
    /// Levels >= shift_level store their matrices in their compute precision (ICPP'24 §4.3,
    /// StructMG's shift_levid). -1: never.
    int shift_level = -1;

    /// The resolved precisions of level l (applies repetition and shift_level).
    LevelPrecision level(int l) const;
    /// The vectors' precision of level l when it is the coarsest and solved directly (FP64 LU):
    /// its compute precision, except that with `auto` a one-level hierarchy (l = 0: the LU is
    /// the whole preconditioner) keeps FP64, as FP32 vectors only cost the Krylov solver a
    /// second iteration.
    Precision direct_compute(int l) const;
    /// Printed back in the notation it can be written in: "auto", "K64P32D16", or
    /// "work=DP-SP matrix=DP-SP-HP"; a shift level is appended as " shift=L".
    std::string notation() const;
};

/// Parses "K64P32D16" (K in {64,32}, P in {64,32}, D in {64,32,16,bf16}) or "auto".
/// Throws InvalidInput naming `what` (e.g. "--precision") and the valid forms.
PrecisionPlan parse_precision(std::string_view text, std::string_view what = "--precision");

/// Parses the Ginkgo-style per-level lists, e.g. work "DP-SP", matrix "DP-SP-HP": entries
/// DP, SP, HP (fp16), BF (bf16); the last entry of each list repeats. Krylov precision is DP.
/// An empty `matrix` means "same as work". Throws InvalidInput naming the option.
PrecisionPlan parse_ginkgo_precision(std::string_view work, std::string_view matrix);

}  // namespace mpmg
