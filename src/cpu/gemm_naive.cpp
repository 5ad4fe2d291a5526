// Rung cpu.naive: the textbook triple loop, one dot product per element of C, single thread.
// It is the slowest rung and the baseline the ladder starts from.
#include "core/registry.hpp"
#include "cpu/element.hpp"
#include "cpu/host_plan.hpp"

namespace kafel::cpu {
namespace {

template <DType SA, DType SC>
void naive(const GemmArgs& g) {
  using S = typename Storage<SA>::T;
  using Acc = AccOf<SA>;
  const GemmDesc& d = g.desc;
  const auto* a = static_cast<const S*>(g.a);
  const auto* b = static_cast<const S*>(g.b);
  auto* c = static_cast<typename Storage<SC>::T*>(g.c);
  const Acc alpha = scalar<Acc>(d.alpha), beta = scalar<Acc>(d.beta);
  for (std::int64_t i = 0; i < d.m; ++i)
    for (std::int64_t j = 0; j < d.n; ++j) {
      Acc sum = 0;
      for (std::int64_t p = 0; p < d.k; ++p) {
        const S aip = d.op_a == Op::N ? a[i * g.lda + p] : a[p * g.lda + i];
        const S bpj = d.op_b == Op::N ? b[p * g.ldb + j] : b[j * g.ldb + p];
        sum += load<Acc, SA>(aip) * load<Acc, SA>(bpj);
      }
      auto& cij = c[i * g.ldc + j];
      cij = store<SC>(d.beta != 0.0 ? alpha * sum + beta * load<Acc, SC>(cij) : alpha * sum);
    }
}

GemmKernel naive_kernel() {
  GemmKernel k;
  k.name = "cpu.naive";
  k.summary = "triple loop, one dot product per element, one thread";
  k.rung = 1;
  k.types = cpu_gemm_types();
  k.make_plan = [](const Device&, const GemmDesc&, const Params&) {
    return std::make_unique<HostPlan>([](const GemmArgs& a) {
      dispatch_roles(a.desc.types, [&]<DType SA, DType SC>() { naive<SA, SC>(a); });
    });
  };
  return k;
}

const Register registered{naive_kernel()};

}  // namespace
}  // namespace kafel::cpu
