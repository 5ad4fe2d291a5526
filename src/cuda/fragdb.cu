// Rung 9b (f32): cuda.pipelined plus register-fragment double buffering. The fragments of k
// step p+1 are read from shared memory while the FFMAs of step p issue, and the k-tile barrier
// sits before the last step's FFMAs, so neither shared-load latency nor the barrier drain is
// exposed. 4-warp blocks with 64x64 warp tiles run 2 blocks per SM (one block's barrier is
// covered by the other's FFMAs) without giving up the 8x16 lane tile of the best 8-warp kernel.
#include <string>

#include "cuda/gemm_common.cuh"
#include "cuda/kernels.hpp"
#include "cuda/runtime.hpp"
#include "cuda/vec.cuh"

namespace kafel::cuda {
namespace {

using V4 = Vec<float>;

template <int BM_, int BN_, int BK_, int WM_, int WN_>
struct Cfg {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_;
  static constexpr int NT = (BM / WM) * (BN / WN) * 32;
  // Lanes form 8 rows x 4 columns; a lane owns rows 32h + 4ty + e and columns 16h + 4tx + e.
  static constexpr int TM = WM / 8, TN = WN / 4;
  static constexpr int A_VECS = BM * BK / 4 / NT;  // A vectors each thread stages per tile
  static constexpr int STAGE = BK * BM + BK * BN;  // floats: A^T tile (k-major) then B tile
  static constexpr std::size_t SMEM = 2 * std::size_t(STAGE) * sizeof(float);
  // Blocks per SM the shared memory and a full 255-register budget both allow.
  static constexpr int MIN_BLOCKS = NT <= 128 ? 2 : 1;
  static_assert(WM % 32 == 0 && WN % 16 == 0 && (BM * BK / 4) % NT == 0 && BK % 2 == 0,
                "bad tile shape");
};

// 4 consecutive elements of A's row r from column c, zero outside A.
__device__ __forceinline__ V4 load_a(const Operands<float>& g, int r, int c) {
  if (r < g.m && c + 4 <= g.k) return load_vec(g.a + static_cast<long long>(r) * g.lda + c);
  V4 x;
#pragma unroll
  for (int v = 0; v < 4; ++v)
    x.v[v] = (r < g.m && c + v < g.k) ? g.a[static_cast<long long>(r) * g.lda + c + v] : 0.f;
  return x;
}

// Consecutive lanes take consecutive rows, so the transposed (k-major) stores hit 32 banks.
template <class C>
__device__ __forceinline__ void fetch_a(const Operands<float>& g, int bm, int k0,
                                        V4 (&st)[C::A_VECS]) {
#pragma unroll
  for (int i = 0; i < C::A_VECS; ++i) {
    const int idx = threadIdx.x + i * C::NT;
    st[i] = load_a(g, bm + idx % C::BM, k0 + idx / C::BM * 4);
  }
}

template <class C>
__device__ __forceinline__ void store_a(float* As, const V4 (&st)[C::A_VECS]) {
#pragma unroll
  for (int i = 0; i < C::A_VECS; ++i) {
    const int idx = threadIdx.x + i * C::NT;
    const int r = idx % C::BM, c = idx / C::BM * 4;
#pragma unroll
    for (int v = 0; v < 4; ++v) As[(c + v) * C::BM + r] = st[i].v[v];
  }
}

// B tile (BK x BN) by cp.async; edges are zero-filled (src-size < 16).
template <class C>
__device__ __forceinline__ void fetch_b(const Operands<float>& g, float* Bs, int bn, int k0) {
#pragma unroll
  for (int idx = threadIdx.x; idx < C::BK * C::BN / 4; idx += C::NT) {
    const int r = idx / (C::BN / 4), c = idx % (C::BN / 4) * 4;
    const int gr = k0 + r, gc = bn + c;
    const int valid = gr < g.k ? max(0, min(4, g.n - gc)) : 0;
    const float* src = valid > 0 ? g.b + static_cast<long long>(gr) * g.ldb + gc : g.b;
    cp_async16(Bs + r * C::BN + c, src, valid * 4);
  }
}

// The lane's fragments of k step p: As / Bs already point at the lane's first row / column.
template <class C>
__device__ __forceinline__ void load_frag(const float* As, const float* Bs, int p,
                                          float (&a)[C::TM], float (&b)[C::TN]) {
#pragma unroll
  for (int h = 0; h < C::TM / 4; ++h) {
    const V4 x = load_vec(As + p * C::BM + h * 32);
#pragma unroll
    for (int v = 0; v < 4; ++v) a[h * 4 + v] = x.v[v];
  }
#pragma unroll
  for (int h = 0; h < C::TN / 4; ++h) {
    const V4 x = load_vec(Bs + p * C::BN + h * 16);
#pragma unroll
    for (int v = 0; v < 4; ++v) b[h * 4 + v] = x.v[v];
  }
}

template <class C>
__device__ __forceinline__ void outer(const float (&a)[C::TM], const float (&b)[C::TN],
                                      float (&acc)[C::TM][C::TN]) {
#pragma unroll
  for (int t = 0; t < C::TM; ++t)
#pragma unroll
    for (int u = 0; u < C::TN; ++u) acc[t][u] = fmaf(a[t], b[u], acc[t][u]);
}

// 4 consecutive elements of row i from column j on: 16-byte accesses when all 4 are inside C
// (ldc and C are 16-byte aligned by the plan), element-wise at the right edge.
__device__ __forceinline__ void store4(const Operands<float>& g, int i, int j, const float* acc) {
  float* p = g.c + static_cast<long long>(i) * g.ldc + j;
  if (j + 4 <= g.n) {
    V4 x;
    if (!g.beta_zero) x = load_vec(p);
#pragma unroll
    for (int v = 0; v < 4; ++v)
      x.v[v] = g.beta_zero ? g.alpha * acc[v] : fmaf(g.beta, x.v[v], g.alpha * acc[v]);
    store_vec(p, x);
  } else {
#pragma unroll
    for (int q = 0; q < 4; ++q)
      if (j + q < g.n) g.store(i, j + q, acc[q]);
  }
}

template <class C>
__global__ void __launch_bounds__(C::NT, C::MIN_BLOCKS) fragdb_kernel(Operands<float> g) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  float* smem = reinterpret_cast<float*>(smem_raw);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int wm0 = (warp / (C::BN / C::WN)) * C::WM, wn0 = (warp % (C::BN / C::WN)) * C::WN;
  const int fa = wm0 + (lane / 4) * 4, fb = C::BK * C::BM + wn0 + (lane % 4) * 4;
  const int bm = blockIdx.y * C::BM, bn = blockIdx.x * C::BN;
  const int ktiles = (g.k + C::BK - 1) / C::BK;

