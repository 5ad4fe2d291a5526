// Self-registration: a backend's device file and each kernel file end with one `Register`
// object, so adding a rung is one new file. The registry sorts kernels by backend and rung.
#pragma once

#include <vector>

#include "core/backend.hpp"
#include "core/cov_backend.hpp"

namespace kafel {

// Registers at library load (static initialisation), before any query:
//   namespace { const Register registered{my_kernel()}; }
// A kernel whose parameter space is malformed (default or candidate outside its range)
// aborts the registration with std::logic_error: a programming error, caught by the tests.
struct Register {
  explicit Register(Backend backend);
  explicit Register(GemmKernel kernel);
  explicit Register(std::vector<GemmKernel> kernels);
  explicit Register(CovKernel kernel);
};

// Every registered GEMM / covariance kernel of every backend (tests check them all).
std::vector<const GemmKernel*> all_gemm_kernels();
std::vector<const CovKernel*> all_cov_kernels();

}  // namespace kafel
