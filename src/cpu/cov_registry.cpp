// The CPU covariance ladder: the float64 oracle, the article's serial rung, the fast one-pass
// kernel (threads + AVX-512/AVX2, run-time dispatch) and the GEMM-based SYRK path.
#include "core/cov_backend.hpp"
#include "cpu/cov_fast.hpp"
#include "cpu/cov_host_plan.hpp"

namespace kafel {

namespace {

using cpu::CovHostPlan;

ParamSpace fast_params() {
  ParamSpace s;
  s.params = {
      {"BLOCK", 0, {256, 512, 1024, 2048}, "samples per scratch block (0: from the channel count)"},
      {"THREADS", 0, {}, "threads (0: $KAFEL_NUM_THREADS or every usable core)"},
      {"ISA", 0, {}, "0 auto (best, or $KAFEL_CPU_ISA), 1 portable, 2 AVX2, 3 AVX-512"},
      {"PF", 2, {0, 1, 2, 4}, "software prefetch distance in blocks (0: off)"},
      {"DIRECT", 1, {0, 1}, "planar, C a multiple of the tile: read rows in place (0: scratch)"},
  };
  s.constraint = [](const Params& p) -> std::string {
    if (p.at("BLOCK") < 0 || p.at("BLOCK") > (1 << 20)) return "BLOCK must be in 0..1048576";
    if (p.at("THREADS") < 0 || p.at("THREADS") > 1024) return "THREADS must be in 0..1024";
    if (p.at("ISA") < 0 || p.at("ISA") > 3) return "ISA must be 0..3";
    if (p.at("PF") < 0 || p.at("PF") > 64) return "PF must be in 0..64";
    if (p.at("DIRECT") < 0 || p.at("DIRECT") > 1) return "DIRECT must be 0 or 1";
    return "";
  };
  return s;
}

CovKernel fast_kernel() {
  CovKernel k;
  k.name = "cpu.fast";
  k.summary =
      "one pass: pilot shift, float 5x5 pair tiles (AVX-512/AVX2) per block, float64 merge, "
      "threads";
  k.params = fast_params();
  k.is_default = true;
  k.make_plan = [](const Device&, const CovDesc&, const Params& p) -> std::unique_ptr<CovPlan> {
    const cpu::covfast::Worker worker =
        cpu::covfast::choose_worker(static_cast<cpu::Isa>(p.at("ISA")));
    const int threads = static_cast<int>(p.at("THREADS"));
    const std::int64_t block = p.at("BLOCK"), pf = p.at("PF");
    const bool direct = p.at("DIRECT") != 0;
    return std::make_unique<CovHostPlan>([=](const CovArgs& a, CovMoments& m) {
      cpu::covfast::fast_moments(a, worker, threads, block, pf, direct, m);
    });
  };
  return k;
}

CovKernel simple_kernel(std::string name, std::string summary, CovHostPlan::Body body) {
  CovKernel k;
  k.name = std::move(name);
  k.summary = std::move(summary);
  k.make_plan = [body](const Device&, const CovDesc&, const Params&) -> std::unique_ptr<CovPlan> {
    return std::make_unique<CovHostPlan>(body);
  };
  return k;
}

}  // namespace

std::vector<CovKernel> cpu_cov_kernels() {
  return {
      fast_kernel(),
      simple_kernel("cpu.reference", "float64 two-pass (means, then centred products): the oracle",
                    cpu::reference_moments),
      simple_kernel("cpu.serial",
                    "the article's serial rung: float means, one sweep per pair, double sums",
                    cpu::serial_moments),
      make_syrk_cov_kernel("cpu"),
  };
}

}  // namespace kafel
