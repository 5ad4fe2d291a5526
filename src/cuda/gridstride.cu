// Rung 3: grid-stride loops, so any grid and block shape computes any size of C.
// Parameters: block = b gives b x b threads per block, grid = g gives g x g blocks (0: enough
// blocks to cover C once, capped at 65535 per dimension) — the lecture's block x grid table.
#include <algorithm>

#include "core/registry.hpp"
#include "cuda/gemm_common.cuh"

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

void launch(const DeviceGemm& g, const Params& p, cudaStream_t s) {
  const auto b = static_cast<unsigned>(p.at("block"));
  const auto gr = static_cast<unsigned>(p.at("grid"));
  const unsigned gx = gr ? gr : std::min(ceil_div(g.desc.n, b), 65535u);
  const unsigned gy = gr ? gr : std::min(ceil_div(g.desc.m, b), 65535u);
  by_type(g, "cuda.gridstride", [&](auto tag) {
    using T = decltype(tag);
    gridstride_kernel<T><<<dim3(gx, gy), dim3(b, b), 0, s>>>(operands_of<T>(g));
  });
}

ParamSpace gridstride_params() {
  ParamSpace s;
  s.params = {param("block", 16, {1, 2, 4, 8, 16, 32}, 1, 32,
                    "block = b: b x b threads per block (b*b <= 1024)"),
              param("grid", 0, {0, 1, 2, 4, 8, 16, 32, 64}, 0, kMaxGridY,
                    "grid = g: g x g blocks (0: cover C, at most 65535 per dimension)")};
  return s;
}

// Any size runs (the loops cover what the grid does not), so it is the fallback default where
// the faster rungs' grids cannot cover C.
GemmKernel gridstride_kernel_info() {
  GemmKernel k =
      cuda_rung("cuda.gridstride", "grid-stride loops: any block (b x b) and grid (g x g) shape", 3,
                gridstride_params(), launch);
  k.preference = always(1);
  return k;
}

const Register registered{gridstride_kernel_info()};

}  // namespace
}  // namespace kafel::cuda
