// The tuner end to end on a tiny space: it verifies and times candidates, writes the JSON
// database, and a later plan picks the stored parameters up through choose_params.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "core/backend.hpp"
#include "opencl_device.hpp"
#include "core/tuning_db.hpp"
#include "tune/tuner.hpp"

namespace kafel {
namespace {

namespace fs = std::filesystem;

TEST(OpenclTune, TinySearchFillsTheDatabaseThatPlansUse) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(dev);
  const fs::path db =
      fs::temp_directory_path() /
      ("kafel-tune-test-" +
       std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + ".json");
  tune::TuneOptions opt;
  opt.kernels = {"ocl.tiled"};  // TS in {8, 16, 32}: three candidates
  opt.sizes = {48};
  opt.budget_s = 20;
  opt.repetitions = 1;
  opt.db_path = db.string();
  const auto results = tune::tune(dev, opt);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].space, 3);
  EXPECT_GE(results[0].tried, 1);
  ASSERT_FALSE(results[0].best.empty());

  const auto stored = tune::Database::load(db.string());
  ASSERT_EQ(stored.entries().size(), 1u);
  EXPECT_EQ(stored.entries()[0].kernel, "ocl.tiled");
  EXPECT_EQ(stored.entries()[0].device, dev.name);
  EXPECT_EQ(stored.entries()[0].size_class, "small");

  const char* old = std::getenv("KAFEL_TUNE_DB");
  const std::string saved = old ? old : "";
  setenv("KAFEL_TUNE_DB", db.c_str(), 1);
  tune::reload_active_database();
  const auto& k = find_gemm_kernel(dev, "ocl.tiled");
  std::string source;
  const GemmDesc d{40, 50, 60, Op::N, Op::N, 1, 0, DType::f32};
  const Params p = choose_params(k, dev, d, {}, &source);
  EXPECT_EQ(p, results[0].best);
  EXPECT_EQ(source.rfind("tuned: ", 0), 0u) << source;
  // User overrides still win, and the source says so.
  const Params q = choose_params(k, dev, d, {{"TS", 8}}, &source);
  EXPECT_EQ(q.at("TS"), 8);
  EXPECT_NE(source.find("user"), std::string::npos) << source;
  // Other types fall back to the defaults.
  choose_params(k, dev, GemmDesc{40, 50, 60, Op::N, Op::N, 1, 0, DType::f64}, {}, &source);
  EXPECT_EQ(source, "default");

  if (old)
    setenv("KAFEL_TUNE_DB", saved.c_str(), 1);
  else
    unsetenv("KAFEL_TUNE_DB");
  tune::reload_active_database();
  fs::remove(db);
}

TEST(OpenclTune, SizeClasses) {
  EXPECT_EQ(tune::size_class({13, 24, 35}), "small");
  EXPECT_EQ(tune::size_class({1024, 1024, 1024}), "medium");
  EXPECT_EQ(tune::size_class({4096, 4096, 4096}), "large");
}

}  // namespace
}  // namespace kafel
