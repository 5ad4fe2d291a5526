// The OpenBLAS comparison baseline (`cpu.openblas`); present when KAFEL_HAVE_OPENBLAS is set.
// A baseline is not one of our rungs: `kafel bench --vs openblas` runs it beside ours.
#pragma once

#include "core/backend.hpp"

namespace kafel::cpu {

#ifdef KAFEL_HAVE_OPENBLAS
GemmKernel openblas_gemm_kernel();
#endif

}  // namespace kafel::cpu
