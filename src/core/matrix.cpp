// Owning matrices with aligned storage, validation of views, and fills for tests and tools.
// Allocation failures become kafel::OutOfMemory with the size asked for.
#include "kafel/matrix.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "core/thread_pool.hpp"
#include "kafel/error.hpp"

namespace kafel {

std::int64_t MatrixView::span() const {
  if (rows <= 0 || cols <= 0) return 0;
  return layout == Layout::RowMajor ? (rows - 1) * ld + cols : (cols - 1) * ld + rows;
}

void MatrixView::validate(const char* what) const {
  const std::string name = what ? what : "matrix";
  if (rows < 0 || cols < 0)
    throw InvalidArgument(name + ": negative size " + std::to_string(rows) + "x" +
                          std::to_string(cols));
  const std::int64_t inner = layout == Layout::RowMajor ? cols : rows;
  if (ld < std::max<std::int64_t>(inner, 1))
    throw InvalidArgument(name + ": leading dimension " + std::to_string(ld) + " < " +
                          std::to_string(std::max<std::int64_t>(inner, 1)) + " (" +
                          std::string(to_string(layout)) + "-major " + std::to_string(rows) + "x" +
                          std::to_string(cols) + ")");
  if (data == nullptr && rows > 0 && cols > 0)
    throw InvalidArgument(name + ": null data for a non-empty matrix");
}

void Matrix::Free::operator()(void* p) const {
  std::free(p);
}

Matrix::Matrix(DType dtype, std::int64_t rows, std::int64_t cols, Layout layout, std::int64_t ld) {
  if (rows < 0 || cols < 0)
    throw InvalidArgument("matrix size " + std::to_string(rows) + "x" + std::to_string(cols) +
                          " is negative");
  const std::int64_t inner = layout == Layout::RowMajor ? cols : rows;
  const std::int64_t outer = layout == Layout::RowMajor ? rows : cols;
  if (ld == 0) ld = std::max<std::int64_t>(inner, 1);
  const double elems = double(outer) * double(ld);
  const double bytes = elems * double(dtype_size(dtype));
  if (bytes > double(std::numeric_limits<std::int64_t>::max() / 2))
    throw OutOfMemory("matrix " + std::to_string(rows) + "x" + std::to_string(cols) +
                      " is too large to address");
  bytes_ = static_cast<std::size_t>(bytes);
  const std::size_t alloc = std::max<std::size_t>(64, (bytes_ + 63) / 64 * 64);
  void* p = std::aligned_alloc(64, alloc);
  if (!p)
    throw OutOfMemory("cannot allocate " + std::to_string(alloc) + " bytes for a " +
                      std::to_string(rows) + "x" + std::to_string(cols) + " " +
                      std::string(to_string(dtype)) + " matrix");
  std::memset(p, 0, alloc);
  storage_.reset(p);
  view_ = MatrixView{dtype, p, rows, cols, ld, layout};
  view_.validate("matrix");
}

Matrix Matrix::clone() const {
  Matrix out(view_.dtype, view_.rows, view_.cols, view_.layout, view_.ld);
  if (bytes_) std::memcpy(out.data(), data(), bytes_);
  return out;
}

namespace {

// Calls fn(address, type) for every real number of element (i, j): the element itself, or the
// re and im halves of a complex one (as their component type).
template <class Fn>
void for_each_part(const MatrixView& m, std::int64_t i, std::int64_t j, Fn&& fn) {
  const TypeInfo& t = type_info(m.dtype);
  char* p = static_cast<char*>(m.address(i, j));
  if (t.kind != TypeKind::complex) return fn(p, m.dtype);
  const std::size_t half = t.size / 2;
  fn(p, t.component);
  fn(p + half, t.component);
}

}  // namespace

namespace {

// Elements (in row order) drawn from one generator. Each block's generator is seeded from one
// draw of the caller's and the block's index, so the values depend on the seed and the shape
// only, never on the thread count, and large matrices fill on every core.
constexpr std::int64_t kFillBlock = std::int64_t(1) << 16;

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser: well-spread block seeds
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// make() gives each block its drawer: draw(engine, part type) -> the value of one real part.
template <class MakeDraw>
void fill_blocks(const MatrixView& m, std::mt19937_64& rng, const MakeDraw& make) {
  const std::uint64_t base = rng();
  const std::int64_t count = m.rows * m.cols;
  const std::int64_t blocks = (count + kFillBlock - 1) / kFillBlock;
  const auto fill = [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t b = first; b < last; ++b) {
      std::mt19937_64 engine(mix(base + std::uint64_t(b)));
      auto draw = make();
      const std::int64_t end = std::min(count, (b + 1) * kFillBlock);
      for (std::int64_t e = b * kFillBlock; e < end; ++e)
        for_each_part(m, e / m.cols, e % m.cols,
                      [&](void* p, DType t) { store_from_double(t, p, draw(engine, t)); });
    }
  };
  if (blocks <= 1)
    fill(0, blocks);
  else
    parallel_rows(blocks, 1, fill);
}

}  // namespace

