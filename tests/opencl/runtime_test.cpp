// The OpenCL runtime: device ids, error names, build failures carrying their log, and the
// program caches (in memory and on disk) being reused.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "opencl/runtime.hpp"
#include "opencl_device.hpp"

namespace kafel {
namespace {

namespace fs = std::filesystem;

TEST(OpenclRuntime, ErrorNames) {
  EXPECT_EQ(ocl::error_name(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES");
  EXPECT_EQ(ocl::error_name(-9999), "CL_UNKNOWN_ERROR(-9999)");
  try {
    ocl::check(CL_INVALID_WORK_GROUP_SIZE, "clEnqueueNDRangeKernel");
    FAIL() << "check did not throw";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("CL_INVALID_WORK_GROUP_SIZE (-54)"), std::string::npos)
        << e.what();
  }
}

TEST(OpenclRuntime, DevicesHaveCanonicalIds) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  for (const auto& d : ocl::discover()) {
    EXPECT_EQ(d.id, "opencl:" + std::to_string(d.platform) + ":" + std::to_string(d.index));
    EXPECT_EQ(d.backend, "opencl");
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.compute_units, 0);
  }
  EXPECT_EQ(select_device(dev.id).id, dev.id);
}

TEST(OpenclRuntime, BrokenSourceReportsItsBuildLog) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  auto& ctx = ocl::Context::get(dev);
  try {
    ocl::build_source(ctx, "__kernel void broken(__global float* x) { x[0] = undeclared_name; }",
                      "", "broken.cl");
    FAIL() << "a broken kernel built";
  } catch (const BuildError& e) {
    EXPECT_NE(std::string(e.what()).find("broken.cl"), std::string::npos) << e.what();
    EXPECT_NE(e.log().find("undeclared_name"), std::string::npos) << e.log();
  }
}

TEST(OpenclRuntime, BinaryCacheIsReused) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  auto& ctx = ocl::Context::get(dev);
  const fs::path dir =
      fs::temp_directory_path() /
      ("kafel-cache-test-" +
       std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  const char* old = std::getenv("KAFEL_CACHE_DIR");
  std::string saved = old ? old : "";
  setenv("KAFEL_CACHE_DIR", dir.c_str(), 1);
  const std::string src = "__kernel void twice(__global float* x) { x[get_global_id(0)] *= 2; }";

  const auto s0 = ocl::cache_stats();
  { auto p = ocl::build_source(ctx, src, "-DUNIQUE=1", "twice.cl"); }
  const auto s1 = ocl::cache_stats();
  EXPECT_EQ(s1.compiled, s0.compiled + 1);
  { auto p = ocl::build_source(ctx, src, "-DUNIQUE=1", "twice.cl"); }
  EXPECT_EQ(ocl::cache_stats().memory_hits, s1.memory_hits + 1);

  int files = 0;
  for (const auto& e : fs::directory_iterator(dir / "opencl"))
    files += e.path().extension() == ".clbin";
  EXPECT_EQ(files, 1);

  ocl::clear_memory_cache();
  auto p = ocl::build_source(ctx, src, "-DUNIQUE=1", "twice.cl");
  const auto s2 = ocl::cache_stats();
  EXPECT_EQ(s2.disk_hits, s1.disk_hits + 1);
  EXPECT_EQ(s2.compiled, s1.compiled);
  ocl::Kernel k = p.kernel("twice");  // the cached binary is usable

  if (old)
    setenv("KAFEL_CACHE_DIR", saved.c_str(), 1);
  else
    unsetenv("KAFEL_CACHE_DIR");
  fs::remove_all(dir);
}

TEST(OpenclRuntime, BuffersRoundTrip) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  auto& ctx = ocl::Context::get(dev);
  std::vector<float> in(1000), out(1000, -1);
  for (int i = 0; i < 1000; ++i) in[i] = float(i) * 0.5f;
  ocl::Buffer b(ctx, in.size() * sizeof(float));
  b.write(ctx, in.data(), b.bytes());
  auto p = ocl::build_source(ctx,
                             "__kernel void inc(__global float* x, int n) { int i = "
                             "get_global_id(0); if (i < n) x[i] += 1; }",
                             "", "inc.cl");
  auto k = p.kernel("inc");
  k.args(b, 1000);
  auto e = ocl::launch(ctx, k, {1000}, {64});  // rounded up to 1024, guarded
  EXPECT_GE(e.wait_ms(), 0.0);
  b.read(ctx, out.data(), b.bytes());
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(out[i], in[i] + 1) << i;
  EXPECT_THROW(p.kernel("no_such_kernel"), DeviceError);
}

}  // namespace
}  // namespace kafel
