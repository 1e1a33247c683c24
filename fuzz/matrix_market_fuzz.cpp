// libFuzzer target for the Matrix Market reader: the input bytes are written to a file and read
// with read_matrix_market and read_vector_market, plain and gzip-compressed, and in 2 or 3
// parts (MatrixMarketPart, as the processes of `mpirun ... --matrix` read it), which must give
// the whole read's matrix or its message. A malformed file must throw mpmg::Error
// (InvalidInput); anything else (a crash, a sanitizer report, another exception, an allocation
// beyond the RSS limit, parts that disagree with the whole) is a finding. Built by .ci/fuzz.
#include <unistd.h>
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include "io/matrix_info.hpp"
#include "io/matrix_market.hpp"
#include "io/matrix_market_part_test_util.hpp"
#include "mpmg/errors.hpp"

namespace {

std::string temp_path(const char* suffix) {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir != nullptr ? dir : "/tmp") + "/mpmg_mm_fuzz_" +
           std::to_string(::getpid()) + suffix;
}

void write_plain(const std::string& path, const std::uint8_t* data, std::size_t size) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

void write_gzip(const std::string& path, const std::uint8_t* data, std::size_t size) {
    gzFile f = gzopen(path.c_str(), "wb1");
    if (f == nullptr) return;
    if (size > 0) gzwrite(f, data, static_cast<unsigned>(size));
    gzclose(f);
}

void read_both(const std::string& path) {
    try {
        const mpmg::CsrMatrix a = mpmg::read_matrix_market(path);
        // A matrix that was accepted must be a consistent CSR.
        if (a.row_ptr.size() != static_cast<std::size_t>(a.rows) + 1 ||
            a.row_ptr.back() != static_cast<std::int64_t>(a.col.size()) ||
            a.col.size() != a.val.size()) {
            __builtin_trap();
        }
        for (std::int64_t i = 0; i < a.rows; ++i) {
            const auto begin = a.row_ptr[static_cast<std::size_t>(i)];
            const auto end = a.row_ptr[static_cast<std::size_t>(i) + 1];
            if (begin > end) __builtin_trap();
            for (std::int64_t p = begin; p < end; ++p) {
                const std::int64_t c = a.col[static_cast<std::size_t>(p)];
                if (c < 0 || c >= a.cols) __builtin_trap();
                if (p > begin && a.col[static_cast<std::size_t>(p) - 1] >= c) __builtin_trap();
            }
        }
        (void)mpmg::analyse_matrix(a);
    } catch (const mpmg::Error&) {
    }
    try {
        (void)mpmg::read_vector_market(path);
    } catch (const mpmg::Error&) {
    }
}

/// The file read in `parts` parts gives what the whole read gives: the same entries, or the
/// same message.
void read_in_parts(const std::string& path, int parts) {
    std::string whole_error, parts_error;
    mpmg::CsrMatrix whole;
    std::optional<mpmg::CsrMatrix> split;
    try {
        whole = mpmg::read_matrix_market(path);
    } catch (const mpmg::Error& e) {
        whole_error = e.what();
    }
    try {
        split = mpmg::test::read_in_parts(path, parts);
        if (!split) return;  // array format: not read in parts
    } catch (const mpmg::Error& e) {
        parts_error = e.what();
    }
    if (parts_error != whole_error) __builtin_trap();
    if (!whole_error.empty()) return;
    if (split->row_ptr != whole.row_ptr || split->col != whole.col) __builtin_trap();
    for (std::size_t p = 0; p < whole.val.size(); ++p) {
        if (split->val[p] != whole.val[p]) __builtin_trap();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string plain = temp_path(".mtx");
    static const std::string gz = temp_path(".mtx.gz");
    write_plain(plain, data, size);
    read_both(plain);
    read_in_parts(plain, 2 + static_cast<int>(size % 2));
    // The same bytes compressed: exercises the gzip path of read_whole_file. Only for a quarter
    // of the inputs (chosen by length, not content): compressing is what makes an execution slow.
    if (size % 4 == 0) {
        write_gzip(gz, data, size);
        read_both(gz);
    }
    // The raw bytes under a .gz name: corrupt or truncated gzip streams.
    if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
        write_plain(gz, data, size);
        read_both(gz);
    }
    return 0;
}
