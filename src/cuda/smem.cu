// Rung 4: shared-memory tiles. A TS x TS block loads a TS x TS tile of op(A) and of op(B)
// per step of k, so each element fetched from global memory is used TS times.
#include "core/registry.hpp"
#include "cuda/gemm_common.cuh"

namespace kafel::cuda {
namespace {

template <class T, int TS>
__global__ void smem_kernel(Operands<T> g) {
  __shared__ T As[TS][TS];
  __shared__ T Bs[TS][TS + 1];  // +1: op(B)^T loads would otherwise hit one bank
  const int ty = threadIdx.y, tx = threadIdx.x;
  const int i = blockIdx.y * TS + ty, j = blockIdx.x * TS + tx;
  T acc = T(0);
  for (int k0 = 0; k0 < g.k; k0 += TS) {
    As[ty][tx] = (i < g.m && k0 + tx < g.k) ? g.A(i, k0 + tx) : T(0);
    Bs[ty][tx] = (k0 + ty < g.k && j < g.n) ? g.B(k0 + ty, j) : T(0);
    __syncthreads();
#pragma unroll
    for (int p = 0; p < TS; ++p) acc = mad(As[ty][p], Bs[p][tx], acc);
    __syncthreads();
  }
  if (i < g.m && j < g.n) g.store(i, j, acc);
}

template <class T, int TS>
void launch_tile(const DeviceGemm& g, cudaStream_t s) {
  const dim3 grid(ceil_div(g.desc.n, TS), ceil_div(g.desc.m, TS));
  smem_kernel<T, TS><<<grid, dim3(TS, TS), 0, s>>>(operands_of<T>(g));
}

void launch(const DeviceGemm& g, const Params& p, cudaStream_t s) {
  const auto ts = p.at("TS");
  by_type(g, "cuda.smem", [&](auto tag) {
    using T = decltype(tag);
    if (ts == 16)
      launch_tile<T, 16>(g, s);
    else if (ts == 32)
      launch_tile<T, 32>(g, s);
    else
      throw InvalidArgument("cuda.smem: TS must be 16 or 32");
  });
}

ParamSpace smem_params() {
  ParamSpace s;
  s.params = {param("TS", 32, {16, 32}, 16, 32, "tile edge: TS x TS threads and shared tiles")};
  s.constraint = [](const Params& p) -> std::string {
    return p.at("TS") == 16 || p.at("TS") == 32 ? "" : "TS must be 16 or 32 (the compiled tiles)";
  };
  return s;
}

const Register registered{cuda_rung("cuda.smem", "shared-memory tiles TS x TS", 4, smem_params(),
                                    launch, [](const Device&, const GemmDesc& d, const Params& p) {
                                      return grid_rows_fit(d, p.at("TS"));
                                    })};

}  // namespace
}  // namespace kafel::cuda
