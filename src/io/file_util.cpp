// Helpers shared by the file readers and writers: opening, exact reads, sizes, checked sizes.
// Also the host-memory query used to reject absurd sizes before allocating.
#include "io/file_util.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "kafel/bench.hpp"
#include "kafel/error.hpp"
#include "kafel/io.hpp"

namespace kafel::io_detail {

namespace {
std::string quoted(const std::string& path) {
  return "'" + path + "'";
}
}  // namespace

FilePtr open_read(const std::string& path, bool streams_ok) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw IoError("cannot open " + quoted(path) + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int saved = errno;
    ::close(fd);
    throw IoError("cannot stat " + quoted(path) + ": " + std::strerror(saved));
  }
  const bool stream = S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode);
  if (S_ISDIR(st.st_mode) || !(S_ISREG(st.st_mode) || (streams_ok && stream))) {
    ::close(fd);
    throw IoError(quoted(path) + (S_ISDIR(st.st_mode)    ? " is a directory"
                                  : S_ISFIFO(st.st_mode) ? " is a FIFO, not a regular file"
                                                         : " is not a regular file"));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // reads block as usual from here
  FilePtr f(::fdopen(fd, "rb"));
  if (!f) {
    const int saved = errno;
    ::close(fd);
    throw IoError("cannot open " + quoted(path) + ": " + std::strerror(saved));
  }
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
  static std::atomic<unsigned> counter{0};
  char suffix[48];
  std::snprintf(suffix, sizeof suffix, ".tmp.%ld.%u", static_cast<long>(getpid()),
                counter.fetch_add(1));
  return path + suffix;
}

// FIFOs and character devices (/dev/stdout, /dev/null) are written in place: renaming a
// temporary over them would replace the device node.
bool is_stream_target(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode));
}

}  // namespace

void check_writable(const std::string& path) {
  if (path.empty()) throw IoError("empty output path");
  const std::string q = "'" + path + "'";
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) throw IoError(q + " is a directory");
  if (exists && !S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode))
    throw IoError("cannot write " + q + ": not a regular file");
  if (exists && access(path.c_str(), W_OK) != 0)
    throw IoError("cannot write " + q + ": " + std::strerror(errno));
  if (exists && !S_ISREG(st.st_mode)) return;  // written in place
  std::error_code ec;
  const fs::path p(path);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw IoError("cannot write " + q + ": directory '" + dir.string() + "' does not exist");
  if (access(dir.c_str(), W_OK) != 0)
    throw IoError("cannot write " + q + ": directory '" + dir.string() +
                  "' is not writable: " + std::strerror(errno));
}

namespace io_detail {

AtomicFile::AtomicFile(const std::string& path) : path_(path) {
  check_writable(path);
  int fd = -1;
  if (is_stream_target(path)) {
    // O_NONBLOCK: a FIFO without a reader fails (ENXIO) instead of hanging the open.
    fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  } else {
    tmp_ = temp_name(path);
    struct stat st {};
    const mode_t mode = ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0666;
    fd = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  }
  if (fd < 0) throw IoError("cannot create '" + path + "': " + std::strerror(errno));
  file_.reset(::fdopen(fd, "wb"));
  if (!file_) {
    const int saved = errno;
    ::close(fd);
    if (!tmp_.empty()) std::remove(tmp_.c_str());
    throw IoError("cannot create '" + path + "': " + std::strerror(saved));
  }
}

AtomicFile::~AtomicFile() {
  if (done_) return;
  file_.reset();
  if (!tmp_.empty()) std::remove(tmp_.c_str());
}

void AtomicFile::write(const void* src, std::size_t bytes) {
  write_exact(file_.get(), src, bytes, path_);
}

void AtomicFile::commit() {
  // fsync: a full disk may only show when the data is allocated, and the rename must not
  // publish a file whose data is not there.
  if (std::fflush(file_.get()) == 0 && !tmp_.empty() && ::fsync(fileno(file_.get())) != 0)
    throw IoError("cannot write '" + path_ + "': " + std::strerror(errno));
  close_written(std::move(file_), path_);
  if (!tmp_.empty() && std::rename(tmp_.c_str(), path_.c_str()) != 0)
    throw IoError("cannot replace '" + path_ + "': " + std::strerror(errno));
  done_ = true;
}

}  // namespace io_detail

void write_file_atomic(const std::string& path, const std::string& bytes) {
  io_detail::AtomicFile f(path);
  f.write(bytes.data(), bytes.size());
  f.commit();
}

}  // namespace kafel
