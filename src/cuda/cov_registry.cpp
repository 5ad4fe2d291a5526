// The CUDA covariance ladder: the one-pass kernel (up to 16 channels, pinned streams), the
// GEMM-based SYRK path for more, and cuBLAS ssyrk/dsyrk as comparisons. One line per rung.
#include "core/cov_backend.hpp"

namespace kafel {

namespace cuda {
CovKernel cuda_onepass_cov_kernel();       // cov_onepass.cu
CovKernel cuda_cublas_ssyrk_cov_kernel();  // cov_cublas.cu
CovKernel cuda_cublas_dsyrk_cov_kernel();  // cov_cublas.cu
}  // namespace cuda

std::vector<CovKernel> cuda_cov_kernels() {
  CovKernel syrk = make_syrk_cov_kernel("cuda");
  syrk.is_default = true;  // chosen beyond cuda.onepass's channel limit
  return {cuda::cuda_onepass_cov_kernel(), syrk, cuda::cuda_cublas_ssyrk_cov_kernel(),
          cuda::cuda_cublas_dsyrk_cov_kernel()};
}

}  // namespace kafel
