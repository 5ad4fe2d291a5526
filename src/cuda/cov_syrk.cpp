// Covariance baseline cuda.syrk: pilot-shifted chunks of the samples multiplied with this GPU's
// public gemm() (Y Y^T) and summed in float64 on the host (core/cov_syrk.cpp). Never the
// default: cuda.herk replaced it beyond cuda.onepass's channel limit.
#include "core/registry.hpp"

namespace kafel::cuda {
namespace {

const Register registered{make_syrk_cov_kernel("cuda")};

}  // namespace
}  // namespace kafel::cuda
