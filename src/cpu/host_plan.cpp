// HostPlan: copies of the operands per slot, so a timed loop does not keep reusing a hot cache,
// and slot 0 writes back into the caller's C.
#include "cpu/host_plan.hpp"

#include <algorithm>
#include <chrono>
#include <functional>

namespace kafel::cpu {

std::size_t span_bytes(std::int64_t rows, std::int64_t cols, std::int64_t ld, DType t) {
  if (rows <= 0 || cols <= 0) return 0;
  return static_cast<std::size_t>((rows - 1) * ld + cols) * dtype_size(t);
}

namespace {

// Copies matrix i of every operand of `args` into `buf` (one span per matrix, back to back) and
// points `out`'s matrices there.
template <class P>
void copy_batch(std::vector<char>& buf, std::size_t span, std::int64_t count,
                const std::function<const void*(std::int64_t)>& src, P& first,
                std::vector<P>& list) {
  buf.resize(span * static_cast<std::size_t>(count));
  list.clear();
  for (std::int64_t i = 0; i < count; ++i) {
    char* dst = buf.data() + static_cast<std::size_t>(i) * span;
    const char* from = static_cast<const char*>(src(i));
    std::copy(from, from + span, dst);
    if (count > 1) list.push_back(static_cast<P>(static_cast<void*>(dst)));
  }
  first = static_cast<P>(static_cast<void*>(buf.data()));
}

}  // namespace

void HostPlan::load(const GemmArgs& args, int slots) {
  const GemmDesc& d = args.desc;
  const auto a_rows = d.op_a == Op::N ? d.m : d.k, a_cols = d.op_a == Op::N ? d.k : d.m;
  const auto b_rows = d.op_b == Op::N ? d.k : d.n, b_cols = d.op_b == Op::N ? d.n : d.k;
  const std::size_t na = span_bytes(a_rows, a_cols, args.lda, d.types.a);
  const std::size_t nb = span_bytes(b_rows, b_cols, args.ldb, d.types.b);
  const std::size_t nc = span_bytes(d.m, d.n, args.ldc, d.types.c);
  // Slot 0 works in place on the caller's buffers; further slots are private copies (of every
  // matrix of a batch).
  slots_.assign(std::max(slots, 1), Slot{});
  slots_[0].args = args;
  const std::int64_t count = std::max<std::int64_t>(1, d.batch);
  for (std::size_t i = 1; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    s.args = args;
    copy_batch<const void*>(
        s.a, na, count, [&](std::int64_t j) { return args.a_of(j); }, s.args.a, s.args.batch_a);
    copy_batch<const void*>(
        s.b, nb, count, [&](std::int64_t j) { return args.b_of(j); }, s.args.b, s.args.batch_b);
    copy_batch<void*>(
        s.c, nc, count, [&](std::int64_t j) -> const void* { return args.c_of(j); }, s.args.c,
        s.args.batch_c);
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
