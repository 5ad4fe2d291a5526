// Reference GEMM: operands widened to double (int64 for i32) in dense row-major copies,
// accumulated row by row so the inner loop streams; rows split over threads.
#include "core/reference.hpp"

#include <algorithm>
#include <functional>
#include <string>
#include <thread>

#include "core/backend.hpp"
#include "core/thread_pool.hpp"
#include "kafel/error.hpp"

namespace kafel {
namespace {

struct Shape {
  std::int64_t m, n, k;
};

Shape check_shapes(Op op_a, Op op_b, const MatrixView& A, const MatrixView& B,
                   const MatrixView& C) {
  A.validate("A");
  B.validate("B");
  C.validate("C");
  const std::int64_t m = op_a == Op::N ? A.rows : A.cols;
  const std::int64_t k = op_a == Op::N ? A.cols : A.rows;
  const std::int64_t kb = op_b == Op::N ? B.rows : B.cols;
  const std::int64_t n = op_b == Op::N ? B.cols : B.rows;
  if (k != kb || C.rows != m || C.cols != n)
    throw InvalidArgument("reference GEMM: shapes do not agree (op(A) " + std::to_string(m) + "x" +
                          std::to_string(k) + ", op(B) " + std::to_string(kb) + "x" +
                          std::to_string(n) + ", C " + std::to_string(C.rows) + "x" +
                          std::to_string(C.cols) + ")");
  return {m, n, k};
}

// op(X) as a dense row-major rows x cols array of T.
template <class T>
std::vector<T> dense(const MatrixView& X, Op op, std::int64_t rows, std::int64_t cols) {
  std::vector<T> out(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      out[i * cols + j] = static_cast<T>(op == Op::N ? X.get(i, j) : X.get(j, i));
  return out;
}

}  // namespace

std::vector<double> reference_f64(Op op_a, Op op_b, double alpha, const MatrixView& A,
                                  const MatrixView& B, double beta, const MatrixView& C0) {
  const Shape s = check_shapes(op_a, op_b, A, B, C0);
  const auto a = dense<double>(A, op_a, s.m, s.k);
  const auto b = dense<double>(B, op_b, s.k, s.n);
  std::vector<double> c(static_cast<std::size_t>(s.m * s.n), 0.0);
  parallel_rows(s.m, 16, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t i = r0; i < r1; ++i) {
      double* ci = &c[i * s.n];
      for (std::int64_t p = 0; p < s.k; ++p) {
        const double aip = a[i * s.k + p];
        const double* bp = &b[p * s.n];
        for (std::int64_t j = 0; j < s.n; ++j) ci[j] += aip * bp[j];
      }
      for (std::int64_t j = 0; j < s.n; ++j)
        ci[j] = alpha * ci[j] + (beta != 0.0 ? beta * C0.get(i, j) : 0.0);
    }
  });
  return c;
}

std::vector<std::int32_t> reference_i32(Op op_a, Op op_b, double alpha, const MatrixView& A,
                                        const MatrixView& B, double beta, const MatrixView& C0) {
  const Shape s = check_shapes(op_a, op_b, A, B, C0);
  // Unsigned arithmetic wraps modulo 2^32 exactly like two's-complement int32 kernels.
  const auto a = dense<std::int64_t>(A, op_a, s.m, s.k);
  const auto b = dense<std::int64_t>(B, op_b, s.k, s.n);
  const auto al = static_cast<std::uint32_t>(static_cast<std::int32_t>(alpha));
  const auto be = static_cast<std::uint32_t>(static_cast<std::int32_t>(beta));
  std::vector<std::int32_t> c(static_cast<std::size_t>(s.m * s.n), 0);
  parallel_rows(s.m, 16, [&](std::int64_t r0, std::int64_t r1) {
    std::vector<std::uint32_t> acc(static_cast<std::size_t>(s.n));
    for (std::int64_t i = r0; i < r1; ++i) {
      std::fill(acc.begin(), acc.end(), 0u);
      for (std::int64_t p = 0; p < s.k; ++p) {
        const auto aip = static_cast<std::uint32_t>(a[i * s.k + p]);
        for (std::int64_t j = 0; j < s.n; ++j)
          acc[j] += aip * static_cast<std::uint32_t>(b[p * s.n + j]);
      }
      for (std::int64_t j = 0; j < s.n; ++j) {
        std::uint32_t v = al * acc[j];
        if (beta != 0.0) v += be * static_cast<std::uint32_t>(C0.at<std::int32_t>(i, j));
        c[i * s.n + j] = static_cast<std::int32_t>(v);
      }
    }
  });
  return c;
}

void reference_gemm(Op op_a, Op op_b, double alpha, const MatrixView& A, const MatrixView& B,
                    double beta, const MatrixView& C) {
  const std::int64_t m = C.rows, n = C.cols;
  if (is_integer(C.dtype)) {
    const auto r = reference_i32(op_a, op_b, alpha, A, B, beta, C);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) C.at<std::int32_t>(i, j) = r[i * n + j];
    return;
  }
  const auto r = reference_f64(op_a, op_b, alpha, A, B, beta, C);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) C.set(i, j, r[i * n + j]);
}

}  // namespace kafel
