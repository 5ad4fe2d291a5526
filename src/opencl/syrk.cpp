// Covariance rung ocl.syrk: pilot-shifted chunks of the samples multiplied with the OpenCL GEMM
// kernels (Y Y^T) and summed in float64 on the host (core/cov_syrk.cpp). Any channel count:
// the default beyond ocl.onepass's limit of 16 channels.
#include "core/registry.hpp"

namespace kafel {
namespace {

CovKernel syrk_kernel() {
  CovKernel k = make_syrk_cov_kernel("ocl");
  k.preference = 5;  // below ocl.onepass, which wins wherever its channel limit admits the shape
  return k;
}

const Register registered{syrk_kernel()};

}  // namespace
}  // namespace kafel
