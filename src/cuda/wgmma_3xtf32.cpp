// Rung 15, cuda.wgmma_3xtf32: fp32-accurate GEMM on Hopper's tf32 tensor cores. A pre-pass
// splits each fp32 operand into tf32 big and small parts, laid out k-major; the warp-specialised
// wgmma kernel multiplies small*big + big*small + big*big per k-tile into a fresh accumulator
// and adds it to the running sum in fp32 (round to nearest), so long k keeps fp32 accuracy.
#include <algorithm>
#include <cstdint>
#include <string>

#include "core/registry.hpp"
#include "cuda/plan.hpp"
#include "cuda/wgmma.hpp"
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
  return o;
}

ParamSpace params() {
  ParamSpace s;
  s.params = {
      param("STAGES", 3, {2, 3}, 2, 3, "shared-memory ring slots (64 KiB each: 4 tf32 tiles)"),
      choice("PERSISTENT", 0, {"off", "on"}, true,
             "on: one CTA per SM loops over tiles; off: one CTA per tile"),
      param("GROUP", 8, {4, 8, 16}, 1, 64, "tile rows per group of the tile order (L2 reuse)"),
  };
  return s;
}

// The split pre-pass runs inside the timed region: the kernel is measured from the caller's
// fp32 operands, as sgemm is.
void launch(const DeviceGemm& g, const Params& params, cudaStream_t stream) {
  const GemmDesc& d = g.desc;
  const std::int64_t ld = split_ld(d.k);
  if (d.k > 0 && g.workspace_bytes < split_bytes(d))
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
  return "";
}

GemmKernel kernel() {
  GemmKernel k;
  k.name = "cuda.wgmma_3xtf32";
  k.summary =
      "fp32-accurate wgmma: split pre-pass, small*big + big*small + big*big per k-tile into a "
      "fresh accumulator added in fp32 (Hopper, sm_90a)";
  k.rung = 15;
  k.types = {{GemmTypes::of(DType::f32, Compute::tf32x3), Cap::wgmma_sm90a}};
  k.params = params();
  // Above cuda.mma_tiles (mma.sync, 20): the default for 3xtf32 where wgmma runs.
  k.preference = always(30);
  k.make_plan = [](const Device& dev, const GemmDesc& desc, const Params& p) {
    PlanTraits traits;
    traits.workspace = [](const GemmDesc& d, const Params&) { return split_bytes(d); };
    return make_cuda_plan(dev, desc, p, launch, traits);
  };
  k.can_implement = limits;
  return k;
}

const Register registered{kernel()};

}  // namespace
}  // namespace kafel::cuda
