// The Hopper (wgmma) rungs' shared registration: element roles, parameters with their ranges,
// the launcher that maps a plan's operands onto wgmma_sm90a.cu, and the limits of each
// configuration (compiled shapes, layouts, shared memory), checked before a plan is made.
#include "cuda/wgmma_rung.hpp"

#include <algorithm>
#include <string>

#include "cuda/plan.hpp"
#include "kafel/error.hpp"

namespace kafel::cuda {
namespace {

// wgmma reads tf32 and 8-bit tiles K-major only.
bool k_major_input(const GemmTypes& t) {
  return t.a == DType::f32 || t.a == DType::e4m3 || t.a == DType::e5m2 || t.a == DType::i8;
}

// The wgmma input type of a role combination (registered roles only reach here).
sm90::Input input_of(const GemmTypes& t) {
  switch (t.a) {
    case DType::bf16:
      return sm90::Input::bf16;
    case DType::f16:
      return sm90::Input::f16;
    case DType::f32:
      if (t.compute == Compute::tf32) return sm90::Input::tf32;
      break;
    case DType::e4m3:
      return sm90::Input::e4m3;
    case DType::e5m2:
      return sm90::Input::e5m2;
    case DType::i8:
      return sm90::Input::i8;
    default:
      break;
  }
  throw Unsupported("wgmma kernels: no wgmma input type for " + t.name());
}

sm90::CKind c_kind_of(DType c) {
  switch (c) {
    case DType::f32:
      return sm90::CKind::f32;
    case DType::bf16:
      return sm90::CKind::bf16;
    case DType::f16:
      return sm90::CKind::f16;
    case DType::i32:
      return sm90::CKind::i32;
    default:
      throw Unsupported("wgmma kernels: C cannot be stored as " + std::string(to_string(c)));
  }
}

// The problem as the launcher will see it: 8-bit inputs arrive k-major (A op N, B op T).
sm90::Problem problem_of(const DeviceGemm& g) {
  sm90::Problem p;
  p.m = static_cast<int>(g.desc.m);
  p.n = static_cast<int>(g.desc.n);
  p.k = static_cast<int>(g.desc.k);
  p.a = g.a;
  p.lda = g.lda;
  p.a_t = g.desc.op_a == Op::T;
  p.b = g.b;
  p.ldb = g.ldb;
  p.b_t = g.desc.op_b == Op::T;
  p.c = g.c;
  p.ldc = g.ldc;
  p.c_kind = c_kind_of(g.desc.types.c);
  p.alpha = g.desc.alpha;
  p.beta = g.desc.beta;
  p.workspace = g.workspace;
  p.workspace_bytes = g.workspace_bytes;
  return p;
}

// Split-K workspace of a plan: enough for the launcher's sizes (the k-major form pads m and n
// by less than 16 elements, and k to a multiple of 16).
std::size_t workspace_of(const GemmDesc& d, const Params& params, int kernel, int sms) {
  const sm90::Options o = wgmma_options(params, kernel);
  if (o.splits <= 1 && !o.tail) return 0;
  return sm90::split_workspace_bytes(input_of(d.types), d.m + 16, d.n + 16, d.k + 16, o, sms);
}

std::string limits(const Device& device, const GemmDesc& desc, const Params& params, int kernel) {
  if (std::string why = dims_fit(desc); !why.empty()) return why;
  const sm90::Options o = wgmma_options(params, kernel);
  const bool k_major = k_major_input(desc.types);
  const bool a_t = k_major ? false : desc.op_a == Op::T;
  const bool b_t = k_major ? true : desc.op_b == Op::T;
  const sm90::Input in = input_of(desc.types);
  if (std::string why = sm90::check_options(in, a_t, b_t, o); !why.empty())
    return "wgmma kernel: " + why;
  sm90::Problem p;
  p.c_kind = c_kind_of(desc.types.c);
  p.beta = desc.beta;
  const std::size_t smem = sm90::smem_bytes(in, o, sm90::stages_c(p, o));
  if (smem > device.local_memory)
    return "wgmma kernel: " + std::to_string(o.bm) + " x " + std::to_string(o.bn) + " tiles, " +
           std::to_string(o.stages) + " stages need " + std::to_string(smem) +
           " bytes of shared memory per block, " + device.id + " has " +
           std::to_string(device.local_memory);
  const std::size_t ws = workspace_of(desc, params, kernel, device.compute_units);
  if (device.global_memory && ws > device.global_memory / 2)
    return "wgmma kernel: SPLITK=" + std::to_string(o.splits) + " needs " +
           std::to_string(ws >> 20) + " MiB of split-K workspace, more than half of " + device.id +
           "'s memory";
  return "";
}

}  // namespace

std::int64_t fill_splits(const Device& device, std::int64_t units, std::int64_t k_tiles,
                         std::int64_t least_k_tiles, std::size_t slice_bytes) {
  const std::int64_t sms = device.compute_units > 0 ? device.compute_units : 132;
  if (units <= 0) return 1;
  std::int64_t splits = std::min<std::int64_t>({sms / units, k_tiles / least_k_tiles, 128});
  if (device.global_memory && slice_bytes > 0)
    splits = std::min<std::int64_t>(
        splits, std::int64_t(device.global_memory / 8) / std::int64_t(slice_bytes));
  return splits;
}

std::vector<TypeSupport> wgmma_types(bool k_major_types) {
  const Caps need = Cap::wgmma_sm90a;
  std::vector<TypeSupport> v;
  for (DType t : {DType::bf16, DType::f16}) {
    GemmTypes to_f32 = GemmTypes::of(t);
    to_f32.c = DType::f32;
    v.push_back({GemmTypes::of(t), need});
    v.push_back({to_f32, need});
  }
  if (!k_major_types) return v;
  v.push_back({GemmTypes::of(DType::f32, Compute::tf32), need});
  for (DType t : {DType::e4m3, DType::e5m2})
    for (DType c : {DType::bf16, DType::f32}) {
      GemmTypes r = GemmTypes::of(t);
      r.c = c;
      v.push_back({r, need});
    }
  v.push_back({GemmTypes::of(DType::i8), need});
  return v;
}

ParamSpace wgmma_params() {
  ParamSpace s;
  s.params = {
      param("BM", 128, {64, 128, 256}, 64, 256,
            "block tile rows (BM x BN: 128 x 256, 256 x 128 or, for skinny outputs, 128 x 64 and "
            "64 x 128 shared by the two consumer warpgroups; 128 x 128: each takes whole tiles "
            "in turn, ping-pong, persistent only)"),
      param("BN", 256, {64, 128, 256}, 64, 256, "block tile columns"),
      param("STAGES", 4, {3, 4, 5, 6}, 2, 8,
            "shared-memory ring slots (48 KiB each; 32 KiB for 128 x 128, 24 KiB for the skinny "
            "tiles)"),
      choice("PERSISTENT", 0, {"off", "on"}, true,
             "on: one CTA per SM loops over tiles; off: one CTA per tile"),
      param("CLUSTER", 1, {1, 2}, 1, 2, "CTAs per cluster; 2 share the B tile by TMA multicast"),
      param("GROUP", 8, {4, 8, 16}, 1, 64, "tile rows per group of the tile order (L2 reuse)"),
      choice("CSTORE", 0, {"direct", "tma", "tma2"}, true,
             "C with beta = 0: direct stores, or through shared memory and TMA stores in 1 or 2 "
             "rounds (of a 16-bit tile)"),
      param("SPLITK", 1, {1, 2, 4, 8, 16, 32, 64}, 1, sm90::kMaxSplits,
            "k ranges per output tile (split-K): raw partial tiles added in order by a second "
            "kernel"),
      choice("TAIL", 0, {"off", "on"}, true,
             "persistent, SPLITK 1: the tiles of a part-filled last round split along k over "
             "every CTA (stream-K tail), their sums added in order by a second kernel"),
  };
  s.constraint = [](const Params& p) -> std::string {
    const auto bm = p.at("BM"), bn = p.at("BN");
    if (!sm90::compiled_tile(static_cast<int>(bm), static_cast<int>(bn)))
      return "BM x BN must be one of the compiled tiles: " + sm90::compiled_tiles();
    sm90::Options tile;
    tile.bm = static_cast<int>(bm);
    tile.bn = static_cast<int>(bn);
    if (sm90::skinny(tile) &&
        ((p.count("CLUSTER") && p.at("CLUSTER") != 1) || (p.count("CSTORE") && p.at("CSTORE") > 1)))
      return "the skinny tiles (128 x 64, 64 x 128) run without clusters and stage C in one round";
    if (bm == 128 && bn == 128 && p.count("PERSISTENT") && p.at("PERSISTENT") == 0)
      return "128 x 128 tiles (ping-pong) need PERSISTENT on";
    auto value = [&](const char* name) { return p.count(name) ? p.at(name) : 0; };
    if (value("TAIL") != 0 && (value("PERSISTENT") == 0 || value("SPLITK") > 1))
      return "the stream-K tail (TAIL on) needs PERSISTENT on and SPLITK 1";
    return "";
  };
  return s;
}

sm90::Options wgmma_options(const Params& params, int kernel) {
  auto get = [&](const char* name, std::int64_t def) {
    const auto it = params.find(name);
    return static_cast<int>(it == params.end() ? def : it->second);
  };
  sm90::Options o;
  o.kernel = kernel;
  o.bm = get("BM", 128);
  o.bn = get("BN", 256);
  o.stages = get("STAGES", 4);
  o.persistent = get("PERSISTENT", 0) != 0;
  o.cluster = get("CLUSTER", 1);
  o.group = get("GROUP", 8);
  o.c_rounds = get("CSTORE", 0);
  o.splits = get("SPLITK", 1);
  o.tail = get("TAIL", 0) != 0;
  return o;
}

GemmKernel wgmma_kernel(std::string name, std::string summary, int rung, ParamSpace params,
                        int kernel, bool k_major_types) {
  GemmKernel k;
  k.name = std::move(name);
  k.summary = std::move(summary);
  k.rung = rung;
  k.types = wgmma_types(k_major_types);
  k.params = std::move(params);
  const Launcher launch = [kernel](const DeviceGemm& g, const Params& p, cudaStream_t s) {
    const sm90::Problem problem = problem_of(g);
    const sm90::Input in = input_of(g.desc.types);
    const sm90::Options o = wgmma_options(p, kernel);
    if (std::string why = sm90::check_options(in, problem.a_t, problem.b_t, o); !why.empty())
      throw Unsupported("wgmma kernel: " + why);
    if (std::string err = sm90::launch_gemm(in, problem, o, s); !err.empty())
      throw DeviceError("wgmma kernel " + g.desc.shape() + ": " + err);
  };
  k.make_plan = [launch, kernel](const Device& d, const GemmDesc& desc, const Params& p) {
    PlanTraits traits;
    if (k_major_input(desc.types)) traits.form = OperandForm::k_major;
    traits.workspace = [kernel, sms = d.compute_units](const GemmDesc& g, const Params& q) {
      return workspace_of(g, q, kernel, sms);
    };
    return make_cuda_plan(d, desc, p, launch, traits);
  };
  k.can_implement = [kernel](const Device& d, const GemmDesc& desc, const Params& p) {
    return limits(d, desc, p, kernel);
  };
  return k;
}

}  // namespace kafel::cuda
