// Rung 5: 1D register blocking. Each thread computes TM = 8 elements of one column of C, so
// one value of op(B) read from shared memory feeds 8 multiply-adds (64x64 tiles, BK = 8).
#include "core/registry.hpp"
#include "cuda/gemm_common.cuh"

namespace kafel::cuda {
namespace {

constexpr int BM = 64, BN = 64, BK = 8, TM = 8, NT = BM * BN / TM;  // 512 threads

template <class T>
__global__ void __launch_bounds__(NT) reg1d_kernel(Operands<T> g) {
  __shared__ T As[BM][BK];
  __shared__ T Bs[BK][BN];
  const int tid = threadIdx.x;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const int col = tid % BN, row0 = (tid / BN) * TM;
  T acc[TM] = {};
  for (int k0 = 0; k0 < g.k; k0 += BK) {
    {
      const int r = tid / BK, c = tid % BK;  // BM * BK == NT: one element each
      As[r][c] = (bm + r < g.m && k0 + c < g.k) ? g.A(bm + r, k0 + c) : T(0);
    }
    {
      const int r = tid / BN, c = tid % BN;  // BK * BN == NT
      Bs[r][c] = (k0 + r < g.k && bn + c < g.n) ? g.B(k0 + r, bn + c) : T(0);
    }
    __syncthreads();
#pragma unroll
    for (int p = 0; p < BK; ++p) {
      const T b = Bs[p][col];
#pragma unroll
      for (int t = 0; t < TM; ++t) acc[t] = mad(As[row0 + t][p], b, acc[t]);
    }
    __syncthreads();
  }
  const int j = bn + col;
  if (j >= g.n) return;
#pragma unroll
  for (int t = 0; t < TM; ++t)
    if (bm + row0 + t < g.m) g.store(bm + row0 + t, j, acc[t]);
}

void launch(const DeviceGemm& g, const Params&, cudaStream_t s) {
  by_type(g, "cuda.reg1d", [&](auto tag) {
    using T = decltype(tag);
    const dim3 grid(ceil_div(g.desc.n, BN), ceil_div(g.desc.m, BM));
    reg1d_kernel<T><<<grid, NT, 0, s>>>(operands_of<T>(g));
  });
}

const Register registered{cuda_rung(
    "cuda.reg1d", "1D register blocking: 8 rows of C per thread, 64x64 tiles", 5, {}, launch,
    [](const Device&, const GemmDesc& d, const Params&) { return grid_rows_fit(d, BM); })};

}  // namespace
}  // namespace kafel::cuda
