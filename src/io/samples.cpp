// Raw sample files (float32 or complex pairs, planar or interleaved), a block-by-block reader.
// A file reads as a channels x N matrix whose layout mirrors the file, so nothing is reordered.
#include <poll.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "io/file_util.hpp"
#include "kafel/error.hpp"
#include "kafel/io.hpp"

namespace kafel {

namespace {

using namespace io_detail;

Layout matrix_layout(SampleLayout l) {
  return l == SampleLayout::Planar ? Layout::RowMajor : Layout::ColMajor;
}

void check_channels(std::int64_t channels) {
  if (channels <= 0) {
    throw InvalidArgument("channel count must be positive, got " + std::to_string(channels));
  }
}

// Reads up to `bytes`, stopping early only at the end of the stream.
std::size_t read_some(std::FILE* f, void* dst, std::size_t bytes, const std::string& path) {
  std::size_t got = 0;
  auto* p = static_cast<char*>(dst);
  while (got < bytes) {
    std::size_t n = std::fread(p + got, 1, bytes - got, f);
    if (n == 0) break;
    got += n;
  }
  if (std::ferror(f)) throw IoError("cannot read '" + path + "': " + std::strerror(errno));
  return got;
}

// The numbers a complex sample is made of: "float32" for cf32, "int16" for ci16 (a type the
// table has only as a half of ci16).
std::string half_words(DType type) {
  const std::size_t bits = dtype_size(type) * 4;
  return (is_floating(type_info(type).component) ? "float" : "int") + std::to_string(bits);
}

// How messages name a sample type: "float32", "cf32 (complex: float32 re, im pairs)".
std::string sample_words(DType type) {
  if (type == DType::f32) return "float32";
  if (!is_complex(type)) return std::string(to_string(type));
  return std::string(to_string(type)) + " (complex: " + half_words(type) + " re, im pairs)";
}

// A complex stream holding `bytes` ends between the re and im of a sample: the file is not what
// --type says (a real file, or a cut one).
void check_whole_pairs(std::uint64_t bytes, DType type, const std::string& where) {
  if (!is_complex(type)) return;
  const std::uint64_t part = dtype_size(type) / 2;
  if (bytes % part == 0 && (bytes / part) % 2 == 1)
    throw IoError(where + std::to_string(bytes) + " bytes hold " + std::to_string(bytes / part) +
                  " " + half_words(type) + " values, an odd count: " + sample_words(type) +
                  " samples need whole pairs (is the file real, or cut short?)");
}

// Bytes of an open raw sample file, checked to be whole frames of `channels` samples.
std::uint64_t frame_bytes(std::FILE* f, const std::string& path, std::int64_t channels,
                          DType type) {
  const std::uint64_t size = file_size(f, path);
  const std::uint64_t frame = std::uint64_t(channels) * dtype_size(type);
  if (size == 0) throw IoError("'" + path + "' holds no samples (empty file)");
  check_whole_pairs(size, type, "'" + path + "': ");
  if (size % frame != 0) {
    throw IoError("'" + path + "': " + std::to_string(size) + " bytes is not a whole number of " +
                  std::to_string(channels) + "-channel " + sample_words(type) + " samples (" +
                  std::to_string(frame) + " bytes each)");
  }
  return size;
}

}  // namespace

std::int64_t raw_sample_frames(const std::string& path, std::int64_t channels, DType type) {
  check_channels(channels);
  FilePtr f = open_read(path);
  return std::int64_t(frame_bytes(f.get(), path, channels, type) /
                      (std::uint64_t(channels) * dtype_size(type)));
}

Matrix read_raw_samples(const std::string& path, std::int64_t channels, SampleLayout layout) {
  check_channels(channels);
  FilePtr f = open_read(path);
  const std::uint64_t size = frame_bytes(f.get(), path, channels, DType::f32);
  const std::uint64_t frame = std::uint64_t(channels) * 4;
  check_host_memory(double(size), "'" + path + "'");
  std::int64_t samples = std::int64_t(size / frame);
  Matrix m(DType::f32, channels, samples, matrix_layout(layout));
  read_exact(f.get(), m.data(), size, path, "the samples");
  return m;
}

void write_raw_samples(const std::string& path, const MatrixView& samples, SampleLayout layout) {
  samples.validate("samples");
  if (samples.dtype != DType::f32) throw InvalidArgument("raw sample files hold float32 only");
  Matrix tight(DType::f32, samples.rows, samples.cols, matrix_layout(layout));
  copy(samples, tight);
  AtomicFile f(path);
  f.write(tight.data(), tight.bytes());
  f.commit();
}

SampleStream::SampleStream(const std::string& path, std::int64_t channels,
                           std::int64_t samples_per_block, SampleLayout layout, DType type)
    : path_(path), channels_(channels), samples_(samples_per_block), layout_(layout), type_(type) {
  check_channels(channels);
  if (samples_per_block <= 0 ||
      checked_mul(checked_mul(channels, samples_per_block), std::int64_t(dtype_size(type))) < 0) {
    throw InvalidArgument("samples per block must be positive and sane, got " +
                          std::to_string(samples_per_block));
  }
  if (path == "-") {
    file_ = stdin;
    path_ = "<stdin>";
  } else {
    file_ = open_read(path, true).release();
    owns_file_ = true;
    struct stat st {};
    await_writer_ = fstat(fileno(file_), &st) == 0 && S_ISFIFO(st.st_mode);
  }
}

SampleStream::~SampleStream() {
  if (owns_file_ && file_) std::fclose(file_);
}

bool SampleStream::next(Matrix& block) {
  if (done_) return false;
  if (await_writer_) {
    // Opened without blocking, so no writer may be connected yet, and a read would see the
    // end of the stream. poll waits for the writer's first data (or its close: POLLHUP).
    pollfd p{fileno(file_), POLLIN, 0};
    while (::poll(&p, 1, -1) < 0 && errno == EINTR) {
    }
    await_writer_ = false;
  }
  Layout want = layout_ == SampleLayout::Planar ? Layout::RowMajor : Layout::ColMajor;
  if (block.rows() != channels_ || block.cols() != samples_ || block.layout() != want ||
      block.dtype() != type_) {
    block = Matrix(type_, channels_, samples_, want);
  }
  std::size_t want_bytes = block.bytes();
  std::size_t got = read_some(file_, block.data(), want_bytes, path_);
  if (got == want_bytes) {
    ++blocks_;
    return true;
  }
  done_ = true;
  if (got == 0) return false;
  std::string where = "'" + path_ + "': block " + std::to_string(blocks_) + " ";
  check_whole_pairs(got, type_, where + "ends inside a complex sample: ");
  if (layout_ == SampleLayout::Planar) {
    throw IoError(where + "is cut short (" + std::to_string(got) + " of " +
                  std::to_string(want_bytes) + " bytes); planar blocks must be complete");
  }
  std::size_t frame = std::size_t(channels_) * dtype_size(type_);
  if (got % frame != 0) {
    throw IoError(where + "ends inside a sample frame (" + std::to_string(got) +
                  " bytes is not a multiple of " + std::to_string(frame) + ")");
  }
  Matrix shorter(type_, channels_, std::int64_t(got / frame), want);
  std::memcpy(shorter.data(), block.data(), got);
  block = std::move(shorter);
  ++blocks_;
  return true;
}

}  // namespace kafel
