// Rung 1 (the lecture's first kernel): a single block, one thread per element of C.
// Works only while m*n <= 1024 threads, which can_implement states before anything runs.
#include <string>

#include "core/registry.hpp"
#include "cuda/gemm_common.cuh"

namespace kafel::cuda {
namespace {

constexpr std::int64_t kMaxThreads = 1024;  // CUDA's limit of threads per block

template <class T>
__global__ void oneblock_kernel(Operands<T> g) {
  const int i = threadIdx.y, j = threadIdx.x;
  T acc = T(0);
  for (int p = 0; p < g.k; ++p) acc = mad(g.A(i, p), g.B(p, j), acc);
  g.store(i, j, acc);
}

// "" when one block holds a thread per element of C, else why not.
std::string fits_one_block(const GemmDesc& d) {
  if (d.m * d.n <= kMaxThreads) return "";
  return d.shape() + " needs m*n = " + std::to_string(d.m * d.n) +
         " threads in one block, more than CUDA's limit of 1024 threads per block";
}

void launch(const DeviceGemm& g, const Params&, cudaStream_t s) {
  if (const std::string why = fits_one_block(g.desc); !why.empty())
    throw Unsupported("cuda.oneblock: " + why);
  by_type(g, "cuda.oneblock", [&](auto tag) {
    using T = decltype(tag);
    const dim3 block(static_cast<unsigned>(g.desc.n), static_cast<unsigned>(g.desc.m));
    oneblock_kernel<T><<<1, block, 0, s>>>(operands_of<T>(g));
  });
}

const Register registered{cuda_rung(
    "cuda.oneblock", "one block, one thread per element of C (m*n <= 1024)", 1, {}, launch,
    [](const Device&, const GemmDesc& d, const Params&) { return fits_one_block(d); })};

}  // namespace
}  // namespace kafel::cuda
