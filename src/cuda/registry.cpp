// The CUDA backend: its devices and its GEMM ladder, one registry line per rung.
// Parameters of each rung are described here once; the launchers read them by name.
#include <memory>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "cuda/kernels.hpp"
#include "cuda/runtime.hpp"

namespace kafel {
namespace {

using cuda::Launcher;
using cuda::PlanTraits;

const std::vector<DType> kAll = {DType::f32, DType::f64, DType::i32};

GemmKernel rung(std::string name, std::string summary, ParamSpace params, Launcher launcher,
                PlanTraits traits = {}, std::vector<DType> types = kAll) {
  GemmKernel k;
  k.name = std::move(name);
  k.summary = std::move(summary);
  k.types = std::move(types);
  k.params = std::move(params);
  k.make_plan = [launcher, traits](const Device& d, const GemmDesc& desc, const Params& p) {
    return cuda::make_cuda_plan(d, desc, p, launcher, traits);
  };
  return k;
}

GemmKernel oneblock() {
  GemmKernel k = rung("cuda.oneblock", "one block, one thread per element of C (m*n <= 1024)", {},
                      cuda::launch_oneblock);
  // Checked before any device call, so the limit is reported even without a GPU.
  k.make_plan = [](const Device& d, const GemmDesc& desc, const Params& p) {
    if (desc.m * desc.n > cuda::kOneBlockMaxThreads)
      throw Unsupported("cuda.oneblock: " + desc.shape() +
                        " needs m*n = " + std::to_string(desc.m * desc.n) +
                        " threads in one block, more than CUDA's limit of 1024 threads per block");
    return cuda::make_cuda_plan(d, desc, p, cuda::launch_oneblock);
  };
  return k;
}

ParamSpace gridstride_params() {
  ParamSpace s;
  s.params = {{"block", 16, {1, 2, 4, 8, 16, 32}, "block = b: b x b threads per block"},
              {"grid", 0, {0, 1, 2, 4, 8, 16, 32, 64}, "grid = g: g x g blocks (0: cover C)"}};
  s.constraint = [](const Params& p) -> std::string {
    const auto b = p.at("block"), g = p.at("grid");
    if (b < 1 || b > 32) return "block must be 1..32 (b*b <= 1024 threads)";
    if (g < 0 || g > 65535) return "grid must be 0..65535";
    return "";
  };
  return s;
}

ParamSpace smem_params() {
  ParamSpace s;
  s.params = {{"TS", 32, {16, 32}, "tile edge: TS x TS threads and shared tiles"}};
  s.constraint = [](const Params& p) -> std::string {
    return p.at("TS") == 16 || p.at("TS") == 32 ? "" : "TS must be 16 or 32";
  };
  return s;
}

// "m128n256k32w64x64" (+ ".acol" when lanes fetch A down rows, ".u8" for 8 k steps per loop
// iteration): how a tile shape is named.
std::string shape_suffix(const cuda::TileShape& t) {
  return "m" + std::to_string(t.bm) + "n" + std::to_string(t.bn) + "k" + std::to_string(t.bk) +
         "w" + std::to_string(t.wm) + "x" + std::to_string(t.wn) + (t.arow ? "" : ".acol") +
         (t.unroll ? ".u" + std::to_string(t.unroll) : "");
}

// cuda.pipelined tile shapes; BM = BN = 0 lets the launcher pick by problem size.
ParamSpace pipelined_params(const cuda::TileShape& t, bool tunable) {
  auto c = [tunable](std::vector<std::int64_t> v) {
    return tunable ? v : std::vector<std::int64_t>{};
  };
  ParamSpace s;
  s.params = {{"BM", t.bm, c({0, 128, 256}), "block tile rows (0: chosen by size)"},
              {"BN", t.bn, c({0, 64, 128, 256}), "block tile columns (0: chosen by size)"},
              {"BK", t.bk, c({16, 32}), "k per pipeline step"},
              {"WM", t.wm, c({32, 64}), "warp tile rows (lane tile WM/8)"},
              {"WN", t.wn, c({32, 64}), "warp tile columns (lane tile WN/4)"},
              {"AROW", t.arow, c({0, 1}), "1: lanes fetch A along rows (coalesced), 0: down rows"},
              {"UNROLL", t.unroll, c({0, 4, 8}), "k steps per loop iteration (0: whole k-tile)"}};
  // Exactly the shapes pipelined.cu compiles (its table), or BM = BN = 0 (chosen by size).
  s.constraint = [](const Params& p) -> std::string {
    if (p.at("BM") == 0 && p.at("BN") == 0) return "";
    for (const auto& c : cuda::pipelined_shapes())
      if (c.bm == p.at("BM") && c.bn == p.at("BN") && c.bk == p.at("BK") && c.wm == p.at("WM") &&
          c.wn == p.at("WN") && c.arow == p.at("AROW") && c.unroll == p.at("UNROLL"))
        return "";
    return "this tile shape is not compiled (see the table in src/cuda/pipelined.cu)";
  };
  return s;
}

GemmKernel pipelined_variant(const cuda::TileShape& t) {
  return rung(
      "cuda.pipelined." + shape_suffix(t),
      t.all_types ? "cuda.pipelined with fixed tiles" : "cuda.pipelined with fixed tiles (f32)",
      pipelined_params(t, false), cuda::launch_pipelined, {true},
      t.all_types ? std::vector<DType>{DType::f32, DType::f64, DType::i32}
                  : std::vector<DType>{DType::f32});
}

GemmKernel cublas() {
  GemmKernel k = rung("cuda.cublas", "cuBLAS sgemm/dgemm (IEEE FP32/FP64, no TF32)", {},
                      cuda::launch_cublas, {}, {DType::f32, DType::f64});
  k.baseline = true;
  k.make_plan = [](const Device& d, const GemmDesc& desc, const Params& p) {
    if (desc.dtype != DType::f32 && desc.dtype != DType::f64)
      throw Unsupported("cuda.cublas: only f32 and f64");
    cuda::DeviceGuard guard(cuda::ordinal_of(d));
    cuda::prepare_cublas(cuda::ordinal_of(d));  // handle creation stays out of run()
    return cuda::make_cuda_plan(d, desc, p, cuda::launch_cublas);
  };
  return k;
}

std::vector<GemmKernel> cuda_kernels() {
  const PlanTraits n_only{true};
  std::vector<GemmKernel> kernels = {
      oneblock(),
      rung("cuda.blocks", "32x32-thread blocks tile C, bounds-checked", {}, cuda::launch_blocks),
      rung("cuda.gridstride", "grid-stride loops: any block (b x b) and grid (g x g) shape",
           gridstride_params(), cuda::launch_gridstride),
      rung("cuda.smem", "shared-memory tiles TS x TS", smem_params(), cuda::launch_smem),
      rung("cuda.reg1d", "1D register blocking: 8 rows of C per thread, 64x64 tiles", {},
           cuda::launch_reg1d),
      rung("cuda.reg2d", "2D register blocking: 8x8 of C per thread, 128x128 tiles", {},
           cuda::launch_reg2d),
      rung("cuda.vec", "2D blocking + 128-bit loads, A tile transposed in shared memory", {},
           cuda::launch_vec, n_only),
      rung("cuda.warptile", "warp tiling 64x32 per warp, conflict-free 128-bit fragments", {},
           cuda::launch_warptile, n_only),
      rung("cuda.pipelined",
           "warp tiling + pipeline: B by cp.async, A staged in registers and stored k-major",
           pipelined_params({0, 0, 16, 64, 32, 1, 0, true}, true), cuda::launch_pipelined, n_only),
      cublas(),
  };
  // One line per compiled tile shape, after the rungs (the .cu files own the lists).
  for (const auto& t : cuda::pipelined_shapes())
    kernels.insert(kernels.end() - 1, pipelined_variant(t));
  return kernels;
}

}  // namespace

Backend cuda_backend() {
  Backend b;
  b.name = "cuda";
  b.devices = [] { return cuda::list_cuda_devices(); };
  b.gemm_kernels = [] { return cuda_kernels(); };
  b.default_gemm_kernel = [](const Device&, DType) { return std::string("cuda.pipelined"); };
  return b;
}

}  // namespace kafel
