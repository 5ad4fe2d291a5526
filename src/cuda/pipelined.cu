// Rung 9: warp tiling with a software pipeline. While a block computes k-tile kt from shared
// memory, tile kt+1 is already on its way: B by cp.async straight into the other shared
// buffer, A through registers (LDG.128) so it can be stored transposed (k-major) afterwards.
// With A k-major, a lane reads its TM rows of A and TN columns of B for one k step as
// (TM + TN) / 4 LDS.128 for TM x TN FFMA (8 x 16: 6 loads, 128 FFMA). Interior blocks run an
// unguarded loop; a k-tile is computed by a rolled loop of UNROLL k steps. The tile shapes are
// compiled from one table here; the kernel's heuristic picks one by problem size.
#include <algorithm>
#include <array>
#include <cmath>
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
  // Two blocks per SM when 256 threads' accumulators leave room (<= 128 registers per thread),
  // four for 128-thread blocks with at most 32 accumulators (small tiles live on occupancy);
  // 512-thread blocks get 128 registers at one block per SM anyway.
  static constexpr int ACC_WORDS = TM * TN * sizeof(T) / 4;
  static constexpr int MIN_BLOCKS = NT <= 128 && ACC_WORDS <= 32   ? 4
                                    : NT <= 256 && ACC_WORDS <= 64 ? 2
                                                                   : 1;
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

