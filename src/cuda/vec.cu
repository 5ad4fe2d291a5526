// Rung 7: 2D register blocking with 128-bit loads. Tiles move global -> shared as 16-byte
// vectors; the A tile is stored transposed (k-major) so both fragments are vector reads too.
// Operands are op N (the plan transposes op-T operands first); edge tiles load element-wise.
#include "core/registry.hpp"
#include "cuda/gemm_common.cuh"
#include "cuda/vec.cuh"

namespace kafel::cuda {
namespace {

constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
constexpr int NT = (BM / TM) * (BN / TN);  // 256 threads

template <class T>
__global__ void __launch_bounds__(NT) vec_kernel(Operands<T> g) {
  constexpr int V = Vec<T>::N;
  __shared__ alignas(16) T As[BK][BM];  // transposed: As[p][i] = A(bm + i, k0 + p)
  __shared__ alignas(16) T Bs[BK][BN];
  const int tid = threadIdx.x;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const int tr = tid / (BN / TN), tc = tid % (BN / TN);
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
      for (int t = 0; t < TM; t += V) {
        const Vec<T> x = load_vec(&As[p][tr * TM + t]);
#pragma unroll
        for (int v = 0; v < V; ++v) a[t + v] = x.v[v];
      }
#pragma unroll
      for (int u = 0; u < TN; u += V) {
        const Vec<T> x = load_vec(&Bs[p][tc * TN + u]);
#pragma unroll
        for (int v = 0; v < V; ++v) b[u + v] = x.v[v];
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
    const int i = bm + tr * TM + t;
#pragma unroll
    for (int u = 0; u < TN; ++u) {
      const int j = bn + tc * TN + u;
      if (i < g.m && j < g.n) g.store(i, j, acc[t][u]);
    }
  }
}

void launch(const DeviceGemm& g, const Params&, cudaStream_t s) {
  by_type(g, "cuda.vec", [&](auto tag) {
    using T = decltype(tag);
    const dim3 grid(ceil_div(g.desc.n, BN), ceil_div(g.desc.m, BM));
    vec_kernel<T><<<grid, NT, 0, s>>>(operands_of<T>(g));
  });
}

const Register registered{cuda_rung(
    "cuda.vec", "2D blocking + 128-bit loads, A tile transposed in shared memory", 7, {}, launch,
    [](const Device&, const GemmDesc& d, const Params&) { return grid_rows_fit(d, BM); },
    PlanTraits{OperandForm::ops_n, {}})};

}  // namespace
}  // namespace kafel::cuda
