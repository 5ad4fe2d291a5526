// The `cpu.packed` kernel's registration: its parameter description (used by the CLI, the
// tuner and the tests) and the plan that runs packed_gemm on the host.
#include <string>

#include "core/registry.hpp"
#include "core/thread_pool.hpp"
#include "cpu/element.hpp"
#include "cpu/host_plan.hpp"
#include "cpu/packed_gemm.hpp"

namespace kafel::cpu {

namespace {

ParamSpace packed_params() {
  ParamSpace s;
  s.params = {
      choice("isa", 0, {"auto", "generic", "avx2", "avx512"}, false,
             "micro-kernels: auto = the best this CPU has (or $KAFEL_CPU_ISA)"),
      param("threads", 0, {}, 0, kMaxThreads, "threads, 0 = $KAFEL_NUM_THREADS or one per core"),
      param("KC", 0, {0, 128, 256, 384, 512}, 0, 1 << 20, "depth of packed panels, 0 = from L1"),
      param("MC", 0, {0, 480, 960, 1920}, 0, 1 << 20, "rows of a packed A block, 0 = from L3"),
      param("NC", 0, {0, 256, 512, 1024}, 0, 1 << 20, "columns of a packed B block, 0 = from L2"),
      param("PFA", -1, {-1, 0, 16, 32, 64, 128}, -1, 1024,
            "A prefetch distance in k steps, 0 = off, -1 = this micro-architecture's default"),
      param("PFB", -1, {-1, 0, 4, 8, 16, 32}, -1, 64,
            "B prefetch distance in k steps, 0 = off, -1 = this micro-architecture's default"),
      param("APACK", 0, {0, 1}, 0, 1,
            "1: always pack A; 0: read a row-major f32/f64/i32 A in place (no transpose)"),
      choice("BF16", 0, {"auto", "f32", "dot"}, false,
             "bf16 inputs: f32 = widened for the f32 FMA, dot = bf16 pairs (vdpbf16ps), auto = "
             "dot where it out-runs the FMA"),
      choice("AMX", 0, {"auto", "off", "on"}, false,
             "bf16 and i8 on AMX tiles: auto = where the CPU has them (and BF16 is auto), on = "
             "refused elsewhere"),
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
  o.prefetch_a = static_cast<int>(p.at("PFA"));
  o.prefetch_b = static_cast<int>(p.at("PFB"));
  o.pack_a = p.at("APACK") != 0;
  o.bf16 = static_cast<Bf16Path>(p.at("BF16"));
  o.amx = static_cast<AmxUse>(p.at("AMX"));
  return o;
}

GemmKernel packed_gemm_kernel() {
  GemmKernel k;
  k.name = "cpu.packed";
  k.summary = "BLIS-style: packed panels, cache blocks, AVX-512/AVX2 micro-kernel, thread pool";
  k.rung = 3;
  k.types = cpu_gemm_types();
  k.params = packed_params();
  k.preference = always(10);
  k.can_implement = [](const Device&, const GemmDesc& d, const Params& p) -> std::string {
    const auto isa = static_cast<Isa>(p.at("isa"));
    if (isa != Isa::automatic && !isa_supported(isa))
      return "this CPU (or this build) has no " + std::string(to_string(isa)) + " kernels";
    const auto bf16 = static_cast<Bf16Path>(p.at("BF16"));
    if (d.types.a == DType::bf16)
      if (std::string why = bf16_path_refusal(resolve_isa(isa), bf16); !why.empty()) return why;
    const auto amx = static_cast<AmxUse>(p.at("AMX"));
    if (d.types.a == DType::bf16) return amx_refusal(resolve_isa(isa), amx, bf16);
    if (d.types.a == DType::i8) return amx_refusal(resolve_isa(isa), amx);
    return "";
  };
  k.make_plan = [](const Device&, const GemmDesc&, const Params& p) {
    PackedOptions opt = options_from(p);
    opt.isa = resolve_isa(opt.isa);  // $KAFEL_CPU_ISA is read here, at plan time
    return std::make_unique<HostPlan>([opt](const GemmArgs& a) { packed_gemm(a, opt); });
  };
  return k;
}

const Register registered{packed_gemm_kernel()};

}  // namespace
}  // namespace kafel::cpu
