// The OpenCL covariance ladder: the one-pass kernel for up to 16 channels and the GEMM-based
// SYRK path (through the OpenCL GEMM kernels) for more. Adding a rung is one line here.
#include "core/cov_backend.hpp"

namespace kafel {

CovKernel ocl_onepass_cov_kernel();  // cov_onepass.cpp

std::vector<CovKernel> opencl_cov_kernels() {
  CovKernel syrk = make_syrk_cov_kernel("ocl");
  syrk.is_default = true;  // chosen beyond ocl.onepass's channel limit
  return {ocl_onepass_cov_kernel(), syrk};
}

}  // namespace kafel
