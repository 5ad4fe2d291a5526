// The strided rungs' shared plan: kernels that read the normalised operands directly through
// (row, column) strides and guard every access, so they need no pre-pass (naive, row, tiled,
// wpt, direct). A rung file describes its ND-range and local memory with a StridedRung.
#pragma once

#include "opencl/gemm_plan.hpp"

namespace kafel::ocl {

// What tells one strided rung from another. Its name gives the rest: kernel "ocl.<name>",
// source kernels/<name>.cl, __kernel function gemm_<name> with arguments
// M N K alpha beta A ars acs B brs bcs C ldc.
struct StridedRung {
  const char* name;  // "tiled"
  // The launch for an m x n C (x runs along n).
  NdRange (*range)(const Params& p, int m, int n) = nullptr;
  // Elements of acc the kernel declares in local memory (none: null).
  std::int64_t (*local_elements)(const Params& p) = nullptr;
};

class StridedPlan : public OclPlan {
 public:
  StridedPlan(const Device& d, const GemmDesc& g, const Params& p, const StridedRung& rung)
      : OclPlan(d, g, p), rung_(rung) {}

 protected:
  void prepare() override;
  std::vector<Event> enqueue(Operands& s) override;

 private:
  const StridedRung& rung_;
  NdRange range_;
  Program program_;
  Kernel kernel_;
};

// The registration of strided rung `rung` (which must outlive the registry: a namespace-scope
// object): the buffer roles, `space`, a StridedPlan factory and the work-group and local-memory
// checks of can_implement.
GemmKernel strided_kernel(const StridedRung& rung, std::string summary, int position,
                          ParamSpace space);

// The number of tiles of size `tile` covering `extent`.
inline std::size_t tiles(std::int64_t extent, std::int64_t tile) {
  return std::size_t((extent + tile - 1) / tile);
}

}  // namespace kafel::ocl
