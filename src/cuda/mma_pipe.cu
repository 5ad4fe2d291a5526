// Rung 11, cuda.mma_pipe: the tensor-core kernel with a cp.async ring of STAGES shared-memory
// stages (tiles kt+1 .. kt+STAGES-1 in flight while kt is computed, one barrier per k-tile)
// and XOR-swizzled tiles on which every fragment load and every copy is bank-conflict free.
#include "core/registry.hpp"
#include "cuda/mma_kernel.cuh"
#include "cuda/mma_rungs.hpp"

namespace kafel::cuda::tc {

// 128 x 256 blocks of 8 warps (64 x 64 each), 4 stages; f64 128 x 128 (warps 64 x 32).
const std::vector<Compiled>& mma_pipe_table() {
  static const std::vector<Compiled> t = {
      entry<Mode::f16, 128, 256, 32, 64, 64, 4, true, false>(),
      entry<Mode::bf16, 128, 256, 32, 64, 64, 4, true, false>(),
      entry<Mode::tf32, 128, 256, 16, 64, 64, 4, true, false>(),
      entry<Mode::tf32x3, 128, 256, 16, 64, 64, 4, true, false>(),
      entry<Mode::i8, 128, 256, 64, 64, 64, 4, true, false>(),
      entry<Mode::f64, 128, 128, 16, 64, 32, 4, true, false>(),
  };
  return t;
}

namespace {
const Register registered{
    fixed_rung("cuda.mma_pipe",
               "tensor cores: cp.async ring of 4 stages, swizzled conflict-free tiles, 8 warps", 11,
               mma_pipe_table)};
}  // namespace

}  // namespace kafel::cuda::tc