// acc += a x b, the lane's 8 x 16 (TM x TN) outer product of one k step, in blocks of 4 x 4: each
// block takes one LDS.128 of A and one of B, and runs its rows serpentine (the last product of
// a row and the first of the next share their B value). The order is what ptxas schedules and
// allocates from; H100, f32, same calls (2026-11-25): rows of 16 in plain order (before) 0.761
// ms at 1024 x 1024 x 16384 and 3.000 ms at 4096^3; serpentine rows of 16 0.751 / 2.957;
// 4 x 4 blocks **0.717 / 2.822** (cuBLAS 0.670 / 2.660); columns outer -6 %, 2 x 2, 2 x 4,
// 2 x 8 and 4 x 8 blocks, blocks serpentine or columns outer, a 16-step loop body, and the
// next step's loads between the two halves all lost 1-15 % against 4 x 4.
template <class C>
__device__ __forceinline__ void outer_product(const typename C::type (&a)[C::TM],
                                              const typename C::type (&b)[C::TN],
                                              typename C::type (&acc)[C::TM][C::TN]) {
  static_assert(C::TM % 4 == 0 && C::TN % 4 == 0, "lane tiles are made of 4 x 4 blocks");
#pragma unroll
  for (int h = 0; h < C::TM / 4; ++h)
#pragma unroll
    for (int g = 0; g < C::TN / 4; ++g)
#pragma unroll
      for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int t = h * 4 + r, u = g * 4 + (r % 2 ? 3 - i : i);
          acc[t][u] = mad(a[t], b[u], acc[t][u]);
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
      outer_product<C>(a, b, acc);
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
        outer_product<C>(a[j & 1], b[j & 1], acc);
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

// Split-K and batches: blockIdx.z = matrix * splits + slice. With splits > 1 each block
// computes its output tile over one k slice (whole k-tiles, split as evenly as possible) and
// writes the raw partial tile to the workspace; splitk_reduce adds the slices in order and
// applies alpha and beta. Same order every run, so the same bits every run.
template <class T>
struct Slices {
  T* ws;                // null: one slice, the epilogue writes C
  long long ws_ld;      // elements per partial row: n rounded up to 4 (16-byte rows)
  long long ws_matrix;  // elements per partial tile set: m * ws_ld
  int splits;           // k slices per output tile
  int batch0;           // first matrix of this launch (launches hold <= 65535 / splits matrices)
  int batches;          // matrices of the problem
};

// This block's matrix of the batch.
template <class T>
__device__ __forceinline__ long long block_matrix(const Slices<T>& sk) {
  return sk.batch0 + blockIdx.z / sk.splits;
}

// The operands of this block's matrix and k slice: A and B moved, k the slice's length. C is
// moved by the epilogue (one pointer less to keep through the k loop).
template <int BK, class T>
__device__ __forceinline__ Operands<T> block_operands(const Operands<T>& g0, const Slices<T>& sk) {
  Operands<T> g = g0;
  const int slice = blockIdx.z % sk.splits;
  const long long matrix = block_matrix(sk);
  g.a += matrix * g.sa;
  g.b += matrix * g.sb;
  if (sk.splits > 1) {
    const int tiles = (g.k + BK - 1) / BK;
    const int t0 = static_cast<int>(static_cast<long long>(slice) * tiles / sk.splits);
    const int t1 = static_cast<int>(static_cast<long long>(slice + 1) * tiles / sk.splits);
    const int k0 = t0 * BK;
    g.a += k0;
    g.b += static_cast<long long>(k0) * g.ldb;
    g.k = max(0, min(g.k, t1 * BK) - k0);
  }
  return g;
}

// The raw partial C(i, j..j+3) of one slice (j + 4 <= ws_ld whenever j < n).
template <class T>
__device__ __forceinline__ void store_partial(T* w, long long ws_ld, int i, int j, const T* acc) {
  constexpr int V = Vec<T>::N;
  T* p = w + static_cast<long long>(i) * ws_ld + j;
#pragma unroll
  for (int q = 0; q < 4; q += V) {
    Vec<T> x;
#pragma unroll
    for (int v = 0; v < V; ++v) x.v[v] = acc[q + v];
    store_vec(p + q, x);
  }
}

template <class C>
__global__ void __launch_bounds__(C::NT, C::MIN_BLOCKS)
    pipelined_kernel(Operands<typename C::type> g0, Slices<typename C::type> sk) {
  using T = typename C::type;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* smem = reinterpret_cast<T*>(smem_raw);
  const Operands<T> g = block_operands<C::BK>(g0, sk);
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

  // Recomputed from blockIdx here rather than kept in registers through the k loop.
  T* partial = sk.ws ? sk.ws + (static_cast<long long>(blockIdx.z % sk.splits) * sk.batches +
                                block_matrix(sk)) *
                                   sk.ws_matrix
                     : nullptr;
  Operands<T> out = g;
  out.c = g0.c + block_matrix(sk) * g0.sc;
#pragma unroll
  for (int t = 0; t < C::TM; ++t) {
    const int i = bm + wm0 + (t / 4) * 32 + ty * 4 + t % 4;
    if (i >= g.m) continue;
#pragma unroll
    for (int h = 0; h < C::TN / 4; ++h) {
      const int j = bn + wn0 + h * 16 + tx * 4;
      if (partial) {
        if (j < g.n) store_partial(partial, sk.ws_ld, i, j, &acc[t][h * 4]);
      } else {
        tile::store4(out, i, j, &acc[t][h * 4]);
      }
    }
  }
}

// C = alpha * (sum of the k slices' partial tiles, slice 0 first) + beta * C, four columns per
// thread, grid-stride over every matrix of the batch.
template <class T>
__global__ void splitk_reduce(Operands<T> g, Slices<T> sk) {
  constexpr int V = Vec<T>::N;
  const long long quads = sk.ws_ld / 4, per_matrix = static_cast<long long>(g.m) * quads;
  const long long total = per_matrix * sk.batches;
  for (long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long matrix = idx / per_matrix, r = idx % per_matrix;
    const int i = static_cast<int>(r / quads), j = static_cast<int>(r % quads) * 4;
    T acc[4] = {T(0), T(0), T(0), T(0)};
    const T* p = sk.ws + matrix * sk.ws_matrix + static_cast<long long>(i) * sk.ws_ld + j;
    const long long slice_step = sk.ws_matrix * sk.batches;
    // Eight slices' loads issued before their additions (still in slice order): one load in
    // flight per thread left the reduction latency-bound (64 L2 round trips at 256^2 x 65536).
    constexpr int kInFlight = 8;
    for (int s0 = 0; s0 < sk.splits; s0 += kInFlight) {
      Vec<T> x[kInFlight][4 / V];
#pragma unroll
      for (int u = 0; u < kInFlight; ++u)
#pragma unroll
        for (int q = 0; q < 4 / V; ++q)
          if (s0 + u < sk.splits) x[u][q] = load_vec(p + (s0 + u) * slice_step + q * V);
#pragma unroll
      for (int u = 0; u < kInFlight; ++u)
#pragma unroll
        for (int q = 0; q < 4 / V; ++q)
#pragma unroll
          for (int v = 0; v < V; ++v)
            if (s0 + u < sk.splits) acc[q * V + v] = mad(x[u][q].v[v], T(1), acc[q * V + v]);
    }
    Operands<T> gm = g;
    gm.c += matrix * g.sc;
    tile::store4(gm, i, j, acc);
  }
}

// Elements per row of the split-K workspace: n rounded up to 4, so every partial row is 16-byte
// aligned for every element type.
long long workspace_ld(long long n) {
  return (n + 3) / 4 * 4;
}

// The k slices actually used: at most one per k-tile (more would only add empty slices).
int effective_splits(const GemmDesc& d, int bk, std::int64_t splits) {
  const std::int64_t tiles = (d.k + bk - 1) / bk;
  return static_cast<int>(std::max<std::int64_t>(1, std::min(splits, tiles)));
}

template <class C>
void launch_config(const DeviceGemm& dg, int splits, cudaStream_t s) {
  using T = typename C::type;
  // The opt-in above 48 KB holds for the current device only, so it is set on every launch
  // (a cheap host call) rather than once per process.
  KAFEL_CUDA_CHECK(cudaFuncSetAttribute(
      pipelined_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(C::SMEM)));
  const Operands<T> g = operands_of<T>(dg);
  Slices<T> sk{nullptr, workspace_ld(dg.desc.n), 0, splits, 0, static_cast<int>(dg.desc.batch)};
  sk.ws_matrix = dg.desc.m * sk.ws_ld;
  if (splits > 1) {
    sk.ws = static_cast<T*>(dg.workspace);
    const std::size_t need = std::size_t(splits) * dg.desc.batch * sk.ws_matrix * sizeof(T);
    if (!sk.ws || dg.workspace_bytes < need)
      throw InvalidArgument("cuda.pipelined: the split-K workspace is missing or too small");
  }
  const long long per_launch = kMaxGridY / splits;
  for (long long first = 0; first < dg.desc.batch; first += per_launch) {
    const auto count =
        static_cast<unsigned>(std::min<long long>(per_launch, dg.desc.batch - first));
    sk.batch0 = static_cast<int>(first);
    const dim3 grid(ceil_div(dg.desc.n, C::BN), ceil_div(dg.desc.m, C::BM), count * splits);
    pipelined_kernel<C><<<grid, C::NT, C::SMEM, s>>>(g, sk);
    KAFEL_CUDA_CHECK_LAUNCH("pipelined");
  }
  if (splits > 1) {
    const long long items = dg.desc.batch * sk.ws_matrix / 4;
    const auto blocks = static_cast<unsigned>(std::min<long long>((items + 255) / 256, 1 << 20));
    splitk_reduce<T><<<blocks, 256, 0, s>>>(g, sk);
    KAFEL_CUDA_CHECK_LAUNCH("splitk_reduce");
  }
}

// A compiled tile shape: block tile BM x BN, k step BK, warp tile WM x WN, AROW (how lanes fetch
// A, see Config), UNROLL k steps per loop iteration (0: the whole k-tile unrolled).
// all_types: compiled for f32, f64 and i32; otherwise f32 only.
struct TileShape {
  int bm, bn, bk, wm, wn, arow, unroll;
  bool all_types;
};

using LaunchFn = void (*)(const DeviceGemm&, int splits, cudaStream_t);

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
      compiled<128, 128, 16, 64, 32, 1, 0, true>(),   // 8x8 per lane, 2 blocks/SM: every type
      compiled<128, 256, 32, 64, 64, 1, 8, false>(),  // 8x16 per lane, 1 block/SM: the fastest
      compiled<128, 64, 32, 32, 32, 1, 8, false>(),   // 4x8 per lane: many blocks for mid sizes
      compiled<256, 64, 16, 64, 32, 1, 0, false>(),   // 128x128's warps stacked: n <= 64
      compiled<64, 64, 32, 32, 32, 1, 8, false>(),    // 4 warps, 4 blocks/SM: small matrices
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

// The k slices of a parameter set (1 when it has none: the fixed-tile kernels).
std::int64_t splits_of(const Params& p) {
  const auto it = p.find("SPLITK");
  return it == p.end() ? 1 : it->second;
}

// Bytes of split-K workspace: one partial C per k slice and matrix (0 without a split).
std::size_t workspace_bytes(const GemmDesc& d, const Params& p) {
  const Compiled* c = find(p);
  if (!c) return 0;
  const int splits = effective_splits(d, c->shape.bk, splits_of(p));
  if (splits <= 1) return 0;
  return std::size_t(splits) * std::size_t(d.batch) * std::size_t(d.m) *
         std::size_t(workspace_ld(d.n)) * dtype_size(d.types.c);
}

// What a compiled tile needs beyond the type table: its element type compiled, its shared
// memory on this device, its block rows in the grid, its split-K workspace in device memory.
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
  const std::size_t ws = workspace_bytes(d, p);
  if (dev.global_memory && ws > dev.global_memory / 2)
    return "SPLITK=" + std::to_string(splits_of(p)) + " needs " + std::to_string(ws >> 20) +
           " MiB of split-K workspace, more than half of " + dev.id + "'s memory";
  return grid_rows_fit(d, t.bm);
}

