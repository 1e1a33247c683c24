// Whole-file text input for the readers in src/io: loads a plain or gzip file in one piece
// (zlib reads both) and walks it line by line and token by token with std::from_chars.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mpmg::io {

/// The whole content of a file; ".gz" (or any gzip stream) is decompressed, a plain file is read
/// as is. Throws InvalidInput naming the path when the file cannot be opened or read, or when
/// the compressed stream is truncated or corrupt.
std::string read_whole_file(const std::string& path);

/// The decompressed size a gzip file announces in its last member's trailer (ISIZE, RFC 1952
/// §2.3.1), or nothing for a file that is not gzip or announces more than deflate can expand it
/// to. Only a hint: a file of several members announces its last member's size, and one of 4 GiB
/// or more the size modulo 2^32. Readers size their buffers by it and cut the text by it, and
/// stay correct when it is wrong.
std::optional<std::uint64_t> gzip_size_hint(const std::string& path);

/// The text of a gzip file decompressed at once (libdeflate: about six times zlib's stream on
/// the Zen 5 VM), when every member decodes to the end of the file and the text is at most
/// `most` bytes; nothing otherwise (not gzip, damaged, trailing bytes, larger). The caller then
/// reads the file as a stream (FileChunks), which gives the errors; this only makes it faster.
std::optional<std::string> gunzip_whole(const std::string& path, std::size_t most);

/// A file read from its start, chunk by chunk, decompressed when it is a gzip stream (zlib reads
/// a plain file as it is); the errors of read_whole_file.
class FileChunks {
public:
    explicit FileChunks(const std::string& path);
    ~FileChunks();
    FileChunks(const FileChunks&) = delete;
    FileChunks& operator=(const FileChunks&) = delete;
    /// Reads up to n next bytes into out; returns how many (fewer only at the end).
    std::size_t read(char* out, std::size_t n);

private:
    std::string path_;
    void* file_ = nullptr;  // gzFile
};

/// Lines of a text buffer, numbered from 1; a trailing '\r' is dropped.
class LineScanner {
public:
    /// `lines_before`: lines of the file before `text` (a part of a file), so that
    /// line_number() counts in the whole file.
    explicit LineScanner(std::string_view text, std::int64_t lines_before = 0)
        : text_(text), line_(lines_before) {}
    /// Next line, or false at the end of the text.
    bool next(std::string_view& line);
    /// Next line that is neither blank nor a '%' comment, or false at the end.
    bool next_content(std::string_view& line);
    /// Number of the line last returned (lines_before before the first).
    std::int64_t line_number() const { return line_; }
    /// Bytes of the text consumed (up to and including the last line's '\n').
    std::size_t position() const { return std::min(pos_, text_.size()); }

private:
    std::string_view text_;
    std::size_t pos_ = 0;
    std::int64_t line_ = 0;
};

/// Whitespace-separated tokens of one line.
class Tokens {
public:
    explicit Tokens(std::string_view line) : rest_(line) {}
    /// Next token, or false when only blanks remain.
    bool next(std::string_view& token);

private:
    std::string_view rest_;
};

enum class ParseStatus { ok, not_a_number, out_of_range };

/// Whole token as a decimal integer (optional sign).
ParseStatus parse_int(std::string_view token, std::int64_t& value);
/// Whole token as a floating-point number (optional '+', decimal or exponent form; "nan" and
/// "inf" parse as such, so the caller checks finiteness). Values below the smallest subnormal
/// double read as 0; values beyond the largest double are out_of_range.
ParseStatus parse_double(std::string_view token, double& value);

/// ASCII lower-case copy.
std::string lower(std::string_view s);

}  // namespace mpmg::io
