// Rung 13, cuda.wgmma: the first Hopper rung. TMA copies 128-byte-swizzled A and B tiles into
// a ring of shared-memory slots that complete on mbarriers; both warpgroups of a 128 x 256
// tile issue wgmma from shared memory, and one thread refills a slot once both are done with it.
#include "core/registry.hpp"
#include "cuda/wgmma_rung.hpp"

namespace kafel::cuda {
namespace {

ParamSpace tma_params() {
  ParamSpace s;
  s.params = {param("STAGES", 4, {3, 4}, 2, 8, "shared-memory ring slots (48 KiB each)")};
  return s;
}

GemmKernel wgmma_tma_kernel() {
  GemmKernel k = wgmma_kernel("cuda.wgmma",
                              "TMA + mbarrier ring + wgmma, 128x256 tiles, one CTA per tile "
                              "(Hopper, sm_90a)",
                              13, tma_params(), 0, false);
  k.preference = always(20);
  return k;
}

const Register registered{wgmma_tma_kernel()};

}  // namespace
}  // namespace kafel::cuda
