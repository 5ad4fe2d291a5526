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

// cuda.pipelined tile shapes; the launcher knows which combinations are compiled.
// BM = BN = 0 lets the launcher pick by problem size (see pipelined.cu).
ParamSpace pipelined_params(std::int64_t bm, std::int64_t bn, std::int64_t bk, std::int64_t wm,
                            std::int64_t wn, std::int64_t arow, bool tunable) {
  auto c = [tunable](std::vector<std::int64_t> v) {
    return tunable ? v : std::vector<std::int64_t>{};
  };
  ParamSpace s;
  s.params = {{"BM", bm, c({0, 128, 256}), "block tile rows (0: chosen by size)"},
              {"BN", bn, c({0, 64, 128, 256}), "block tile columns (0: chosen by size)"},
              {"BK", bk, c({16, 32}), "k per pipeline step"},
              {"WM", wm, c({32, 64}), "warp tile rows (lane tile WM/8)"},
              {"WN", wn, c({32, 64}), "warp tile columns (lane tile WN/4)"},
              {"AROW", arow, c({0, 1}), "1: lanes fetch A along rows (coalesced), 0: down rows"}};
  s.constraint = [](const Params& p) -> std::string {
    // The shapes compiled in pipelined.cu (all but the first two are f32 only).
    static const std::vector<std::vector<std::int64_t>> compiled = {
        {0, 0, 16, 64, 32, 1},     {128, 128, 16, 64, 32, 1}, {128, 64, 16, 32, 32, 1},
        {128, 256, 16, 64, 64, 1}, {128, 256, 16, 64, 64, 0}, {128, 256, 32, 64, 64, 1},
        {256, 128, 16, 64, 64, 1}};
    const std::vector<std::int64_t> v = {p.at("BM"), p.at("BN"), p.at("BK"),
                                         p.at("WM"), p.at("WN"), p.at("AROW")};
    for (const auto& c : compiled)
      if (c == v) return "";
    return "this BM/BN/BK/WM/WN/AROW combination is not compiled (see pipelined.cu)";
  };
  return s;
}

GemmKernel pipelined_variant(std::int64_t bm, std::int64_t bn, std::int64_t bk, std::int64_t wm,
                             std::int64_t wn, std::int64_t arow = 1) {
  const std::string name = "cuda.pipelined.m" + std::to_string(bm) + "n" + std::to_string(bn) +
                           "k" + std::to_string(bk) + "w" + std::to_string(wm) + "x" +
                           std::to_string(wn) + (arow ? "" : ".acol");
  return rung(name, "cuda.pipelined with fixed tiles (f32)",
              pipelined_params(bm, bn, bk, wm, wn, arow, false), cuda::launch_pipelined, {true},
              {DType::f32});
}

// cuda.fragdb: fixed tiles, one registry line each (the shapes compiled in fragdb.cu).
GemmKernel fragdb_variant(std::int64_t bm, std::int64_t bn, std::int64_t bk, std::int64_t wm,
                          std::int64_t wn) {
  ParamSpace s;
  s.params = {{"BM", bm, {}, "block tile rows"},
              {"BN", bn, {}, "block tile columns"},
              {"BK", bk, {}, "k per pipeline step"},
              {"WM", wm, {}, "warp tile rows (lane tile WM/8)"},
              {"WN", wn, {}, "warp tile columns (lane tile WN/4)"}};
  s.constraint = [](const Params& p) -> std::string {
    static const std::vector<std::vector<std::int64_t>> compiled = {
        {128, 128, 16, 64, 64}, {128, 128, 32, 64, 64}, {128, 256, 32, 64, 64}};
    const std::vector<std::int64_t> v = {p.at("BM"), p.at("BN"), p.at("BK"), p.at("WM"),
                                         p.at("WN")};
    for (const auto& c : compiled)
      if (c == v) return "";
    return "this BM/BN/BK/WM/WN combination is not compiled (see fragdb.cu)";
  };
  const std::string name = "cuda.fragdb.m" + std::to_string(bm) + "n" + std::to_string(bn) + "k" +
                           std::to_string(bk) + "w" + std::to_string(wm) + "x" + std::to_string(wn);
  return rung(name,
              "cuda.pipelined + register-fragment double buffering, barrier before the last "
              "k step (f32)",
              std::move(s), cuda::launch_fragdb, {true}, {DType::f32});
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
  return {
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
           pipelined_params(0, 0, 16, 64, 32, 1, true), cuda::launch_pipelined, n_only),
      pipelined_variant(128, 128, 16, 64, 32),
      pipelined_variant(128, 64, 16, 32, 32),
      pipelined_variant(128, 256, 16, 64, 64),
      pipelined_variant(128, 256, 16, 64, 64, 0),
      pipelined_variant(128, 256, 32, 64, 64),
      pipelined_variant(256, 128, 16, 64, 64),
      fragdb_variant(128, 128, 16, 64, 64),
      fragdb_variant(128, 128, 32, 64, 64),
      fragdb_variant(128, 256, 32, 64, 64),
      cublas(),
  };
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
