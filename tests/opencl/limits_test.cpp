// What the OpenCL kernels refuse before anything is built or launched (parameters out of range,
// work-groups and local memory beyond the device) and the default choice that must always find
// a kernel and configuration the device can run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "common/problems.hpp"
#include "common/tuning_db_scope.hpp"
#include "core/backend.hpp"
#include "core/cov_backend.hpp"
#include "core/tuning_db.hpp"
#include "kafel/bench.hpp"
#include "kafel/cov.hpp"
#include "kafel/error.hpp"
#include "opencl/gemm_plan.hpp"
#include "opencl/runtime.hpp"
#include "opencl_device.hpp"

namespace kafel {
namespace {

const GemmDesc kSmall{37, 45, 29, Op::N, Op::T, 1.5, 0.25, DType::f32};

// Runs `desc` through the default choice (or `kernel`) on `dev` and expects it to verify.
void expect_runs(const Device& dev, const GemmDesc& desc, const std::string& kernel = {},
                 const Params& params = {}) {
  test::ProblemOptions opt;
  opt.seed = 7;
  auto p = test::make_problem(desc, opt);
  GemmOptions go;
  go.kernel = kernel;
  go.params = params;
  go.compute = desc.types.compute;
  const CheckedRun r = run_verified(dev, desc, p.a, p.b, p.c0, p.c, go);
  EXPECT_TRUE(r.verify.passed) << r.report.kernel << " " << r.report.config << " on "
                               << desc.shape() << ": " << r.verify.message;
}

// ---- what each rung declares ----------------------------------------------------------------

std::string roles_text(const std::vector<TypeSupport>& list) {
  std::string out;
  for (const auto& s : list)
    out += s.types.name() + (s.needs.empty() ? "" : "[" + s.needs.names() + "]") + " ";
  return out;
}

// The element roles every rung implements and the device features each needs, spelled out:
// which cases a device may refuse is this list, not whatever a run happens to throw.
TEST(OpenclRegistry, RolesAndCapabilityNeedsPerRung) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  const GemmTypes half = GemmTypes::of(DType::f16, Compute::f16);
  const std::vector<TypeSupport> buffers = {{DType::f32, {}},        {DType::i32, {}},
                                            {DType::f16, {}},        {DType::bf16, {}},
                                            {DType::f64, Cap::fp64}, {half, Cap::fp16}};
  const std::vector<TypeSupport> images = {{DType::f32, Cap::images},
                                           {DType::i32, Cap::images},
                                           {DType::f16, Cap::images},
                                           {half, Cap::images | Cap::fp16}};
  int rungs = 0;
  for (const auto& k : kernels_for(dev)) {
    if (k.baseline) continue;
    ++rungs;
    const bool image = k.name.rfind("ocl.image", 0) == 0;
    EXPECT_EQ(roles_text(k.types), roles_text(image ? images : buffers)) << k.name;
  }
  EXPECT_EQ(rungs, 11);
}

// ---- parameter ranges -------------------------------------------------------------------------

// Every parameter of every OpenCL kernel states a range: zero (where 0 is not a valid setting) and
// negative values are refused with InvalidArgument before anything is compiled. Zero chunk or
// tile sizes used to reach the kernels and hang them.
TEST(OpenclLimits, ZeroOrNegativeParametersAreRefusedBeforeAnyBuild) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  const auto before = ocl::cache_stats();
  int refused = 0;
  for (const auto& k : kernels_for(dev)) {
    for (const auto& d : k.params.params) {
      std::vector<std::int64_t> bad{-1, std::int64_t(-1) << 40};
      if (d.min > 0) bad.push_back(0);
      for (std::int64_t v : bad) {
        const Params p{{d.name, v}};
        EXPECT_THROW(choose_gemm(dev, kSmall, k.name, p), InvalidArgument)
            << k.name << " " << d.name << "=" << v;
        auto prob = test::make_problem(kSmall, {});
        GemmOptions go;
        go.kernel = k.name;
        go.params = p;
        EXPECT_THROW(gemm(dev, Op::N, Op::T, 1.5, prob.a, prob.b, 0.25, prob.c, go),
                     InvalidArgument)
            << k.name << " " << d.name << "=" << v;
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, 0);
  const auto after = ocl::cache_stats();
  EXPECT_EQ(after.compiled + after.disk_hits + after.memory_hits,
            before.compiled + before.disk_hits + before.memory_hits)
      << "a refused configuration was built";
}

TEST(OpenclLimits, EveryRungHasAPositiveSizeParameter) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  for (const auto& k : kernels_for(dev)) {
    if (k.baseline) continue;
    const bool sized = std::any_of(k.params.params.begin(), k.params.params.end(),
                                   [](const ParamDesc& d) { return d.min >= 1; });
    EXPECT_TRUE(sized) << k.name << " has no parameter whose zero is refused";
    for (const auto& d : k.params.params)
      EXPECT_GE(d.min, 0) << k.name << " " << d.name << " accepts negative values";
  }
}

TEST(OpenclLimits, CovarianceParametersAreRefusedBeforeAnyBuild) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  std::vector<float> x(4 * 100, 1.0f);
  const SamplesView v{x.data(), 4, 100};
  const auto before = ocl::cache_stats();
  for (const auto& k : cov_kernels_for(dev))
    for (const auto& d : k.params.params)
      for (std::int64_t bad : {std::int64_t(0), std::int64_t(-3)}) {
        if (bad == 0 && d.min <= 0) continue;
        CovOptions o;
        o.kernel = k.name;
        o.params = {{d.name, bad}};
        EXPECT_THROW(covariance(dev, v, o), InvalidArgument)
            << k.name << " " << d.name << "=" << bad;
      }
  EXPECT_EQ(ocl::cache_stats().compiled, before.compiled);
}

