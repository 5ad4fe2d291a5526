// The CPU covariance ladder's registrations: the fast one-pass kernel (register tiles per block,
// threads + AVX-512/AVX2, run-time dispatch), the tiled SYRK/HERK kernel for many lanes, the
// float64 oracle as a rung, the article's serial rung, and the old public-gemm path (baseline).
#include "core/registry.hpp"
#include "core/thread_pool.hpp"
#include "cpu/cov_fast.hpp"
#include "cpu/cov_host_plan.hpp"

namespace kafel::cpu {
namespace {

const std::vector<DType> kAllTypes = {DType::f32, DType::c64, DType::ci8, DType::ci16};

ParamDesc threads_param() {
  return param("THREADS", 0, {}, 0, kMaxThreads, "threads (0: $KAFEL_NUM_THREADS or every core)");
}
ParamDesc isa_param() {
  return choice("ISA", 0, {"auto", "generic", "avx2", "avx512"}, false,
                "worker: auto = the best this CPU has (or $KAFEL_CPU_ISA)");
}

ParamSpace fast_params() {
  ParamSpace s;
  s.params = {
      param("BLOCK", 0, {256, 512, 1024, 2048}, 0, 1 << 20,
            "samples per scratch block (0: from the channel count)"),
      threads_param(),
      isa_param(),
      param("PF", 2, {0, 1, 2, 4}, 0, 64, "software prefetch distance in blocks (0: off)"),
      choice("DIRECT", 2, {"0", "1", "auto"}, true,
             "planar, C a multiple of the tile: 1 reads the rows in place, 0 shifts every block "
             "into the scratch first; auto: in place up to 32 real lanes"),
  };
  return s;
}

ParamSpace herk_params() {
  ParamSpace s;
  s.params = {
      param("BLOCK", 512, {256, 512, 1024}, 16, 1 << 16,
            "samples per chunk in the scratch rows (float sums: BLOCK / vector lanes terms)"),
      param("PANEL", 96, {48, 96, 192}, 1, 1 << 16,
            "lanes per column panel (kept in L2 while the rows below stream past)"),
      threads_param(),
      isa_param(),
      param("PF", 1, {0, 1, 2}, 0, 64, "software prefetch distance in chunks (0: off)"),
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
  k.sample_types = kAllTypes;
  k.params = fast_params();
  k.preference = 10;
  k.make_plan = [](const Device&, const CovDesc& d, const Params& p) -> std::unique_ptr<CovPlan> {
    const covfast::Worker worker = covfast::choose_worker(static_cast<Isa>(p.at("ISA")), d.lanes());
    covfast::RunOptions o;
    o.threads = static_cast<int>(p.at("THREADS"));
    o.block = p.at("BLOCK");
    o.prefetch_blocks = p.at("PF");
    const std::int64_t direct = p.at("DIRECT");
    o.direct = direct == 1 || (direct == 2 && d.lanes() <= covfast::kDirectMostLanes);
    return std::make_unique<CovHostPlan>(
        [=](const CovArgs& a, CovMoments& m) { covfast::fast_moments(a, worker, o, m); });
  };
  return k;
}

// The channel-count crossover: below this many real lanes the row-by-row order of cpu.fast
// (whose blocks grow as the lanes shrink) is as fast; measured by `kafel cov --bench`.
constexpr std::int64_t kTiledFromLanes = 96;

CovKernel herk_kernel() {
  CovKernel k;
  k.name = "cpu.herk";
  k.summary =
      "tiled SYRK/HERK: chunks of every lane shifted into L2/L3 scratch once, lower register "
      "tiles in column panels, float per chunk, float64 merge, threads or batches";
  k.rung = 4;
  k.sample_types = kAllTypes;
  k.params = herk_params();
  k.preference = 20;
  k.min_default_lanes = kTiledFromLanes;
  k.make_plan = [](const Device&, const CovDesc& d, const Params& p) -> std::unique_ptr<CovPlan> {
    const covfast::Worker worker = covfast::choose_worker(static_cast<Isa>(p.at("ISA")), d.lanes());
    covfast::RunOptions o;
    o.threads = static_cast<int>(p.at("THREADS"));
    o.block = p.at("BLOCK");
    o.prefetch_blocks = p.at("PF");
    o.direct = false;
    o.panel = p.at("PANEL");
    return std::make_unique<CovHostPlan>(
        [=](const CovArgs& a, CovMoments& m) { covfast::fast_moments(a, worker, o, m); });
  };
  return k;
}

CovKernel simple_kernel(std::string name, std::string summary, int rung, std::vector<DType> types,
                        CovHostPlan::Body body) {
  CovKernel k;
  k.name = std::move(name);
  k.summary = std::move(summary);
  k.rung = rung;
  k.sample_types = std::move(types);
  k.make_plan = [body](const Device&, const CovDesc&, const Params&) -> std::unique_ptr<CovPlan> {
    return std::make_unique<CovHostPlan>(body);
  };
  return k;
}

CovKernel serial_kernel() {
  CovKernel k = simple_kernel(
      "cpu.serial", "the article's serial rung: float means, one sweep per pair, double sums", 2,
      {DType::f32}, serial_moments);
  k.can_implement = [](const Device&, const CovDesc& d, const Params&) -> std::string {
    return d.batch == 1 ? "" : "cpu.serial takes one block (batch " + std::to_string(d.batch) + ")";
  };
  return k;
}

const Register fast{fast_kernel()};
const Register herk{herk_kernel()};
const Register reference{
    simple_kernel("cpu.reference", "float64 two-pass (means, then centred products): the oracle", 1,
                  kAllTypes, reference_moments)};
const Register serial{serial_kernel()};
const Register syrk{make_syrk_cov_kernel("cpu")};

}  // namespace
}  // namespace kafel::cpu
