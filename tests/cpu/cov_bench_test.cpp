// The public covariance selection, stream and harness on the CPU: choose_cov (the one choice),
// run_cov_stream on a device + choice, and bench_cov (verified first, then timed).
#include <gtest/gtest.h>

#include <vector>

#include "kafel/bench.hpp"
#include "kafel/cov.hpp"
#include "kafel/error.hpp"
#include "kafel/kernels.hpp"
#include "kafel/signal.hpp"

namespace kafel {
namespace {

struct Block {
  std::vector<float> data;
  SamplesView view;
};

Block make_block(std::int64_t c, std::int64_t n, SampleLayout l = SampleLayout::Planar) {
  Block b{std::vector<float>(std::size_t(c * n)), {}};
  generate_signal(SignalKind::Offset, b.data.data(), c, n, l, 5);
  b.view = SamplesView{b.data.data(), c, n, l, 0};
  return b;
}

TEST(ChooseCov, DefaultsOverridesAndRefusals) {
  const Device cpu = select_device("cpu");
  const CovDesc d{10, 1000, SampleLayout::Planar, 1};
  const CovChoice def = choose_cov(cpu, d);
  EXPECT_EQ(def.kernel, default_cov_kernel(cpu, 10));
  EXPECT_EQ(def.source, "default");
  EXPECT_EQ(def.params, cov_kernel(cpu, def.kernel).params.defaults());
  const CovChoice user = choose_cov(cpu, d, "cpu.syrk", {{"CHUNK", 256}});
  EXPECT_EQ(user.params.at("CHUNK"), 256);
  EXPECT_EQ(user.source, "user");
  EXPECT_NE(user.config().find("CHUNK=256"), std::string::npos);
  EXPECT_THROW(choose_cov(cpu, d, "cpu.syrk", {{"CHUNK", 0}}), InvalidArgument);  // range
  EXPECT_THROW(choose_cov(cpu, d, "cpu.syrk", {{"NOPE", 1}}), InvalidArgument);
  EXPECT_THROW(choose_cov(cpu, d, "cpu.nope"), InvalidArgument);
  EXPECT_THROW(choose_cov(cpu, CovDesc{0, 10, SampleLayout::Planar, 1}), InvalidArgument);
}

TEST(CovStreamPublic, RunsTheChoiceAndChecksIt) {
  const Device cpu = select_device("cpu");
  const CovDesc d{3, 501, SampleLayout::Interleaved, 1};
  CovBlockSource src;
  src.fill = [&](std::int64_t b, float* buf) {
    if (b >= 4) return false;
    generate_signal(SignalKind::Random, buf, d.channels, d.samples, d.layout, 10 + b);
    return true;
  };
  int seen = 0;
  const CovStreamStats st =
      run_cov_stream(cpu, choose_cov(cpu, d), d, src, -1, {},
                     [&](std::int64_t, const float* data, const CovResult& r) {
                       const SamplesView v{data, d.channels, d.samples, d.layout, 0};
                       EXPECT_LE(cov_rel_err(r, reference_covariance(v)), 1e-6);
                       ++seen;
                     });
  EXPECT_EQ(st.blocks, 4);
  EXPECT_EQ(seen, 4);
  EXPECT_GT(st.startup_ms, 0);
  CovChoice bad = choose_cov(cpu, d, "cpu.fast");
  bad.params["PF"] = -1;  // a hand-made choice is checked again before any plan
  EXPECT_THROW(run_cov_stream(cpu, bad, d, src, -1, {}), InvalidArgument);
  CovStreamOptions so;
  so.depth = 0;
  EXPECT_THROW(run_cov_stream(cpu, choose_cov(cpu, d), d, src, -1, so), InvalidArgument);
  so = {};
  so.rate = std::numeric_limits<double>::infinity();
  EXPECT_THROW(run_cov_stream(cpu, choose_cov(cpu, d), d, src, -1, so), InvalidArgument);
  so = {};
  so.deadline_ms = 0;
  EXPECT_THROW(run_cov_stream(cpu, choose_cov(cpu, d), d, src, -1, so), InvalidArgument);
  const CovDesc huge{1000, std::int64_t(1) << 40, SampleLayout::Planar, 1};
  EXPECT_THROW(run_cov_stream(cpu, choose_cov(cpu, huge), huge, src, -1, {}), OutOfMemory);
}

TEST(BenchCov, VerifiesThenTimesEveryKernel) {
  const Device cpu = select_device("cpu");
  const Block b = make_block(6, 3001);
  const CovResult ref = reference_covariance(b.view);
  CovBenchOptions o;
  o.reps = 3;
  o.warmup = 1;
  o.reference = &ref;
  for (const auto& k : cov_kernels(cpu)) {
    SCOPED_TRACE(k.name);
    const CovBenchRecord r = bench_cov(cpu, k.name, b.view, o);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_TRUE(r.verified);
    EXPECT_LE(r.rel_err, 1e-6);
    EXPECT_EQ(r.reps, 3);
    EXPECT_GT(r.median_ms, 0);
    EXPECT_LE(r.best_ms, r.median_ms);
    EXPECT_EQ(r.channels, 6);
    EXPECT_EQ(r.samples, 3001);
  }
  const CovBenchRecord def = bench_cov(cpu, "", b.view, o);  // choose_cov decides
  EXPECT_EQ(def.kernel, default_cov_kernel(cpu, 6));
}

// Nothing is timed before the result verified: a tolerance no float kernel can meet fails it.
TEST(BenchCov, FailedVerificationIsNotTimed) {
  const Device cpu = select_device("cpu");
  const Block b = make_block(4, 2000);
  CovBenchOptions o;
  o.tolerance = 1e-300;
  const CovBenchRecord r = bench_cov(cpu, "cpu.fast", b.view, o);
  EXPECT_TRUE(r.failed());
  EXPECT_FALSE(r.verified);
  EXPECT_EQ(r.median_ms, 0);
  EXPECT_EQ(r.reps, 0);
  EXPECT_NE(r.error.find("verification failed"), std::string::npos) << r.error;
}

TEST(BenchCov, BadOptionsAndNamesThrow) {
  const Device cpu = select_device("cpu");
  const Block b = make_block(2, 100);
  CovBenchOptions o;
  o.reps = 0;
  EXPECT_THROW(bench_cov(cpu, "cpu.fast", b.view, o), InvalidArgument);
  o = {};
  o.warmup = -1;
  EXPECT_THROW(bench_cov(cpu, "cpu.fast", b.view, o), InvalidArgument);
  EXPECT_THROW(bench_cov(cpu, "cpu.nope", b.view, {}), InvalidArgument);
  o = {};
  o.overrides = {{"PF", 999}};
  EXPECT_THROW(bench_cov(cpu, "cpu.fast", b.view, o), InvalidArgument);
  EXPECT_THROW(bench_cov(cpu, "cpu.fast", SamplesView{nullptr, 2, 100}, {}), InvalidArgument);
}

}  // namespace
}  // namespace kafel
