// Rung 9: warp tiling with a software pipeline. While a block computes k-tile kt from shared
// memory, tile kt+1 is already on its way: B by cp.async straight into the other shared
// buffer, A through registers (LDG.128) so it can be stored transposed (k-major) afterwards.
// With A k-major, each lane reads its 8 rows of A and 8 columns of B for one k as 4 LDS.128:
// 64 FFMA per 4 shared loads, and only 16 fragment registers live (2 blocks of 256 per SM).
#include <string>

#include "cuda/gemm_common.cuh"
#include "cuda/kernels.hpp"
#include "cuda/runtime.hpp"
#include "cuda/vec.cuh"

namespace kafel::cuda {
namespace {

// AROW: how lanes fetch the A tile. true: consecutive lanes take consecutive 16-byte chunks
// of a row (coalesced; the k-major stores then conflict 2-way, padding keeps it at 2).
// false: consecutive lanes take consecutive rows (32 rows per request, conflict-free stores).
template <class T, int BM_, int BN_, int BK_, int WM_, int WN_, bool AROW_>
struct Config {
  using type = T;
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_;
  static constexpr bool AROW = AROW_;
  static constexpr int V = Vec<T>::N;
  static constexpr int NT = (BM / WM) * (BN / WN) * 32;
  // Lanes form 8 rows x 4 columns; a lane owns rows 32h + 4ty + e and columns 16h + 4tx + e.
  static constexpr int TM = WM / 8, TN = WN / 4;
  static constexpr int A_VECS = BM * BK / V / NT;   // A vectors each thread stages per tile
  static constexpr int ALD = AROW ? BM + 4 : BM;    // row of the k-major A tile (16-byte pad)
  static constexpr int STAGE = BK * ALD + BK * BN;  // elements: A^T tile then B tile
  static constexpr std::size_t SMEM = 2 * std::size_t(STAGE) * sizeof(T);
  // Two blocks per SM when the accumulators leave room (<= 128 registers per thread).
  static constexpr int MIN_BLOCKS = TM * TN * sizeof(T) / 4 <= 64 ? 2 : 1;
  static_assert(WM % 32 == 0 && WN % 16 == 0 && (BM * BK / V) % NT == 0, "bad tile shape");
};

// A (m x k, row-major): V consecutive elements of row r from column c, zero outside.
template <class T>
__device__ __forceinline__ Vec<T> load_a(const Operands<T>& g, int r, int c) {
  if (r < g.m && c + Vec<T>::N <= g.k) return load_vec(g.a + static_cast<long long>(r) * g.lda + c);
  Vec<T> x;
#pragma unroll
  for (int v = 0; v < Vec<T>::N; ++v)
    x.v[v] = (r < g.m && c + v < g.k) ? g.a[static_cast<long long>(r) * g.lda + c + v] : T(0);
  return x;
}

// Lanes take consecutive rows, so the transposed stores below hit 32 different banks.
template <class C>
__device__ __forceinline__ void fetch_a(const Operands<typename C::type>& g, int bm, int k0,
                                        Vec<typename C::type> (&st)[C::A_VECS]) {
#pragma unroll
  for (int i = 0; i < C::A_VECS; ++i) {
    const int idx = threadIdx.x + i * C::NT;
    if (C::AROW)
      st[i] = load_a(g, bm + idx / (C::BK / C::V), k0 + idx % (C::BK / C::V) * C::V);
    else
      st[i] = load_a(g, bm + idx % C::BM, k0 + idx / C::BM * C::V);
  }
}

template <class C>
__device__ __forceinline__ void store_a(typename C::type* As,
                                        const Vec<typename C::type> (&st)[C::A_VECS]) {
#pragma unroll
  for (int i = 0; i < C::A_VECS; ++i) {
    const int idx = threadIdx.x + i * C::NT;
    const int r = C::AROW ? idx / (C::BK / C::V) : idx % C::BM;
    const int c = C::AROW ? idx % (C::BK / C::V) * C::V : idx / C::BM * C::V;
#pragma unroll
    for (int v = 0; v < C::V; ++v) As[(c + v) * C::ALD + r] = st[i].v[v];
  }
}

// B tile (BK x BN) by cp.async; edges are zero-filled (src-size < 16).
template <class C>
__device__ __forceinline__ void fetch_b(const Operands<typename C::type>& g, typename C::type* Bs,
                                        int bn, int k0) {
  using T = typename C::type;
  constexpr int V = C::V;
#pragma unroll
  for (int idx = threadIdx.x; idx < C::BK * C::BN / V; idx += C::NT) {
    const int r = idx / (C::BN / V), c = idx % (C::BN / V) * V;
    const int gr = k0 + r, gc = bn + c;
    const int valid = gr < g.k ? max(0, min(V, g.n - gc)) : 0;
    const T* src = valid > 0 ? g.b + static_cast<long long>(gr) * g.ldb + gc : g.b;
    cp_async16(Bs + r * C::BN + c, src, valid * int(sizeof(T)));
  }
}

template <class C>
__device__ __forceinline__ void compute(const typename C::type* As, const typename C::type* Bs,
                                        typename C::type (&acc)[C::TM][C::TN]) {
  using T = typename C::type;
  constexpr int V = C::V;
#pragma unroll
  for (int p = 0; p < C::BK; ++p) {
    T a[C::TM], b[C::TN];
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
#pragma unroll
    for (int t = 0; t < C::TM; ++t)
#pragma unroll
      for (int u = 0; u < C::TN; ++u) acc[t][u] = mad(a[t], b[u], acc[t][u]);
  }
}

// Writes 4 consecutive elements of row i from column j on: 16-byte accesses when all 4 are
// inside C (ldc and C are 16-byte aligned by the plan), element-wise at the right edge.
template <class T>
__device__ __forceinline__ void store4(const Operands<T>& g, int i, int j, const T* acc) {
  constexpr int V = Vec<T>::N;
  T* p = g.c + static_cast<long long>(i) * g.ldc + j;
  if (j + 4 <= g.n) {
#pragma unroll
    for (int q = 0; q < 4; q += V) {
      Vec<T> x;
      if (!g.beta_zero) x = load_vec(p + q);
#pragma unroll
      for (int v = 0; v < V; ++v)
        x.v[v] =
            g.beta_zero ? mul(g.alpha, acc[q + v]) : mad(g.beta, x.v[v], mul(g.alpha, acc[q + v]));
      store_vec(p + q, x);
    }
  } else {
#pragma unroll
    for (int q = 0; q < 4; ++q)
      if (j + q < g.n) g.store(i, j + q, acc[q]);
  }
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
  const int bm = blockIdx.y * C::BM, bn = blockIdx.x * C::BN;
  const int ktiles = (g.k + C::BK - 1) / C::BK;

  T acc[C::TM][C::TN];
#pragma unroll
  for (int t = 0; t < C::TM; ++t)
#pragma unroll
    for (int u = 0; u < C::TN; ++u) acc[t][u] = T(0);

  Vec<T> staged[C::A_VECS];
  if (ktiles > 0) {
    fetch_a<C>(g, bm, 0, staged);
    fetch_b<C>(g, smem + C::BK * C::ALD, bn, 0);
    cp_async_commit();
    store_a<C>(smem, staged);
    cp_async_wait<0>();
    __syncthreads();
  }
  for (int kt = 0; kt < ktiles; ++kt) {
    T* cur = smem + (kt & 1) * C::STAGE;
    T* nxt = smem + ((kt + 1) & 1) * C::STAGE;
    const bool more = kt + 1 < ktiles;
    if (more) {  // the other buffer was last read in iteration kt - 1, before its barrier
      fetch_a<C>(g, bm, (kt + 1) * C::BK, staged);
      fetch_b<C>(g, nxt + C::BK * C::ALD, bn, (kt + 1) * C::BK);
    }
    cp_async_commit();
    compute<C>(cur + wm0 + ty * 4, cur + C::BK * C::ALD + wn0 + tx * 4, acc);
    if (more) store_a<C>(nxt, staged);
    cp_async_wait<0>();
    __syncthreads();
  }

#pragma unroll
  for (int t = 0; t < C::TM; ++t) {
    const int i = bm + wm0 + (t / 4) * 32 + ty * 4 + t % 4;
    if (i >= g.m) continue;
#pragma unroll
    for (int h = 0; h < C::TN / 4; ++h) store4(g, i, bn + wn0 + h * 16 + tx * 4, &acc[t][h * 4]);
  }
}

template <class C>
void launch(const DeviceGemm& dg, cudaStream_t s) {
  using T = typename C::type;
  // The opt-in above 48 KB holds for the current device only, so it is set on every launch
  // (a cheap host call) rather than once per process.
  KAFEL_CUDA_CHECK(cudaFuncSetAttribute(
      pipelined_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(C::SMEM)));
  const dim3 grid(ceil_div(dg.desc.n, C::BN), ceil_div(dg.desc.m, C::BM));
  pipelined_kernel<C><<<grid, C::NT, C::SMEM, s>>>(operands_of<T>(dg));
}

struct Shape {
  long long bm, bn, bk, wm, wn, arow;
  bool is(long long m_, long long n_, long long k_, long long wm_, long long wn_,
          long long arow_ = 1) const {
    return bm == m_ && bn == n_ && bk == k_ && wm == wm_ && wn == wn_ && arow == arow_;
  }
};

// The compiled tile shapes: 128x128x16 for every type, the others for f32 only.
template <class T>
bool dispatch(const Shape& sh, const DeviceGemm& g, cudaStream_t s) {
  if (sh.is(128, 128, 16, 64, 32)) return launch<Config<T, 128, 128, 16, 64, 32, true>>(g, s), true;
  if constexpr (sizeof(T) == 4 && T(0.5) != T(0)) {
    if (sh.is(128, 64, 16, 32, 32)) return launch<Config<T, 128, 64, 16, 32, 32, true>>(g, s), true;
    if (sh.is(128, 256, 16, 64, 64))
      return launch<Config<T, 128, 256, 16, 64, 64, true>>(g, s), true;
    if (sh.is(128, 256, 16, 64, 64, 0))
      return launch<Config<T, 128, 256, 16, 64, 64, false>>(g, s), true;
    if (sh.is(128, 256, 32, 64, 64))
      return launch<Config<T, 128, 256, 32, 64, 64, true>>(g, s), true;
    if (sh.is(256, 128, 16, 64, 64))
      return launch<Config<T, 256, 128, 16, 64, 64, true>>(g, s), true;
  }
  return false;
}

// BM = BN = 0 (the default) picks the tile by how many tiles the problem has per SM: 128x256x32
// (8x16 per lane, the fastest measured at 2048-8192, docs/BENCHMARKS-cuda.md) when they fill
// about one wave, else 128x128, else 128x64 for f32 (1024^3 on a 132-SM H100/H200: 78 % of
// cuBLAS against 30 % with 128x256); f64 and i32 always use 128x128.
Shape choose(const Params& p, const DeviceGemm& g) {
  Shape sh{p.at("BM"), p.at("BN"), p.at("BK"), p.at("WM"), p.at("WN"), p.at("AROW")};
  if (sh.bm != 0 && sh.bn != 0) return sh;
  const Shape mid{128, 128, 16, 64, 32, 1};
  if (g.desc.dtype != DType::f32) return mid;
  int dev = 0;
  KAFEL_CUDA_CHECK(cudaGetDevice(&dev));
  const long long sms = device_props(dev).sm_count;
  auto tiles = [&](long long bm, long long bn) {
    return static_cast<long long>(ceil_div(g.desc.m, bm)) * ceil_div(g.desc.n, bn);
  };
  if (10 * tiles(128, 256) >= 9 * sms) return {128, 256, 32, 64, 64, 1};
  if (tiles(128, 128) >= sms) return mid;
  return {128, 64, 16, 32, 32, 1};
}

}  // namespace

void launch_pipelined(const DeviceGemm& g, const Params& p, cudaStream_t s) {
  const Shape sh = choose(p, g);
  if (ceil_div(g.desc.m, sh.bm) > 65535u)
    throw Unsupported("cuda.pipelined: m too large for the grid");
  by_type(g, "cuda.pipelined", [&](auto tag) {
    using T = decltype(tag);
    if (!dispatch<T>(sh, g, s))
      throw Unsupported("cuda.pipelined: tile " + std::to_string(sh.bm) + "x" +
                        std::to_string(sh.bn) + "x" + std::to_string(sh.bk) + " warp " +
                        std::to_string(sh.wm) + "x" + std::to_string(sh.wn) +
                        " AROW=" + std::to_string(sh.arow) + " is not compiled for " +
                        std::string(to_string(g.desc.dtype)));
  });
}

}  // namespace kafel::cuda
