// Rung 2: many blocks of 32x32 threads, one thread per element of C, bounds-checked so any
// size works as long as the grid covers C (the lecture's tiling of C into 32x32 blocks).
#include "core/registry.hpp"
#include "cuda/gemm_common.cuh"

namespace kafel::cuda {
namespace {

constexpr int kBlock = 32;

template <class T>
__global__ void blocks_kernel(Operands<T> g) {
  const int i = blockIdx.y * kBlock + threadIdx.y;
  const int j = blockIdx.x * kBlock + threadIdx.x;
  if (i >= g.m || j >= g.n) return;
  T acc = T(0);
  for (int p = 0; p < g.k; ++p) acc = mad(g.A(i, p), g.B(p, j), acc);
  g.store(i, j, acc);
}

void launch(const DeviceGemm& g, const Params&, cudaStream_t s) {
  by_type(g, "cuda.blocks", [&](auto tag) {
    using T = decltype(tag);
    const dim3 grid(ceil_div(g.desc.n, kBlock), ceil_div(g.desc.m, kBlock));
    blocks_kernel<T><<<grid, dim3(kBlock, kBlock), 0, s>>>(operands_of<T>(g));
  });
}

const Register registered{cuda_rung(
    "cuda.blocks", "32x32-thread blocks tile C, bounds-checked", 2, {}, launch,
    [](const Device&, const GemmDesc& d, const Params&) { return grid_rows_fit(d, kBlock); })};

}  // namespace
}  // namespace kafel::cuda
