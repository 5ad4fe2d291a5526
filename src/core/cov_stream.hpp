// Streaming covariance on a plan that already exists: the loop behind the public run_cov_stream
// (kafel/cov.hpp, whose options, sources and statistics it uses), for tests that drive plans.
#pragma once

#include <cstdint>

#include "core/cov_backend.hpp"
#include "kafel/cov.hpp"

namespace kafel {

// The public run_cov_stream minus the choice: `plan` is any CovPlan made for `desc`.
// startup_ms counts the buffers and the warm-up pass only (the plan exists already).
CovStreamStats run_cov_stream(CovPlan& plan, const CovDesc& desc, const CovBlockSource& source,
                              std::int64_t max_blocks, const CovStreamOptions& opt,
                              const CovResultHook& hook);

}  // namespace kafel
