// Covariance baseline ocl.syrk: pilot-shifted chunks of the samples multiplied with the public
// OpenCL gemm() (Y Y^T) and summed in float64 on the host (core/cov_syrk.cpp). Never the
// default: ocl.herk replaced it beyond ocl.onepass's channel limit.
#include "core/registry.hpp"

namespace kafel {
namespace {

const Register registered{make_syrk_cov_kernel("ocl")};

}  // namespace
}  // namespace kafel