// ---- the shape-aware default -----------------------------------------------------------------
//
// For every candidate tile and k split the heuristic predicts a time and takes the shortest:
//   compute: the blocks (output tiles x splits x matrices) run in waves of SMs x blocks-per-SM;
//     a wave whose busiest SM holds r blocks takes r x (block FLOPs) / (SM rate x tile rate(r))
//     plus a fixed cost (pipeline fill, epilogue). The SM rate is 74.5 % of the FP32 peak (the
//     128x256 tile's measured steady state); tile rates are relative to it, lower while an SM
//     holds fewer blocks than the tile was made for (fewer warps to hide latency);
//   split-K: the partial tiles written and read back plus the reduction's launch; a split must
//     beat the best unsplit choice by 8 % (the model's error at measured sizes, 2-3 % on the H100
//     in session 14, where 10 % kept 1536^3 off a split measured 9 % faster), so shapes that
//     fill the GPU keep their measured tiles.
// Rates of 128x256, 128x128 and 128x64 were fitted to run 8 of docs/BENCHMARKS.md (H200; the
// model reproduces its 1024^3 and 2048^3 figures within 3 %); 64x64's to the H100 of session 14
// (0.75 / 0.63 reproduce 1024^3 at two blocks per SM and 1536^3's two waves within 2 %; the
// estimates 0.60 / 0.30 had kept it from 1021^3, where it runs 3 % faster); 256x64's is an
// estimate until measured (docs/cuda.md lists the commands).

