// The CPU covariance ladder's registrations: the fast one-pass kernel (threads + AVX-512/AVX2,
// run-time dispatch), the float64 oracle as a rung, the article's serial rung, the SYRK path.
#include "core/registry.hpp"
#include "core/thread_pool.hpp"
#include "cpu/cov_fast.hpp"
#include "cpu/cov_host_plan.hpp"

namespace kafel::cpu {
namespace {

ParamSpace fast_params() {
  ParamSpace s;
  s.params = {
      param("BLOCK", 0, {256, 512, 1024, 2048}, 0, 1 << 20,
            "samples per scratch block (0: from the channel count)"),
      param("THREADS", 0, {}, 0, kMaxThreads, "threads (0: $KAFEL_NUM_THREADS or every core)"),
      choice("ISA", 0, {"auto", "generic", "avx2", "avx512"}, false,
             "worker: auto = the best this CPU has (or $KAFEL_CPU_ISA)"),
      param("PF", 2, {0, 1, 2, 4}, 0, 64, "software prefetch distance in blocks (0: off)"),
      param("DIRECT", 1, {0, 1}, 0, 1,
            "planar, C a multiple of the tile: read rows in place (0: scratch)"),
  };
  return s;
}

CovKernel fast_kernel() {
  CovKernel k;
  k.name = "cpu.fast";
  k.summary =
      "one pass: pilot shift, float 5x5 pair tiles (AVX-512/AVX2) per block, float64 merge, "
      "threads";
  k.rung = 3;
  k.sample_types = {DType::f32};
  k.params = fast_params();
  k.preference = 10;
  k.make_plan = [](const Device&, const CovDesc&, const Params& p) -> std::unique_ptr<CovPlan> {
    const covfast::Worker worker = covfast::choose_worker(static_cast<Isa>(p.at("ISA")));
    const int threads = static_cast<int>(p.at("THREADS"));
    const std::int64_t block = p.at("BLOCK"), pf = p.at("PF");
    const bool direct = p.at("DIRECT") != 0;
    return std::make_unique<CovHostPlan>([=](const CovArgs& a, CovMoments& m) {
      covfast::fast_moments(a, worker, threads, block, pf, direct, m);
    });
  };
  return k;
}

CovKernel simple_kernel(std::string name, std::string summary, int rung,
                        CovHostPlan::Body body) {
  CovKernel k;
  k.name = std::move(name);
  k.summary = std::move(summary);
  k.rung = rung;
  k.sample_types = {DType::f32};
  k.make_plan = [body](const Device&, const CovDesc&, const Params&) -> std::unique_ptr<CovPlan> {
    return std::make_unique<CovHostPlan>(body);
  };
  return k;
}

const Register fast{fast_kernel()};
const Register reference{simple_kernel(
    "cpu.reference", "float64 two-pass (means, then centred products): the oracle", 1,
    reference_moments)};
const Register serial{simple_kernel(
    "cpu.serial", "the article's serial rung: float means, one sweep per pair, double sums", 2,
    serial_moments)};
const Register syrk{make_syrk_cov_kernel("cpu")};

}  // namespace
}  // namespace kafel::cpu
