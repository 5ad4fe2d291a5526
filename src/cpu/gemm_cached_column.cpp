// Rung cpu.cached_column: the Russian blog's CPU version. Each thread owns a range of columns
// of B; it copies one column into a contiguous buffer and reuses it against every row of A.
#include <algorithm>
#include <thread>
#include <vector>

#include "core/registry.hpp"
#include "core/thread_pool.hpp"
#include "cpu/element.hpp"
#include "cpu/host_plan.hpp"

namespace kafel::cpu {
namespace {

template <DType SA, DType SC>
void columns(const GemmArgs& g, std::int64_t j0, std::int64_t j1) {
  using S = typename Storage<SA>::T;
  using Acc = AccOf<SA>;
  const GemmDesc& d = g.desc;
  const auto* a = static_cast<const S*>(g.a);
  const auto* b = static_cast<const S*>(g.b);
  auto* c = static_cast<typename Storage<SC>::T*>(g.c);
  const Acc alpha = scalar<Acc>(d.alpha), beta = scalar<Acc>(d.beta);
  // A row-major copy of op(A) is not made: rows of A are contiguous when op_a is N, which is
  // the case the blog optimises; for T the strided reads are the rung's honest cost.
  std::vector<Acc> column(static_cast<std::size_t>(d.k));
  for (std::int64_t j = j0; j < j1; ++j) {
    for (std::int64_t p = 0; p < d.k; ++p)
      column[p] = load<Acc, SA>(d.op_b == Op::N ? b[p * g.ldb + j] : b[j * g.ldb + p]);
    for (std::int64_t i = 0; i < d.m; ++i) {
      Acc sum = 0;
      if (d.op_a == Op::N) {
        const S* row = a + i * g.lda;
        for (std::int64_t p = 0; p < d.k; ++p) sum += load<Acc, SA>(row[p]) * column[p];
      } else {
        for (std::int64_t p = 0; p < d.k; ++p) sum += load<Acc, SA>(a[p * g.lda + i]) * column[p];
      }
      auto& cij = c[i * g.ldc + j];
      cij = store<SC>(d.beta != 0.0 ? alpha * sum + beta * load<Acc, SC>(cij) : alpha * sum);
    }
  }
}

// threads <= 0: the common policy (default_threads).
void gemm_cached_column(const GemmArgs& args, int threads) {
  const std::int64_t n = args.desc.n;
  const std::int64_t count = std::clamp<std::int64_t>(threads > 0 ? threads : default_threads(), 1,
                                                      std::max<std::int64_t>(n, 1));
  auto work = [&](std::int64_t j0, std::int64_t j1) {
    dispatch_roles(args.desc.types, [&]<DType SA, DType SC>() { columns<SA, SC>(args, j0, j1); });
  };
  if (count == 1) {
    work(0, n);
    return;
  }
  std::vector<std::thread> workers;
  const std::int64_t per = n / count, extra = n % count;
  std::int64_t j = 0;
  for (std::int64_t t = 0; t < count; ++t) {
    const std::int64_t len = per + (t < extra ? 1 : 0);
    workers.emplace_back(work, j, j + len);
    j += len;
  }
  for (auto& w : workers) w.join();
}

GemmKernel cached_column_kernel() {
  GemmKernel k;
  k.name = "cpu.cached_column";
  k.summary = "column of B cached in a buffer, columns split over std::threads (seed blog)";
  k.rung = 2;
  k.types = cpu_gemm_types();
  k.params.params = {
      param("threads", 0, {}, 0, kMaxThreads, "worker threads, 0 = $KAFEL_NUM_THREADS or all")};
  k.make_plan = [](const Device&, const GemmDesc&, const Params& p) {
    const int threads = static_cast<int>(p.at("threads"));
    return std::make_unique<HostPlan>(
        [threads](const GemmArgs& a) { gemm_cached_column(a, threads); });
  };
  return k;
}

const Register registered{cached_column_kernel()};

}  // namespace
}  // namespace kafel::cpu
