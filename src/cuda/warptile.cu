// Rung 8: warp tiling. Each of the 8 warps owns a 64x32 piece of the 128x128 block tile and
// each lane an 8x8 set of C (two 4-row by two 4-column groups), so a warp's shared-memory
// reads are 128 contiguous bytes (A) or broadcasts (B): no bank conflicts, 16 FMA per LDS.128.
#include "core/registry.hpp"
#include "cuda/gemm_common.cuh"
#include "cuda/vec.cuh"

namespace kafel::cuda {
namespace {

constexpr int BM = 128, BN = 128, BK = 16, WM = 64, WN = 32;
constexpr int NT = (BM / WM) * (BN / WN) * 32;  // 256 threads
constexpr int TM = WM / 8, TN = WN / 4;         // 8 x 8 per lane: lanes form 8 rows x 4 columns
constexpr int APAD = 4;                         // against conflicts on the transposed stores

template <class T>
__global__ void __launch_bounds__(NT) warptile_kernel(Operands<T> g) {
  constexpr int V = Vec<T>::N;
  __shared__ alignas(16) T As[BK][BM + APAD];  // transposed: As[p][i] = A(bm + i, k0 + p)
  __shared__ alignas(16) T Bs[BK][BN];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int wm0 = (warp / (BN / WN)) * WM, wn0 = (warp % (BN / WN)) * WN;
  const int ty = lane / 4, tx = lane % 4;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const bool rows_full = bm + BM <= g.m, cols_full = bn + BN <= g.n;
  T acc[TM][TN] = {};
  for (int k0 = 0; k0 < g.k; k0 += BK) {
    const bool k_full = k0 + BK <= g.k;
#pragma unroll
    for (int idx = tid; idx < BM * BK / V; idx += NT) {
      const int r = idx / (BK / V), c = idx % (BK / V) * V;
      const Vec<T> x = load_guarded(g.a, g.lda, bm + r, k0 + c, g.m, g.k, rows_full && k_full);
#pragma unroll
      for (int v = 0; v < V; ++v) As[c + v][r] = x.v[v];
    }
#pragma unroll
    for (int idx = tid; idx < BK * BN / V; idx += NT) {
      const int r = idx / (BN / V), c = idx % (BN / V) * V;
      store_vec(&Bs[r][c], load_guarded(g.b, g.ldb, k0 + r, bn + c, g.k, g.n, k_full && cols_full));
    }
    __syncthreads();
#pragma unroll
    for (int p = 0; p < BK; ++p) {
      T a[TM], b[TN];
#pragma unroll
      for (int h = 0; h < TM / 4; ++h)
#pragma unroll
        for (int q = 0; q < 4; q += V) {
          const Vec<T> x = load_vec(&As[p][wm0 + h * 32 + ty * 4 + q]);
#pragma unroll
          for (int v = 0; v < V; ++v) a[h * 4 + q + v] = x.v[v];
        }
#pragma unroll
      for (int h = 0; h < TN / 4; ++h)
#pragma unroll
        for (int q = 0; q < 4; q += V) {
          const Vec<T> x = load_vec(&Bs[p][wn0 + h * 16 + tx * 4 + q]);
#pragma unroll
          for (int v = 0; v < V; ++v) b[h * 4 + q + v] = x.v[v];
        }
#pragma unroll
      for (int t = 0; t < TM; ++t)
#pragma unroll
        for (int u = 0; u < TN; ++u) acc[t][u] = mad(a[t], b[u], acc[t][u]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int t = 0; t < TM; ++t) {
    const int i = bm + wm0 + (t / 4) * 32 + ty * 4 + t % 4;
#pragma unroll
    for (int u = 0; u < TN; ++u) {
      const int j = bn + wn0 + (u / 4) * 16 + tx * 4 + u % 4;
      if (i < g.m && j < g.n) g.store(i, j, acc[t][u]);
    }
  }
}

void launch(const DeviceGemm& g, const Params&, cudaStream_t s) {
  by_type(g, "cuda.warptile", [&](auto tag) {
    using T = decltype(tag);
    const dim3 grid(ceil_div(g.desc.n, BN), ceil_div(g.desc.m, BM));
    warptile_kernel<T><<<grid, NT, 0, s>>>(operands_of<T>(g));
  });
}

const Register registered{cuda_rung(
    "cuda.warptile", "warp tiling 64x32 per warp, conflict-free 128-bit fragments", 8, {}, launch,
    [](const Device&, const GemmDesc& d, const Params&) { return grid_rows_fit(d, BM); },
    PlanTraits{OperandForm::ops_n, {}})};

}  // namespace
}  // namespace kafel::cuda
