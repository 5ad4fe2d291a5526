// Rung 6: 2D register blocking. Each thread computes an 8x8 block of C from 8 values of op(A)
// and 8 of op(B) per step: 64 multiply-adds per 16 shared-memory reads (128x128 tiles, BK = 8).
#include "core/registry.hpp"
#include "cuda/gemm_common.cuh"

namespace kafel::cuda {
namespace {

constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
constexpr int NT = (BM / TM) * (BN / TN);  // 256 threads

template <class T>
__global__ void __launch_bounds__(NT) reg2d_kernel(Operands<T> g) {
  __shared__ T As[BM][BK];
  __shared__ T Bs[BK][BN];
  const int tid = threadIdx.x;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const int tr = tid / (BN / TN), tc = tid % (BN / TN);
  T acc[TM][TN] = {};
  T a[TM], b[TN];
  for (int k0 = 0; k0 < g.k; k0 += BK) {
#pragma unroll
    for (int idx = tid; idx < BM * BK; idx += NT) {
      const int r = idx / BK, c = idx % BK;
      As[r][c] = (bm + r < g.m && k0 + c < g.k) ? g.A(bm + r, k0 + c) : T(0);
    }
#pragma unroll
    for (int idx = tid; idx < BK * BN; idx += NT) {
      const int r = idx / BN, c = idx % BN;
      Bs[r][c] = (k0 + r < g.k && bn + c < g.n) ? g.B(k0 + r, bn + c) : T(0);
    }
    __syncthreads();
#pragma unroll
    for (int p = 0; p < BK; ++p) {
#pragma unroll
      for (int t = 0; t < TM; ++t) a[t] = As[tr * TM + t][p];
#pragma unroll
      for (int u = 0; u < TN; ++u) b[u] = Bs[p][tc * TN + u];
#pragma unroll
      for (int t = 0; t < TM; ++t)
#pragma unroll
        for (int u = 0; u < TN; ++u) acc[t][u] = mad(a[t], b[u], acc[t][u]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int t = 0; t < TM; ++t) {
    const int i = bm + tr * TM + t;
#pragma unroll
    for (int u = 0; u < TN; ++u) {
      const int j = bn + tc * TN + u;
      if (i < g.m && j < g.n) g.store(i, j, acc[t][u]);
    }
  }
}

void launch(const DeviceGemm& g, const Params&, cudaStream_t s) {
  by_type(g, "cuda.reg2d", [&](auto tag) {
    using T = decltype(tag);
    const dim3 grid(ceil_div(g.desc.n, BN), ceil_div(g.desc.m, BM));
    reg2d_kernel<T><<<grid, NT, 0, s>>>(operands_of<T>(g));
  });
}

const Register registered{cuda_rung(
    "cuda.reg2d", "2D register blocking: 8x8 of C per thread, 128x128 tiles", 6, {}, launch,
    [](const Device&, const GemmDesc& d, const Params&) { return grid_rows_fit(d, BM); })};

}  // namespace
}  // namespace kafel::cuda