// A tuning-database entry with a zero tile size (a stale or hand-edited file) is ignored: the
// choice falls back to the defaults instead of reaching a launch.
TEST(OpenclLimits, ZeroParameterFromTheTuningDatabaseIsIgnored) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  namespace fs = std::filesystem;
  const fs::path db =
      fs::temp_directory_path() / ("kafel-zero-db-" + std::to_string(::getpid()) + ".json");
  Database data;
  for (const char* kernel : {"ocl.tiled", "ocl.row"}) {
    Entry e;
    e.device = dev.name;
    e.driver = dev.driver;
    e.vendor = dev.vendor;
    e.kernel = kernel;
    e.dtype = "f32";
    e.size_class = size_class(kSmall);
    e.params =
        std::string(kernel) == "ocl.tiled" ? Params{{"TS", 0}} : Params{{"KCH", 0}, {"WG", 64}};
    data.put(e);
  }
  data.save(db.string());
  {
    test::TuningDbScope scope(db.string());
    for (const char* kernel : {"ocl.tiled", "ocl.row"}) {
      const GemmChoice c = choose_gemm(dev, kSmall, kernel);
      EXPECT_EQ(c.source, "default") << kernel << ": " << c.config();
      EXPECT_TRUE(find_gemm_kernel(dev, kernel).params.check(c.params).empty()) << c.config();
      expect_runs(dev, kSmall, kernel);
    }
  }
  fs::remove(db);
}

