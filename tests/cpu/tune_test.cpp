// The tuner's rule for what it stores: it starts from the kernel's own choice, and when nothing
// beats that the entry records so (no parameters) instead of pinning the tuning shape's values.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include "common/tuning_db_scope.hpp"
#include "core/backend.hpp"
#include "core/registry.hpp"
#include "core/tuning_db.hpp"
#include "kafel/kernels.hpp"
#include "kafel/tune.hpp"

namespace kafel {
namespace {

namespace fs = std::filesystem;

fs::path temp_db(const char* what) {
  return fs::temp_directory_path() /
         (std::string("kafel-") + what + "-" +
          std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + ".json");
}

// cpu.cached_column's space is its one default point (threads has no candidates), so the
// search can only confirm the kernel's own choice.
TEST(Tune, AnUnbeatenStartIsStoredAsTheKernelsOwnChoice) {
  const Device dev = select_device("cpu");
  const fs::path db = temp_db("tune-start");
  TuneOptions opt;
  opt.kernels = {"cpu.cached_column"};
  opt.sizes = {{40, 40, 40}};
  opt.budget_s = 5;
  opt.repetitions = 1;
  opt.db_path = db.string();
  const auto results = tune(dev, opt);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].kept_start);
  EXPECT_EQ(results[0].space, 1);
  const GemmDesc d{40, 40, 40, Op::N, Op::N, 1, 0, DType::f32};
  const GemmKernel& k = find_gemm_kernel(dev, "cpu.cached_column");
  EXPECT_EQ(results[0].best, heuristic_params(k, dev, d));

  const auto stored = Database::load(db.string());
  ASSERT_EQ(stored.entries().size(), 1u);
  EXPECT_TRUE(stored.entries()[0].params.empty());
  EXPECT_GT(stored.entries()[0].gflops, 0);

  test::TuningDbScope scope(db.string());
  const GemmChoice c = choose_gemm(dev, d, "cpu.cached_column");
  EXPECT_EQ(c.params, heuristic_params(k, dev, d));
  EXPECT_NE(c.source.find("the kernel's own choice"), std::string::npos) << c.source;
  fs::remove(db);
}

// An entry with parameters overrides the heuristic for its class only; one without leaves it.
TEST(Tune, EntriesOverrideTheHeuristicOnlyWhereTheyHaveParameters) {
  const Device dev = select_device("cpu");
  const fs::path db = temp_db("tune-entries");
  Database entries = Database::parse(R"({"entries": [
    {"device": ")" + dev.name + R"(", "kernel": "cpu.cached_column", "dtype": "f32",
     "size_class": "small", "params": {"threads": 1}},
    {"device": ")" + dev.name + R"(", "kernel": "cpu.cached_column", "dtype": "f32",
     "size_class": "short-k", "params": {}}]})",
                                     "test");
  entries.save(db.string());
  test::TuningDbScope scope(db.string());
  const GemmChoice small =
      choose_gemm(dev, GemmDesc{40, 40, 40, Op::N, Op::N, 1, 0, DType::f32}, "cpu.cached_column");
  EXPECT_EQ(small.params.at("threads"), 1);
  EXPECT_EQ(small.source.rfind("tuned: ", 0), 0u) << small.source;
  const GemmDesc wide{1024, 1024, 64, Op::N, Op::N, 1, 0, DType::f32};
  const GemmChoice own = choose_gemm(dev, wide, "cpu.cached_column");
  EXPECT_EQ(own.params, heuristic_params(find_gemm_kernel(dev, "cpu.cached_column"), dev, wide));
  EXPECT_NE(own.source.find("short-k, the kernel's own choice"), std::string::npos) << own.source;
  fs::remove(db);
}

// data/tuning.json, as built in: every entry names a class size_class can return, was faster
// than or as fast as the kernel's own choice, and (for kernels in this build) holds parameters
// the kernel accepts. It carries the Hopper entries measured for cuda.wgmma_ws.
TEST(Tune, ShippedEntriesFitTheirKernels) {
  const std::set<std::string> classes = {"small", "medium", "large", "long-k", "skinny", "short-k"};
  int hopper = 0;
  for (const Entry& e : shipped_database().entries()) {
    const std::string what = e.device + " " + e.kernel + " " + e.dtype + " " + e.size_class;
    const bool batched = e.size_class.rfind("batched-", 0) == 0;
    EXPECT_TRUE(classes.count(batched ? e.size_class.substr(8) : e.size_class)) << what;
    EXPECT_GT(e.gflops, 0) << what;
    EXPECT_GE(e.gflops, e.default_gflops) << what;
    EXPECT_NO_THROW(GemmTypes::parse(e.dtype)) << what;
    for (const GemmKernel* k : all_gemm_kernels()) {
      if (k->name != e.kernel) continue;
      Params p = k->params.defaults();
      for (const auto& [name, v] : e.params) {
        EXPECT_TRUE(k->params.has(name)) << what << ": " << name;
        p[name] = v;
      }
      EXPECT_EQ(k->params.check(p), "") << what;
    }
    if (e.kernel == "cuda.wgmma_ws" &&
        (e.device.find("H100") != std::string::npos || e.device.find("H200") != std::string::npos))
      ++hopper;
  }
  EXPECT_GE(hopper, 20);  // bf16, f16, tf32, i8, e4m3 x large, short-k on an H100 and an H200
}

}  // namespace
}  // namespace kafel
