#include "io/text_input.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "mpmg/errors.hpp"

namespace mpmg::io {

FileChunks::FileChunks(const std::string& path) : path_(path) {
    errno = 0;
    gzFile f = gzopen(path.c_str(), "rb");
    if (f == nullptr) {
        throw InvalidInput(
            fmt::format("{}: cannot open the file ({}); check the path and its "
                        "permissions",
                        path, errno != 0 ? std::strerror(errno) : "out of memory"));
    }
    gzbuffer(f, 1u << 17);
    file_ = f;
}

FileChunks::~FileChunks() { gzclose(static_cast<gzFile>(file_)); }

std::size_t FileChunks::read(char* out, std::size_t n) {
    auto* f = static_cast<gzFile>(file_);
    std::size_t filled = 0;
    while (filled < n) {  // gzread takes unsigned counts
        const auto want =
            static_cast<unsigned>(std::min<std::size_t>(n - filled, std::size_t{1} << 30));
        const int got = gzread(f, out + filled, want);
        if (got > 0) filled += static_cast<std::size_t>(got);
        if (got <= 0 || static_cast<unsigned>(got) < want) break;  // short only at the end
    }
    int err = Z_OK;
    const char* msg = gzerror(f, &err);
    if (err != Z_OK) {
        const std::string what =
            err == Z_ERRNO ? std::string(std::strerror(errno)) : std::string(msg ? msg : "");
        throw InvalidInput(
            fmt::format("{}: cannot read the file ({}); the file is unreadable, "
                        "truncated or not valid gzip data",
                        path_, what));
    }
    return filled;
}

std::string read_whole_file(const std::string& path) {
    FileChunks f(path);
    // Read straight into the result, growing it geometrically, from the file's size (plus one
    // byte, to see the end) and at least 64 KiB: a small file costs no large buffer (the fuzzer
    // reads thousands of them a second), and a plain file is read in one piece, where growing
    // from 64 KiB copied and zeroed it about twice over (a 109 MB file: a tenth of `mpmg solve
    // --matrix`'s time). A gzip file's content is larger than the file and grows from there.
    std::error_code no_size;
    const std::uintmax_t size = std::filesystem::file_size(path, no_size);
    const std::size_t first =
        no_size ? std::size_t{1} << 16
                : std::max<std::size_t>(static_cast<std::size_t>(size) + 1, std::size_t{1} << 16);
    std::string data;
    std::size_t filled = 0;
    for (std::size_t want = first;; want = std::min(2 * want, std::size_t{1} << 30)) {
        data.resize(filled + want);
        const std::size_t n = f.read(data.data() + filled, want);
        filled += n;
        if (n < want) break;
    }
    data.resize(filled);
    return data;
}

bool LineScanner::next(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    const char* begin = text_.data() + pos_;
    const void* nl = std::memchr(begin, '\n', text_.size() - pos_);
    const std::size_t len =
        nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - begin) : text_.size() - pos_;
    pos_ += len + 1;
    line = std::string_view(begin, len);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++line_;
    return true;
}

bool LineScanner::next_content(std::string_view& line) {
    while (next(line)) {
        std::size_t i = 0;
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
        if (i < line.size() && line[i] != '%') return true;
    }
    return false;
}

bool Tokens::next(std::string_view& token) {
    std::size_t i = 0;
    while (i < rest_.size() && (rest_[i] == ' ' || rest_[i] == '\t')) ++i;
    if (i == rest_.size()) {
        rest_ = {};
        return false;
    }
    std::size_t j = i;
    while (j < rest_.size() && rest_[j] != ' ' && rest_[j] != '\t') ++j;
    token = rest_.substr(i, j - i);
    rest_.remove_prefix(j);
    return true;
}

ParseStatus parse_int(std::string_view token, std::int64_t& value) {
    if (!token.empty() && token[0] == '+') token.remove_prefix(1);
    const char* end = token.data() + token.size();
    const auto [ptr, ec] = std::from_chars(token.data(), end, value);
    if (ec == std::errc::result_out_of_range) return ParseStatus::out_of_range;
    if (ec != std::errc() || ptr != end || token.empty()) return ParseStatus::not_a_number;
    return ParseStatus::ok;
}

ParseStatus parse_double(std::string_view token, double& value) {
    if (!token.empty() && token[0] == '+') {
        token.remove_prefix(1);
        if (!token.empty() && (token[0] == '+' || token[0] == '-')) {
            return ParseStatus::not_a_number;
        }
    }
    const char* end = token.data() + token.size();
    const auto [ptr, ec] = std::from_chars(token.data(), end, value);
    if (ptr != end || token.empty()) return ParseStatus::not_a_number;
    if (ec == std::errc::result_out_of_range) {
        // from_chars reports both overflow and underflow; strtod tells them apart.
        const std::string copy(token);
        value = std::strtod(copy.c_str(), nullptr);
        return std::isinf(value) ? ParseStatus::out_of_range : ParseStatus::ok;
    }
    if (ec != std::errc()) return ParseStatus::not_a_number;
    return ParseStatus::ok;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
}

}  // namespace mpmg::io
