// CSR in a storage precision S (FGCS'23 §3: the level's matrix precision), with int64 row
// pointers and int32 column indices, or, where they fit, per-row base + uint16 offsets, or int64
// columns when the matrix has 2^31 columns or more (kernels/csr_simd.hpp), and its parallel
// kernels in a compute precision C (the level's working precision). The row loops run in the
// SIMD kernels of kernels/csr_simd.hpp (FP16/BF16 values converted in registers, never expanded
// into a full-size copy); this file splits the rows over the OpenMP threads.
//
// Supported (S, C) pairs, as in the structured path (S never wider than C):
//   C = double: S in {double, float, half, bfloat16};  C = float: S in {float, half, bfloat16}.
// The kernels neither allocate nor throw; they are explicitly instantiated for exactly these
// pairs in csr_typed.cpp.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/float16.hpp"
#include "kernels/csr_simd.hpp"
#include "mpmg/csr_matrix.hpp"

namespace mpmg {

/// Column index encoding of a TypedCsr.
enum class IndexEncoding {
    int32,    ///< one int32 per entry
    compact,  ///< uint16 offsets from a per-row int32 base when every row spans < 65536 columns
              ///< (else int32): 2 bytes per entry instead of 4
    int64     ///< one int64 per entry: what to_typed takes, whatever was asked, for matrices
              ///< with more than 2^31 - 1 columns
};

template <class S>
struct TypedCsr {
    std::int64_t rows = 0;
    std::int64_t cols = 0;
    std::vector<std::int64_t> row_ptr{0};  ///< size rows + 1
    std::vector<std::int32_t> col;         ///< int32 encoding: as the source (sorted per row)
    std::vector<std::uint16_t> col16;      ///< compact encoding: col - base[row]
    std::vector<std::int32_t> base;        ///< compact encoding: smallest column of each row
    std::vector<std::int64_t> col64;       ///< int64 encoding
    std::vector<S> val;

    std::int64_t nnz() const { return static_cast<std::int64_t>(val.size()); }
    bool compact() const { return !base.empty(); }
    IndexEncoding encoding() const {
        return compact()        ? IndexEncoding::compact
               : !col64.empty() ? IndexEncoding::int64
                                : IndexEncoding::int32;
    }
    std::int64_t bytes() const {
        const std::int64_t index = compact()       ? 2 * nnz() + 4 * rows
                                   : col64.empty() ? 4 * nnz()
                                                   : 8 * nnz();
        return nnz() * static_cast<std::int64_t>(sizeof(S)) + index +
               (rows + 1) * static_cast<std::int64_t>(sizeof(std::int64_t));
    }
    kernels::csr::CsrView<S> view() const {
        kernels::csr::CsrView<S> v;
        v.row_ptr = row_ptr.data();
        v.val = val.data();
        if (compact()) {
            v.col16 = col16.data();
            v.base = base.data();
        } else if (!col64.empty()) {
            v.col64 = col64.data();
        } else {
            v.col32 = col.data();
        }
        return v;
    }
};

/// Truncates `a` to storage S, counting overflow/underflow/subnormal results in `counts`.
/// `encoding` compact falls back to int32 when some row spans 65536 columns or more; a matrix
/// with more than 2^31 - 1 columns always gets int64 columns. Throws InvalidInput when a row's
/// columns are not strictly increasing.
template <class S>
TypedCsr<S> to_typed(const CsrMatrix& a, TruncationCounts& counts,
                     IndexEncoding encoding = IndexEncoding::int32);

/// to_typed<double> of an `a` that is used up: its values and row pointers move into the copy
/// (no second copy of them), its int64 columns are freed once encoded.
TypedCsr<double> to_typed(CsrMatrix&& a, IndexEncoding encoding = IndexEncoding::int32);

/// The CsrMatrix that to_typed<double> made `t` from, to the bit (any column encoding).
CsrMatrix to_csr(const TypedCsr<double>& t);

/// y = A x.
template <class S, class C>
void spmv(const TypedCsr<S>& a, const C* x, C* y);

/// r = b - A x.
template <class S, class C>
void residual(const TypedCsr<S>& a, const C* b, const C* x, C* r);

/// x_new = x + omega inv_d (b - A x) (weighted / l1-Jacobi; x_new must not alias x).
template <class S, class C>
void jacobi(const TypedCsr<S>& a, const S* inv_d, C omega, const C* b, const C* x, C* x_new);

/// Solve-phase thresholds for running on more than one OpenMP thread: a matrix' rows with at
/// least kParallelNnz nonzeros, a vector pass (scaling, conversion, transfer, Jacobi from zero)
/// over at least kParallelVector rows. Waking the other threads for a parallel region costs
/// ~65 us with OMP_WAIT_POLICY=passive on the 2-vCPU benchmark machine (1-2 us when they spin),
/// as long as one thread takes for a pass over ~130k floats or an SpMV with ~130k nonzeros: with
/// the earlier 4096 rows / 40000 nonzeros, a V-cycle on mfem_lshape_o3_r7 opened ~80 regions
/// on its 7 largest levels, most of them on vectors a thread passes over in a few us.
inline constexpr std::int64_t kParallelNnz = std::int64_t{1} << 17;
inline constexpr std::int64_t kParallelVector = std::int64_t{1} << 17;

/// Runs f(begin, end) on contiguous row ranges, one per OpenMP thread, with about equal
/// nonzeros each (serially on all rows for small matrices).
template <class S, class F>
void for_row_blocks(const TypedCsr<S>& a, F&& f) {
    if (a.nnz() < kParallelNnz) {
        f(std::int64_t{0}, a.rows);
        return;
    }
#pragma omp parallel
    {
        const std::int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
        const auto row_at = [&](std::int64_t k) {  // first row whose entries start at >= k/nt
            if (k == nt) return a.rows;
            const std::int64_t target = a.nnz() * k / nt;
            return static_cast<std::int64_t>(
                std::lower_bound(a.row_ptr.begin(), a.row_ptr.end() - 1, target) -
                a.row_ptr.begin());
        };
        f(row_at(t), row_at(t + 1));
    }
}

}  // namespace mpmg