struct Candidate {
  TileShape tile;
  int per_sm;        // blocks an SM holds (registers, shared memory)
  double rate_full;  // rate with per_sm blocks resident, relative to the 128x256 tile
  double rate_one;   // rate with one block resident
};

constexpr TileShape kWide{128, 256, 32, 64, 64, 1, 8, false};
constexpr TileShape kMid{128, 128, 16, 64, 32, 1, 0, true};
constexpr TileShape kNarrow{128, 64, 32, 32, 32, 1, 8, false};
constexpr TileShape kTall{256, 64, 16, 64, 32, 1, 0, false};
constexpr TileShape kSmall{64, 64, 32, 32, 32, 1, 8, false};

constexpr double kFp32Efficiency = 0.745;  // the 128x256 tile's share of the FP32 peak
constexpr double kWaveCost = 2e-6;         // seconds per wave: first k-tile, epilogue
constexpr double kReduceBandwidth = 3e12;  // bytes/s of the partial tiles (L2 / HBM)
constexpr double kReduceLaunch = 4e-6;     // seconds: the reduction kernel's launch and tail
constexpr double kSplitMargin = 0.92;      // a split must predict <= 0.92x the best unsplit time
constexpr int kMinTilesPerSlice = 4;       // shorter slices mostly fill and drain the pipeline
constexpr int kMaxSplits = 512;
// Blocks per SM whose loads in flight stream HBM at its full rate: one 128x64 block per SM
// moved 0.96 TB/s of an H100's 3.35 (64x64x1048576, SPLITK=128, 2026-11-23).
constexpr double kBlocksToStream = 3.5;
// A read that hits L2 (a tile row or column another block of the wave also reads) returns in
// about half the time of one from HBM, so a block streams it twice as fast. Without this, the
// bandwidth term priced every read at HBM latency and sent every shape with one block per SM
// to 128x128 tiles: the long-k 1024 x 1024 x 16384 and 256 x 256 x 65536 measured 2-3 % slower
// there than with 128x256 on the H100 (2026-11-24). Large squares now take 128x256 again, the
// tile this model's rates were fitted to (H200); on the H100 the two tiles are within 1-3 % on
// them (docs/BENCHMARKS.md, "Shapes, session 7").
constexpr double kL2HitCost = 0.5;

