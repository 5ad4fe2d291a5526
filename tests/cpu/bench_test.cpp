// The benchmark harness: a real kernel gives a verified, sane record; kernels that skip, fail
// or compute wrong results are recorded as such (never timed, never a crash); writers work.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/backend.hpp"
#include "io_test_util.hpp"
#include "kafel/bench.hpp"
#include "kafel/error.hpp"

namespace kafel {
namespace {

// A plan whose behaviour the test chooses: write garbage, or throw from load.
class FakePlan : public GemmPlan {
 public:
  explicit FakePlan(bool throw_on_load) : throw_on_load_(throw_on_load) {}
  void load(const GemmArgs& args, int) override {
    if (throw_on_load_) throw DeviceError("fake device lost");
    args_ = args;
  }
  double run(int) override {
    auto* c = static_cast<float*>(args_.c);
    for (std::int64_t i = 0; i < args_.desc.m * args_.ldc; ++i) c[i] = 1.0f;
    return 1.0;
  }
  void fetch() override {}
  std::string timer() const override { return "fake"; }

 private:
  bool throw_on_load_;
  GemmArgs args_;
};

GemmKernel fake_kernel(const std::string& name, int mode) {
  GemmKernel k;
  k.name = name;
  k.types = natural_types({DType::f32});
  k.make_plan = [mode](const Device&, const GemmDesc&, const Params&) -> std::unique_ptr<GemmPlan> {
    if (mode == 0) throw Unsupported("fake: sizes above 8 are not supported");
    return std::make_unique<FakePlan>(mode == 2);
  };
  return k;
}

BenchOptions quick() {
  BenchOptions o;
  o.warmup = 2;
  o.reps = 3;
  return o;
}

TEST(Bench, RealKernelGivesAVerifiedSaneRecord) {
  Device cpu = select_device("cpu");
  GemmDesc d{16, 24, 8, Op::N, Op::N, 1.0, 0.0, DType::f32};
  BenchRecord r = bench_gemm(cpu, "cpu.naive", d, quick());
  EXPECT_EQ(r.status, "ok") << r.error;
  EXPECT_TRUE(r.verified);
  EXPECT_FALSE(r.verify_method.empty());
  EXPECT_LT(r.max_abs_err, 1e-4);
  EXPECT_EQ(r.kernel, "cpu.naive");
  EXPECT_EQ(r.device, "cpu");
  EXPECT_EQ(r.type, "f32");
  EXPECT_EQ(r.m, 16);
  EXPECT_EQ(r.n, 24);
  EXPECT_EQ(r.k, 8);
  EXPECT_EQ(r.reps, 3);
  EXPECT_LE(r.warmup, 2);
  EXPECT_GT(r.median_ms, 0);
  EXPECT_GT(r.best_ms, 0);
  EXPECT_LE(r.best_ms, r.median_ms);
  EXPECT_GT(r.gflops, 0);
  EXPECT_GE(r.best_gflops, r.gflops);
  EXPECT_GT(r.total_ms, 0);
  EXPECT_GE(r.slots, 1);
  EXPECT_LE(r.slots, 8);
  EXPECT_FALSE(r.timer.empty());
  EXPECT_TRUE(r.error.empty());
}

TEST(Bench, TransposedAndF64ProblemsVerify) {
  Device cpu = select_device("cpu");
  GemmDesc d{9, 7, 5, Op::T, Op::T, 2.0, 0.5, DType::f64};
  BenchRecord r = bench_gemm(cpu, "cpu.naive", d, quick());
  EXPECT_EQ(r.status, "ok") << r.error;
  EXPECT_EQ(r.op, "TT");
}

TEST(Bench, UnsupportedIsSkippedNotFailed) {
  Device cpu = select_device("cpu");
  BenchRecord r = bench_kernel(cpu, fake_kernel("fake.unsupported", 0),
                               GemmDesc{16, 16, 16, Op::N, Op::N, 1.0, 0.0, DType::f32}, quick());
  EXPECT_EQ(r.status, "skipped");
  EXPECT_EQ(r.error.rfind("skipped: ", 0), 0u) << r.error;
  EXPECT_NE(r.error.find("above 8"), std::string::npos);
  EXPECT_FALSE(r.failed());

  BenchRecord t = bench_kernel(cpu, fake_kernel("fake.f32only", 1),
                               GemmDesc{4, 4, 4, Op::N, Op::N, 1, 0, DType::f64}, quick());
  EXPECT_EQ(t.status, "skipped");
}

TEST(Bench, ProblemsLargerThanMemoryAreSkipped) {
  Device cpu = select_device("cpu");
  GemmDesc huge{1 << 20, 1 << 20, 1 << 20, Op::N, Op::N, 1.0, 0.0, DType::f32};
  BenchRecord r = bench_gemm(cpu, "cpu.naive", huge, quick());
  EXPECT_EQ(r.status, "skipped");
  EXPECT_NE(r.error.find("memory"), std::string::npos) << r.error;
}

TEST(Bench, WrongResultsFailVerificationAndAreNotTimed) {
  Device cpu = select_device("cpu");
  BenchRecord r = bench_kernel(cpu, fake_kernel("fake.wrong", 1),
                               GemmDesc{8, 8, 8, Op::N, Op::N, 1.0, 0.0, DType::f32}, quick());
  EXPECT_EQ(r.status, "failed");
  EXPECT_FALSE(r.verified);
  EXPECT_EQ(r.median_ms, 0);
  EXPECT_EQ(r.gflops, 0);
  EXPECT_NE(r.error.find("verification failed"), std::string::npos) << r.error;
}

TEST(Bench, DeviceErrorsAreRecordedAsFailures) {
  Device cpu = select_device("cpu");
  BenchRecord r = bench_kernel(cpu, fake_kernel("fake.lost", 2),
                               GemmDesc{8, 8, 8, Op::N, Op::N, 1.0, 0.0, DType::f32}, quick());
  EXPECT_EQ(r.status, "failed");
  EXPECT_NE(r.error.find("fake device lost"), std::string::npos);
}

TEST(Bench, RotationOnlyWhenTheWorkingSetFitsInCache) {
  EXPECT_EQ(rotation_slots(1e6, 0), 1);
  EXPECT_EQ(rotation_slots(1e9, 32 << 20), 1);
  EXPECT_EQ(rotation_slots(1e3, 32 << 20), 8);
  EXPECT_EQ(rotation_slots(24 << 20, 32 << 20), 3);
}

std::vector<BenchRecord> sample_records() {
  BenchRecord a;
  a.kernel = "cpu.ours";
  a.type = "f32";
  a.m = a.n = a.k = 64;
  a.op = "NN";
  a.status = "ok";
  a.verified = true;
  a.gflops = 30;
  a.params = {{"block", 128}, {"grid", 4}};
  BenchRecord b = a;
  b.kernel = "cpu.openblas";
  b.baseline = true;
  b.gflops = 20;
  b.params = {};
  BenchRecord c = a;
  c.params = {{"block", 256}, {"grid", 4}};
  c.status = "skipped";
  c.error = "skipped: too big";
  return {a, b, c};
}

TEST(BenchReport, TableShowsRatiosAndSkips) {
  std::ostringstream os;
  print_bench_table(os, sample_records(), {"cpu.openblas"});
  std::string t = os.str();
  EXPECT_NE(t.find("vs cpu.openblas"), std::string::npos) << t;
  EXPECT_NE(t.find("1.50x"), std::string::npos) << t;
  EXPECT_NE(t.find("skipped: too big"), std::string::npos) << t;
}

TEST(BenchReport, BlockGridTable) {
  std::ostringstream os;
  print_param_grid(os, sample_records(), "block", "grid");
  std::string t = os.str();
  EXPECT_NE(t.find("block \\ grid"), std::string::npos) << t;
  EXPECT_NE(t.find("30.0"), std::string::npos) << t;
}

TEST(BenchReport, JsonAndCsvCarryTheFields) {
  test::ScratchDir dir("bench");
  auto records = sample_records();
  Device cpu = select_device("cpu");
  write_bench_json(dir.file("r.json"), records, &cpu);
  auto doc = nlohmann::json::parse(test::read_bytes(dir.file("r.json")));
  ASSERT_EQ(doc["records"].size(), 3u);
  for (const char* key : {"kernel", "device", "type", "m", "n", "k", "median_ms", "best_ms",
                          "gflops", "verified", "max_abs_err", "status", "error", "params"}) {
    EXPECT_TRUE(doc["records"][0].contains(key)) << key;
  }
  EXPECT_EQ(doc["device"]["id"], "cpu");
  // The same device object as `kafel devices --json`, where the peak's clock came from included.
  EXPECT_GT(doc["device"]["compute_units"], 0);
  EXPECT_TRUE(doc["device"]["details"].contains("clock source"));
  write_bench_csv(dir.file("r.csv"), records);
  std::string csv = test::read_bytes(dir.file("r.csv"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4);
  EXPECT_EQ(csv.rfind("kernel,", 0), 0u);
  EXPECT_NE(csv.find("block=128 grid=4"), std::string::npos);
}

TEST(BenchReport, ProgressLine) {
  GemmDesc d{512, 512, 512, Op::N, Op::N, 1.0, 0.0, DType::f32};
  EXPECT_EQ(progress_line(3, 12, "cpu.naive", d), "[3/12] cpu.naive 512x512x512 f32 ...");
}

}  // namespace
}  // namespace kafel
