// The tuner end to end on a tiny space: it verifies and times candidates, writes the JSON
// database, and choose_gemm then picks the stored parameters up (user overrides still win).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "common/tuning_db_scope.hpp"
#include "core/tuning_db.hpp"
#include "kafel/kernels.hpp"
#include "kafel/tune.hpp"
#include "opencl_device.hpp"

namespace kafel {
namespace {

namespace fs = std::filesystem;

TEST(OpenclTune, TinySearchFillsTheDatabaseThatChoicesUse) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  const fs::path db =
      fs::temp_directory_path() /
      ("kafel-tune-test-" +
       std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + ".json");
  TuneOptions opt;
  opt.kernels = {"ocl.tiled"};  // TS in {8, 16, 32}: three candidates
  opt.sizes = {{48, 48, 48}};
  opt.budget_s = 20;
  opt.repetitions = 1;
  opt.db_path = db.string();
  const auto results = tune(dev, opt);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].space, 3);
  EXPECT_GE(results[0].tried, 1);
  ASSERT_FALSE(results[0].best.empty());

  const auto stored = Database::load(db.string());
  ASSERT_EQ(stored.entries().size(), 1u);
  EXPECT_EQ(stored.entries()[0].kernel, "ocl.tiled");
  EXPECT_EQ(stored.entries()[0].dtype, "f32");
  EXPECT_EQ(stored.entries()[0].device, dev.name);
  EXPECT_EQ(stored.entries()[0].size_class, "small");

  {
    test::TuningDbScope scope(db.string());
    const GemmDesc d{40, 50, 60, Op::N, Op::N, 1, 0, DType::f32};
    const GemmChoice tuned = choose_gemm(dev, d, "ocl.tiled");
    EXPECT_EQ(tuned.params, results[0].best);
    EXPECT_EQ(tuned.source.rfind("tuned: ", 0), 0u) << tuned.source;
    // User overrides still win, and the source says so.
    const GemmChoice user = choose_gemm(dev, d, "ocl.tiled", {{"TS", 8}});
    EXPECT_EQ(user.params.at("TS"), 8);
    EXPECT_NE(user.source.find("user"), std::string::npos) << user.source;
    // Other element types fall back to the defaults.
    const GemmChoice i32 =
        choose_gemm(dev, GemmDesc{40, 50, 60, Op::N, Op::N, 1, 0, DType::i32}, "ocl.tiled");
    EXPECT_EQ(i32.source, "default");
  }
  fs::remove(db);
}

TEST(OpenclTune, SizeClasses) {
  const auto cls = [](std::int64_t m, std::int64_t n, std::int64_t k) {
    return size_class(GemmDesc{m, n, k, Op::N, Op::N, 1, 0, DType::f32});
  };
  EXPECT_EQ(cls(13, 24, 35), "small");
  EXPECT_EQ(cls(1024, 1024, 1024), "medium");
  EXPECT_EQ(cls(4096, 4096, 4096), "large");
}

}  // namespace
}  // namespace kafel
