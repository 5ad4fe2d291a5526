// Matrix views (non-owning, any layout and leading dimension) and an owning, aligned Matrix.
// Every kafel interface takes views; Matrix is the convenient owner for tools and tests.
#pragma once

#include <cstdint>
#include <memory>
#include <random>

#include "kafel/types.hpp"

namespace kafel {

// A rows x cols matrix of `dtype` elements at `data`.
// Row-major: element (i, j) at data[i*ld + j], ld >= cols. Column-major: data[j*ld + i], ld >=
// rows.
struct MatrixView {
  DType dtype = DType::f32;
  void* data = nullptr;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t ld = 0;
  Layout layout = Layout::RowMajor;

  std::int64_t offset(std::int64_t i, std::int64_t j) const {
    return layout == Layout::RowMajor ? i * ld + j : j * ld + i;
  }
  void* address(std::int64_t i, std::int64_t j) const {
    return static_cast<char*>(data) + offset(i, j) * static_cast<std::int64_t>(dtype_size(dtype));
  }
  double get(std::int64_t i, std::int64_t j) const { return load_as_double(dtype, address(i, j)); }
  void set(std::int64_t i, std::int64_t j, double v) const {
    store_from_double(dtype, address(i, j), v);
  }
  // Typed element access; T must match dtype (std::uint16_t for f16).
  template <class T>
  T& at(std::int64_t i, std::int64_t j) const {
    return static_cast<T*>(data)[offset(i, j)];
  }
  // The same storage seen as its transpose (swaps rows/cols and flips the layout).
  MatrixView transposed() const {
    return {dtype, data, cols,
            rows,  ld,   layout == Layout::RowMajor ? Layout::ColMajor : Layout::RowMajor};
  }
  // Number of elements the storage spans (last element + 1), 0 for an empty matrix.
  std::int64_t span() const;
  // Throws InvalidArgument when sizes are negative or ld is too small; `what` names the matrix.
  void validate(const char* what) const;
};

// Owning matrix with 64-byte aligned storage; moves but does not copy implicitly.
class Matrix {
 public:
  Matrix() = default;
  // ld = 0 means tight (cols for row-major, rows for column-major). Contents are zeroed.
  Matrix(DType dtype, std::int64_t rows, std::int64_t cols, Layout layout = Layout::RowMajor,
         std::int64_t ld = 0);

  Matrix(Matrix&&) noexcept = default;
  Matrix& operator=(Matrix&&) noexcept = default;
  Matrix clone() const;

  MatrixView view() const { return view_; }
  operator MatrixView() const { return view_; }
  DType dtype() const { return view_.dtype; }
  std::int64_t rows() const { return view_.rows; }
  std::int64_t cols() const { return view_.cols; }
  std::int64_t ld() const { return view_.ld; }
  Layout layout() const { return view_.layout; }
  void* data() const { return view_.data; }
  double get(std::int64_t i, std::int64_t j) const { return view_.get(i, j); }
  void set(std::int64_t i, std::int64_t j, double v) { view_.set(i, j, v); }
  template <class T>
  T& at(std::int64_t i, std::int64_t j) const {
    return view_.at<T>(i, j);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  struct Free {
    void operator()(void* p) const;
  };
  std::unique_ptr<void, Free> storage_;
  std::size_t bytes_ = 0;
  MatrixView view_;
};

// Fills `m` with values drawn from N(mean, stddev) (integers: uniform in [-8, 8]).
void fill_random_normal(const MatrixView& m, std::mt19937_64& rng, double mean = 0.0,
                        double stddev = 1.0);
// Fills `m` with small integers in [lo, hi], exact in every type (for exact comparisons).
void fill_random_integers(const MatrixView& m, std::mt19937_64& rng, int lo = -4, int hi = 4);
// Fills every element (padding between ld and cols too) with a sentinel value (NaN for floats).
void poison(const MatrixView& m);
// Element-wise copy with conversion between any two views of equal shape.
void copy(const MatrixView& src, const MatrixView& dst);

}  // namespace kafel