std::vector<Candidate> candidates(const GemmDesc& d) {
  if (d.types != GemmTypes::of(DType::f32)) return {{kMid, 2, 0.95, 0.79}};
  return {{kWide, 1, 1.0, 1.0},
          {kMid, 2, 0.95, 0.79},
          {kNarrow, 2, 0.76, 0.67},
          {kTall, 2, 0.92, 0.75},
          {kSmall, 4, 0.75, 0.63}};
}

double predicted_seconds(const Device& dev, const GemmDesc& d, const Candidate& c, int splits) {
  const TileShape& t = c.tile;
  const double sms = std::max(1, dev.compute_units);
  const double sm_rate = std::max(1.0, dev.peak_gflops(d.types)) * 1e9 * kFp32Efficiency / sms;
  const double ktiles = std::ceil(double(d.k) / t.bk);
  const double slice_k = std::max(1.0, std::ceil(ktiles / splits)) * t.bk;
  const double block_flops = 2.0 * t.bm * t.bn * slice_k;
  const double blocks = std::ceil(double(d.m) / t.bm) * std::ceil(double(d.n) / t.bn) *
                        double(splits) * double(d.batch);
  const double slots = sms * c.per_sm;
  const double full_waves = std::floor(blocks / slots), rest = blocks - full_waves * slots;
  // A block alone on its SM writes its C tile (or partial tile) with nothing to overlap it: at
  // the SM's share of the memory bandwidth, 5 us for 128x256 floats on an H100. With k = 256
  // that is a tenth of the block: 65536x256x256 and 1024 x 256^3 ran 1.5-3 % faster on 128x128
  // tiles, two blocks per SM (H100, same call, 2026-11-24).
  const double epilogue =
      dev.bandwidth_gbs > 0
          ? double(t.bm) * t.bn * double(dtype_size(d.types.c)) / (dev.bandwidth_gbs * 1e9 / sms)
          : 0.0;
  auto wave = [&](double r) {  // r blocks on the busiest SM
    const double rate = c.per_sm == 1
                            ? c.rate_full
                            : c.rate_one + (c.rate_full - c.rate_one) * (r - 1) / (c.per_sm - 1);
    return r * block_flops / (sm_rate * rate) + kWaveCost + (r < 2 ? epilogue : 0.0);
  };
  double seconds = full_waves * wave(c.per_sm);
  if (rest > 0) seconds += wave(std::ceil(rest / sms));
  if (dev.bandwidth_gbs > 0) {  // the operands every block reads, at the rate its waves stream
    const double elem = double(dtype_size(d.types.a)), hbm = dev.bandwidth_gbs * 1e9;
    const double rows = std::min<double>(t.bm, double(d.m)),
                 cols = std::min<double>(t.bn, double(d.n));
    const double bytes = blocks * (rows + cols) * slice_k * elem;
    // A wave's blocks of one k slice (the grid runs n-tiles fastest) span this many tile rows
    // and columns; reads beyond those distinct panels hit L2.
    const double tiles_n = std::ceil(double(d.n) / t.bn),
                 per_slice = std::ceil(double(d.m) / t.bm) * tiles_n;
    const double in_slice = std::min({blocks, slots, per_slice});
    const double distinct =
        std::ceil(in_slice / tiles_n) * rows + std::min(in_slice, tiles_n) * cols;
    const double hits = 1.0 - distinct / (in_slice * (rows + cols));
    const double streaming = std::min(1.0, std::min(blocks, slots) / (sms * kBlocksToStream)) /
                             (1.0 - (1.0 - kL2HitCost) * hits);
    const double operands = double(d.batch) * double(d.k) * (double(d.m) + double(d.n)) * elem;
    seconds = std::max({seconds, bytes / (hbm * streaming), operands / hbm});
  }
  if (splits > 1) {
    const double partials = double(splits) * double(d.batch) * double(d.m) *
                            double(workspace_ld(d.n)) * double(dtype_size(d.types.c));
    seconds += 2 * partials / kReduceBandwidth + kReduceLaunch;
  }
  return seconds;
}

