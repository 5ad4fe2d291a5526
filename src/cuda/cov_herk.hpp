// The launch contract shared by the tiled covariance kernels (cov_herk.cu: SIMT, every sample
// type; cov_herk_tc.cu: 3xtf32 tensor cores, float samples): one partial per (tile, range).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace kafel::cuda {

// Lane tile edge of both kernels: the plan's merge reads their partials the same way.
inline constexpr int kHerkTile = 64;
// Doubles per (batch, tile, range) partial: the tile's co-moment sums row-major (lower entries
// valid on diagonal tiles), then on diagonal tiles the tile's lane sums.
inline constexpr long long kHerkPartial = kHerkTile * kHerkTile + kHerkTile;

// The tensor-core kernel's samples: planar rows padded to whole chunks, real lane k of batch b,
// sample s at x[b*bstep + (k/comps)*cstep + s*comps + k%comps] (cstep: the row pitch in floats,
// a multiple of kHerkTcChunk * comps). Lanes past `lanes` read as zero, samples past n add
// nothing. Block (tile + tiles * r, batch) sums samples [range*r, min(n, range*(r+1))) after
// subtracting each lane's pilot.
struct HerkLaunch {
  const float* x = nullptr;
  long long cstep = 0, bstep = 0;
  int lanes = 0, comps = 1, batches = 1;
  long long n = 0, range = 0;
  int tiles = 1, splits = 1, flush = 16;
  const float* pilot = nullptr;
  double* partial = nullptr;
};

// Row ti and column tj of lower tile t (t = ti*(ti+1)/2 + tj): float square root, then exact.
__device__ __forceinline__ void herk_tile_of(int t, int& ti, int& tj) {
  int i = static_cast<int>((sqrtf(8.0f * static_cast<float>(t) + 1.0f) - 1.0f) * 0.5f);
  while ((i + 1) * (i + 2) / 2 <= t) ++i;
  while (i * (i + 1) / 2 > t) --i;
  ti = i;
  tj = t - i * (i + 1) / 2;
}

// Samples per shared-memory chunk of the tensor-core kernel (ranges are multiples of it).
inline constexpr int kHerkTcChunk = 32;
// Launches the tensor-core kernel; it needs herk_tc_shared_bytes() of shared memory per block.
void launch_herk_tc(const HerkLaunch& l, cudaStream_t stream);
std::size_t herk_tc_shared_bytes();

}  // namespace kafel::cuda
