// A CovPlan for covariance kernels that run on the host: they read the caller's samples in
// place (no copy, every slot is the same block) and are timed with the steady clock.
#pragma once

#include <chrono>
#include <functional>
#include <utility>

#include "core/cov_backend.hpp"

namespace kafel::cpu {

class CovHostPlan : public CovPlan {
 public:
  using Body = std::function<void(const CovArgs&, CovMoments&)>;
  explicit CovHostPlan(Body body) : body_(std::move(body)) {}

  void load(const CovArgs& args, int /*slots*/) override { args_ = args; }
  double run(int /*slot*/) override {
    const auto t0 = std::chrono::steady_clock::now();
    body_(args_, result_);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  void fetch(CovMoments& out) override { out = result_; }
  std::string timer() const override { return "steady-clock"; }
  // One plain read pass over the block with default_threads() threads (cov_reference.cpp).
  double read_floor_ms(int slot) override;

 private:
  Body body_;
  CovArgs args_;
  CovMoments result_;
};

// The article's serial rung: float means, one sweep per channel pair, double accumulators.
void serial_moments(const CovArgs& args, CovMoments& out);
// A plain read pass over every float of the block with `threads` threads (the memory floor);
// returns the sum so the compiler cannot drop the loads.
double read_pass(const CovArgs& args, int threads);

}  // namespace kafel::cpu
