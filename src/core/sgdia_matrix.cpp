#include "mpmg/sgdia_matrix.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "core/float16.hpp"
#include "mpmg/errors.hpp"

namespace mpmg {

Stencil::Stencil(std::vector<Offset> offsets) : offsets_(std::move(offsets)) {
    for (const Offset& o : offsets_) {
        if (std::abs(o.dx) > 1 || std::abs(o.dy) > 1 || std::abs(o.dz) > 1) {
            throw InvalidInput(
                fmt::format("stencil offset ({},{},{}) is outside the 27-point "
                            "neighbourhood",
                            o.dx, o.dy, o.dz));
        }
    }
    std::sort(offsets_.begin(), offsets_.end(),
              [](const Offset& a, const Offset& b) { return lex(a) < lex(b); });
    offsets_.erase(std::unique(offsets_.begin(), offsets_.end()), offsets_.end());
    for (std::size_t d = 0; d < offsets_.size(); ++d) {
        index_[static_cast<std::size_t>(lex(offsets_[d]))] = static_cast<std::int8_t>(d);
    }
    center_ = find(Offset{0, 0, 0});
    if (center_ < 0) throw InvalidInput("stencil has no centre offset (0,0,0)");
}

Stencil Stencil::named(const std::string& name) {
    std::vector<Offset> o;
    for (int dz = -1; dz <= 1; ++dz) {
        for (int dy = -1; dy <= 1; ++dy) {
            for (int dx = -1; dx <= 1; ++dx) {
                const int nonzero = (dx != 0) + (dy != 0) + (dz != 0);
                bool keep = false;
                if (name == "3d7")
                    keep = nonzero <= 1;
                else if (name == "3d15")
                    keep = nonzero <= 1 || nonzero == 3;
                else if (name == "3d19")
                    keep = nonzero <= 2;
                else if (name == "3d27")
                    keep = true;
                else
                    throw InvalidInput(fmt::format(
                        "unknown stencil '{}'; expected one of 3d7, 3d15, 3d19, 3d27", name));
                if (keep) o.push_back(Offset{dx, dy, dz});
            }
        }
    }
    return Stencil(std::move(o));
}

Stencil Stencil::full27() { return named("3d27"); }

std::string Stencil::name() const {
    for (const char* n : {"3d7", "3d15", "3d19", "3d27"}) {
        if (named(n).offsets() == offsets_) return n;
    }
    return fmt::format("3d{}", offsets_.size());
}

template <class T>
SgDiaMatrix<T>::SgDiaMatrix(Box box, Stencil stencil, int block)
    : box_(box), stencil_(std::move(stencil)), block_(block) {
    if (box.nx <= 0 || box.ny <= 0 || box.nz <= 0) {
        throw InvalidInput(
            fmt::format("grid {}x{}x{} must have positive extents", box.nx, box.ny, box.nz));
    }
    if (block < 1 || block > 8) {
        throw InvalidInput(fmt::format("block size {} must be in 1..8", block));
    }
    constexpr std::int64_t line = 64;  // cache line bytes
    static_assert(line % sizeof(T) == 0);
    const std::int64_t lines = (diag_values() * std::int64_t{sizeof(T)} + line - 1) / line;
    stride_ = (lines | 1) * (line / std::int64_t{sizeof(T)});
    values_.resize(static_cast<std::size_t>(stencil_.size() * stride_));  // zeroed memory
}

template <class T>
bool SgDiaMatrix<T>::neighbour_inside(std::int64_t cell, int d) const {
    const std::int64_t i = cell % box_.nx;
    const std::int64_t j = (cell / box_.nx) % box_.ny;
    const std::int64_t k = cell / (std::int64_t{box_.nx} * box_.ny);
    const Offset& o = stencil_[d];
    return i + o.dx >= 0 && i + o.dx < box_.nx && j + o.dy >= 0 && j + o.dy < box_.ny &&
           k + o.dz >= 0 && k + o.dz < box_.nz;
}

template <class T>
std::int64_t SgDiaMatrix<T>::nnz() const {
    std::int64_t n = 0;
    for (const Offset& o : stencil_.offsets()) {
        const auto in = [](int extent, int d) { return std::int64_t{extent - (d != 0 ? 1 : 0)}; };
        n += std::max<std::int64_t>(0, in(box_.nx, o.dx)) *
             std::max<std::int64_t>(0, in(box_.ny, o.dy)) *
             std::max<std::int64_t>(0, in(box_.nz, o.dz));
    }
    return n * block_ * block_;
}

template class SgDiaMatrix<double>;
template class SgDiaMatrix<float>;
template class SgDiaMatrix<half>;
template class SgDiaMatrix<bfloat16>;

}  // namespace mpmg
