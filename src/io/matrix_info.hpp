// What a matrix holds, as far as FP16 storage is concerned: shape, symmetry, value range,
// diagonal, and whether the values fit FP16 as they are, after symmetric diagonal scaling,
// or not at all (then the levels need FP32 storage).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "mpmg/csr_matrix.hpp"

namespace mpmg {

/// Whether the values can be stored in FP16.
///  - inside:   every nonzero lies in [FP16 min normal 2^-14, FP16 max 65504] in magnitude.
///  - scalable: not inside, but the matrix is square with every diagonal entry > 0, and the
///              symmetric diagonal scaling a_ij / sqrt(a_ii a_jj), times G, fits FP16 for some
///              G >= kMinUsefulG (i.e. g_max >= kMinUsefulG; see MatrixInfo::g_max).
///  - outside:  anything else (non-square, a diagonal entry <= 0 or missing, or g_max too small):
///              (a diagonal negative on every row counts as -A's, which `mpmg solve` solves)
///              FP16 storage would overflow or lose the diagonal, so store in FP32.
enum class Fp16Verdict { inside, scalable, outside };

/// Smallest useful scaling factor G: below it the scaled diagonal (= G) is within ~2^4 of the
/// FP16 normal minimum and the scaled operator loses most of its precision. A project choice,
/// not from a paper.
inline constexpr double kMinUsefulG = 1e-3;

struct MatrixInfo {
    std::int64_t rows = 0;
    std::int64_t cols = 0;
    std::int64_t nnz = 0;             ///< stored entries, explicit zeros included
    std::int64_t explicit_zeros = 0;  ///< stored entries whose value is 0
    bool square = false;
    bool structurally_symmetric =
        false;  ///< pattern (explicit zeros included) equals its transpose
    /// |a_ij - a_ji| <= 1e-12 * max|a| for all i, j (a missing entry counts as 0).
    bool numerically_symmetric = false;

    double min_abs_nonzero = 0.0;  ///< over nonzero values; 0 if there are none
    double max_abs = 0.0;

    /// Over the min(rows, cols) diagonal positions, signed, a missing entry counting as 0.
    double min_diag = 0.0;
    double max_diag = 0.0;
    std::int64_t nonpositive_diag = 0;  ///< diagonal entries <= 0, missing ones included
    std::int64_t zero_or_missing_diag = 0;
    /// Every diagonal entry is stored and negative (a square matrix): `mpmg solve` solves
    /// -A x = -b, so the scaling fields and the verdict are those of -A.
    bool diagonal_negative = false;

    std::int64_t above_fp16_max = 0;            ///< |a| > 65504
    std::int64_t below_fp16_min_normal = 0;     ///< 0 < |a| < 2^-14 (subnormal or zero in FP16)
    std::int64_t below_fp16_min_subnormal = 0;  ///< 0 < |a| < 2^-24 (zero in FP16)

    Fp16Verdict verdict = Fp16Verdict::outside;
    std::string verdict_reason;  ///< one sentence saying why

    /// Only for a square matrix with a positive diagonal (else 0): the largest G for which G * a_ij
    /// / sqrt(a_ii a_jj) fits FP16, g_max = 65504 * min_ij sqrt(a_ii a_jj) / |a_ij|. For an SPD
    /// matrix |a_ij| < sqrt(a_ii a_jj) off the diagonal, so g_max >= 65504.
    double g_max = 0.0;
    /// The G reported: min(g_max / 2, 1) (half of g_max leaves room for the rounding and the
    /// growth of coarse levels; 1 keeps the scaled diagonal at 1 when it can).
    double g = 0.0;
    /// Nonzero scaled entries G |a_ij| / sqrt(a_ii a_jj) below the FP16 normal minimum
    /// (they lose precision or flush to zero); 0 when g_max is 0.
    std::int64_t scaled_below_fp16_min_normal = 0;
};

MatrixInfo analyse_matrix(const CsrMatrix& a);

/// "inside", "scalable" or "outside".
const char* to_string(Fp16Verdict v);

/// Every field under its own name (snake_case).
nlohmann::json to_json(const MatrixInfo& info);

/// A short human-readable report, several lines, headed by name.
std::string format_info(const MatrixInfo& info, const std::string& name);

}  // namespace mpmg