// The (tile, split) of the shortest predicted time among the candidates that fit this device
// (shared memory, grid rows, workspace <= 1/8 of its memory); f64 and i32 have one tile.
Params choose_tile(const Device& dev, const GemmDesc& d) {
  struct Best {
    Params params;
    double seconds = 0;
    void offer(const Params& p, double t) {
      if (seconds == 0 || t < seconds) {
        params = p;
        seconds = t;
      }
    }
  } unsplit, split;
  for (const Candidate& c : candidates(d)) {
    const TileShape& t = c.tile;
    if (smem_bytes(t.bm, t.bn, t.bk, t.arow != 0, dtype_size(d.types.a)) > dev.local_memory ||
        !grid_rows_fit(d, t.bm).empty())
      continue;
    const std::int64_t ktiles = (d.k + t.bk - 1) / t.bk;
    const int max_splits = static_cast<int>(
        std::max<std::int64_t>(1, std::min<std::int64_t>(kMaxSplits, ktiles / kMinTilesPerSlice)));
    for (int s = 1; s <= max_splits; ++s) {
      Params p = params_of(t);
      p["SPLITK"] = s;
      if (s > 1 && dev.global_memory && workspace_bytes(d, p) > dev.global_memory / 8) break;
      (s == 1 ? unsplit : split).offer(p, predicted_seconds(dev, d, c, s));
    }
  }
  if (split.seconds > 0 && (unsplit.seconds == 0 || split.seconds < kSplitMargin * unsplit.seconds))
    return split.params;
  if (unsplit.seconds > 0) return unsplit.params;
  Params fallback = params_of(kMid);  // nothing fits (tiny shared memory): the smallest tile
  fallback["SPLITK"] = 1;
  return fallback;
}

void launch(const DeviceGemm& g, const Params& p, cudaStream_t s) {
  const Compiled* c = find(p);
  if (!c)
    throw InvalidArgument("cuda.pipelined: tile not compiled (compiled: " + compiled_list() + ")");
  const int splits = effective_splits(g.desc, c->shape.bk, splits_of(p));
  by_type(g, "cuda.pipelined", [&](auto tag) {
    using T = decltype(tag);
    const LaunchFn f = std::is_same_v<T, float>    ? c->f32
                       : std::is_same_v<T, double> ? c->f64
                                                   : c->i32;
    if (!f)
      throw Unsupported("cuda.pipelined: tile " + shape_name(c->shape) + " is not compiled for " +
                        g.desc.types.name());
    f(g, splits, s);
  });
}

// One parameter per tile field; its candidates are the values the compiled shapes use, so the
// space's valid points (enumerate(), what the tuner tries) are the compiled shapes, each with
// the split counts of SPLITK's candidates.
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
  s.params.push_back(param("SPLITK", 1, {1, 2, 4, 8, 16, 32}, 1, kMaxSplits,
                           "k slices per output tile (split-K): partial tiles reduced in order "
                           "by a second kernel"));
  s.constraint = [](const Params& p) -> std::string {
    return find(p) ? "" : "this tile shape is not compiled (compiled: " + compiled_list() + ")";
  };
  return s;
}

const PlanTraits kOpsN{OperandForm::ops_n, {}, workspace_bytes};

GemmKernel pipelined_kernel_info() {
  GemmKernel k =
      cuda_rung("cuda.pipelined",
                "warp tiling + pipeline: B by cp.async, A staged in registers and stored k-major",
                9, pipelined_params(), launch, tile_limits, kOpsN);
  k.heuristic = choose_tile;
  k.preference = always(10);
  k.batches = true;
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
  k.batches = true;
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
