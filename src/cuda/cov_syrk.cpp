// Covariance kernel cuda.syrk: the SYRK path of core (pilot-shifted chunks through this GPU's
// GEMM, float64 sums on the host), the default beyond cuda.onepass's 16-channel limit.
#include "core/registry.hpp"

namespace kafel::cuda {
namespace {

CovKernel syrk_kernel() {
  CovKernel k = make_syrk_cov_kernel("cuda");
  k.preference = 1;  // below cuda.onepass, which wins wherever its channel limit admits
  return k;
}

const Register registered{syrk_kernel()};

}  // namespace
}  // namespace kafel::cuda
