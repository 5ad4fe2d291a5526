// Every CUDA rung (and cuBLAS) against the float64 reference on the GPU: odd sizes, k = 0,
// transposes, layouts, ld > cols, alpha/beta (beta = 0 with NaN in C), f32 / f64 / i32.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "common/problems.hpp"
#include "core/backend.hpp"
#include "kafel/error.hpp"

namespace kafel {
namespace {

std::optional<Device> cuda_device() {
  for (const auto& d : list_devices())
    if (d.backend == "cuda") return d;
  return std::nullopt;
}

#define KAFEL_REQUIRE_CUDA(dev)                               \
  const std::optional<Device> dev##_found = cuda_device();    \
  if (!dev##_found) GTEST_SKIP() << "no CUDA device present"; \
  const Device dev = *dev##_found

struct Case {
  std::string kernel;
  DType type;
  Params params;
};

bool fits(const std::string& kernel, const test::Shape& s) {
  return kernel != "cuda.oneblock" || s.m * s.n <= 1024;
}

// Shapes that straddle the 32 / 64 / 128 / 256 tiles of the faster rungs.
std::vector<test::Shape> tile_edge_shapes() {
  return {{129, 257, 33}, {200, 130, 70}, {255, 129, 17}, {131, 263, 129}};
}

class CudaLadder : public ::testing::TestWithParam<Case> {
 protected:
  void check(const Device& dev, const test::Shape& s, Op oa, Op ob, double alpha, double beta,
             const test::ProblemOptions& opt) {
    const Case& c = GetParam();
    GemmDesc d{s.m, s.n, s.k, oa, ob, alpha, beta, c.type};
    auto p = test::make_problem(d, opt);
    const auto r = test::run_and_verify(dev, c.kernel, p, c.params);
    EXPECT_TRUE(r.passed) << test::describe(c.kernel, p, opt) << " " << format_params(c.params)
                          << ": " << r.message;
  }
};

TEST_P(CudaLadder, OddShapesTransposesAndScalars) {
  KAFEL_REQUIRE_CUDA(dev);
  std::uint64_t seed = 11;
  auto shapes = test::odd_shapes();
  for (const auto& s : tile_edge_shapes()) shapes.push_back(s);
  for (const auto& s : shapes) {
    if (!fits(GetParam().kernel, s)) continue;
    for (Op oa : {Op::N, Op::T})
      for (Op ob : {Op::N, Op::T}) {
        ++seed;
        const double alpha = seed % 3 == 0 ? 1.0 : -1.5, beta = seed % 2 ? 0.0 : 0.5;
        test::ProblemOptions opt;
        opt.seed = seed;
        check(dev, s, oa, ob, alpha, beta, opt);
      }
  }
}

TEST_P(CudaLadder, LayoutsAndLeadingDimensions) {
  KAFEL_REQUIRE_CUDA(dev);
  const Layout R = Layout::RowMajor, C = Layout::ColMajor;
  std::uint64_t seed = 100;
  for (Layout la : {R, C})
    for (Layout lb : {R, C})
      for (Layout lc : {R, C}) {
        test::ProblemOptions opt{la, lb, lc, 3, false, ++seed};
        check(dev, {29, 17, 23}, Op::N, Op::T, 2.0, -0.75, opt);
      }
}

TEST_P(CudaLadder, ExactOnIntegerValuedInputs) {
  KAFEL_REQUIRE_CUDA(dev);
  const Case& c = GetParam();
  GemmDesc d{13, 24, 35, Op::N, Op::N, 1.0, 1.0, c.type};
  test::ProblemOptions opt;
  opt.integer_values = true;
  auto p = test::make_problem(d, opt);
  const Matrix expected = p.c.clone();
  reference_gemm(d.op_a, d.op_b, d.alpha, p.a, p.b, d.beta, expected);
  test::run_and_verify(dev, c.kernel, p, c.params);
  for (std::int64_t i = 0; i < d.m; ++i)
    for (std::int64_t j = 0; j < d.n; ++j)
      ASSERT_EQ(p.c.get(i, j), expected.get(i, j)) << c.kernel << " at (" << i << "," << j << ")";
}

TEST_P(CudaLadder, LargerThanSeveralTiles) {
  KAFEL_REQUIRE_CUDA(dev);
  const Case& c = GetParam();
  if (c.kernel == "cuda.oneblock") GTEST_SUCCEED() << "one block cannot hold this size";
  if (c.kernel == "cuda.oneblock") return;
  test::ProblemOptions opt;
  opt.seed = 5;
  check(dev, {517, 389, 1031}, Op::N, Op::N, 0.5, 0.0, opt);
  check(dev, {388, 516, 260}, Op::T, Op::T, 1.0, 2.0, opt);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  const std::vector<DType> all = {DType::f32, DType::f64, DType::i32};
  for (const char* k : {"cuda.oneblock", "cuda.blocks", "cuda.smem", "cuda.reg1d", "cuda.reg2d",
                        "cuda.vec", "cuda.warptile", "cuda.pipelined"})
    for (DType t : all) out.push_back({k, t, {}});
  for (DType t : all) {
    out.push_back({"cuda.gridstride", t, {}});
    out.push_back({"cuda.gridstride", t, {{"block", 3}, {"grid", 2}}});
    out.push_back({"cuda.smem", t, {{"TS", 16}}});
  }
  // Every fixed-tile line of the registry (one per compiled shape), in every type it lists.
  for (const GemmKernel& k : cuda_backend().gemm_kernels())
    if (k.name.rfind("cuda.pipelined.", 0) == 0)
      for (DType t : k.types) out.push_back({k.name, t, {}});
  for (DType t : {DType::f32, DType::f64}) out.push_back({"cuda.cublas", t, {}});
  return out;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string n = info.param.kernel.substr(5) + "_" + std::string(to_string(info.param.type));
  for (const auto& [k, v] : info.param.params) n += "_" + k + std::to_string(v);
  for (char& ch : n)
    if (ch == '.') ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Rungs, CudaLadder, ::testing::ValuesIn(cases()), case_name);

// The limit is checked in make_plan before any device call, so this runs without a GPU too.
TEST(CudaOneBlock, MoreThan1024ThreadsIsUnsupported) {
  Device fake;
  fake.id = "cuda:0";
  fake.backend = "cuda";
  const GemmKernel& k = find_gemm_kernel(fake, "cuda.oneblock");
  GemmDesc d{33, 32, 8, Op::N, Op::N, 1.0, 0.0, DType::f32};
  try {
    k.make_plan(fake, d, {});
    FAIL() << "cuda.oneblock accepted 33x32 = 1056 threads";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("1024"), std::string::npos) << e.what();
  }
}

TEST(CudaDevices, DescribeTheGpu) {
  KAFEL_REQUIRE_CUDA(dev);
  EXPECT_EQ(dev.id, "cuda:0");
  EXPECT_TRUE(dev.is_gpu);
  EXPECT_GT(dev.compute_units, 0);
  EXPECT_GT(dev.peak_gflops_f32, 1000.0);
  EXPECT_GT(dev.peak_gflops_f64, 0.0);
  EXPECT_GT(dev.global_memory, 0u);
  EXPECT_GT(dev.cache_bytes, 0u);
  EXPECT_EQ(select_device("cuda:0").id, "cuda:0");
}

// A problem larger than the GPU's memory is a clear OutOfMemory naming the bytes.
TEST(CudaMemory, TooLargeProblemIsOutOfMemory) {
  KAFEL_REQUIRE_CUDA(dev);
  const GemmKernel& k = find_gemm_kernel(dev, "cuda.blocks");
  GemmDesc d{1 << 20, 1 << 20, 1 << 20, Op::N, Op::N, 1.0, 0.0, DType::f32};
  auto plan = k.make_plan(dev, d, {});
  float dummy = 0;
  GemmArgs args{d, &dummy, d.k, &dummy, d.n, &dummy, d.n};
  try {
    plan->load(args, 1);
    FAIL() << "a 4 TiB operand was accepted";
  } catch (const OutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("bytes"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kafel
