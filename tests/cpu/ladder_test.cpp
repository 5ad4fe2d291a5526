// The CPU seed rungs (naive, cached-column) against the float64 reference on every edge case:
// odd sizes, k = 0, transposes, layouts, ld > cols, alpha/beta, every element type.
#include <gtest/gtest.h>

#include "common/problems.hpp"
#include "core/backend.hpp"

namespace kafel {
namespace {

struct Case {
  std::string kernel;
  DType type;
};

class CpuLadder : public ::testing::TestWithParam<Case> {};

TEST_P(CpuLadder, OddShapesTransposesAndScalars) {
  const Device cpu = select_device("cpu");
  const Case c = GetParam();
  std::uint64_t seed = 7;
  for (const auto& s : test::odd_shapes())
    for (Op oa : {Op::N, Op::T})
      for (Op ob : {Op::N, Op::T}) {
        const double alpha = seed % 3 == 0 ? 1.0 : -1.5, beta = seed % 2 ? 0.0 : 0.5;
        GemmDesc d{s.m, s.n, s.k, oa, ob, alpha, beta, c.type};
        test::ProblemOptions opt;
        opt.seed = ++seed;
        auto p = test::make_problem(d, opt);
        const auto r = test::run_and_verify(cpu, c.kernel, p);
        EXPECT_TRUE(r.passed) << test::describe(c.kernel, p, opt) << ": " << r.message;
      }
}

TEST_P(CpuLadder, LayoutsAndLeadingDimensions) {
  const Device cpu = select_device("cpu");
  const Case c = GetParam();
  const Layout R = Layout::RowMajor, C = Layout::ColMajor;
  std::uint64_t seed = 100;
  for (Layout la : {R, C})
    for (Layout lb : {R, C})
      for (Layout lc : {R, C}) {
        GemmDesc d{29, 17, 23, Op::N, Op::T, 2.0, -0.75, c.type};
        test::ProblemOptions opt{la, lb, lc, 3, false, ++seed};
        auto p = test::make_problem(d, opt);
        const auto r = test::run_and_verify(cpu, c.kernel, p);
        EXPECT_TRUE(r.passed) << test::describe(c.kernel, p, opt) << ": " << r.message;
      }
}

TEST_P(CpuLadder, ExactOnIntegerValuedInputs) {
  const Device cpu = select_device("cpu");
  const Case c = GetParam();
  GemmDesc d{13, 24, 35, Op::N, Op::N, 1.0, 1.0, c.type};
  test::ProblemOptions opt;
  opt.integer_values = true;
  auto p = test::make_problem(d, opt);
  const Matrix expected = p.c.clone();
  reference_gemm(d.op_a, d.op_b, d.alpha, p.a, p.b, d.beta, expected);
  test::run_and_verify(cpu, c.kernel, p);
  for (std::int64_t i = 0; i < d.m; ++i)
    for (std::int64_t j = 0; j < d.n; ++j)
      ASSERT_EQ(p.c.get(i, j), expected.get(i, j)) << c.kernel << " at (" << i << "," << j << ")";
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const char* k : {"cpu.naive", "cpu.cached_column"})
    for (DType t : {DType::f32, DType::f64, DType::i32, DType::f16}) out.push_back({k, t});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Rungs, CpuLadder, ::testing::ValuesIn(cases()), [](const auto& info) {
  std::string n = info.param.kernel.substr(4) + "_" + std::string(to_string(info.param.type));
  return n;
});

}  // namespace
}  // namespace kafel
