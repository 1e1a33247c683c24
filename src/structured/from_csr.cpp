#include "structured/from_csr.hpp"

#include <fmt/format.h>

#include <array>

#include "mpmg/errors.hpp"

namespace mpmg {
namespace {

struct Cell {
    std::int64_t i, j, k;
};

Cell cell_of(std::int64_t c, const Box& b) {
    return Cell{c % b.nx, (c / b.nx) % b.ny, c / (std::int64_t{b.nx} * b.ny)};
}

}  // namespace

SgDiaMatrix<double> sgdia_from_csr(const CsrMatrix& a, Box box, int block,
                                   const std::string& source) {
    const std::int64_t expected = box.cells() * block;
    if (a.rows != a.cols) {
        throw InvalidInput(fmt::format("{}: matrix is {}x{}, not square", source, a.rows, a.cols));
    }
    if (a.rows != expected) {
        throw InvalidInput(fmt::format(
            "{}: {} rows do not fit --grid {},{},{},{} ({} cells x {} components = {} rows)",
            source, a.rows, box.nx, box.ny, box.nz, block, box.cells(), block, expected));
    }
    std::array<bool, 27> used{};
    used[13] = true;  // the centre is always part of the stencil
    const auto offset_index = [&](std::int64_t row, std::int64_t col) {
        const Cell p = cell_of(row / block, box), q = cell_of(col / block, box);
        const std::int64_t dx = q.i - p.i, dy = q.j - p.j, dz = q.k - p.k;
        if (dx < -1 || dx > 1 || dy < -1 || dy > 1 || dz < -1 || dz > 1) {
            throw InvalidInput(fmt::format(
                "{}: entry ({}, {}) couples cell ({},{},{}) with cell ({},{},{}), beyond the "
                "27-point neighbourhood: not a structured matrix on grid {}x{}x{} (1-based "
                "indices as in the file)",
                source, row + 1, col + 1, p.i, p.j, p.k, q.i, q.j, q.k, box.nx, box.ny, box.nz));
        }
        return static_cast<int>((dz + 1) * 9 + (dy + 1) * 3 + (dx + 1));
    };
    for (std::int64_t r = 0; r < a.rows; ++r) {
        for (std::int64_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) {
            used[static_cast<std::size_t>(offset_index(r, a.col[p]))] = true;
        }
    }
    std::vector<Offset> offsets;
    for (int t = 0; t < 27; ++t) {
        if (used[static_cast<std::size_t>(t)])
            offsets.push_back(Offset{t % 3 - 1, t / 3 % 3 - 1, t / 9 - 1});
    }
    SgDiaMatrix<double> out(box, Stencil(std::move(offsets)), block);
    for (std::int64_t r = 0; r < a.rows; ++r) {
        for (std::int64_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) {
            const int t = offset_index(r, a.col[p]);
            const int d = out.stencil().find(Offset{t % 3 - 1, t / 3 % 3 - 1, t / 9 - 1});
            out.value(d, r / block, static_cast<int>(r % block),
                      static_cast<int>(a.col[p] % block)) = a.val[p];
        }
    }
    return out;
}

}  // namespace mpmg
