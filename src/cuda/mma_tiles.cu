// Rung 12, cuda.mma_tiles: the pipelined tensor-core kernel of rung 11 with its block tile,
// warp tile, stages and fragment prefetch as parameters, a table of compiled shapes per type,
// and a heuristic choosing by type. The default CUDA kernel for every tensor-core type (below
// Hopper, where the wgmma rungs take over).
#include <algorithm>
#include <array>

#include "core/registry.hpp"
#include "cuda/mma_kernel.cuh"
#include "cuda/mma_rungs.hpp"
#include "cuda/plan.hpp"

namespace kafel::cuda::tc {

// Shapes measured best in run 1 of docs/cuda.md ("Tensor cores") per type, plus the same loop
// with XFRAG where registers allow it (not yet measured: `--kernels all` compares them).
const std::vector<Compiled>& mma_tiles_table() {
  static const std::vector<Compiled> t = {
      entry<Mode::bf16, 128, 128, 64, 64, 64, 3, true, false>(),
      entry<Mode::bf16, 128, 128, 64, 64, 64, 3, true, true>(),
      entry<Mode::bf16, 256, 128, 64, 64, 64, 3, true, true>(),
      entry<Mode::f16, 128, 128, 64, 64, 64, 3, true, false>(),
      entry<Mode::f16, 128, 128, 64, 64, 64, 3, true, true>(),
      entry<Mode::f16, 256, 128, 64, 64, 64, 3, true, true>(),
      entry<Mode::tf32, 128, 128, 32, 64, 64, 3, true, false>(),
      entry<Mode::tf32, 128, 128, 32, 64, 64, 3, true, true>(),
      entry<Mode::tf32x3, 128, 128, 16, 64, 64, 4, true, false>(),
      entry<Mode::i8, 128, 128, 128, 64, 64, 3, true, false>(),
      entry<Mode::i8, 128, 128, 128, 64, 64, 3, true, true>(),
      entry<Mode::f64, 128, 64, 16, 64, 32, 4, true, false>(),
      entry<Mode::f64, 128, 128, 16, 64, 32, 4, true, false>(),
  };
  return t;
}

namespace {

constexpr std::array<const char*, 7> kNames = {"BM", "BN", "BK", "WM", "WN", "STAGES", "XFRAG"};

std::array<std::int64_t, 7> fields(const Shape& s) {
  return {s.bm, s.bn, s.bk, s.wm, s.wn, s.stages, s.xfrag ? 1 : 0};
}

Shape shape_of(const Params& p) {
  return {static_cast<int>(p.at("BM")),
          static_cast<int>(p.at("BN")),
          static_cast<int>(p.at("BK")),
          static_cast<int>(p.at("WM")),
          static_cast<int>(p.at("WN")),
          static_cast<int>(p.at("STAGES")),
          p.at("XFRAG") != 0};
}

Params params_of(const Shape& s) {
  Params p;
  const auto f = fields(s);
  for (std::size_t i = 0; i < kNames.size(); ++i) p[kNames[i]] = f[i];
  return p;
}

bool compiled_anywhere(const Shape& s) {
  const auto& t = mma_tiles_table();
  return std::any_of(t.begin(), t.end(), [&](const Compiled& c) { return c.shape == s; });
}

std::string compiled_for(const GemmTypes& types) {
  std::string out;
  const Mode m = mode_of(types);
  for (const Compiled& c : mma_tiles_table())
    if (c.mode == m) out += (out.empty() ? "" : ", ") + c.shape.name();
  return out;
}

// One parameter per tile field; the candidates are the values of the compiled shapes, and the
// constraint admits exactly the compiled shapes (of some type; can_implement checks the type).
ParamSpace tiles_params() {
  struct Field {
    const char* help;
    std::int64_t min, max;
  };
  const std::array<Field, 7> meta = {{
      {"block tile rows", 64, 256},
      {"block tile columns", 64, 256},
      {"k per stage, in elements (64 or 128 bytes of k)", 8, 128},
      {"warp tile rows", 16, 128},
      {"warp tile columns", 8, 128},
      {"shared-memory stages of the cp.async ring", 2, 8},
      {"1: prefetch the next tile's first fragments before the barrier", 0, 1},
  }};
  const auto defaults = fields(mma_tiles_table().front().shape);
  ParamSpace s;
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    std::vector<std::int64_t> values;
    for (const Compiled& c : mma_tiles_table()) values.push_back(fields(c.shape)[i]);
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    s.params.push_back(
        param(kNames[i], defaults[i], values, meta[i].min, meta[i].max, meta[i].help));
  }
  s.constraint = [](const Params& p) -> std::string {
    return compiled_anywhere(shape_of(p)) ? "" : "this tile shape is not compiled";
  };
  return s;
}

std::string tiles_limits(const Device& dev, const GemmDesc& d, const Params& p) {
  const Shape want = shape_of(p);
  const Compiled* c = find(mma_tiles_table(), d.types, &want);
  if (!c)
    return "tile " + want.name() + " is not compiled for " + d.types.name() +
           " (compiled: " + compiled_for(d.types) + ")";
  return limits(*c, dev, d);
}

// By type (H100), with the next k-tile's fragments loaded across the barrier (XFRAG) where that
// entry is compiled (session 10, 4096^3 / 8192^3): 16-bit 128 x 128 (bf16 448 / 481 TFLOP/s
// against 422 / 412 for the plain 128 x 128 / 256 x 128 tiles chosen before), and 256 x 128 once
// its tiles fill 4 waves of SMs (session 15, bf16: 491 against 474 TFLOP/s at 8192^3, 477 against
// 466 at 6144^3, equal at 4096^3); i8 128 x 128 x 128 (825 / 930 TOPS against 772 / 846), tf32
// 128 x 128 x 32 (182 / 188 against 179 / 178); 3xtf32 128 x 128 x 16 and f64 128 x 64 without
// (no XFRAG entry: registers).
Params choose_tile(const Device& dev, const GemmDesc& d) {
  const Mode m = mode_of(d.types);
  const long long sms = dev.compute_units > 0 ? dev.compute_units : 132;
  const long long wide_tiles = ((d.m + 255) / 256) * ((d.n + 127) / 128);
  Shape s;
  switch (m) {
    case Mode::f16:
    case Mode::bf16:
      s = wide_tiles >= 4 * sms ? Shape{256, 128, 64, 64, 64, 3, true}
                                : Shape{128, 128, 64, 64, 64, 3, true};
      break;
    case Mode::tf32:
      s = {128, 128, 32, 64, 64, 3, true};
      break;
    case Mode::tf32x3:
      s = {128, 128, 16, 64, 64, 4, false};
      break;
    case Mode::i8:
      s = {128, 128, 128, 64, 64, 3, true};
      break;
    case Mode::f64:
      s = {128, 64, 16, 64, 32, 4, false};
      break;
  }
  return params_of(s);
}

void launch_tiles(const DeviceGemm& g, const Params& p, cudaStream_t s) {
  const Shape want = shape_of(p);
  const Compiled* c = find(mma_tiles_table(), g.desc.types, &want);
  if (!c)
    throw Unsupported("cuda.mma_tiles: tile " + want.name() + " is not compiled for " +
                      g.desc.types.name());
  c->launch(problem_of(g), s);
}

const PlanTraits kOpsN{OperandForm::ops_n, {}, {}};

GemmKernel tiles_kernel() {
  GemmKernel k;
  k.name = "cuda.mma_tiles";
  k.summary = "tensor cores: rung 11 with block/warp tiles, stages and fragment prefetch chosen";
  k.rung = 12;
  k.types = tensor_types();
  k.params = tiles_params();
  k.make_plan = [](const Device& d, const GemmDesc& desc, const Params& p) {
    return make_cuda_plan(d, desc, p, launch_tiles, kOpsN);
  };
  k.can_implement = tiles_limits;
  k.heuristic = choose_tile;
  k.preference = always(20);  // above cuda.pipelined (10): f64 goes to the DMMA units
  return k;
}

// cuda.mma_tiles with one fixed tile, for every type compiled with it, so `--kernels all`
// measures and the ladder tests check every compiled entry.
GemmKernel fixed_tile_kernel(const Shape& shape) {
  GemmKernel k;
  k.name = "cuda.mma_tiles." + shape.name();
  k.summary = "cuda.mma_tiles with this fixed tile";
  k.rung = 12;
  for (const TypeSupport& t : tensor_types()) {
    const Compiled* c = find(mma_tiles_table(), t.types, &shape);
    if (c) k.types.push_back(t);
  }
  const Params fixed = params_of(shape);
  k.make_plan = [fixed](const Device& d, const GemmDesc& desc, const Params&) {
    return make_cuda_plan(d, desc, fixed, launch_tiles, kOpsN);
  };
  k.can_implement = [fixed](const Device& d, const GemmDesc& desc, const Params&) {
    return tiles_limits(d, desc, fixed);
  };
  return k;
}

std::vector<GemmKernel> tiles_kernels() {
  std::vector<GemmKernel> v = {tiles_kernel()};
  std::vector<Shape> seen;
  for (const Compiled& c : mma_tiles_table()) {
    if (std::find(seen.begin(), seen.end(), c.shape) != seen.end()) continue;
    seen.push_back(c.shape);
    v.push_back(fixed_tile_kernel(c.shape));
  }
  return v;
}

const Register registered{tiles_kernels()};

}  // namespace
}  // namespace kafel::cuda::tc