void fill_random_normal(const MatrixView& m, std::mt19937_64& rng, double mean, double stddev) {
  fill_blocks(m, rng, [&] {
    return [normal = std::normal_distribution<double>(mean, stddev),
            ints = std::uniform_int_distribution<int>(-8, 8)](std::mt19937_64& engine,
                                                              DType t) mutable {
      return is_integer(t) ? double(ints(engine)) : normal(engine);
    };
  });
}

void fill_random_integers(const MatrixView& m, std::mt19937_64& rng, int lo, int hi) {
  fill_blocks(m, rng, [&] {
    return [ints = std::uniform_int_distribution<int>(lo, hi)](
               std::mt19937_64& engine, DType) mutable { return double(ints(engine)); };
  });
}

void poison(const MatrixView& m) {
  const std::int64_t n = m.span();
  const TypeInfo& info = type_info(m.dtype);
  const DType part = info.kind == TypeKind::complex ? info.component : m.dtype;
  const std::size_t parts = info.kind == TypeKind::complex ? 2 : 1, es = dtype_size(part);
  const double value = is_integer(part) ? -1234567.0 : std::numeric_limits<double>::quiet_NaN();
  unsigned char pattern[16];
  store_from_double(part, pattern, value);
  for (std::int64_t e = 0; e < n * std::int64_t(parts); ++e)
    std::memcpy(static_cast<char*>(m.data) + e * es, pattern, es);
}

void copy(const MatrixView& src, const MatrixView& dst) {
  if (src.rows != dst.rows || src.cols != dst.cols)
    throw InvalidArgument("copy: shapes differ (" + std::to_string(src.rows) + "x" +
                          std::to_string(src.cols) + " vs " + std::to_string(dst.rows) + "x" +
                          std::to_string(dst.cols) + ")");
  if (is_complex(src.dtype) != is_complex(dst.dtype))
    throw InvalidArgument("copy: cannot convert between " + std::string(to_string(src.dtype)) +
                          " and " + std::string(to_string(dst.dtype)));
  const bool same_bits = src.dtype == dst.dtype && src.layout == dst.layout;
  for (std::int64_t i = 0; i < src.rows; ++i) {
    if (same_bits && src.layout == Layout::RowMajor) {
      std::memcpy(dst.address(i, 0), src.address(i, 0), src.cols * dtype_size(src.dtype));
      continue;
    }
    for (std::int64_t j = 0; j < src.cols; ++j) {
      if (src.dtype == dst.dtype) {
        std::memcpy(dst.address(i, j), src.address(i, j), dtype_size(src.dtype));
      } else if (is_complex(src.dtype)) {
        double parts[2] = {0.0, 0.0};
        int k = 0;
        for_each_part(src, i, j, [&](void* p, DType t) { parts[k++] = load_as_double(t, p); });
        k = 0;
        for_each_part(dst, i, j, [&](void* p, DType t) { store_from_double(t, p, parts[k++]); });
      } else {
        dst.set(i, j, src.get(i, j));
      }
    }
  }
}

}  // namespace kafel
