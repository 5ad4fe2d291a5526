// The old SYRK path, now a baseline on every backend: pilot-shifted chunks Y (C x chunk) go
// through the device's public gemm() as Y * Y^T (op T), and the chunk products add up in float64.
#include <algorithm>
#include <chrono>
#include <vector>

#include "core/cov_backend.hpp"
#include "kafel/error.hpp"
#include "kafel/gemm.hpp"
#include "kafel/matrix.hpp"

namespace kafel {

namespace {

std::string k_name_batch(const CovDesc& d) {
  return "the syrk baseline takes one block (batch " + std::to_string(d.batch) + ")";
}

class SyrkPlan : public CovPlan {
 public:
  SyrkPlan(Device device, std::int64_t chunk, std::string gemm_kernel)
      : device_(std::move(device)), chunk_(chunk), gemm_kernel_(std::move(gemm_kernel)) {}

  void load(const CovArgs& args, int) override { args_ = args; }
  double run(int) override;
  void fetch(CovMoments& out) override { out = result_; }
  std::string timer() const override { return "steady-clock"; }

 private:
  Device device_;
  std::int64_t chunk_;
  std::string gemm_kernel_;
  CovArgs args_;
  CovMoments result_;
};

double SyrkPlan::run(int) {
  const auto t0 = std::chrono::steady_clock::now();
  const CovDesc& d = args_.desc;
  const std::int64_t C = d.channels, N = d.samples;
  const SamplesView v = args_.view();
  std::vector<double> pilot(C), sum(C, 0.0), packed(static_cast<std::size_t>(d.pairs()), 0.0);
  for (std::int64_t c = 0; c < C; ++c) pilot[c] = lane_pilot(args_, c);
  const std::int64_t len_max = std::min(chunk_, N);
  Matrix y(DType::f32, C, len_max), q(DType::f32, C, C);
  GemmOptions opt;
  opt.kernel = gemm_kernel_;
  for (std::int64_t n0 = 0; n0 < N; n0 += len_max) {
    const std::int64_t len = std::min(len_max, N - n0);
    for (std::int64_t c = 0; c < C; ++c) {
      const auto p = static_cast<float>(pilot[c]);
      double s = 0;
      for (std::int64_t k = 0; k < len; ++k) {
        const float val = static_cast<float>(v.re(c, n0 + k)) - p;
        y.at<float>(c, k) = val;
        s += val;
      }
      sum[c] += s;
    }
    MatrixView yv = y.view();
    yv.cols = len;  // the last chunk uses the first len columns (ld stays len_max)
    gemm(device_, Op::N, Op::T, 1.0, yv, yv, 0.0, q.view(), opt);
    for (std::int64_t i = 0; i < C; ++i)
      for (std::int64_t j = 0; j <= i; ++j) packed[i * (i + 1) / 2 + j] += q.at<float>(i, j);
  }
  moments_from_shifted(C, N, pilot.data(), sum.data(), packed.data(), result_);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

CovKernel make_syrk_cov_kernel(const std::string& prefix) {
  CovKernel k;
  k.name = prefix + ".syrk";
  k.summary =
      "baseline: pilot-shifted chunks through the device's public gemm() (Y*Y^T, full square, a "
      "plan per chunk), float64 sums";
  k.rung = 90;  // after the one-pass and tiled rungs
  k.baseline = true;
  k.sample_types = {DType::f32};
  k.can_implement = [](const Device&, const CovDesc& d, const Params&) -> std::string {
    return d.batch == 1 ? "" : k_name_batch(d);
  };
  k.params.params = {param("CHUNK", 512, {256, 512, 1024, 4096}, 1, 1 << 24,
                           "samples per GEMM (its float sums are this long)")};
  k.make_plan = [](const Device& dev, const CovDesc&, const Params& p) -> std::unique_ptr<CovPlan> {
    return std::make_unique<SyrkPlan>(dev, p.at("CHUNK"), std::string());
  };
  return k;
}

}  // namespace kafel
