// `kafel gemm --batch` checked from outside: .npy stacks written for it, and its --out stack
// compared with a direct float64 product of every matrix (shared by the cpu and opencl suites).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "cli_test_util.hpp"
#include "kafel/io.hpp"
#include "kafel/matrix.hpp"

namespace kafel::test {

// `count` random normal f32 matrices rows x cols.
inline std::vector<Matrix> random_stack(std::int64_t count, std::int64_t rows, std::int64_t cols,
                                        std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Matrix> out;
  for (std::int64_t i = 0; i < count; ++i) {
    out.emplace_back(DType::f32, rows, cols);
    fill_random_normal(out.back(), rng);
  }
  return out;
}

inline std::vector<MatrixView> views_of(const std::vector<Matrix>& list) {
  return {list.begin(), list.end()};
}

// Matrix i of a list that holds one per matrix, or one for all.
inline const Matrix& nth(const std::vector<Matrix>& list, std::size_t i) {
  return list[list.size() == 1 ? 0 : i];
}

// The stack in `path` holds `count` matrices, each alpha * A[i] * B[i] (a single A or B serving
// every one) computed here element by element in float64, within f32 rounding.
inline void expect_batch_product(const std::string& path, std::size_t count,
                                 const std::vector<Matrix>& a, const std::vector<Matrix>& b,
                                 double alpha = 1.0) {
  NpyHeader h;
  const std::vector<Matrix> c = read_npy_stack(path, &h);
  const std::int64_t m = a[0].rows(), k = a[0].cols(), n = b[0].cols();
  ASSERT_EQ(h.shape, (std::vector<std::int64_t>{std::int64_t(count), m, n}));
  for (std::size_t t = 0; t < count; ++t) {
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        double want = 0, scale = 0;
        for (std::int64_t p = 0; p < k; ++p) {
          want += nth(a, t).get(i, p) * nth(b, t).get(p, j);
          scale += std::fabs(nth(a, t).get(i, p) * nth(b, t).get(p, j));
        }
        want *= alpha;
        ASSERT_NEAR(c[t].get(i, j), want, 1e-5 * (1 + std::fabs(alpha) * scale))
            << "matrix " << t << " (" << i << ", " << j << ")";
      }
    }
  }
}

}  // namespace kafel::test
