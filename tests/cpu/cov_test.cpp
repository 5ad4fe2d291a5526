// Covariance on the CPU: every kernel against the float64 two-pass oracle (article signal,
// random, offset data; odd sizes; both layouts), numpy.cov semantics, NaN, streaming, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/cov_backend.hpp"
#include "core/cov_stream.hpp"
#include "cpu/cpu_features.hpp"
#include "kafel/cov.hpp"
#include "kafel/error.hpp"
#include "kafel/signal.hpp"

namespace kafel {
namespace {

struct Block {
  std::vector<float> data;
  SamplesView view;
};

Block make_block(SignalKind kind, std::int64_t c, std::int64_t n, SampleLayout layout,
                 std::uint64_t seed = 3) {
  Block b{std::vector<float>(static_cast<std::size_t>(c * n)), {}};
  generate_signal(kind, b.data.data(), c, n, layout, seed);
  b.view = SamplesView{b.data.data(), c, n, layout, 0};
  return b;
}

std::string what(const std::string& k, SignalKind s, std::int64_t c, std::int64_t n,
                 SampleLayout l) {
  return k + " " + std::string(to_string(s)) + " " + std::to_string(c) + "x" + std::to_string(n) +
         " " + std::string(to_string(l));
}

void expect_close_on(const Device& dev, const std::string& kernel, const Params& p, const Block& b,
                     const CovResult& ref, const std::string& what) {
  CovOptions opt;
  opt.kernel = kernel;
  opt.params = p;
  const CovResult got = covariance(dev, b.view, opt);
  const double err = cov_rel_err(got, ref);
  EXPECT_LE(err, 1e-6) << what << " " << kernel << " " << format_params(p);
  for (std::int64_t i = 0; i < b.view.channels; ++i) {
    EXPECT_NEAR(got.mean[i], ref.mean[i], 1e-6 * (1 + std::abs(ref.mean[i])))
        << what << " " << kernel << " mean " << i;
    for (std::int64_t j = 0; j < b.view.channels; ++j) ASSERT_EQ(got.at(i, j), got.at(j, i));
  }
}

void expect_close(const Device& dev, const std::string& kernel, const Params& p, SignalKind s,
                  std::int64_t c, std::int64_t n, SampleLayout l) {
  const Block b = make_block(s, c, n, l);
  expect_close_on(dev, kernel, p, b, reference_covariance(b.view), what("", s, c, n, l));
}

const SampleLayout kLayouts[] = {SampleLayout::Planar, SampleLayout::Interleaved};
const SignalKind kSignals[] = {SignalKind::Seed, SignalKind::Random, SignalKind::Offset};

// numpy.cov([[1,2,3,4],[2,4,6,9]]) worked by hand: means 2.5 and 5.25; centred sums of
// squares 5 and 26.75 (10.5625 + 1.5625 + 0.5625 + 14.0625), of cross products 11.5; divided by N-1
// = 3 (ddof=1) or 4 (ddof=0).
TEST(CovSemantics, HandCheckedNumpyCase) {
  const std::vector<float> x = {1, 2, 3, 4, 2, 4, 6, 9};
  const std::vector<float> xi = {1, 2, 2, 4, 3, 6, 4, 9};
  const Device cpu = select_device("cpu");
  for (const auto& k : cov_kernels(cpu)) {
    for (int inter = 0; inter < 2; ++inter) {
      const SamplesView v{inter ? xi.data() : x.data(), 2, 4,
                          inter ? SampleLayout::Interleaved : SampleLayout::Planar, 0};
      CovOptions o;
      o.kernel = k.name;
      CovResult r = covariance(cpu, v, o);
      EXPECT_NEAR(r.at(0, 0), 5.0 / 3, 1e-12) << k.name;
      EXPECT_NEAR(r.at(0, 1), 11.5 / 3, 1e-12) << k.name;
      EXPECT_NEAR(r.at(1, 0), 11.5 / 3, 1e-12) << k.name;
      EXPECT_NEAR(r.at(1, 1), 26.75 / 3, 1e-12) << k.name;
      EXPECT_NEAR(r.mean[1], 5.25, 1e-12) << k.name;
      EXPECT_FLOAT_EQ(r.cov_f32[1], 11.5f / 3);
      o.ddof = 0;
      r = covariance(cpu, v, o);
      EXPECT_NEAR(r.at(0, 0), 1.25, 1e-12) << k.name;
      EXPECT_NEAR(r.at(1, 0), 2.875, 1e-12) << k.name;
      EXPECT_NEAR(r.at(1, 1), 6.6875, 1e-12) << k.name;
    }
  }
  // One channel, two samples [1, 3]: variance ((-1)^2 + 1^2) / 1 = 2.
  const std::vector<float> y = {1, 3};
  EXPECT_DOUBLE_EQ(covariance(cpu, SamplesView{y.data(), 1, 2}).at(0, 0), 2.0);
}

// Fast kernel with each instruction set this CPU (and build) has, plus the other rungs.
std::vector<Params> fast_variants() {
  std::vector<Params> v = {{{"ISA", 1}}};
  if (cpu::isa_supported(cpu::Isa::avx2)) v.push_back({{"ISA", 2}});
  if (cpu::isa_supported(cpu::Isa::avx512)) v.push_back({{"ISA", 3}});
  v.push_back({{"BLOCK", 64}, {"THREADS", 3}});  // more threads than cores, tiny blocks
  return v;
}

TEST(CovCpu, SmallShapesEveryKernel) {
  const Device cpu = select_device("cpu");
  for (std::int64_t c : {1, 2, 10, 33, 257})
    for (std::int64_t n : {2, 3, 37})
      for (SampleLayout l : kLayouts)
        for (SignalKind s : kSignals) {
          for (const Params& p : fast_variants()) expect_close(cpu, "cpu.fast", p, s, c, n, l);
          expect_close(cpu, "cpu.serial", {}, s, c, n, l);
          if (c <= 33) expect_close(cpu, "cpu.syrk", {{"CHUNK", 2}}, s, c, n, l);
        }
}

TEST(CovCpu, MillionSamples) {
  const Device cpu = select_device("cpu");
  const std::int64_t n = 1000003;
  for (SignalKind s : kSignals)
    for (SampleLayout l : kLayouts) {
      const Block b = make_block(s, 10, n, l);
      const CovResult ref = reference_covariance(b.view);
      const std::string w = what("", s, 10, n, l);
      for (const Params& p : fast_variants())
        if (l == SampleLayout::Planar || p.count("BLOCK"))
          expect_close_on(cpu, "cpu.fast", p, b, ref, w);
      if (s == SignalKind::Offset) {
        expect_close_on(cpu, "cpu.syrk", {}, b, ref, w);
        if (l == SampleLayout::Planar) expect_close_on(cpu, "cpu.serial", {}, b, ref, w);
      }
    }
  expect_close(cpu, "cpu.fast", {}, SignalKind::Offset, 1, n, SampleLayout::Planar);
  expect_close(cpu, "cpu.fast", {}, SignalKind::Offset, 33, 100003, SampleLayout::Interleaved);
}

// Planar blocks whose channel count is a multiple of the tile (5 for AVX-512, 3 for AVX2)
// take the in-place path; the scratch path must agree, with padded strides and tails too.
TEST(CovCpu, InPlaceAndScratchPathsAgree) {
  const Device cpu = select_device("cpu");
  for (std::int64_t c : {5, 9, 10, 15})
    for (std::int64_t n : {4096, 4099, 20000}) {
      const std::int64_t ld = n + 13;
      std::vector<float> x(static_cast<std::size_t>(c * ld), std::nanf(""));
      std::vector<float> tight(static_cast<std::size_t>(c * n));
      generate_signal(SignalKind::Offset, tight.data(), c, n, SampleLayout::Planar, 9);
      for (std::int64_t i = 0; i < c; ++i) std::copy(&tight[i * n], &tight[i * n] + n, &x[i * ld]);
      const CovResult ref = reference_covariance(SamplesView{tight.data(), c, n});
      const Block b{{}, SamplesView{x.data(), c, n, SampleLayout::Planar, ld}};
      for (Params p : fast_variants())
        for (int direct : {0, 1}) {
          p["DIRECT"] = direct;
          expect_close_on(cpu, "cpu.fast", p, b, ref,
                          what("", SignalKind::Offset, c, n, SampleLayout::Planar));
        }
    }
}

TEST(CovCpu, ManyChannelsWideBlocks) {
  const Device cpu = select_device("cpu");
  expect_close(cpu, "cpu.fast", {}, SignalKind::Random, 257, 2000, SampleLayout::Planar);
  expect_close(cpu, "cpu.fast", {}, SignalKind::Seed, 257, 2000, SampleLayout::Interleaved);
  expect_close(cpu, "cpu.syrk", {}, SignalKind::Offset, 257, 3001, SampleLayout::Planar);
}

TEST(CovCpu, StrideLargerThanTight) {
  const Device cpu = select_device("cpu");
  const std::int64_t c = 3, n = 1001, ld = 1024;
  std::vector<float> x(c * ld, std::numeric_limits<float>::quiet_NaN());  // padding is poison
  std::vector<float> tight(c * n);
  generate_signal(SignalKind::Random, tight.data(), c, n, SampleLayout::Planar, 5);
  for (std::int64_t i = 0; i < c; ++i)
    for (std::int64_t k = 0; k < n; ++k) x[i * ld + k] = tight[i * n + k];
  const CovResult ref = reference_covariance(SamplesView{tight.data(), c, n});
  for (const auto& k : cov_kernels(cpu)) {
    CovOptions o;
    o.kernel = k.name;
    EXPECT_LE(
        cov_rel_err(covariance(cpu, SamplesView{x.data(), c, n, SampleLayout::Planar, ld}, o), ref),
        1e-6)
        << k.name;
  }
}

TEST(CovCpu, NanPropagatesLikeNumpy) {
  const Device cpu = select_device("cpu");
  for (SampleLayout l : kLayouts) {
    Block b = make_block(SignalKind::Random, 3, 100, l);
    (l == SampleLayout::Planar ? b.data[1 * 100 + 50] : b.data[50 * 3 + 1]) = std::nanf("");
    for (const auto& k : cov_kernels(cpu)) {
      CovOptions o;
      o.kernel = k.name;
      const CovResult r = covariance(cpu, b.view, o);
      EXPECT_EQ(r.nan_entries, 5) << k.name;  // row 1 and column 1
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) EXPECT_EQ(std::isnan(r.at(i, j)), i == 1 || j == 1) << k.name;
      EXPECT_TRUE(std::isnan(r.mean[1]));
      EXPECT_LE(cov_rel_err(r, reference_covariance(b.view)), 1e-6) << k.name;
    }
  }
}

TEST(CovCpu, StreamingEqualsBlockByBlock) {
  const Device cpu = select_device("cpu");
  const CovDesc d{4, 5003, SampleLayout::Interleaved, 1};
  const CovKernel& k = find_cov_kernel(cpu, "cpu.fast");
  auto plan = k.make_plan(cpu, d, k.params.defaults());
  CovBlockSource src;
  src.fill = [&](std::int64_t b, float* buf) {
    if (b >= 7) return false;
    generate_signal(SignalKind::Offset, buf, d.channels, d.samples, d.layout, 100 + b);
    return true;
  };
  int seen = 0;
  auto hook = [&](std::int64_t b, const float*, const CovResult& r) {
    const Block one = make_block(SignalKind::Offset, d.channels, d.samples, d.layout, 100 + b);
    CovOptions o;
    o.kernel = "cpu.fast";
    const CovResult alone = covariance(cpu, one.view, o);
    EXPECT_EQ(b, seen);
    EXPECT_EQ(r.cov, alone.cov) << "block " << b;
    ++seen;
  };
  CovStreamOptions so;
  so.depth = 3;
  const CovStreamStats st = run_cov_stream(*plan, d, src, -1, so, hook);
  EXPECT_EQ(st.blocks, 7);
  EXPECT_EQ(seen, 7);
  EXPECT_EQ(st.latency_ms.size(), 7u);
  EXPECT_GE(st.max_ms, st.median_ms);
}

TEST(CovCpu, BadInput) {
  const Device cpu = select_device("cpu");
  const std::vector<float> x(10, 1.0f);
  EXPECT_THROW(covariance(cpu, SamplesView{x.data(), 0, 10}), InvalidArgument);
  EXPECT_THROW(covariance(cpu, SamplesView{x.data(), 1, 1}), InvalidArgument);  // N <= ddof
  CovOptions o;
  o.ddof = 5;
  EXPECT_THROW(covariance(cpu, SamplesView{x.data(), 2, 5}, o), InvalidArgument);
  EXPECT_THROW(covariance(cpu, SamplesView{nullptr, 2, 5}), InvalidArgument);
  EXPECT_THROW(covariance(cpu, SamplesView{x.data(), 2, 5, SampleLayout::Planar, 3}),
               InvalidArgument);
  o = {};
  o.kernel = "cpu.nope";
  EXPECT_THROW(covariance(cpu, SamplesView{x.data(), 2, 5}, o), InvalidArgument);
  o.kernel = "cpu.fast";
  o.params = {{"ISA", 9}};
  EXPECT_THROW(covariance(cpu, SamplesView{x.data(), 2, 5}, o), InvalidArgument);
  EXPECT_THROW(parse_sample_layout("diagonal"), InvalidArgument);
  EXPECT_THROW(parse_signal("sawtooth"), InvalidArgument);
  // Constant data: zero variance, no NaN.
  const CovResult r = covariance(cpu, SamplesView{x.data(), 2, 5});
  EXPECT_EQ(r.at(0, 0), 0.0);
  EXPECT_EQ(r.nan_entries, 0);
}

TEST(CovSignal, ArticleFormulasAndLayouts) {
  const std::int64_t c = 12, n = 9;
  std::vector<float> p(c * n), q(c * n);
  generate_seed_signal(p.data(), c, n, SampleLayout::Planar);
  generate_seed_signal(q.data(), c, n, SampleLayout::Interleaved);
  for (std::int64_t i = 0; i < c; ++i)
    for (std::int64_t k = 0; k < n; ++k) ASSERT_EQ(p[i * n + k], q[k * c + i]);
  // n = 0: v0 = sin 0 + cos 0 = 1, v1 = exp(1) + exp(-0), v4 = cbrt(1) = 1.
  EXPECT_EQ(p[0 * n], 1.0f);
  EXPECT_EQ(p[1 * n], std::exp(1.0f) + 1.0f);
  EXPECT_EQ(p[4 * n], 1.0f);
  // n = 5 in float arithmetic.
  const float v0 = std::sin(5.0f) + std::cos(5.0f);
  const float v1 = std::exp(v0) + std::exp(-5.0f);
  const float v2 = std::sin(v1) * std::cos(v0) + v1;
  EXPECT_EQ(p[0 * n + 5], v0);
  EXPECT_EQ(p[2 * n + 5], v2);
  EXPECT_EQ(p[3 * n + 5], std::hypot(v0, v2));
  // Channel 10 repeats channel 0 at n + 7919.
  const float r0 = std::sin(7919.0f) + std::cos(7919.0f);
  EXPECT_EQ(p[10 * n], r0);
  // Random data is the same in both layouts and reproducible.
  generate_random_signal(p.data(), c, n, SampleLayout::Planar, 7, 1e4, 1);
  generate_random_signal(q.data(), c, n, SampleLayout::Interleaved, 7, 1e4, 1);
  for (std::int64_t i = 0; i < c; ++i)
    for (std::int64_t k = 0; k < n; ++k) ASSERT_EQ(p[i * n + k], q[k * c + i]);
}

}  // namespace
}  // namespace kafel
