// Rung cpu.cached_column: the Russian blog's CPU version. Each thread owns a range of columns
// of B; it copies one column into a contiguous buffer and reuses it against every row of A.
#include <algorithm>
#include <thread>
#include <vector>

#include "cpu/cpu_features.hpp"
#include "cpu/element.hpp"
#include "cpu/kernels.hpp"

namespace kafel::cpu {
namespace {

template <DType T>
void columns(const GemmArgs& g, std::int64_t j0, std::int64_t j1) {
  using E = Elem<T>;
  using S = typename E::Storage;
  using Acc = typename E::Acc;
  const GemmDesc& d = g.desc;
  const auto* a = static_cast<const S*>(g.a);
  const auto* b = static_cast<const S*>(g.b);
  auto* c = static_cast<S*>(g.c);
  const Acc alpha = E::scalar(d.alpha), beta = E::scalar(d.beta);
  // A row-major copy of op(A) is not made: rows of A are contiguous when op_a is N, which is
  // the case the blog optimises; for T the strided reads are the rung's honest cost.
  std::vector<Acc> column(static_cast<std::size_t>(d.k));
  for (std::int64_t j = j0; j < j1; ++j) {
    for (std::int64_t p = 0; p < d.k; ++p)
      column[p] = E::load(d.op_b == Op::N ? b[p * g.ldb + j] : b[j * g.ldb + p]);
    for (std::int64_t i = 0; i < d.m; ++i) {
      Acc sum = 0;
      if (d.op_a == Op::N) {
        const S* row = a + i * g.lda;
        for (std::int64_t p = 0; p < d.k; ++p) sum += E::load(row[p]) * column[p];
      } else {
        for (std::int64_t p = 0; p < d.k; ++p) sum += E::load(a[p * g.lda + i]) * column[p];
      }
      S& cij = c[i * g.ldc + j];
      cij = E::store(d.beta != 0.0 ? alpha * sum + beta * E::load(cij) : alpha * sum);
    }
  }
}

}  // namespace

void gemm_cached_column(const GemmArgs& args, int threads) {
  const std::int64_t n = args.desc.n;
  // The same thread-count policy as every CPU kernel ($KAFEL_NUM_THREADS, affinity mask).
  const std::int64_t cores = default_threads();
  const std::int64_t count =
      std::clamp<std::int64_t>(threads > 0 ? threads : cores, 1, std::max<std::int64_t>(n, 1));
  auto work = [&](std::int64_t j0, std::int64_t j1) {
    dispatch_dtype(args.desc.dtype, [&]<DType T>() { columns<T>(args, j0, j1); });
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

}  // namespace kafel::cpu
