// Entry points of the CPU GEMM rungs; each computes C = alpha op(A) op(B) + beta C on
// normalised row-major GemmArgs (see core/backend.hpp). The registry wires them to names.
#pragma once

#include "core/backend.hpp"

namespace kafel::cpu {

void gemm_naive(const GemmArgs& args);
// threads <= 0: one per core.
void gemm_cached_column(const GemmArgs& args, int threads);

}  // namespace kafel::cpu
