// Every OpenCL rung x every type it supports against the float64 reference: odd sizes (not
// multiples of any tile), k = 0, transposes, both layouts, ld > cols, alpha/beta, beta = 0 on NaN.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "common/problems.hpp"
#include "core/backend.hpp"
#include "kafel/error.hpp"
#include "opencl/gemm_plan.hpp"
#include "opencl/runtime.hpp"
#include "opencl_device.hpp"

namespace kafel {
namespace {

struct Case {
  std::string kernel;
  DType type;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string s = info.param.kernel + "_" + std::string(to_string(info.param.type));
  for (char& ch : s)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

// Runs one problem. Unsupported is not a failure for optional features (f64 without
// cl_khr_fp64, no images, CLBlast f16 without cl_khr_fp16) and, with `within_device_limits`
// false, for a configuration beyond this device's limits (work-group size, local memory), which
// the plans check before launching. Any other error (DeviceError, BuildError) is a failure.
void check(const Device& dev, const std::string& kernel, const GemmDesc& d,
           const test::ProblemOptions& opt, const Params& params = {},
           bool within_device_limits = true) {
  auto p = test::make_problem(d, opt);
  try {
    const auto r = test::run_and_verify(dev, kernel, p, params);
    EXPECT_TRUE(r.passed) << test::describe(kernel, p, opt) << " " << format_params(params) << ": "
                          << r.message;
  } catch (const Unsupported& e) {
    const bool optional = d.dtype == DType::f64 || kernel.find("image") != std::string::npos ||
                          kernel == "ocl.clblast";
    if (optional) return;
    if (!within_device_limits) {
      GTEST_LOG_(INFO) << kernel << " " << format_params(params) << ": " << e.what();
      return;
    }
    ADD_FAILURE() << test::describe(kernel, p, opt) << ": unexpected Unsupported: " << e.what();
  } catch (const Error& e) {
    ADD_FAILURE() << test::describe(kernel, p, opt) << " " << format_params(params) << ": "
                  << e.what();
  }
}

class OpenclLadder : public ::testing::TestWithParam<Case> {};

TEST_P(OpenclLadder, OddShapesTransposesAndScalars) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  const Case c = GetParam();
  std::uint64_t seed = 11;
  for (const auto& s : test::odd_shapes())
    for (Op oa : {Op::N, Op::T})
      for (Op ob : {Op::N, Op::T}) {
        ++seed;
        const double alpha = seed % 3 == 0 ? 1.0 : -1.5, beta = seed % 2 ? 0.0 : 0.5;
        test::ProblemOptions opt;
        opt.seed = seed;
        check(dev, c.kernel, {s.m, s.n, s.k, oa, ob, alpha, beta, c.type}, opt);
      }
}

TEST_P(OpenclLadder, LayoutsAndLeadingDimensions) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  const Case c = GetParam();
  const Layout R = Layout::RowMajor, C = Layout::ColMajor;
  std::uint64_t seed = 100;
  for (Layout la : {R, C})
    for (Layout lb : {R, C})
      for (Layout lc : {R, C}) {
        test::ProblemOptions opt{la, lb, lc, 3, false, ++seed};
        check(dev, c.kernel, {29, 17, 23, Op::N, Op::T, 2.0, -0.75, c.type}, opt);
      }
}

TEST_P(OpenclLadder, LargerThanOneTile) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  const Case c = GetParam();
  test::ProblemOptions opt;
  opt.seed = 5;
  check(dev, c.kernel, {131, 197, 163, Op::T, Op::N, 0.5, 2.0, c.type}, opt);
}

std::vector<Case> all_cases() {
  std::vector<Case> out;
  auto dev = test::opencl_device();
  if (!dev) return {{"ocl.naive", DType::f32}};  // a placeholder that skips
  for (const auto& k : kernels_for(*dev))
    for (DType t : k.types) out.push_back({k.name, t});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Rungs, OpenclLadder, ::testing::ValuesIn(all_cases()), case_name);

// Non-default points of every tunable space, on sizes that are not tile multiples.
TEST(OpenclParams, SampledConfigurationsAreCorrect) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  std::mt19937_64 rng(3);
  for (const auto& k : kernels_for(dev)) {
    if (k.params.empty() || k.baseline) continue;
    auto space = k.params.enumerate();
    std::shuffle(space.begin(), space.end(), rng);
    space.resize(std::min<std::size_t>(space.size(), 4));
    for (const auto& params : space) {
      test::ProblemOptions opt;
      opt.seed = rng();
      // A point of the space may exceed this device's limits: the plan must say so with
      // Unsupported before anything is launched, never fail with a DeviceError.
      check(dev, k.name, {37, 45, 29, Op::N, Op::T, 1.5, 0.25, DType::f32}, opt, params, false);
    }
  }
}

