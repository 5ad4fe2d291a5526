// The `cpu.packed` registry entry: its parameter description (used by the CLI, the tuner and
// the tests) and the plan that runs packed_gemm on the host.
#include <string>

#include "cpu/host_plan.hpp"
#include "cpu/packed_gemm.hpp"

namespace kafel::cpu {

namespace {

ParamSpace packed_params() {
  ParamSpace s;
  s.params = {
      {"isa",
       0,
       {},
       "micro-kernels: 0 = best available (or $KAFEL_CPU_ISA), 1 generic, 2 avx2, 3 avx512"},
      {"threads", 0, {}, "threads, 0 = $KAFEL_NUM_THREADS or one per core"},
      {"KC", 0, {0, 128, 256, 384, 512}, "depth of packed panels, 0 = from the L1 size"},
      {"MC", 0, {0, 480, 960, 1920}, "rows of a packed A block, 0 = from the L3 size"},
      {"NC", 0, {0, 256, 512, 1024}, "columns of a packed B block, 0 = from the L2 size"},
  };
  s.constraint = [](const Params& p) -> std::string {
    const auto isa = p.at("isa");
    if (isa < 0 || isa > 3) return "isa must be 0 (auto), 1 (generic), 2 (avx2) or 3 (avx512)";
    if (p.at("threads") < 0 || p.at("threads") > 1024) return "threads must be in 0..1024";
    for (const char* name : {"KC", "MC", "NC"})
      if (p.at(name) < 0 || p.at(name) > (1 << 20)) return std::string(name) + " out of range";
    return "";
  };
  return s;
}

PackedOptions options_from(const Params& p) {
  PackedOptions o;
  o.isa = static_cast<Isa>(p.at("isa"));
  o.threads = static_cast<int>(p.at("threads"));
  o.kc = p.at("KC");
  o.mc = p.at("MC");
  o.nc = p.at("NC");
  return o;
}

}  // namespace

GemmKernel packed_gemm_kernel() {
  GemmKernel k;
  k.name = "cpu.packed";
  k.summary = "BLIS-style: packed panels, cache blocks, AVX-512/AVX2 micro-kernel, thread pool";
  k.types = {DType::f32, DType::f64, DType::i32, DType::f16};
  k.params = packed_params();
  k.make_plan = [](const Device&, const GemmDesc&, const Params& p) {
    PackedOptions opt = options_from(p);
    opt.isa = resolve_isa(opt.isa);  // fail at plan time, with the reason, not mid-run
    return std::make_unique<HostPlan>([opt](const GemmArgs& a) { packed_gemm(a, opt); });
  };
  return k;
}

}  // namespace kafel::cpu
