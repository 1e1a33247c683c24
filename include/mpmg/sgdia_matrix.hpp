// Structured-grid matrices in SG-DIA format with SOA layout (ICPP'24 §3.2, §5.1): the values of
// one stencil offset are contiguous over all cells, so no index arrays are stored and a kernel
// streams each offset's values with unit stride.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace mpmg {

/// A 3D box of cells, i fastest, then j, then k. Cell (i,j,k) has index i + nx*(j + ny*k).
struct Box {
    int nx = 0, ny = 0, nz = 0;
    std::int64_t cells() const { return std::int64_t{nx} * ny * nz; }
    int extent(int dir) const { return dir == 0 ? nx : dir == 1 ? ny : nz; }
    friend bool operator==(const Box&, const Box&) = default;
};

/// A stencil offset; every component is in {-1, 0, 1} (Galerkin coarsening of these stencils
/// with mpmg's transfers stays inside the 27-point neighbourhood).
struct Offset {
    int dx = 0, dy = 0, dz = 0;
    friend bool operator==(const Offset&, const Offset&) = default;
};

/// A set of offsets ordered lexicographically by (dz, dy, dx), so the offsets before the centre
/// are exactly the "lower" neighbours of a lexicographic Gauss-Seidel sweep.
class Stencil {
public:
    Stencil() = default;
    /// Takes any set of offsets with components in {-1,0,1}; must contain (0,0,0). A set: an
    /// offset listed twice counts once, and the order given is not kept (find() says where an
    /// offset went). The values come afterwards, per offset of the stencil (SgDiaMatrix), so
    /// nothing is lost; interfaces that take values together with their offsets (the C
    /// interface's mpmg_solver_setup_stencil) reject an offset given twice.
    explicit Stencil(std::vector<Offset> offsets);
    /// "3d7", "3d15", "3d19", "3d27"; throws InvalidInput for any other name.
    static Stencil named(const std::string& name);
    /// All 27 offsets.
    static Stencil full27();

    int size() const { return static_cast<int>(offsets_.size()); }
    const Offset& operator[](int d) const { return offsets_[static_cast<std::size_t>(d)]; }
    const std::vector<Offset>& offsets() const { return offsets_; }
    int center() const { return center_; }
    /// Index of `o` in this stencil, or -1 (a table lookup: generators call it per entry).
    int find(const Offset& o) const {
        if (o.dx < -1 || o.dx > 1 || o.dy < -1 || o.dy > 1 || o.dz < -1 || o.dz > 1) return -1;
        return index_[static_cast<std::size_t>(lex(o))];
    }
    /// Position of `o` (components in {-1,0,1}) in the 27-point neighbourhood ordered by
    /// (dz, dy, dx): the order of the offsets.
    static constexpr int lex(const Offset& o) {
        return (o.dz + 1) * 9 + (o.dy + 1) * 3 + (o.dx + 1);
    }
    /// "3d7" etc. when it is one of the named stencils, else "3d<size>".
    std::string name() const;

private:
    std::vector<Offset> offsets_;
    int center_ = -1;
    /// Offset index by lex(), -1 where absent.
    std::array<std::int8_t, 27> index_ = filled_minus_one();
    static constexpr std::array<std::int8_t, 27> filled_minus_one() {
        std::array<std::int8_t, 27> a{};
        for (auto& v : a) v = -1;
        return a;
    }
};

namespace detail {

/// Zero-filled memory for the value arrays (calloc; src/core/zeroed_memory.cpp): large arrays
/// are fresh pages, zero already, so nothing writes them before the producer of the values
/// does. Throws std::bad_alloc.
void* allocate_zeroed(std::size_t bytes);
void deallocate_zeroed(void* p, std::size_t bytes) noexcept;

/// Allocator of the value arrays: memory arrives zeroed and T{} is all zero bits for every
/// storage type, so value-initialisation (resize) writes nothing.
template <class T>
struct ZeroedAllocator {
    using value_type = T;
    ZeroedAllocator() = default;
    template <class U>
    ZeroedAllocator(const ZeroedAllocator<U>&) noexcept {}
    T* allocate(std::size_t n) { return static_cast<T*>(allocate_zeroed(n * sizeof(T))); }
    void deallocate(T* p, std::size_t n) noexcept { deallocate_zeroed(p, n * sizeof(T)); }
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
    template <class U>
    void construct(U*) noexcept {}  // already zero
    friend bool operator==(const ZeroedAllocator&, const ZeroedAllocator&) { return true; }
};

}  // namespace detail

