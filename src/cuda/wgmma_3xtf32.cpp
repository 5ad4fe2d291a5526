// Rung 15, cuda.wgmma_3xtf32: fp32-accurate GEMM on Hopper's tf32 tensor cores. A pre-pass
// splits each fp32 operand into tf32 big and small parts, laid out k-major; the warp-specialised
// wgmma kernel multiplies small*big + big*small + big*big per k-tile into a fresh accumulator
// and adds it to the running sum in fp32 (round to nearest), so long k keeps fp32 accuracy.
// Small outputs with long k split k into ranges (split-K) added in order by splitk_reduce.
#include <algorithm>
#include <cstdint>
#include <string>

#include "core/registry.hpp"
#include "cuda/plan.hpp"
#include "cuda/wgmma.hpp"
#include "cuda/wgmma_rung.hpp"
#include "kafel/error.hpp"

namespace kafel::cuda {
namespace {

// The split operands' row length: k rounded up to 4 floats, the 16-byte rows TMA reads.
std::int64_t split_ld(std::int64_t k) {
  return (k + 3) / 4 * 4;
}

// Workspace of the split operands: A's big and small parts (2m x ld) then B's (2n x ld).
std::size_t split_bytes(const GemmDesc& d) {
  if (d.k == 0) return 0;
  return static_cast<std::size_t>(split_ld(d.k)) * 2 * static_cast<std::size_t>(d.m + d.n) *
         sizeof(float);
}

sm90::Options options(const Params& p);

// Split-K partial sums, after the split operands (offset rounded to 256 bytes).
std::size_t operands_bytes(const GemmDesc& d) {
  return (split_bytes(d) + 255) / 256 * 256;
}
std::size_t partial_bytes(const GemmDesc& d, const Params& p) {
  return sm90::split_workspace_bytes(sm90::Input::tf32x3, d.m, d.n, d.k, options(p));
}
std::size_t workspace_bytes(const GemmDesc& d, const Params& p) {
  const std::size_t partials = partial_bytes(d, p);
  return partials ? operands_bytes(d) + partials : split_bytes(d);
}

// Outputs of fewer 128 x 128 tiles than half the SMs split k into as many ranges as fill the
// SMs once, each of at least 8 k-tiles (the 3-slot ring fills and drains once per range), the
// partial sums within 1/8 of the device's memory. Without it, 256 x 256 x 262144 ran 16 CTAs on
// 132 SMs: 4.1 TFLOP/s (H100, session 12).
Params choose(const Device& dev, const GemmDesc& d) {
  const std::int64_t sms = dev.compute_units > 0 ? dev.compute_units : 132;
  const std::int64_t tiles = ((d.m + 127) / 128) * ((d.n + 127) / 128);
  if (tiles == 0 || 2 * tiles > sms) return {};
  const std::int64_t splits =
      fill_splits(dev, tiles, (d.k + 31) / 32, 8, sm90::split_slice_bytes(d.m, d.n));
  if (splits < 2) return {};
  return {{"SPLITK", splits}};
}

sm90::Options options(const Params& p) {
  auto get = [&](const char* name, std::int64_t def) {
    const auto it = p.find(name);
    return static_cast<int>(it == p.end() ? def : it->second);
  };
  sm90::Options o;
  o.kernel = 1;
  o.bm = sm90::kSplitShape[0];
  o.bn = sm90::kSplitShape[1];
  o.stages = get("STAGES", 3);
  o.persistent = get("PERSISTENT", 0) != 0;
  o.group = get("GROUP", 8);
  o.splits = get("SPLITK", 1);
  return o;
}

ParamSpace params() {
  ParamSpace s;
  s.params = {
      param("STAGES", 3, {2, 3}, 2, 3, "shared-memory ring slots (64 KiB each: 4 tf32 tiles)"),
      choice("PERSISTENT", 0, {"off", "on"}, true,
             "on: one CTA per SM loops over tiles; off: one CTA per tile"),
      param("GROUP", 8, {4, 8, 16}, 1, 64, "tile rows per group of the tile order (L2 reuse)"),
      param("SPLITK", 1, {1, 2, 4, 8, 16, 32}, 1, sm90::kMaxSplits,
            "k ranges (split-K): raw partial sums added in range order by a second kernel"),
  };
  return s;
}

// The split pre-pass runs inside the timed region: the kernel is measured from the caller's
// fp32 operands, as sgemm is.
void launch(const DeviceGemm& g, const Params& params, cudaStream_t stream) {
  const GemmDesc& d = g.desc;
  const std::int64_t ld = split_ld(d.k);
  const std::size_t partials = partial_bytes(d, params);
  if (d.k > 0 && g.workspace_bytes < workspace_bytes(d, params))
    throw DeviceError("cuda.wgmma_3xtf32: the split workspace was not allocated");
  auto* a = static_cast<float*>(g.workspace);
  float* b = a + 2 * d.m * ld;
  const bool ta = d.op_a == Op::T, tb = d.op_b == Op::T;
  if (d.k > 0) {
    // op(A) m x k as is; B as op(B)^T, n x k (k contiguous in both).
    launch_split_tf32(static_cast<const float*>(g.a), ta ? d.k : d.m, ta ? d.m : d.k, g.lda, ta, a,
                      d.m, ld, ld, d.m, stream);
    launch_split_tf32(static_cast<const float*>(g.b), tb ? d.n : d.k, tb ? d.k : d.n, g.ldb, !tb, b,
                      d.n, ld, ld, d.n, stream);
  }
  sm90::Problem p;
  p.m = static_cast<int>(d.m);
  p.n = static_cast<int>(d.n);
  p.k = static_cast<int>(d.k);
  p.a = a;
  p.lda = ld;
  p.b = b;
  p.ldb = ld;
  p.b_t = true;
  p.c = g.c;
  p.ldc = g.ldc;
  p.c_kind = sm90::CKind::f32;
  p.alpha = d.alpha;
  p.beta = d.beta;
  p.a_part = static_cast<int>(d.m);
  p.b_part = static_cast<int>(d.n);
  if (partials) {
    p.workspace = static_cast<char*>(g.workspace) + operands_bytes(d);
    p.workspace_bytes = partials;
  }
  if (std::string err = sm90::launch_gemm(sm90::Input::tf32x3, p, options(params), stream);
      !err.empty())
    throw DeviceError("cuda.wgmma_3xtf32 " + d.shape() + ": " + err);
}

std::string limits(const Device& device, const GemmDesc& d, const Params& params) {
  if (std::string why = dims_fit(d); !why.empty()) return why;
  // The small parts start m (n) rows below the big ones: TMA row coordinates are 32-bit.
  if (2 * (d.m + 128) >= (std::int64_t(1) << 31) || 2 * (d.n + 128) >= (std::int64_t(1) << 31))
    return "cuda.wgmma_3xtf32 takes m, n below 2^30 - 128 (" + d.shape() + ")";
  const sm90::Options o = options(params);
  if (std::string why = sm90::check_options(sm90::Input::tf32x3, false, true, o); !why.empty())
    return "cuda.wgmma_3xtf32: " + why;
  const std::size_t smem = sm90::smem_bytes(sm90::Input::tf32x3, o, false);
  if (smem > device.local_memory)
    return "cuda.wgmma_3xtf32: " + std::to_string(o.stages) + " stages need " +
           std::to_string(smem) + " bytes of shared memory per block, " + device.id + " has " +
           std::to_string(device.local_memory);
  const std::size_t ws = workspace_bytes(d, params);
  if (device.global_memory && ws > device.global_memory / 2)
    return "cuda.wgmma_3xtf32: SPLITK=" + std::to_string(o.splits) + " needs " +
           std::to_string(ws >> 20) + " MiB of workspace, more than half of " + device.id +
           "'s memory";
  return "";
}

GemmKernel kernel() {
  GemmKernel k;
  k.name = "cuda.wgmma_3xtf32";
  k.summary =
      "fp32-accurate wgmma: split pre-pass, small*big + big*small + big*big per k-tile into a "
      "fresh accumulator added in fp32, split-K for small outputs (Hopper, sm_90a)";
  k.rung = 15;
  k.types = {{GemmTypes::of(DType::f32, Compute::tf32x3), Cap::wgmma_sm90a}};
  k.params = params();
  k.heuristic = choose;
  // Above cuda.mma_tiles (mma.sync, 20): the default for 3xtf32 where wgmma runs.
  k.preference = always(30);
  k.make_plan = [](const Device& dev, const GemmDesc& desc, const Params& p) {
    PlanTraits traits;
    traits.workspace = workspace_bytes;
    return make_cuda_plan(dev, desc, p, launch, traits);
  };
  k.can_implement = limits;
  return k;
}

const Register registered{kernel()};

}  // namespace
}  // namespace kafel::cuda
