// Rung 9: warp tiling with a software pipeline. While a block computes k-tile kt from shared
// memory, tile kt+1 is already on its way: B by cp.async straight into the other shared
// buffer, A through registers (LDG.128) so it can be stored transposed (k-major) afterwards.
// With A k-major, a lane reads its TM rows of A and TN columns of B for one k step as
// (TM + TN) / 4 LDS.128 for TM x TN FFMA (8 x 16: 6 loads, 128 FFMA). Interior blocks run an
// unguarded loop; a k-tile is computed by a rolled loop of UNROLL k steps. The tile shapes are
// compiled from one table here; the kernel's heuristic picks one by problem size.
#include <algorithm>
#include <array>
#include <string>
#include <type_traits>
#include <vector>

#include "core/registry.hpp"
#include "cuda/gemm_common.cuh"
#include "cuda/runtime.hpp"
#include "cuda/tile_io.cuh"
#include "cuda/vec.cuh"

namespace kafel::cuda {
namespace {

// Dynamic shared memory of a tile shape for `elem`-byte elements: two stages, each the k-major
// A tile (rows of BM, padded by 4 elements when AROW) and the B tile. Config and can_implement
// both use it.
constexpr std::size_t smem_bytes(int bm, int bn, int bk, bool arow, std::size_t elem) {
  return 2 * std::size_t(bk * (arow ? bm + 4 : bm) + bk * bn) * elem;
}

// AROW: how lanes fetch the A tile. true: consecutive lanes take consecutive 16-byte chunks
// of a row (coalesced; the k-major stores then conflict 2-way, padding keeps it at 2).
// false: consecutive lanes take consecutive rows (32 rows per request, conflict-free stores).
template <class T, int BM_, int BN_, int BK_, int WM_, int WN_, bool AROW_, int UNROLL_>
struct Config {
  using type = T;
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_;
  static constexpr bool AROW = AROW_;
  static constexpr int UNROLL = UNROLL_ ? UNROLL_ : BK;  // k steps per loop iteration
  static constexpr int V = Vec<T>::N;
  static constexpr int NT = (BM / WM) * (BN / WN) * 32;
  // Lanes form 8 rows x 4 columns; a lane owns rows 32h + 4ty + e and columns 16h + 4tx + e.
  static constexpr int TM = WM / 8, TN = WN / 4;
  static constexpr int A_VECS = BM * BK / V / NT;   // A vectors each thread stages per tile
  static constexpr int B_VECS = BK * BN / V / NT;   // B vectors each thread copies per tile
  static constexpr int ALD = AROW ? BM + 4 : BM;    // row of the k-major A tile (16-byte pad)
  static constexpr int STAGE = BK * ALD + BK * BN;  // elements: A^T tile then B tile
  static constexpr std::size_t SMEM = smem_bytes(BM, BN, BK, AROW, sizeof(T));
  static_assert(SMEM == 2 * std::size_t(STAGE) * sizeof(T), "shared memory layout");
  // Two blocks per SM when 256 threads' accumulators leave room (<= 128 registers per thread);
  // 512-thread blocks get 128 registers at one block per SM anyway.
  static constexpr int MIN_BLOCKS = NT <= 256 && TM * TN * sizeof(T) / 4 <= 64 ? 2 : 1;
  static_assert(WM % 32 == 0 && WN % 16 == 0 && (BM * BK / V) % NT == 0 && (BK * BN / V) % NT == 0,
                "bad tile shape");
};

// The lane's fragments of k step p: 8 (TM) rows of the k-major A tile and TN columns of B.
template <class C>
__device__ __forceinline__ void load_frag(const typename C::type* As, const typename C::type* Bs,
                                          int p, typename C::type (&a)[C::TM],
                                          typename C::type (&b)[C::TN]) {
  using T = typename C::type;
  constexpr int V = C::V;
#pragma unroll
  for (int h = 0; h < C::TM / 4; ++h)
#pragma unroll
    for (int q = 0; q < 4; q += V) {
      const Vec<T> x = load_vec(As + p * C::ALD + h * 32 + q);
#pragma unroll
      for (int v = 0; v < V; ++v) a[h * 4 + q + v] = x.v[v];
    }
#pragma unroll
  for (int h = 0; h < C::TN / 4; ++h)
#pragma unroll
    for (int q = 0; q < 4; q += V) {
      const Vec<T> x = load_vec(Bs + p * C::BN + h * 16 + q);
#pragma unroll
      for (int v = 0; v < V; ++v) b[h * 4 + q + v] = x.v[v];
    }
}

// acc += the outer products of one k-tile. UNROLL k steps form one loop iteration: a fully
// unrolled 32-deep tile is ~4,400 instructions (70 KB), far beyond the instruction cache, and
// Nsight Compute showed 7 % of the warps' time stalled on instruction fetch (docs/cuda.md).
// In the rolled loop, fragments are double-buffered so step p+1's shared loads issue under
// step p's FFMAs.
template <class C>
__device__ __forceinline__ void compute(const typename C::type* As, const typename C::type* Bs,
                                        typename C::type (&acc)[C::TM][C::TN]) {
  using T = typename C::type;
  if constexpr (C::UNROLL == C::BK) {  // fully unrolled: ptxas schedules the loads itself
#pragma unroll
    for (int p = 0; p < C::BK; ++p) {
      T a[C::TM], b[C::TN];
      load_frag<C>(As, Bs, p, a, b);
#pragma unroll
      for (int t = 0; t < C::TM; ++t)
#pragma unroll
        for (int u = 0; u < C::TN; ++u) acc[t][u] = mad(a[t], b[u], acc[t][u]);
    }
  } else {
    T a[2][C::TM], b[2][C::TN];
    load_frag<C>(As, Bs, 0, a[0], b[0]);
#pragma unroll 1
    for (int p0 = 0; p0 < C::BK; p0 += C::UNROLL) {
#pragma unroll
      for (int j = 0; j < C::UNROLL; ++j) {
        // The tile's last step re-reads step 0 (harmless) instead of branching.
        load_frag<C>(As, Bs, (p0 + j + 1) % C::BK, a[(j + 1) & 1], b[(j + 1) & 1]);
#pragma unroll
        for (int t = 0; t < C::TM; ++t)
#pragma unroll
          for (int u = 0; u < C::TN; ++u) acc[t][u] = mad(a[j & 1][t], b[j & 1][u], acc[t][u]);
      }
    }
  }
}

// One k-tile: start moving tile kt+1 into the other buffer, compute tile kt, finish the move.
// FAST: tile kt+1 exists and lies inside A and B (unguarded loads, no per-vector bounds math).
template <class C, bool FAST>
__device__ __forceinline__ void step(const Operands<typename C::type>& g, const tile::Cursor<C>& at,
                                     typename C::type* smem, int kt, int ktiles, int bm, int bn,
                                     int frag_a, int frag_b,
                                     Vec<typename C::type> (&staged)[C::A_VECS],
                                     typename C::type (&acc)[C::TM][C::TN]) {
  using T = typename C::type;
  T* cur = smem + (kt & 1) * C::STAGE;
  T* nxt = smem + ((kt + 1) & 1) * C::STAGE;
  const bool more = FAST || kt + 1 < ktiles;
  if (more) {  // the other buffer was last read in iteration kt - 1, before its barrier
    const int k1 = (kt + 1) * C::BK;
    tile::fetch_a<C>(g, at, bm, k1, FAST, staged);
    tile::fetch_b<C>(g, at, nxt + C::BK * C::ALD, bn, k1, FAST);
  }
  cp_async_commit();
  compute<C>(cur + frag_a, cur + frag_b, acc);
  if (more) tile::store_a<C>(nxt, staged);
  cp_async_wait<0>();
  __syncthreads();
}

template <class C>
__global__ void __launch_bounds__(C::NT, C::MIN_BLOCKS)
    pipelined_kernel(Operands<typename C::type> g) {
  using T = typename C::type;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* smem = reinterpret_cast<T*>(smem_raw);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int wm0 = (warp / (C::BN / C::WN)) * C::WM, wn0 = (warp % (C::BN / C::WN)) * C::WN;
  const int ty = lane / 4, tx = lane % 4;
  const int frag_a = wm0 + ty * 4, frag_b = C::BK * C::ALD + wn0 + tx * 4;
  const int bm = blockIdx.y * C::BM, bn = blockIdx.x * C::BN;
  const int ktiles = (g.k + C::BK - 1) / C::BK, whole = g.k / C::BK;

  T acc[C::TM][C::TN];
#pragma unroll
  for (int t = 0; t < C::TM; ++t)
#pragma unroll
    for (int u = 0; u < C::TN; ++u) acc[t][u] = T(0);

  const tile::Cursor<C> at(g, bm, bn);
  const bool inner = bm + C::BM <= g.m && bn + C::BN <= g.n;
  Vec<T> staged[C::A_VECS];
  if (ktiles > 0) {
    const bool full = inner && whole > 0;
    tile::fetch_a<C>(g, at, bm, 0, full, staged);
    tile::fetch_b<C>(g, at, smem + C::BK * C::ALD, bn, 0, full);
    cp_async_commit();
    tile::store_a<C>(smem, staged);
    cp_async_wait<0>();
    __syncthreads();
  }
  // Blocks inside C in m and n run every k-tile whose successor is whole through the
  // unguarded loop; the rest (edge blocks, the k tail) through the guarded one. Two loops
  // rather than a branch per tile keep the taken branches (and their fetch stalls) out.
  int kt = 0;
  if (inner)
    for (; kt + 1 < whole; ++kt)
      step<C, true>(g, at, smem, kt, ktiles, bm, bn, frag_a, frag_b, staged, acc);
  for (; kt < ktiles; ++kt)
    step<C, false>(g, at, smem, kt, ktiles, bm, bn, frag_a, frag_b, staged, acc);

#pragma unroll
  for (int t = 0; t < C::TM; ++t) {
    const int i = bm + wm0 + (t / 4) * 32 + ty * 4 + t % 4;
    if (i >= g.m) continue;
#pragma unroll
    for (int h = 0; h < C::TN / 4; ++h)
      tile::store4(g, i, bn + wn0 + h * 16 + tx * 4, &acc[t][h * 4]);
  }
}

template <class C>
void launch_config(const DeviceGemm& dg, cudaStream_t s) {
  using T = typename C::type;
  // The opt-in above 48 KB holds for the current device only, so it is set on every launch
  // (a cheap host call) rather than once per process.
  KAFEL_CUDA_CHECK(cudaFuncSetAttribute(
      pipelined_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(C::SMEM)));
  const dim3 grid(ceil_div(dg.desc.n, C::BN), ceil_div(dg.desc.m, C::BM));
  pipelined_kernel<C><<<grid, C::NT, C::SMEM, s>>>(operands_of<T>(dg));
}

// A compiled tile shape: block tile BM x BN, k step BK, warp tile WM x WN, AROW (how lanes fetch
// A, see Config), UNROLL k steps per loop iteration (0: the whole k-tile unrolled).
// all_types: compiled for f32, f64 and i32; otherwise f32 only.
struct TileShape {
  int bm, bn, bk, wm, wn, arow, unroll;
  bool all_types;
};

using LaunchFn = void (*)(const DeviceGemm&, cudaStream_t);

struct Compiled {
  TileShape shape;
  LaunchFn f32, f64, i32;  // null where not compiled
};

template <int BM, int BN, int BK, int WM, int WN, int AROW, int UNROLL, bool ALL>
Compiled compiled() {
  Compiled c{{BM, BN, BK, WM, WN, AROW, UNROLL, ALL},
             &launch_config<Config<float, BM, BN, BK, WM, WN, AROW != 0, UNROLL>>,
             nullptr,
             nullptr};
  if constexpr (ALL) {
    c.f64 = &launch_config<Config<double, BM, BN, BK, WM, WN, AROW != 0, UNROLL>>;
    c.i32 = &launch_config<Config<int, BM, BN, BK, WM, WN, AROW != 0, UNROLL>>;
  }
  return c;
}

// Every shape this file compiles: the parameter space, the fixed-tile kernels and the tests
// all read this table. f32-only shapes keep nvcc's time on CI's 2 cores down.
const std::vector<Compiled>& table() {
  static const std::vector<Compiled> t = {
      compiled<128, 128, 16, 64, 32, 1, 0, true>(),  // 8x8 per lane, 2 blocks/SM
      compiled<128, 64, 32, 32, 32, 1, 8, false>(),  // small problems (more blocks)
      compiled<128, 64, 16, 32, 32, 1, 0, false>(),
      compiled<128, 256, 32, 64, 64, 1, 8, false>(),  // 8x16 per lane, 1 block/SM: the fastest
      compiled<128, 256, 32, 64, 64, 1, 4, false>(),
      compiled<128, 256, 32, 64, 64, 1, 0, false>(),  // the whole k-tile unrolled (70 KB loop)
      compiled<128, 256, 16, 64, 32, 1, 0, false>(),  // 512 threads, 8x8 per lane
  };
  return t;
}

constexpr std::array<const char*, 7> kNames = {"BM", "BN", "BK", "WM", "WN", "AROW", "UNROLL"};

std::array<int, 7> fields(const TileShape& t) {
  return {t.bm, t.bn, t.bk, t.wm, t.wn, t.arow, t.unroll};
}

Params params_of(const TileShape& t) {
  Params p;
  const auto f = fields(t);
  for (std::size_t i = 0; i < kNames.size(); ++i) p[kNames[i]] = f[i];
  return p;
}

// The compiled entry with exactly these parameters, or null.
const Compiled* find(const Params& p) {
  for (const Compiled& c : table()) {
    const auto f = fields(c.shape);
    bool same = true;
    for (std::size_t i = 0; i < kNames.size(); ++i) {
      const auto it = p.find(kNames[i]);
      same = same && it != p.end() && it->second == f[i];
    }
    if (same) return &c;
  }
  return nullptr;
}

// "m128n256k32w64x64" (+ ".acol" when lanes fetch A down rows, ".u8" for 8 k steps per loop
// iteration): the fixed-tile kernel's name suffix.
std::string shape_name(const TileShape& t) {
  return "m" + std::to_string(t.bm) + "n" + std::to_string(t.bn) + "k" + std::to_string(t.bk) +
         "w" + std::to_string(t.wm) + "x" + std::to_string(t.wn) + (t.arow ? "" : ".acol") +
         (t.unroll ? ".u" + std::to_string(t.unroll) : "");
}

std::string compiled_list() {
  std::string s;
  for (const Compiled& c : table()) s += (s.empty() ? "" : ", ") + shape_name(c.shape);
  return s;
}

// What a compiled tile needs beyond the type table: its element type compiled, its shared
// memory on this device, its block rows in the grid.
std::string tile_limits(const Device& dev, const GemmDesc& d, const Params& p) {
  if (std::string why = dims_fit(d); !why.empty()) return why;
  const Compiled* c = find(p);
  if (!c) return "this tile shape is not compiled (compiled: " + compiled_list() + ")";
  const TileShape& t = c->shape;
  if (!t.all_types && d.types != GemmTypes::of(DType::f32))
    return "tile " + shape_name(t) + " is compiled for f32 only, not " + d.types.name();
  const std::size_t smem = smem_bytes(t.bm, t.bn, t.bk, t.arow != 0, dtype_size(d.types.a));
  if (smem > dev.local_memory)
    return "tile " + shape_name(t) + " needs " + std::to_string(smem / 1024) +
           " KiB of shared memory per block for " + d.types.name() + ", " + dev.id + " allows " +
           std::to_string(dev.local_memory / 1024) + " KiB";
  return grid_rows_fit(d, t.bm);
}

// The tile by how many tiles the problem has per SM: 128x256x32 with 8 k steps per loop
// iteration (8x16 per lane, the fastest measured at 2048-8192: 0.95x cuBLAS,
// docs/BENCHMARKS.md) when they fill about one wave, else 128x128x16, else 128x64x32 with
// UNROLL 8 for f32 (1024^3 on a 132-SM H100/H200: 128 blocks instead of 32, 0.94x);
// f64 and i32 always use 128x128x16. Where a block gets less shared memory than the chosen
// tile needs (not on H100/H200: 227 KiB), 128x128x16 (33 KiB in f32) instead.
Params choose_tile(const Device& dev, const GemmDesc& d) {
  const TileShape wide{128, 256, 32, 64, 64, 1, 8, false};
  const TileShape mid{128, 128, 16, 64, 32, 1, 0, true};
  const TileShape narrow{128, 64, 32, 32, 32, 1, 8, false};
  if (d.types != GemmTypes::of(DType::f32)) return params_of(mid);
  const long long sms = dev.compute_units;
  auto tiles = [&](long long bm, long long bn) {
    return static_cast<long long>(ceil_div(d.m, bm)) * ceil_div(d.n, bn);
  };
  const TileShape& pick = 10 * tiles(128, 256) >= 9 * sms ? wide
                          : tiles(128, 128) >= sms        ? mid
                                                          : narrow;
  const bool fits =
      smem_bytes(pick.bm, pick.bn, pick.bk, pick.arow != 0, sizeof(float)) <= dev.local_memory;
  return params_of(fits ? pick : mid);
}

void launch(const DeviceGemm& g, const Params& p, cudaStream_t s) {
  const Compiled* c = find(p);
  if (!c)
    throw InvalidArgument("cuda.pipelined: tile not compiled (compiled: " + compiled_list() + ")");
  by_type(g, "cuda.pipelined", [&](auto tag) {
    using T = decltype(tag);
    const LaunchFn f = std::is_same_v<T, float>    ? c->f32
                       : std::is_same_v<T, double> ? c->f64
                                                   : c->i32;
    if (!f)
      throw Unsupported("cuda.pipelined: tile " + shape_name(c->shape) + " is not compiled for " +
                        g.desc.types.name());
    f(g, s);
  });
}

// One parameter per tile field; its candidates are the values the compiled shapes use, so the
// space's valid points (enumerate(), what the tuner tries) are exactly the compiled shapes.
ParamSpace pipelined_params() {
  struct Field {
    const char* help;
    std::int64_t min, max;
  };
  const std::array<Field, 7> meta = {{
      {"block tile rows", 32, 256},
      {"block tile columns", 32, 256},
      {"k per pipeline step", 8, 64},
      {"warp tile rows (lane tile WM/8)", 32, 128},
      {"warp tile columns (lane tile WN/4)", 16, 128},
      {"1: lanes fetch A along rows (coalesced), 0: down rows", 0, 1},
      {"k steps per loop iteration (0: whole k-tile)", 0, 64},
  }};
  const auto defaults = fields(table().front().shape);
  ParamSpace s;
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    std::vector<std::int64_t> values;
    for (const Compiled& c : table()) values.push_back(fields(c.shape)[i]);
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    s.params.push_back(
        param(kNames[i], defaults[i], values, meta[i].min, meta[i].max, meta[i].help));
  }
  s.constraint = [](const Params& p) -> std::string {
    return find(p) ? "" : "this tile shape is not compiled (compiled: " + compiled_list() + ")";
  };
  return s;
}

const PlanTraits kOpsN{OperandForm::ops_n, {}};

GemmKernel pipelined_kernel_info() {
  GemmKernel k =
      cuda_rung("cuda.pipelined",
                "warp tiling + pipeline: B by cp.async, A staged in registers and stored k-major",
                9, pipelined_params(), launch, tile_limits, kOpsN);
  k.heuristic = choose_tile;
  k.preference = always(10);
  return k;
}

// cuda.pipelined with one fixed tile, so `--kernels all` measures and the ladder tests every
// compiled shape in every type it is compiled for.
GemmKernel fixed_tile_kernel(const Compiled& c) {
  const Params fixed = params_of(c.shape);
  GemmKernel k;
  k.name = "cuda.pipelined." + shape_name(c.shape);
  k.summary = c.shape.all_types ? "cuda.pipelined with this fixed tile"
                                : "cuda.pipelined with this fixed tile (f32)";
  k.rung = 9;
  k.types = c.shape.all_types ? natural_types({DType::f32, DType::f64, DType::i32})
                              : natural_types({DType::f32});
  k.make_plan = [fixed](const Device& d, const GemmDesc& desc, const Params&) {
    return make_cuda_plan(d, desc, fixed, launch, kOpsN);
  };
  k.can_implement = [fixed](const Device& d, const GemmDesc& desc, const Params&) {
    return tile_limits(d, desc, fixed);
  };
  return k;
}

std::vector<GemmKernel> pipelined_kernels() {
  std::vector<GemmKernel> v = {pipelined_kernel_info()};
  for (const Compiled& c : table()) v.push_back(fixed_tile_kernel(c));
  return v;
}

const Register registered{pipelined_kernels()};

}  // namespace
}  // namespace kafel::cuda
