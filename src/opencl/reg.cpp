// Rung ocl.reg (kernels/reg.cl): the fast general kernel. 2D register blocking over packed
// operands, KWG-deep slices staged in local memory (SA / SB) or read from global memory, optional
// per-tile panels (PK); batches and split-K (SPLITK) in dimension 2. The default on CPU devices
// (PoCL: SA = SB = 0 avoids barriers).
#include <algorithm>

#include "core/registry.hpp"
#include "opencl/reg_block_plan.hpp"

namespace kafel::ocl {
namespace {

ParamSpace reg_space() {
  ParamSpace s;
  s.params = {
      param("MWG", 64, {16, 32, 64, 128}, 1, 1024, "C tile rows per work-group"),
      param("NWG", 64, {16, 32, 64, 128}, 1, 1024, "C tile columns per work-group"),
      param("KWG", 16, {8, 16, 32}, 1, 1024, "k depth of one local-memory slice"),
      param("MDIMC", 16, {2, 4, 8, 16, 32}, 1, 1024, "work-items along m"),
      param("NDIMC", 16, {2, 4, 8, 16, 32}, 1, 1024, "work-items along n"),
      param("VWM", 4, {1, 2, 4, 8}, 1, 16, "vector width of A loads (along m)"),
      param("VWN", 4, {1, 2, 4, 8, 16}, 1, 16, "vector width of B loads and C accumulators"),
      param("SA", 1, {0, 1}, 0, 1, "stage A slices in local memory"),
      param("SB", 1, {0, 1}, 0, 1, "stage B slices in local memory"),
      param("PK", 0, {0, 1}, 0, 1, "pack operands as contiguous per-tile panels (CPU caches)"),
      param("KBAR", 0, {0, 128, 256, 512}, 0, 1 << 20,
            "with SA = SB = 0: a work-group barrier every KBAR k, so that a CPU's cache keeps the "
            "group's slices for all its work-items (0 = none)"),
      splitk_param()};
  s.constraint = [](const Params& p) -> std::string {
    if (std::string why = reg_block_tiles(p); !why.empty()) return why;
    const auto mwg = p.at("MWG"), nwg = p.at("NWG"), mdimc = p.at("MDIMC"), ndimc = p.at("NDIMC");
    if ((mwg / mdimc) * (nwg / ndimc) > 256) return "more than 256 accumulators per work-item";
    if (p.at("KBAR") % p.at("KWG") != 0) return "KBAR must be a multiple of KWG";
    if (mdimc * ndimc < 4) return "fewer than 4 work-items per work-group";
    if ((p.at("SA") * mwg + p.at("SB") * nwg) * p.at("KWG") * 4 > 48 * 1024)
      return "local memory above 48 KiB";
    return limit_work_group(mdimc * ndimc);
  };
  return s;
}

// SA / SB select which operand's KWG slice is staged.
std::uint64_t reg_local_bytes(const Params& q, const GemmTypes& t) {
  const std::int64_t kwg = q.at("KWG");
  return std::uint64_t(q.at("SA") * kwg * q.at("MWG") + q.at("SB") * kwg * q.at("NWG")) *
         acc_bytes(t);
}

class RegPlan final : public RegBlockPlan {
 public:
  RegPlan(const Device& d, const GemmDesc& g, const Params& p) : RegBlockPlan(d, g, p, "reg") {}

 protected:
  std::uint64_t local_bytes() const override { return reg_local_bytes(params_, desc_.types); }
  bool panels() const override { return params_.at("PK") != 0; }
};

std::string reg_limits(const Device& d, const GemmDesc& g, const Params& p) {
  if (std::string why = reg_block_batch(g, p); !why.empty()) return why;
  return fits_device(d, reg_block_work_group(p), reg_local_bytes(p, g.types));
}

// CPU devices (PoCL): no local memory and no per-slice barrier, per-tile panels, a barrier every
// 256 k (the group's slices stay in the core's cache), and per work-item a tile of vectors of the
// device's native width, which PoCL compiles to broadcast-FMA loops like a BLAS micro-kernel.
// AVX-512 (16 floats): 8 x 32 (f64: 8 x 16), two one-register vectors per row; Zen 5 (session
// 11, with the pre-pass of CPU devices, pack_blocks): f32 158 -> 357-377 / 399 GFLOP/s at
// 1024 / 2048^3, f64 31 -> 155-181 / 141. Narrower vectors (AVX2: 8 floats): 16 x 8 (f64:
// 16 x 4), one register per row, KWG 16 -- the AVX-512 tile there would need 32 accumulator
// registers of 16. Zen 3, same process, three rounds: f32 1024^3 41-48 -> 69-74 GFLOP/s,
// 2048^3 29-40 -> 58-59, f64 1024^3 19-22 -> 26 (session 17, docs/BENCHMARKS.md).
// GPUs: the defaults (ocl.reg2 is their rung).
Params reg_heuristic(const Device& d, const GemmDesc& g) {
  if (d.is_gpu) return {};
  const bool wide = acc_bytes(g.types) == 8;
  const int width = native_float_width(d);
  if (width > 0 && width < 16) {
    const std::int64_t vwn = wide ? std::max(1, width / 2) : width;
    return {{"SA", 0},    {"SB", 0},  {"PK", 1},        {"KBAR", 256}, {"KWG", 16}, {"MWG", 32},
            {"MDIMC", 2}, {"VWM", 8}, {"NWG", 4 * vwn}, {"NDIMC", 4},  {"VWN", vwn}};
  }
  return {{"SA", 0},
          {"SB", 0},
          {"PK", 1},
          {"KBAR", 256},
          {"KWG", 8},
          {"MWG", 16},
          {"MDIMC", 2},
          {"VWM", 8},
          {"NWG", wide ? 32 : 128},
          {"NDIMC", wide ? 2 : 4},
          {"VWN", wide ? 8 : 16}};
}

GemmKernel reg_kernel() {
  GemmKernel k =
      ocl_kernel("reg", "2D register blocking, local memory, vector loads, packed operands", 6,
                 buffer_types(), reg_space(), make<RegPlan>, reg_limits);
  // CPU devices: the barrier-free tuned configurations make it the fastest rung there. GPUs:
  // the fallback when ocl.reg2 cannot run.
  k.preference = [](const Device& d, const GemmDesc&) { return d.is_gpu ? 20 : 30; };
  k.heuristic = reg_heuristic;
  k.batches = true;
  return k;
}

const Register registered{reg_kernel()};

}  // namespace
}  // namespace kafel::ocl