  float acc[C::TM][C::TN];
#pragma unroll
  for (int t = 0; t < C::TM; ++t)
#pragma unroll
    for (int u = 0; u < C::TN; ++u) acc[t][u] = 0.f;

  float a[2][C::TM], b[2][C::TN];
  V4 staged[C::A_VECS];
  if (ktiles > 0) {
    fetch_a<C>(g, bm, 0, staged);
    fetch_b<C>(g, smem + C::BK * C::BM, bn, 0);
    cp_async_commit();
    store_a<C>(smem, staged);
    cp_async_wait<0>();
    __syncthreads();
    load_frag<C>(smem + fa, smem + fb, 0, a[0], b[0]);
  }
  for (int kt = 0; kt < ktiles; ++kt) {
    const float* cur = smem + (kt & 1) * C::STAGE;
    float* nxt = smem + ((kt + 1) & 1) * C::STAGE;
    const bool more = kt + 1 < ktiles;
    if (more) {  // the other buffer was last read before the barrier ending tile kt - 1
      fetch_a<C>(g, bm, (kt + 1) * C::BK, staged);
      fetch_b<C>(g, nxt + C::BK * C::BM, bn, (kt + 1) * C::BK);
    }
    cp_async_commit();
#pragma unroll
    for (int p = 0; p < C::BK; ++p) {
      if (p + 1 < C::BK) {
        load_frag<C>(cur + fa, cur + fb, p + 1, a[(p + 1) & 1], b[(p + 1) & 1]);
      } else {
        // Step p's fragments are in registers already: finish tile kt + 1, wait for every
        // warp, then read its first fragments while the last FFMAs of tile kt issue.
        if (more) store_a<C>(nxt, staged);
        cp_async_wait<0>();
        __syncthreads();
        if (more) load_frag<C>(nxt + fa, nxt + fb, 0, a[0], b[0]);
      }
      outer<C>(a[p & 1], b[p & 1], acc);
    }
  }

#pragma unroll
  for (int t = 0; t < C::TM; ++t) {
    const int i = bm + wm0 + (t / 4) * 32 + (lane / 4) * 4 + t % 4;
    if (i >= g.m) continue;
#pragma unroll
    for (int h = 0; h < C::TN / 4; ++h)
      store4(g, i, bn + wn0 + h * 16 + (lane % 4) * 4, &acc[t][h * 4]);
  }
}

template <class C>
void launch(const DeviceGemm& dg, cudaStream_t s) {
  // Per launch: the opt-in above 48 KB holds for the current device only.
  KAFEL_CUDA_CHECK(cudaFuncSetAttribute(
      fragdb_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(C::SMEM)));
  const dim3 grid(ceil_div(dg.desc.n, C::BN), ceil_div(dg.desc.m, C::BM));
  fragdb_kernel<C><<<grid, C::NT, C::SMEM, s>>>(operands_of<float>(dg));
}

}  // namespace

void launch_fragdb(const DeviceGemm& g, const Params& p, cudaStream_t s) {
  const long long bm = p.at("BM"), bn = p.at("BN"), bk = p.at("BK");
  const long long wm = p.at("WM"), wn = p.at("WN");
  if (g.desc.dtype != DType::f32)
    throw Unsupported("cuda.fragdb: only f32 is compiled (f64/i32: cuda.pipelined)");
  if (bm <= 0 || ceil_div(g.desc.m, bm) > 65535u)
    throw Unsupported("cuda.fragdb: m too large for the grid");
  auto is = [&](long long m_, long long n_, long long k_, long long wm_, long long wn_) {
    return bm == m_ && bn == n_ && bk == k_ && wm == wm_ && wn == wn_;
  };
  if (is(128, 128, 16, 64, 64)) return launch<Cfg<128, 128, 16, 64, 64>>(g, s);
  if (is(128, 128, 32, 64, 64)) return launch<Cfg<128, 128, 32, 64, 64>>(g, s);
  if (is(128, 256, 32, 64, 64)) return launch<Cfg<128, 256, 32, 64, 64>>(g, s);
  throw Unsupported("cuda.fragdb: tile " + std::to_string(bm) + "x" + std::to_string(bn) + "x" +
                    std::to_string(bk) + " warp " + std::to_string(wm) + "x" + std::to_string(wn) +
                    " is not compiled");
}

}  // namespace kafel::cuda
