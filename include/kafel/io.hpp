// File formats: the lecture's matmul.dat, NumPy .npy and raw float32 sample files.
// Every reader validates sizes strictly and throws IoError / InvalidArgument / OutOfMemory.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kafel/matrix.hpp"
#include "kafel/types.hpp"

namespace kafel {

// ---- host memory -------------------------------------------------------------------------

// Bytes of host memory available for new allocations (MemAvailable, else free physical pages).
std::uint64_t host_memory_available();
// Throws OutOfMemory when `bytes` exceed what the host has available; `what` names the request.
void check_host_memory(double bytes, const std::string& what);

// Throws InvalidArgument naming `what` and the first element that is NaN or infinite
// ("'m.dat': A holds NaN at (3, 7)"). Integer matrices always pass.
void check_finite(const MatrixView& m, const std::string& what);

// Throws InvalidArgument naming `what` and the first element that storage type `target` cannot
// hold: a finite value beyond its range (it would become inf: f64 1e6 -> f16), a fraction for
// an integer type (0.5 -> i32 would be 0) or an integer out of its range (300 -> i8). Rounding
// to the nearest value of a floating type is not an error. So a narrowing conversion of file
// inputs is an input error, never a "verification failed" that blames the kernel.
void check_convertible(const MatrixView& m, DType target, const std::string& what);

// ---- output files ---------------------------------------------------------------------------

// Throws IoError now when `path` could not be written later (its directory is missing or not
// writable, the path is a directory, a read-only file or a socket), so long jobs fail before
// they start. An existing FIFO or character device (/dev/stdout) is written in place.
void check_writable(const std::string& path);
// Writes `bytes` to a temporary file in the same directory and renames it over `path` only
// when complete: on any failure (full disk, error) the temporary is removed and an existing
// `path` is left untouched. Every file kafel writes goes through this. Throws IoError.
void write_file_atomic(const std::string& path, const std::string& bytes);

// ---- matmul.dat --------------------------------------------------------------------------
// int32 m, p, n (native little-endian), then A (m x p), B (p x n), C = A*B (m x n), all float32
// row-major. Sizes must be positive; the file length must match the header exactly.

struct MatmulData {
  Matrix a;  // m x p
  Matrix b;  // p x n
  Matrix c;  // m x n, the product stored in the file
};

MatmulData read_matmul_dat(const std::string& path);
// Writes any f32 views of matching shapes (any layout / ld); sizes must fit in int32.
void write_matmul_dat(const std::string& path, const MatrixView& a, const MatrixView& b,
                      const MatrixView& c);
// Random normal A and B (seeded) and C = A*B accumulated in float64, rounded once to `dtype`.
MatmulData make_matmul_data(std::int64_t m, std::int64_t p, std::int64_t n, std::uint64_t seed,
                            DType dtype = DType::f32);

// ---- NumPy .npy --------------------------------------------------------------------------
// Versions 1.0, 2.0 and 3.0; dtypes <f4, <f8, <i4, <f2 (f16) and |i1 (i8): the real types of the
// type table with a NumPy descriptor (bf16 and fp8 have none: write them as f32); C or Fortran
// order; 1-D (read as a 1 x n row) or 2-D. Fortran order reads as a column-major Matrix.
// A 3-D array is a stack of matrices (count x rows x cols, e.g. a batched GEMM's operands): read
// with read_npy_stack, written with write_npy_stack; read_npy refuses it.

struct NpyHeader {
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;
  bool fortran_order = false;
  int major_version = 1;
  std::uint64_t data_offset = 0;  // bytes before the array data
};

NpyHeader read_npy_header(const std::string& path);
Matrix read_npy(const std::string& path, NpyHeader* header = nullptr);
// A 3-D array (count x rows x cols, C or Fortran order) as `count` row-major matrices; any other
// number of dimensions is refused (IoError naming the shape).
std::vector<Matrix> read_npy_stack(const std::string& path, NpyHeader* header = nullptr);
// Writes matrices of one type and shape (any layouts / ld) as a C-order count x rows x cols
// array; an empty list or one that differs throws InvalidArgument.
void write_npy_stack(const std::string& path, const std::vector<MatrixView>& mats);
// Writes a 2-D array (C order for row-major views, Fortran order for column-major ones), or a
// 1-D array when `one_d` is set and the view has one row or one column.
void write_npy(const std::string& path, const MatrixView& m, bool one_d = false);
// Writes float64 results as a C-order .npy of `shape` (1 or more dimensions, e.g. batch x C x C):
// '<f8' from `re` alone, complex128 ('<c16', re and im interleaved) when `im` is given.
void write_npy_f64(const std::string& path, const std::vector<std::int64_t>& shape,
                   const double* re, const double* im = nullptr);

// ---- raw float32 samples -----------------------------------------------------------------
// Planar: channel 0's samples, then channel 1's, ... (channels x N row-major).
// Interleaved: sample 0 of every channel, then sample 1, ... (as ADCs deliver; N x channels).
// Either way a file reads as a channels x N f32 Matrix: row-major for planar, column-major for
// interleaved (no reordering copy).

// SampleLayout and parse_sample_layout live in kafel/types.hpp (shared with covariance).

// Whole frames (one float32 per channel) in a raw sample file; throws IoError for a directory,
// a FIFO or other non-regular file, an empty file or a length that is not whole frames.
std::int64_t raw_sample_frames(const std::string& path, std::int64_t channels);
Matrix read_raw_samples(const std::string& path, std::int64_t channels, SampleLayout layout);
// Writes a channels x N view (any layout / ld) as raw float32 in the given file layout.
void write_raw_samples(const std::string& path, const MatrixView& samples, SampleLayout layout);

// Reads a raw float32 stream block after block from a file, a FIFO or stdin ("-"). Opening a
// FIFO never blocks; like stdin, the first read then waits for the writer's data (a writer
// that closes without writing is an empty stream).
// Each block holds `samples_per_block` samples of every channel in the given layout. The last
// block may be shorter (interleaved only: a planar block cannot be cut); a stream that ends
// inside a sample frame is an IoError.
class SampleStream {
 public:
  SampleStream(const std::string& path, std::int64_t channels, std::int64_t samples_per_block,
               SampleLayout layout);
  ~SampleStream();
  SampleStream(const SampleStream&) = delete;
  SampleStream& operator=(const SampleStream&) = delete;

  // Fills `block` (reallocated to channels x samples when needed) with the next block.
  // Returns false at the end of the stream.
  bool next(Matrix& block);
  std::int64_t blocks_read() const { return blocks_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  bool owns_file_ = false;
  bool await_writer_ = false;  // a FIFO opened before its writer: wait for it on the first read
  std::int64_t channels_, samples_;
  SampleLayout layout_;
  std::int64_t blocks_ = 0;
  bool done_ = false;
};

}  // namespace kafel
