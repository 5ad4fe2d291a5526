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

// Opens without ever blocking (a FIFO with no writer does not hang the open). A directory is
// "is a directory"; anything but a regular file is refused unless `streams_ok` (stdin-like
// readers of raw sample streams take FIFOs and character devices).
FilePtr open_read(const std::string& path, bool streams_ok = false);

// A file written under a temporary name in the target's directory and renamed over the target
// by commit(); destroyed uncommitted (an error, a full disk), it removes the temporary and the
// target is untouched. A target that exists and is a FIFO or character device (/dev/stdout,
// /dev/null) is written in place instead: there is nothing to replace atomically.
class AtomicFile {
 public:
  explicit AtomicFile(const std::string& path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  std::FILE* get() const { return file_.get(); }
  const std::string& path() const { return path_; }
  void write(const void* src, std::size_t bytes);
  // Flushes, syncs and renames; throws IoError (the temporary is removed).
  void commit();

 private:
  std::string path_, tmp_;  // tmp_ empty: written in place
  FilePtr file_;
  bool done_ = false;
};
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
