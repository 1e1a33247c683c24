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

void check_fits_grid(std::int64_t rows, std::int64_t cols, const Box& box, int block,
                     const std::string& source) {
    const std::int64_t expected = box.cells() * block;
    if (rows != cols) {
        throw InvalidInput(fmt::format("{}: matrix is {}x{}, not square", source, rows, cols));
    }
    if (rows != expected) {
        throw InvalidInput(fmt::format(
            "{}: {} rows do not fit --grid {},{},{},{} ({} cells x {} components = {} rows)",
            source, rows, box.nx, box.ny, box.nz, block, box.cells(), block, expected));
    }
}

int stencil_slot(std::int64_t row, std::int64_t col, const Box& box, int block) {
    const Cell p = cell_of(row / block, box), q = cell_of(col / block, box);
    const std::int64_t dx = q.i - p.i, dy = q.j - p.j, dz = q.k - p.k;
    if (dx < -1 || dx > 1 || dy < -1 || dy > 1 || dz < -1 || dz > 1) return -1;
    return static_cast<int>((dz + 1) * 9 + (dy + 1) * 3 + (dx + 1));
}

void fail_beyond_neighbourhood(std::int64_t row, std::int64_t col, const Box& box, int block,
                               const std::string& source) {
    const Cell p = cell_of(row / block, box), q = cell_of(col / block, box);
    throw InvalidInput(fmt::format(
        "{}: entry ({}, {}) couples cell ({},{},{}) with cell ({},{},{}), beyond the "
        "27-point neighbourhood: not a structured matrix on grid {}x{}x{} (1-based "
        "indices as in the file){}",
        source, row + 1, col + 1, p.i, p.j, p.k, q.i, q.j, q.k, box.nx, box.ny, box.nz,
        block > 1 ? fmt::format("; with {} unknowns per cell the rows go cell by cell, a "
                                "cell's {} unknowns in consecutive rows (a file ordered "
                                "unknown by unknown needs renumbering, or the AMG path: no "
                                "--grid)",
                                block, block)
                  : std::string()));
}

Stencil stencil_of_slots(const std::array<bool, 27>& used) {
    std::vector<Offset> offsets;
    for (int t = 0; t < 27; ++t) {
        if (used[static_cast<std::size_t>(t)] || t == 13)  // the centre is always in
            offsets.push_back(Offset{t % 3 - 1, t / 3 % 3 - 1, t / 9 - 1});
    }
    return Stencil(std::move(offsets));
}

SgDiaMatrix<double> sgdia_from_csr(const CsrMatrix& a, Box box, int block,
                                   const std::string& source) {
    check_fits_grid(a.rows, a.cols, box, block, source);
    std::array<bool, 27> used{};
    const auto slot = [&](std::int64_t row, std::int64_t col) {
        const int t = stencil_slot(row, col, box, block);
        if (t < 0) fail_beyond_neighbourhood(row, col, box, block, source);
        return t;
    };
    for (std::int64_t r = 0; r < a.rows; ++r) {
        for (std::int64_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) {
            used[static_cast<std::size_t>(slot(r, a.col[p]))] = true;
        }
    }
    SgDiaMatrix<double> out(box, stencil_of_slots(used), block);
    for (std::int64_t r = 0; r < a.rows; ++r) {
        for (std::int64_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) {
            const int t = slot(r, a.col[p]);
            const int d = out.stencil().find(Offset{t % 3 - 1, t / 3 % 3 - 1, t / 9 - 1});
            out.value(d, r / block, static_cast<int>(r % block),
                      static_cast<int>(a.col[p] % block)) = a.val[p];
        }
    }
    return out;
}

}  // namespace mpmg
