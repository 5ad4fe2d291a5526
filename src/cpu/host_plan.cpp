// HostPlan: copies of the operands per slot, so a timed loop does not keep reusing a hot cache,
// and slot 0 writes back into the caller's C.
#include "cpu/host_plan.hpp"

#include <chrono>

namespace kafel::cpu {

std::size_t span_bytes(std::int64_t rows, std::int64_t cols, std::int64_t ld, DType t) {
  if (rows <= 0 || cols <= 0) return 0;
  return static_cast<std::size_t>((rows - 1) * ld + cols) * dtype_size(t);
}

void HostPlan::load(const GemmArgs& args, int slots) {
  const GemmDesc& d = args.desc;
  const auto a_rows = d.op_a == Op::N ? d.m : d.k, a_cols = d.op_a == Op::N ? d.k : d.m;
  const auto b_rows = d.op_b == Op::N ? d.k : d.n, b_cols = d.op_b == Op::N ? d.n : d.k;
  const std::size_t na = span_bytes(a_rows, a_cols, args.lda, d.types.a);
  const std::size_t nb = span_bytes(b_rows, b_cols, args.ldb, d.types.b);
  const std::size_t nc = span_bytes(d.m, d.n, args.ldc, d.types.c);
  // Slot 0 works in place on the caller's buffers; further slots are private copies.
  slots_.assign(std::max(slots, 1), Slot{});
  slots_[0].args = args;
  for (std::size_t i = 1; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    s.a.assign(static_cast<const char*>(args.a), static_cast<const char*>(args.a) + na);
    s.b.assign(static_cast<const char*>(args.b), static_cast<const char*>(args.b) + nb);
    s.c.assign(static_cast<const char*>(args.c), static_cast<const char*>(args.c) + nc);
    s.args = args;
    s.args.a = s.a.data();
    s.args.b = s.b.data();
    s.args.c = s.c.data();
  }
}

double HostPlan::run(int slot) {
  Slot& s = slots_.at(static_cast<std::size_t>(slot) % slots_.size());
  const auto t0 = std::chrono::steady_clock::now();
  body_(s.args);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

void HostPlan::fetch() {}  // slot 0 already computes into the caller's C

}  // namespace kafel::cpu
