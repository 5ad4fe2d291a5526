// Rung 3: grid-stride loops, so any grid and block shape computes any size of C.
// Parameters: block = b gives b x b threads per block, grid = g gives g x g blocks (0: enough
// blocks to cover C once, capped at 65535 per dimension) — the lecture's block x grid table.
#include <algorithm>

#include "cuda/gemm_common.cuh"
#include "cuda/kernels.hpp"

namespace kafel::cuda {
namespace {

template <class T>
__global__ void gridstride_kernel(Operands<T> g) {
  const int stride_i = gridDim.y * blockDim.y, stride_j = gridDim.x * blockDim.x;
  for (int i = blockIdx.y * blockDim.y + threadIdx.y; i < g.m; i += stride_i) {
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < g.n; j += stride_j) {
      T acc = T(0);
      for (int p = 0; p < g.k; ++p) acc = mad(g.A(i, p), g.B(p, j), acc);
      g.store(i, j, acc);
    }
  }
}

}  // namespace

void launch_gridstride(const DeviceGemm& g, const Params& p, cudaStream_t s) {
  const auto b = static_cast<unsigned>(p.at("block"));
  const auto gr = static_cast<unsigned>(p.at("grid"));
  const unsigned gx = gr ? gr : std::min(ceil_div(g.desc.n, b), 65535u);
  const unsigned gy = gr ? gr : std::min(ceil_div(g.desc.m, b), 65535u);
  by_type(g, "cuda.gridstride", [&](auto tag) {
    using T = decltype(tag);
    gridstride_kernel<T><<<dim3(gx, gy), dim3(b, b), 0, s>>>(operands_of<T>(g));
  });
}

}  // namespace kafel::cuda