// ocl.reg's heuristic: CPU devices get the barrier-free register tiles with a barrier every 256 k
// whose rows are vectors of one native register (8 x 32 f32 / 8 x 16 f64 per work-item at 16
// floats, 16 x 8 / 16 x 4 at 8), GPUs the defaults; each choice is valid and runs.
TEST(OpenclHeuristic, CpuDevicesGetRegisterTilesOfTheirVectorWidthGpusTheDefaults) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(real);
  const GemmKernel& reg = find_gemm_kernel(real, "ocl.reg");
  EXPECT_GT(ocl::native_float_width(real), 0) << "discover() keeps the native float width";
  Device gpu = real;
  gpu.is_gpu = true;
  test::NoTuningDb no_db;
  // The same device as PoCL on AVX-512 (16 floats), AVX2 (8 floats) and SSE (4 floats).
  for (const int width : {16, 8, 4}) {
    Device cpu = real;
    cpu.is_gpu = false;
    for (auto& [key, value] : cpu.details)
      if (key == ocl::kNativeFloatWidth) value = std::to_string(width);
    ASSERT_EQ(ocl::native_float_width(cpu), width);
    for (DType t : {DType::f32, DType::f64}) {
      if (t == DType::f64 && !real.caps.has(Cap::fp64)) continue;
      GemmDesc d = kSmall;
      d.types = t;
      const Params p = choose_gemm(cpu, d, "ocl.reg").params;
      const std::string what = std::string(to_string(t)) + " at width " + std::to_string(width);
      EXPECT_EQ(p.at("SA"), 0);
      EXPECT_EQ(p.at("SB"), 0);
      EXPECT_EQ(p.at("KBAR"), 256);
      // Rows of C per work-item, and per row vectors of exactly one native register.
      const std::int64_t lanes = t == DType::f64 ? width / 2 : width;
      EXPECT_EQ(p.at("VWN"), lanes) << what;
      EXPECT_EQ(p.at("MWG") / p.at("MDIMC"), width == 16 ? 8 : 16) << what;
      EXPECT_EQ(p.at("NWG") / p.at("NDIMC"), width == 16 ? 2 * lanes : lanes) << what;
      EXPECT_TRUE(reg.params.check(p).empty()) << reg.params.check(p);
      EXPECT_EQ(choose_gemm(gpu, d, "ocl.reg").params, reg.params.defaults()) << what;
      if (!real.is_gpu) expect_runs(cpu, d, "ocl.reg");
    }
  }
}

// The pre-pass into panels whose width is not a multiple of its 16-wide blocks (MWG 24, NWG 40:
// on CPU devices pack_blocks then places each element by itself), odd sizes, both transposes and
// a batch.
TEST(OpenclHeuristic, PanelsOfAnyWidthArePackedRight) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  const Params p{{"PK", 1},    {"MWG", 24}, {"MDIMC", 2}, {"VWM", 4}, {"NWG", 40},
                 {"NDIMC", 2}, {"VWN", 4},  {"SA", 0},    {"SB", 0}};
  for (Op oa : {Op::N, Op::T})
    for (Op ob : {Op::N, Op::T}) {
      GemmDesc d{100, 77, 53, oa, ob, 1.5, 0.25, DType::f32};
      d.batch = 3;
      expect_runs(dev, d, "ocl.reg", p);
    }
}

// ---- device limits ----------------------------------------------------------------------------

// A work-group beyond the device's limit is Unsupported before any build or launch, and the
// message names the kernel, its configuration and the limit. The size is past the space's own
// bound of 1024 too, so the plan is made directly (as a caller with raw parameters would).
TEST(OpenclLimits, OversizedWorkGroupIsUnsupported) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  const std::int64_t limit = std::int64_t(ocl::Context::get(dev).max_work_group_size());
  const Params params{{"WGX", 2 * limit}, {"WGY", 1}};
  const GemmDesc d{37, 45, 29, Op::N, Op::N, 1.0, 0.0, DType::f32};
  const GemmKernel& naive = find_gemm_kernel(dev, "ocl.naive");
  const std::string why = naive.can_implement(dev, d, params);
  EXPECT_NE(why.find("CL_DEVICE_MAX_WORK_GROUP_SIZE"), std::string::npos) << why;
  auto p = test::make_problem(d, {});
  const GemmArgs args{d, p.a.data(), p.a.ld(), p.b.data(), p.b.ld(), p.c.data(), p.c.ld()};
  auto plan = naive.make_plan(dev, d, params);
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

// Local memory per element role: the same configuration fits as f32 and not as f64 when the
// device has room for one and not the other, and can_implement says so before any build.
TEST(OpenclLimits, LocalMemoryIsCheckedPerElementType) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(real);
  if (!real.caps.has(Cap::fp64)) GTEST_SKIP() << real.id << " has no cl_khr_fp64";
  Device dev = real;
  dev.local_memory = 48 * 1024;
  const GemmKernel& reg2 = find_gemm_kernel(dev, "ocl.reg2");
  const Params defaults = reg2.params.defaults();  // 32 KiB as f32, 64 KiB as f64
  GemmDesc d = kSmall;
  EXPECT_EQ(reg2.can_implement(dev, d, defaults), "");
  d.types = DType::f64;
  const std::string why = reg2.can_implement(dev, d, defaults);
  EXPECT_NE(why.find("65536 bytes of local memory"), std::string::npos) << why;
  EXPECT_NE(why.find("49152"), std::string::npos) << why;
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

