// A GemmPlan for kernels that run on the host: slot 0 computes in place on the caller's
// buffers, further slots are copies so benchmarks can rotate; timed with the steady clock.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/backend.hpp"

namespace kafel::cpu {

class HostPlan : public GemmPlan {
 public:
  using Body = std::function<void(const GemmArgs&)>;
  explicit HostPlan(Body body) : body_(std::move(body)) {}

  void load(const GemmArgs& args, int slots) override;
  double run(int slot) override;
  void fetch() override;
  std::string timer() const override { return "steady-clock"; }

 private:
  struct Slot {
    std::vector<char> a, b, c;
    GemmArgs args;
  };
  Body body_;
  std::vector<Slot> slots_;
};

// Bytes spanned by a row-major rows x cols matrix with leading dimension ld.
std::size_t span_bytes(std::int64_t rows, std::int64_t cols, std::int64_t ld, DType t);

}  // namespace kafel::cpu
