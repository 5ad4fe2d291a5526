// Helpers shared by the file readers and writers: opening, exact reads, sizes, checked sizes.
// Also the host-memory query used to reject absurd sizes before allocating.
#include "io/file_util.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/report_util.hpp"
#include "kafel/error.hpp"
#include "kafel/io.hpp"

namespace kafel::io_detail {

namespace {
std::string quoted(const std::string& path) {
  return "'" + path + "'";
}
}  // namespace

FilePtr open_read(const std::string& path) {
  FilePtr f(std::fopen(path.c_str(), "rb"));
  if (!f) throw IoError("cannot open " + quoted(path) + ": " + std::strerror(errno));
  return f;
}

FilePtr open_write(const std::string& path) {
  FilePtr f(std::fopen(path.c_str(), "wb"));
  if (!f) throw IoError("cannot create " + quoted(path) + ": " + std::strerror(errno));
  return f;
}

std::uint64_t file_size(std::FILE* f, const std::string& path) {
  struct stat st {};
  if (fstat(fileno(f), &st) != 0) {
    throw IoError("cannot stat " + quoted(path) + ": " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) throw IoError(quoted(path) + " is not a regular file");
  return static_cast<std::uint64_t>(st.st_size);
}

void read_exact(std::FILE* f, void* dst, std::size_t bytes, const std::string& path,
                const char* what) {
  std::size_t got = bytes == 0 ? 0 : std::fread(dst, 1, bytes, f);
  if (got != bytes) {
    if (std::ferror(f)) {
      throw IoError("cannot read " + quoted(path) + ": " + std::strerror(errno));
    }
    throw IoError(quoted(path) + " is truncated: " + std::to_string(got) + " of " +
                  std::to_string(bytes) + " bytes of " + what + " present");
  }
}

void write_exact(std::FILE* f, const void* src, std::size_t bytes, const std::string& path) {
  if (bytes != 0 && std::fwrite(src, 1, bytes, f) != bytes) {
    throw IoError("cannot write " + quoted(path) + ": " + std::strerror(errno));
  }
}

void close_written(FilePtr f, const std::string& path) {
  std::FILE* raw = f.release();
  bool failed = std::fflush(raw) != 0 || std::ferror(raw);
  int saved = errno;
  if (std::fclose(raw) != 0) {
    failed = true;
    saved = errno;
  }
  if (failed) throw IoError("cannot write " + quoted(path) + ": " + std::strerror(saved));
}

std::int64_t checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r)) return -1;
  return r;
}

std::int64_t checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &r)) return -1;
  return r;
}

}  // namespace kafel::io_detail

namespace kafel {

std::uint64_t host_memory_available() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  long pages = sysconf(_SC_AVPHYS_PAGES);
  long page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) return std::uint64_t(pages) * std::uint64_t(page);
  return UINT64_MAX;  // unknown: do not refuse
}

void check_host_memory(double bytes, const std::string& what) {
  double avail = double(host_memory_available());
  if (bytes > avail) {
    throw OutOfMemory(what + " needs " + human_bytes(bytes) + " but only " + human_bytes(avail) +
                      " of host memory is available");
  }
}

}  // namespace kafel