TEST(OpenclLimits, KernelLocalMemoryBeyondTheDeviceIsUnsupported) {
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
TEST(OpenclLimits, DoubleBufferedConfigurations) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  const GemmKernel& reg2 = find_gemm_kernel(dev, "ocl.reg2");
  std::uint64_t seed = 40;
  for (const char* text : {"MWG=64,NWG=32,KWG=8,MDIMC=8,NDIMC=4,VWM=1,VWN=8",
                           "MWG=32,NWG=64,KWG=32,MDIMC=4,NDIMC=8,VWM=8,VWN=2"}) {
    const Params params = reg2.params.parse(text);
    for (const auto& s : {test::Shape{37, 45, 29}, test::Shape{150, 70, 90}}) {
      ++seed;
      expect_runs(dev, {s.m, s.n, s.k, Op::T, Op::N, -1.0, seed % 2 ? 0.0 : 0.5, DType::f32},
                  "ocl.reg2", params);
    }
  }
}

// ocl.reg2 reads a row-major A in place when m and k are tile multiples (AROW: no transposing
// pre-pass): scalar and 8-wide vectors along k, split slices, alpha and beta.
TEST(OpenclLimits, Reg2ReadsRowMajorAInPlace) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  const GemmKernel& reg2 = find_gemm_kernel(dev, "ocl.reg2");
  for (const char* text : {"MWG=64,NWG=32,KWG=8,MDIMC=8,NDIMC=4,VWM=1,VWN=8",
                           "MWG=32,NWG=64,KWG=32,MDIMC=4,NDIMC=8,VWM=8,VWN=2,SPLITK=3",
                           "MWG=128,NWG=64,KWG=16,MDIMC=16,NDIMC=16,VWM=4,VWN=4,SPLITK=2"}) {
    const Params params = reg2.params.parse(text);
    expect_runs(dev, {256, 45, 160, Op::N, Op::N, -1.0, 0.5, DType::f32}, "ocl.reg2", params);
  }
}

// A plan decides how to read A from the layout it was loaded with: loaded again with a leading
// dimension that rules out the in-place read (not a multiple of the vector width), it prepares
// again instead of reading misaligned rows.
TEST(OpenclLimits, PlanReloadedWithAnotherLayoutPreparesAgain) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  const GemmKernel& reg2 = find_gemm_kernel(dev, "ocl.reg2");
  const Params params = reg2.params.parse("MWG=64,NWG=64,KWG=16,MDIMC=16,NDIMC=8,VWM=4,VWN=4");
  const GemmDesc d{128, 64, 64, Op::N, Op::N, 1.0, 0.0, DType::f32};
  auto plan = reg2.make_plan(dev, d, params);
  for (const std::int64_t pad : {0, 3, 0}) {
    test::ProblemOptions opt;
    opt.integer_values = true;
    opt.ld_pad = pad;
    opt.seed = 60 + static_cast<std::uint64_t>(pad);
    auto p = test::make_problem(d, opt);
    Matrix expected = p.c0.clone();
    reference_gemm(d.op_a, d.op_b, d.alpha, p.a, p.b, d.beta, expected);
    plan->load({d, p.a.data(), p.a.ld(), p.b.data(), p.b.ld(), p.c.data(), p.c.ld()}, 1);
    plan->run(0);
    plan->fetch();
    for (std::int64_t i = 0; i < d.m; ++i)
      for (std::int64_t j = 0; j < d.n; ++j)
        ASSERT_EQ(p.c.get(i, j), expected.get(i, j)) << "ld pad " << pad << " at " << i << "," << j;
  }
}

