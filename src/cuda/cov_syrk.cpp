// Covariance kernel cuda.syrk: the old SYRK path of core (pilot-shifted chunks through this GPU's
// public gemm(), float64 sums on the host). It stays CUDA's default beyond cuda.onepass's
// 16 channels until a tiled CUDA kernel exists and is verified on a GPU (then a baseline).
#include "core/registry.hpp"

namespace kafel::cuda {
namespace {

CovKernel syrk_kernel() {
  CovKernel k = make_syrk_cov_kernel("cuda");
  // No tiled CUDA kernel yet: this verified path keeps real many-channel shapes working.
  k.baseline = false;
  k.preference = 1;
  return k;
}

const Register registered{syrk_kernel()};

}  // namespace
}  // namespace kafel::cuda
