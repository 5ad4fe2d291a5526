// Helpers shared by the file readers and writers: opening, exact reads, sizes, checked sizes.
// Also the host-memory query used to reject absurd sizes before allocating.
#include "io/file_util.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "kafel/bench.hpp"
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

namespace {

namespace fs = std::filesystem;

// A name in the same directory as `path` (so the final rename stays on one file system), unique
// per process and call.
std::string temp_name(const std::string& path) {
  static std::mt19937_64 rng(std::random_device{}());
  char suffix[40];
  std::snprintf(suffix, sizeof suffix, ".tmp.%ld.%08llx", static_cast<long>(getpid()),
                static_cast<unsigned long long>(rng() & 0xffffffffull));
  return path + suffix;
}

}  // namespace

void check_writable(const std::string& path) {
  if (path.empty()) throw IoError("empty output path");
  std::error_code ec;
  const fs::path p(path);
  if (fs::is_directory(p, ec)) throw IoError("'" + path + "' is a directory");
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw IoError("cannot write '" + path + "': directory '" + dir.string() + "' does not exist");
  if (access(dir.c_str(), W_OK) != 0)
    throw IoError("cannot write '" + path + "': directory '" + dir.string() +
                  "' is not writable: " + std::strerror(errno));
  if (fs::exists(p, ec) && access(path.c_str(), W_OK) != 0)
    throw IoError("cannot write '" + path + "': " + std::strerror(errno));
}

void write_file_atomic(const std::string& path, const std::string& bytes) {
  check_writable(path);
  const std::string tmp = temp_name(path);
  try {
    io_detail::FilePtr f = io_detail::open_write(tmp);
    io_detail::write_exact(f.get(), bytes.data(), bytes.size(), path);
    io_detail::close_written(std::move(f), path);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    std::remove(tmp.c_str());
    throw IoError("cannot replace '" + path + "': " + std::strerror(saved));
  }
}

}  // namespace kafel
