// The CPU backend: its device and its GEMM ladder, one line per rung.
// The reference (the oracle) is not a rung: it lives in reference.cpp and is always float64.
#include "core/backend.hpp"
#include "cpu/cpu_device.hpp"
#include "cpu/host_plan.hpp"
#include "cpu/kernels.hpp"
#include "cpu/openblas.hpp"
#include "cpu/packed_gemm.hpp"

namespace kafel {
namespace {

const std::vector<DType> kAllTypes{DType::f32, DType::f64, DType::i32, DType::f16};

ParamSpace threads_param() {
  return {{{"threads", 0, {}, "worker threads, 0 = one per core"}}, nullptr};
}

GemmKernel host_kernel(std::string name, std::string summary, ParamSpace params,
                       std::function<cpu::HostPlan::Body(const Params&)> body) {
  GemmKernel k;
  k.name = std::move(name);
  k.summary = std::move(summary);
  k.types = kAllTypes;
  k.params = std::move(params);
  k.make_plan = [body](const Device&, const GemmDesc&, const Params& p) {
    return std::make_unique<cpu::HostPlan>(body(p));
  };
  return k;
}

std::vector<GemmKernel> cpu_kernels() {
  return {
      host_kernel("cpu.naive", "triple loop, one dot product per element, one thread", {},
                  [](const Params&) { return cpu::gemm_naive; }),
      host_kernel("cpu.cached_column",
                  "column of B cached in a buffer, columns split over std::threads (seed blog)",
                  threads_param(),
                  [](const Params& p) {
                    const int threads = static_cast<int>(p.at("threads"));
                    return [threads](const GemmArgs& a) { cpu::gemm_cached_column(a, threads); };
                  }),
      cpu::packed_gemm_kernel(),
#ifdef KAFEL_HAVE_OPENBLAS
      cpu::openblas_gemm_kernel(),
#endif
  };
}

}  // namespace

Backend cpu_backend() {
  Backend b;
  b.name = "cpu";
  b.devices = [] { return std::vector<Device>{cpu::cpu_device()}; };
  b.gemm_kernels = cpu_kernels;
  b.default_gemm_kernel = [](const Device&, DType) { return std::string("cpu.packed"); };
  return b;
}

}  // namespace kafel