// A work-group beyond the device's limit is Unsupported before any build or launch, and the
// message names the kernel, its configuration and the limit. The size is past the space's own
// bound of 1024 too, so the plan is made directly (as a caller with raw parameters would).
TEST(OpenclParams, OversizedWorkGroupIsUnsupported) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  const std::int64_t limit = std::int64_t(ocl::Context::get(dev).max_work_group_size());
  const Params params{{"WGX", 2 * limit}, {"WGY", 1}};
  const GemmDesc d{37, 45, 29, Op::N, Op::N, 1.0, 0.0, DType::f32};
  auto p = test::make_problem(d, {});
  const GemmArgs args{d, p.a.data(), p.a.ld(), p.b.data(), p.b.ld(), p.c.data(), p.c.ld()};
  auto plan = find_gemm_kernel(dev, "ocl.naive").make_plan(dev, d, params);
  try {
    plan->load(args, 1);
    plan->run(0);
    FAIL() << "a work-group of " << 2 * limit << " work-items ran";
  } catch (const Unsupported& e) {
    const std::string what = e.what();
    for (const std::string& part :
         {std::string("ocl.naive"), std::string("WGX=") + std::to_string(2 * limit),
          std::to_string(limit), std::string("CL_DEVICE_MAX_WORK_GROUP_SIZE")})
      EXPECT_NE(what.find(part), std::string::npos) << "'" << part << "' missing in: " << what;
  }
}

// A plan whose kernel declares more local memory than the device has and that does not check
// it before the build: what the compiler reports (CL_KERNEL_LOCAL_MEM_SIZE) must still turn into
// Unsupported before anything is launched.
class HugeLocalPlan : public ocl::OclPlan {
 public:
  using OclPlan::OclPlan;

 protected:
  void prepare() override {
    const std::uint64_t n = ctx_.local_memory() / sizeof(float) + 1024;
    const std::string source =
        "__kernel void huge(__global float* x) {\n"
        "  __local float t[N];\n"
        "  t[get_local_id(0)] = x[get_global_id(0)];\n"
        "  barrier(CLK_LOCAL_MEM_FENCE);\n"
        "  x[get_global_id(0)] = t[N - 1 - get_local_id(0)];\n"
        "}\n";
    program_ = ocl::build_source(ctx_, source, "-DN=" + std::to_string(n), "huge.cl");
    kernel_ = checked_kernel(program_, "huge", {64}, "test.huge");
  }
  std::vector<ocl::Event> enqueue(ocl::Operands&) override { return {}; }

 private:
  ocl::Program program_;
  ocl::Kernel kernel_;
};

TEST(OpenclParams, KernelLocalMemoryBeyondTheDeviceIsUnsupported) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  const GemmDesc d{8, 8, 8, Op::N, Op::N, 1.0, 0.0, DType::f32};
  auto p = test::make_problem(d, {});
  const GemmArgs args{d, p.a.data(), p.a.ld(), p.b.data(), p.b.ld(), p.c.data(), p.c.ld()};
  HugeLocalPlan plan(dev, d, {});
  try {
    plan.load(args, 1);
    FAIL() << "a kernel with more local memory than the device has was accepted";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("CL_KERNEL_LOCAL_MEM_SIZE"), std::string::npos)
        << e.what();
  } catch (const BuildError& e) {
    GTEST_SKIP() << "this compiler rejects the kernel itself: " << e.what();
  }
}

// ocl.reg2's double buffer and load split on shapes that need several k-tiles (odd and even
// tile counts): scalar and 8-wide vectors, 1 to 32 loads per work-item, non-square groups.
TEST(OpenclParams, DoubleBufferedConfigurations) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  const auto kernels = kernels_for(dev);
  auto it = std::find_if(kernels.begin(), kernels.end(),
                         [](const GemmKernel& k) { return k.name == "ocl.reg2"; });
  ASSERT_NE(it, kernels.end());
  const std::vector<std::string> configs = {"MWG=64,NWG=32,KWG=8,MDIMC=8,NDIMC=4,VWM=1,VWN=8",
                                            "MWG=32,NWG=64,KWG=32,MDIMC=4,NDIMC=8,VWM=8,VWN=2"};
  std::uint64_t seed = 40;
  for (const auto& text : configs) {
    const Params params = it->params.resolve(parse_params(text));
    for (const auto& s : {test::Shape{37, 45, 29}, test::Shape{150, 70, 90}}) {
      test::ProblemOptions opt;
      opt.seed = ++seed;
      check(dev, it->name, {s.m, s.n, s.k, Op::T, Op::N, -1.0, seed % 2 ? 0.0 : 0.5, DType::f32},
            opt, params);
    }
  }
}

TEST(OpenclParams, IntegerResultsAreExact) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  for (const auto& k : kernels_for(dev)) {
    if (!k.supports(DType::i32)) continue;
    GemmDesc d{33, 21, 70, Op::N, Op::N, 3.0, -2.0, DType::i32};
    test::ProblemOptions opt;
    auto p = test::make_problem(d, opt);
    Matrix expected = p.c.clone();
    reference_gemm(d.op_a, d.op_b, d.alpha, p.a, p.b, d.beta, expected);
    test::run_and_verify(dev, k.name, p);
    for (std::int64_t i = 0; i < d.m; ++i)
      for (std::int64_t j = 0; j < d.n; ++j)
        ASSERT_EQ(p.c.get(i, j), expected.get(i, j)) << k.name << " at " << i << "," << j;
  }
}

}  // namespace
}  // namespace kafel
