// The lecture's matmul.dat: int32 m, p, n, then A (m x p), B (p x n), C (m x n) as float32.
// Reading checks the header against the file length before allocating anything.
#include <bit>
#include <cstring>
#include <random>

#include "io/file_util.hpp"
#include "kafel/error.hpp"
#include "kafel/gemm.hpp"
#include "kafel/io.hpp"

namespace kafel {

static_assert(std::endian::native == std::endian::little,
              "kafel's file formats assume a little-endian host");

namespace {

using namespace io_detail;

constexpr std::int64_t kHeaderBytes = 3 * sizeof(std::int32_t);

std::string dims_text(std::int64_t m, std::int64_t p, std::int64_t n) {
  return "m=" + std::to_string(m) + " p=" + std::to_string(p) + " n=" + std::to_string(n);
}

// Bytes a file with these sizes must have, or -1 when that does not fit in int64.
std::int64_t expected_bytes(std::int64_t m, std::int64_t p, std::int64_t n) {
  std::int64_t elems =
      checked_add(checked_add(checked_mul(m, p), checked_mul(p, n)), checked_mul(m, n));
  return checked_add(kHeaderBytes, checked_mul(elems, 4));
}

void check_dims(const std::string& path, std::int64_t m, std::int64_t p, std::int64_t n) {
  if (m <= 0 || p <= 0 || n <= 0) {
    throw IoError("'" + path + "': header sizes " + dims_text(m, p, n) +
                  " are invalid (every size must be positive)");
  }
}

void check_length(const std::string& path, std::int64_t m, std::int64_t p, std::int64_t n,
                  std::uint64_t actual) {
  std::int64_t want = expected_bytes(m, p, n);
  if (want < 0) {
    throw IoError("'" + path + "': header sizes " + dims_text(m, p, n) +
                  " are absurd (the data would exceed 2^63 bytes) but the file has " +
                  std::to_string(actual) + " bytes");
  }
  if (std::uint64_t(want) == actual) return;
  std::string how = actual < std::uint64_t(want)
                        ? "truncated"
                        : std::to_string(actual - std::uint64_t(want)) + " trailing bytes";
  throw IoError("'" + path + "': header sizes " + dims_text(m, p, n) + " need " +
                std::to_string(want) + " bytes but the file has " + std::to_string(actual) + " (" +
                how + ")");
}

void read_block(std::FILE* f, Matrix& dst, const std::string& path, const char* what) {
  read_exact(f, dst.data(), dst.bytes(), path, what);
}

// Writes the rows of an f32 view as a tight row-major block.
void write_rows(AtomicFile& f, const MatrixView& v) {
  if (v.layout == Layout::RowMajor && v.ld == v.cols) {
    f.write(v.data, std::size_t(v.rows * v.cols) * 4);
    return;
  }
  std::vector<float> row(std::size_t(v.cols));
  for (std::int64_t i = 0; i < v.rows; ++i) {
    for (std::int64_t j = 0; j < v.cols; ++j) row[std::size_t(j)] = float(v.get(i, j));
    f.write(row.data(), row.size() * 4);
  }
}

void check_storable(const MatrixView& a, const MatrixView& b, const MatrixView& c) {
  a.validate("A");
  b.validate("B");
  c.validate("C");
  if (a.dtype != DType::f32 || b.dtype != DType::f32 || c.dtype != DType::f32) {
    throw InvalidArgument("matmul.dat holds float32 only");
  }
  if (a.cols != b.rows || c.rows != a.rows || c.cols != b.cols) {
    throw InvalidArgument("matmul.dat shapes disagree: A " + std::to_string(a.rows) + "x" +
                          std::to_string(a.cols) + ", B " + std::to_string(b.rows) + "x" +
                          std::to_string(b.cols) + ", C " + std::to_string(c.rows) + "x" +
                          std::to_string(c.cols));
  }
  const std::int64_t limit = INT32_MAX;
  if (a.rows > limit || a.cols > limit || b.cols > limit) {
    throw InvalidArgument("matmul.dat sizes must fit in int32");
  }
}

}  // namespace

MatmulData read_matmul_dat(const std::string& path) {
  FilePtr f = open_read(path);
  std::uint64_t size = file_size(f.get(), path);
  if (size < std::uint64_t(kHeaderBytes)) {
    throw IoError("'" + path + "' is truncated: " + std::to_string(size) +
                  " bytes, the matmul.dat header alone needs 12");
  }
  std::int32_t hdr[3];
  read_exact(f.get(), hdr, sizeof hdr, path, "the header");
  std::int64_t m = hdr[0], p = hdr[1], n = hdr[2];
  check_dims(path, m, p, n);
  check_length(path, m, p, n, size);
  check_host_memory(double(size), "'" + path + "' (" + dims_text(m, p, n) + ")");
  MatmulData d{Matrix(DType::f32, m, p), Matrix(DType::f32, p, n), Matrix(DType::f32, m, n)};
  read_block(f.get(), d.a, path, "A");
  read_block(f.get(), d.b, path, "B");
  read_block(f.get(), d.c, path, "C");
  return d;
}

void write_matmul_dat(const std::string& path, const MatrixView& a, const MatrixView& b,
                      const MatrixView& c) {
  check_storable(a, b, c);
  AtomicFile f(path);
  std::int32_t hdr[3] = {std::int32_t(a.rows), std::int32_t(a.cols), std::int32_t(b.cols)};
  f.write(hdr, sizeof hdr);
  write_rows(f, a);
  write_rows(f, b);
  write_rows(f, c);
  f.commit();
}

MatmulData make_matmul_data(std::int64_t m, std::int64_t p, std::int64_t n, std::uint64_t seed,
                            DType dtype) {
  if (m <= 0 || p <= 0 || n <= 0) {
    throw InvalidArgument("sizes must be positive, got " + dims_text(m, p, n));
  }
  std::int64_t elems =
      checked_add(checked_add(checked_mul(m, p), checked_mul(p, n)), checked_mul(m, n));
  double bytes = double(elems < 0 ? INT64_MAX : elems) * double(dtype_size(dtype));
  check_host_memory(bytes, "a " + dims_text(m, p, n) + " problem");
  MatmulData d{Matrix(dtype, m, p), Matrix(dtype, p, n), Matrix(dtype, m, n)};
  std::mt19937_64 rng(seed);
  fill_random_normal(d.a, rng);
  fill_random_normal(d.b, rng);
  reference_gemm(Op::N, Op::N, 1.0, d.a, d.b, 0.0, d.c);
  return d;
}

}  // namespace kafel
