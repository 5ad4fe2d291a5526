// Helpers shared by the file readers and writers: opening, exact reads, sizes, checked sizes.
// Every failure becomes an IoError that names the file, so the CLI can print it as one line.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

namespace kafel::io_detail {

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f) std::fclose(f);
  }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

FilePtr open_read(const std::string& path);
FilePtr open_write(const std::string& path);
// Size in bytes of an open regular file; throws IoError for pipes and directories.
std::uint64_t file_size(std::FILE* f, const std::string& path);
// Reads exactly `bytes` or throws IoError ("'f': truncated while reading <what>").
void read_exact(std::FILE* f, void* dst, std::size_t bytes, const std::string& path,
                const char* what);
void write_exact(std::FILE* f, const void* src, std::size_t bytes, const std::string& path);
// Flushes and closes, reporting a full disk or similar as IoError.
void close_written(FilePtr f, const std::string& path);

// a * b, or -1 when the product of non-negative numbers does not fit in int64.
std::int64_t checked_mul(std::int64_t a, std::int64_t b);
// a + b, or -1 on overflow (non-negative inputs; -1 inputs propagate).
std::int64_t checked_add(std::int64_t a, std::int64_t b);

}  // namespace kafel::io_detail
