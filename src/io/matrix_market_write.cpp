// Matrix Market writer: coordinate real general, 17 significant digits, through a temporary
// file renamed into place; a ".gz" path is written gzip-compressed.
#include <fmt/format.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>

#include "io/matrix_market.hpp"
#include "mpmg/errors.hpp"

namespace mpmg {
namespace {

/// Output sink: a plain file or, for a ".gz" path, a gzip stream.
class Output {
public:
    Output(const std::string& tmp, bool gz) {
        if (gz)
            gz_ = gzopen(tmp.c_str(), "wb6");
        else
            file_ = std::fopen(tmp.c_str(), "wb");
    }
    ~Output() { close(); }
    Output(const Output&) = delete;
    Output& operator=(const Output&) = delete;
    bool is_open() const { return gz_ != nullptr || file_ != nullptr; }
    bool write(const char* data, std::size_t n) {
        if (n == 0) return true;
        if (gz_) return gzwrite(gz_, data, static_cast<unsigned>(n)) == static_cast<int>(n);
        return std::fwrite(data, 1, n, file_) == n;
    }
    bool close() {
        bool ok = true;
        if (gz_) ok = gzclose(gz_) == Z_OK;
        if (file_) ok = std::fclose(file_) == 0;
        gz_ = nullptr;
        file_ = nullptr;
        return ok;
    }

private:
    gzFile gz_ = nullptr;
    std::FILE* file_ = nullptr;
};

void check_writable(const std::string& path, const CsrMatrix& a) {
    const bool shape_ok = a.rows >= 0 && a.cols >= 0 &&
                          a.row_ptr.size() == static_cast<std::size_t>(a.rows) + 1 &&
                          a.row_ptr.back() == a.nnz() && a.val.size() == a.col.size();
    if (!shape_ok) {
        throw InvalidInput(
            fmt::format("{}: cannot write an inconsistent CSR matrix ({} x {}, "
                        "{} row pointers, {} columns, {} values)",
                        path, a.rows, a.cols, a.row_ptr.size(), a.col.size(), a.val.size()));
    }
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            if (!std::isfinite(a.val[p])) {
                throw InvalidInput(
                    fmt::format("{}: cannot write non-finite value {} at ({}, {}); "
                                "Matrix Market readers reject it",
                                path, a.val[p], i + 1, a.col[p] + 1));
            }
        }
    }
}

}  // namespace

void write_matrix_market(const std::string& path, const CsrMatrix& a) {
    check_writable(path, a);
    const std::string tmp = fmt::format("{}.tmp.{}", path, static_cast<long>(::getpid()));
    const bool gz = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
    errno = 0;
    Output out(tmp, gz);
    auto fail = [&](const char* what) {
        const int e = errno;
        out.close();
        std::remove(tmp.c_str());
        throw InvalidInput(
            fmt::format("{}: cannot write the file ({}{}{}); check that the "
                        "directory exists, is writable and has space",
                        path, what, e != 0 ? ": " : "", e != 0 ? std::strerror(e) : ""));
    };
    if (!out.is_open()) fail("cannot create the temporary file");
    fmt::memory_buffer buf;
    fmt::format_to(std::back_inserter(buf), "%%MatrixMarket matrix coordinate real general\n");
    fmt::format_to(std::back_inserter(buf), "{} {} {}\n", a.rows, a.cols, a.nnz());
    for (std::int64_t i = 0; i < a.rows; ++i) {
        for (std::int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
            fmt::format_to(std::back_inserter(buf), "{} {} {:.17g}\n", i + 1, a.col[p] + 1,
                           a.val[p]);
        }
        if (buf.size() >= (std::size_t{1} << 20)) {
            if (!out.write(buf.data(), buf.size())) fail("write failed");
            buf.clear();
        }
    }
    if (!out.write(buf.data(), buf.size())) fail("write failed");
    if (!out.close()) fail("closing the file failed");
    if (std::rename(tmp.c_str(), path.c_str()) != 0) fail("renaming the temporary file failed");
}

}  // namespace mpmg
