#include "io/text_input.hpp"

#include <fmt/format.h>
#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <system_error>

#include "core/prefault.hpp"
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

std::optional<std::uint64_t> gzip_size_hint(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    unsigned char magic[2] = {0, 0};
    if (!in.read(reinterpret_cast<char*>(magic), 2) || magic[0] != 0x1f || magic[1] != 0x8b) {
        return std::nullopt;
    }
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    constexpr std::streamoff kSmallest = 18;  // a 10-byte header, an empty block, the trailer
    if (size < kSmallest) return std::nullopt;
    in.seekg(size - 4);
    unsigned char isize[4] = {0, 0, 0, 0};
    if (!in.read(reinterpret_cast<char*>(isize), 4)) return std::nullopt;
    std::uint64_t n = 0;
    for (int k = 3; k >= 0; --k) n = (n << 8) | isize[k];  // little-endian
    // Deflate expands at most 1032:1 (a run of 258 bytes per 2 bits): beyond that the trailer
    // is not the size of this file's content.
    constexpr std::uint64_t kMostExpansion = 1032;
    if (n > kMostExpansion * static_cast<std::uint64_t>(size)) return std::nullopt;
    return n;
}

namespace {

/// gunzip_whole of a gzip file whose trailer announces `announced` bytes.
std::optional<std::string> gunzip_announced(const std::string& path, std::uint64_t announced,
                                            std::size_t most) {
    std::ifstream in(path, std::ios::binary);
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    if (size <= 0) return std::nullopt;
    std::string packed;
    packed.reserve(static_cast<std::size_t>(size));
    prefault(packed.data(), packed.capacity());
    packed.resize(static_cast<std::size_t>(size));
    in.seekg(0);
    if (!in.read(packed.data(), size)) return std::nullopt;
    const std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor*)> d(
        libdeflate_alloc_decompressor(), &libdeflate_free_decompressor);
    if (!d) return std::nullopt;
    // The announced size holds a file of one member; one of several announces its last
    // member's size, and its text is decompressed again into twice the room until it fits.
    for (std::size_t room = std::max<std::size_t>(static_cast<std::size_t>(announced), 1);
         room <= most;) {
        std::string text;
        text.reserve(room);
        prefault(text.data(), room);
        text.resize(room);
        std::size_t in_at = 0, out_at = 0;
        libdeflate_result r = LIBDEFLATE_SUCCESS;
        while (r == LIBDEFLATE_SUCCESS && in_at < packed.size()) {  // member by member
            std::size_t used = 0, made = 0;
            r = libdeflate_gzip_decompress_ex(d.get(), packed.data() + in_at, packed.size() - in_at,
                                              text.data() + out_at, room - out_at, &used, &made);
            in_at += used;
            out_at += made;
        }
        if (r == LIBDEFLATE_INSUFFICIENT_SPACE && room < most) {
            room = room > most / 2 ? most : 2 * room;
            continue;
        }
        if (r != LIBDEFLATE_SUCCESS) return std::nullopt;
        text.resize(out_at);
        return text;
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::string> gunzip_whole(const std::string& path, std::size_t most) {
    const std::optional<std::uint64_t> announced = gzip_size_hint(path);
    if (!announced) return std::nullopt;
    return gunzip_announced(path, *announced, most);
}

std::string read_whole_file(const std::string& path) {
    const std::optional<std::uint64_t> gzip_size = gzip_size_hint(path);
    if (gzip_size) {
        if (std::optional<std::string> text =
                gunzip_announced(path, *gzip_size, std::numeric_limits<std::size_t>::max())) {
            return std::move(*text);
        }
    }
    FileChunks f(path);
    // Read straight into the result, growing it geometrically, from the content's size (plus
    // one byte, to see the end) and at least 64 KiB: a small file costs no large buffer (the
    // fuzzer reads thousands of them a second), and a plain file, or a gzip file whose trailer
    // gives its size, is read in one piece. Growing from less copied and zeroed it about twice
    // over: a 109 MB file, a tenth of `mpmg solve --matrix`'s time; the 194 MB of a 32 MB gzip
    // file, three resizes to 476 MB and 0.8 s.
    std::error_code no_size;
    const std::uintmax_t file_size = std::filesystem::file_size(path, no_size);
    const std::uint64_t size = gzip_size ? *gzip_size : no_size ? 0 : file_size;
    const std::size_t first =
        std::max<std::size_t>(static_cast<std::size_t>(size) + 1, std::size_t{1} << 16);
    std::string data;
    data.reserve(first);
    prefault(data.data(), first);
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
