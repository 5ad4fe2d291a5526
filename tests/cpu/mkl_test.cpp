// The cpu.mkl baseline where MKL is installed ($KAFEL_MKL): k = 0 (C = beta C, A and B unread),
// and i8 at the ends of the range through the +128 copy of A and MKL's offset. The ladder suites
// cover the rest of its roles and shapes; without MKL every case is skipped with the reason.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "common/problems.hpp"
#include "kafel/error.hpp"
#include "kafel/gemm.hpp"
#include "kafel/kernels.hpp"

namespace kafel {
namespace {

// "" when cpu.mkl runs here, else why not.
std::string mkl_missing(const Device& cpu) {
  try {
    choose_gemm(cpu, {64, 64, 64, Op::N, Op::N, 1.0, 0.0, DType::f32}, "cpu.mkl");
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

TEST(CpuMkl, ZeroKScalesC) {
  const Device cpu = select_device("cpu");
  if (const std::string why = mkl_missing(cpu); !why.empty()) GTEST_SKIP() << why;
  GemmTypes bf16 = DType::bf16;
  bf16.c = DType::f32;
  for (const GemmTypes& t :
       {GemmTypes(DType::f32), GemmTypes(DType::f64), GemmTypes(DType::i8), bf16}) {
    const double alpha = test::scalar_for(t, 3.0), beta = test::scalar_for(t, 2.0);
    GemmDesc d{5, 4, 0, Op::N, Op::N, alpha, beta, t};
    auto p = test::make_problem(d);
    const auto r = test::run_and_verify(cpu, "cpu.mkl", p);
    EXPECT_TRUE(r.passed) << t.name() << ": " << r.message;
    EXPECT_EQ(p.c.get(2, 3), beta * p.c0.get(2, 3)) << t.name();
  }
}

// k = 0 with operands that point at non-zero memory: nothing of it may reach C.
TEST(CpuMkl, ZeroKReadsNeitherOperand) {
  const Device cpu = select_device("cpu");
  if (const std::string why = mkl_missing(cpu); !why.empty()) GTEST_SKIP() << why;
  std::vector<double> a(64, 1.0), b(64, 1.0);
  const MatrixView av{DType::f64, a.data(), 5, 0, 8, Layout::RowMajor};
  const MatrixView bv{DType::f64, b.data(), 0, 4, 8, Layout::RowMajor};
  Matrix c(DType::f64, 5, 4);
  for (std::int64_t i = 0; i < 5; ++i)
    for (std::int64_t j = 0; j < 4; ++j) c.set(i, j, double(i * 4 + j));
  gemm(cpu, Op::N, Op::N, 3.0, av, bv, 0.5, c.view(), {"cpu.mkl", {}, {}});
  for (std::int64_t i = 0; i < 5; ++i)
    for (std::int64_t j = 0; j < 4; ++j) EXPECT_EQ(c.get(i, j), 0.5 * double(i * 4 + j));
}

// -128 x -128 and -128 x 127 over k = 4099: the largest products, exact in int32.
TEST(CpuMkl, Int8ExactAtTheEndsOfTheRange) {
  const Device cpu = select_device("cpu");
  if (const std::string why = mkl_missing(cpu); !why.empty()) GTEST_SKIP() << why;
  const std::int64_t m = 9, n = 21, k = 4099;
  for (int b_value : {-128, 127})
    for (Op oa : {Op::N, Op::T}) {
      Matrix a(DType::i8, oa == Op::N ? m : k, oa == Op::N ? k : m), b(DType::i8, k, n);
      std::memset(a.data(), -128, std::size_t(m * k));
      std::memset(b.data(), b_value, std::size_t(k * n));
      Matrix c(DType::i32, m, n);
      gemm(cpu, oa, Op::N, 1.0, a, b, 0.0, c, {"cpu.mkl", {}, {}});
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j)
          ASSERT_EQ(c.get(i, j), double(k) * -128.0 * b_value)
              << i << "," << j << " " << to_string(oa);
    }
}

}  // namespace
}  // namespace kafel