// ---- the default choice -------------------------------------------------------------------------

Device as_gpu(const Device& real, std::uint64_t local_memory) {
  Device d = real;
  d.is_gpu = true;
  d.local_memory = local_memory;
  return d;
}

TEST(OpenclDefault, RegisterBlockedRungByDeviceKind) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  Device cpu = dev;
  cpu.is_gpu = false;
  EXPECT_EQ(choose_gemm(cpu, kSmall).kernel, "ocl.reg");
  EXPECT_EQ(choose_gemm(as_gpu(dev, 48 * 1024), kSmall).kernel, "ocl.reg2");
  // Past 64 x 64 the defaults; at most 64 x 64 (kSmall) one 64 x 64 tile.
  const GemmDesc mid{300, 260, 200, Op::N, Op::T, 1.5, 0.25, DType::f32};
  const GemmChoice f32 = choose_gemm(as_gpu(dev, 48 * 1024), mid);
  EXPECT_EQ(f32.params, find_gemm_kernel(dev, "ocl.reg2").params.defaults()) << f32.config();
  const GemmChoice small = choose_gemm(as_gpu(dev, 48 * 1024), kSmall);
  EXPECT_EQ(small.params.at("MWG"), 64) << small.config();
  EXPECT_EQ(small.params.at("NWG"), 64) << small.config();
}

// f64 on a GPU with 48 KiB of local memory (NVIDIA): ocl.reg2's defaults need 64 KiB; the choice
// must still be a configuration that runs (a half-depth k-tile), and it must verify.
TEST(OpenclDefault, F64FitsAGpuWithLessLocalMemoryThanReg2Needs) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(real);
  if (!real.caps.has(Cap::fp64)) GTEST_SKIP() << real.id << " has no cl_khr_fp64";
  const Device dev = as_gpu(real, 48 * 1024);
  GemmDesc d = kSmall;
  d.types = DType::f64;
  const GemmChoice c = choose_gemm(dev, d);
  EXPECT_EQ(c.kernel, "ocl.reg2") << c.config();
  EXPECT_EQ(c.params.at("KWG"), 8) << c.config();
  EXPECT_EQ(find_gemm_kernel(dev, c.kernel).can_run(dev, d, c.params), "");
  expect_runs(dev, d);
  d.m = 300;  // several tiles and k-tiles
  d.n = 260;
  d.k = 200;
  expect_runs(dev, d);
}

// With even less local memory the choice moves down the preference order (ocl.reg2, ocl.reg,
// ocl.direct, ocl.naive) to the first kernel that fits, and runs. (Past 64 x 64, where ocl.reg2
// takes its 128 x 128 tile: smaller matrices take a 64 x 64 one, which fits in less.)
TEST(OpenclDefault, FallsBackToTheNextKernelThatFits) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(real);
  if (!real.caps.has(Cap::fp64)) GTEST_SKIP() << real.id << " has no cl_khr_fp64";
  GemmDesc d{100, 90, 70, Op::N, Op::T, 1.5, 0.25, DType::f64};
  const struct {
    std::uint64_t local_memory;
    const char* kernel;
  } expected[] = {{20 * 1024, "ocl.reg"}, {12 * 1024, "ocl.direct"}, {0, "ocl.naive"}};
  for (const auto& e : expected) {
    const Device dev = as_gpu(real, e.local_memory);
    const GemmChoice c = choose_gemm(dev, d);
    EXPECT_EQ(c.kernel, e.kernel) << e.local_memory << " bytes: " << c.config();
    expect_runs(dev, d);
  }
}

// Native half arithmetic needs cl_khr_fp16: without it no kernel takes the roles, and the
// refusal names them.
TEST(OpenclDefault, NativeHalfNeedsFp16) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  GemmDesc d = kSmall;
  d.types = GemmTypes::of(DType::f16, Compute::f16);
  if (dev.caps.has(Cap::fp16)) {
    expect_runs(dev, d);
    return;
  }
  try {
    choose_gemm(dev, d);
    FAIL() << "f16 compute was accepted on " << dev.id << ", which has no cl_khr_fp16";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("f16"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kafel
