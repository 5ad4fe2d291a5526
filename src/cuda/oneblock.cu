// Rung 1 (the lecture's first kernel): a single block, one thread per element of C.
// Works only while m*n <= 1024 threads; registry.cpp rejects larger problems up front.
#include "cuda/gemm_common.cuh"
#include "cuda/kernels.hpp"

namespace kafel::cuda {
namespace {

template <class T>
__global__ void oneblock_kernel(Operands<T> g) {
  const int i = threadIdx.y, j = threadIdx.x;
  T acc = T(0);
  for (int p = 0; p < g.k; ++p) acc = mad(g.A(i, p), g.B(p, j), acc);
  g.store(i, j, acc);
}

}  // namespace

void launch_oneblock(const DeviceGemm& g, const Params&, cudaStream_t s) {
  if (g.desc.m * g.desc.n > kOneBlockMaxThreads)
    throw Unsupported("cuda.oneblock: m*n = " + std::to_string(g.desc.m * g.desc.n) +
                      " threads exceeds the limit of 1024 threads per block");
  by_type(g, "cuda.oneblock", [&](auto tag) {
    using T = decltype(tag);
    const dim3 block(static_cast<unsigned>(g.desc.n), static_cast<unsigned>(g.desc.m));
    oneblock_kernel<T><<<1, block, 0, s>>>(operands_of<T>(g));
  });
}

}  // namespace kafel::cuda
