// Rung 10, cuda.mma: the first tensor-core rung. Shared-memory tiles (rows padded by 16 bytes)
// filled by cp.async, then ldmatrix / LDS fragments and mma.sync, one stage: a k-tile is
// loaded, waited for and computed with no overlap between copying and math.
#include "core/registry.hpp"
#include "cuda/mma_kernel.cuh"
#include "cuda/mma_rungs.hpp"

namespace kafel::cuda::tc {

// 128 x 128 block tiles of 4 warps (64 x 64 each; f64: 64 x 64 of 32 x 32), 64 bytes of k.
const std::vector<Compiled>& mma_table() {
  static const std::vector<Compiled> t = {
      entry<Mode::f16, 128, 128, 32, 64, 64, 1, false, false>(),
      entry<Mode::bf16, 128, 128, 32, 64, 64, 1, false, false>(),
      entry<Mode::tf32, 128, 128, 16, 64, 64, 1, false, false>(),
      entry<Mode::tf32x3, 128, 128, 16, 64, 64, 1, false, false>(),
      entry<Mode::i8, 128, 128, 64, 64, 64, 1, false, false>(),
      entry<Mode::f64, 64, 64, 16, 32, 32, 1, false, false>(),
  };
  return t;
}

namespace {
const Register registered{
    fixed_rung("cuda.mma", "tensor cores: ldmatrix + mma.sync on padded shared tiles, one stage",
               10, mma_table)};
}  // namespace

}  // namespace kafel::cuda::tc
