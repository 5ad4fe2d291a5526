// Rung cpu.naive: the textbook triple loop, one dot product per element of C, single thread.
// It is the slowest rung and the baseline the ladder starts from.
#include "cpu/element.hpp"
#include "cpu/kernels.hpp"

namespace kafel::cpu {
namespace {

template <DType T>
void naive(const GemmArgs& g) {
  using E = Elem<T>;
  using S = typename E::Storage;
  using Acc = typename E::Acc;
  const GemmDesc& d = g.desc;
  const auto* a = static_cast<const S*>(g.a);
  const auto* b = static_cast<const S*>(g.b);
  auto* c = static_cast<S*>(g.c);
  const Acc alpha = E::scalar(d.alpha), beta = E::scalar(d.beta);
  for (std::int64_t i = 0; i < d.m; ++i)
    for (std::int64_t j = 0; j < d.n; ++j) {
      Acc sum = 0;
      for (std::int64_t p = 0; p < d.k; ++p) {
        const S aip = d.op_a == Op::N ? a[i * g.lda + p] : a[p * g.lda + i];
        const S bpj = d.op_b == Op::N ? b[p * g.ldb + j] : b[j * g.ldb + p];
        sum += E::load(aip) * E::load(bpj);
      }
      S& cij = c[i * g.ldc + j];
      cij = E::store(d.beta != 0.0 ? alpha * sum + beta * E::load(cij) : alpha * sum);
    }
}

}  // namespace

void gemm_naive(const GemmArgs& args) {
  dispatch_dtype(args.desc.dtype, [&]<DType T>() { naive<T>(args); });
}

}  // namespace kafel::cpu