/// An SG-DIA matrix on `box` with `block`x`block` entries (r unknowns per cell, r = 1 scalar).
/// value(d, c, a, b) = A[(cell c, comp a), (cell c + offset d, comp b)]. Entries whose neighbour
/// lies outside the box are stored as zero and never read by the kernels.
/// T is the storage type: double, float, half or bfloat16 (src/core/float16.hpp).
template <class T>
class SgDiaMatrix {
public:
    SgDiaMatrix() = default;
    SgDiaMatrix(Box box, Stencil stencil, int block = 1);

    const Box& box() const { return box_; }
    const Stencil& stencil() const { return stencil_; }
    int block() const { return block_; }
    std::int64_t rows() const { return box_.cells() * block_; }
    /// Values of one offset: cells * block^2.
    std::int64_t diag_values() const { return box_.cells() * block_ * block_; }
    /// Distance between the values of consecutive offsets: diag_values() padded so that it is
    /// an odd multiple of 64 bytes. Otherwise on power-of-two grids (64^3, 128^3) every offset's
    /// stream starts at the same address modulo 4 KiB and the streams evict each other from
    /// the same cache sets (measured: FP16 3d27 SpMV on 128^3, 0.41 ns per entry unpadded,
    /// 0.21-0.23 padded, 0.21-0.26 on 127^3). The padding (< 128 bytes per offset) is zero.
    std::int64_t diag_stride() const { return stride_; }

    T* diagonal(int d) { return values_.data() + d * diag_stride(); }
    const T* diagonal(int d) const { return values_.data() + d * diag_stride(); }
    T& value(int d, std::int64_t cell, int a, int b) {
        return values_[static_cast<std::size_t>(d * diag_stride() + (cell * block_ + a) * block_ +
                                                b)];
    }
    const T& value(int d, std::int64_t cell, int a, int b) const {
        return values_[static_cast<std::size_t>(d * diag_stride() + (cell * block_ + a) * block_ +
                                                b)];
    }
    /// The value array (zeroed when allocated; see detail::ZeroedAllocator).
    using Values = std::vector<T, detail::ZeroedAllocator<T>>;
    const Values& values() const { return values_; }
    Values& values() { return values_; }

    /// Whether cell c's neighbour at offset d lies inside the box.
    bool neighbour_inside(std::int64_t cell, int d) const;
    /// Calls f(cell) for every cell whose neighbour at offset d lies inside the box, in
    /// increasing cell order (range loops, no per-cell test).
    template <class F>
    void for_each_inside(int d, F&& f) const {
        const Offset& o = stencil_[d];
        const int i0 = o.dx < 0 ? 1 : 0, i1 = o.dx > 0 ? box_.nx - 1 : box_.nx;
        const int j0 = o.dy < 0 ? 1 : 0, j1 = o.dy > 0 ? box_.ny - 1 : box_.ny;
        const int k0 = o.dz < 0 ? 1 : 0, k1 = o.dz > 0 ? box_.nz - 1 : box_.nz;
        for (int k = k0; k < k1; ++k) {
            for (int j = j0; j < j1; ++j) {
                const std::int64_t line = (std::int64_t{k} * box_.ny + j) * box_.nx;
                for (int i = i0; i < i1; ++i) f(line + i);
            }
        }
    }
    /// Stored entries whose neighbour lies inside the box (the matrix's structural nnz).
    std::int64_t nnz() const;
    /// Bytes of the value array.
    std::int64_t bytes() const { return static_cast<std::int64_t>(values_.size() * sizeof(T)); }

private:
    Box box_;
    Stencil stencil_;
    int block_ = 1;
    std::int64_t stride_ = 0;
    Values values_;
};

}  // namespace mpmg
