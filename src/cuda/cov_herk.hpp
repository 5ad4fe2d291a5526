// The launch contract shared by the tiled covariance kernels (cov_herk.cu: SIMT, every sample
// type; cov_herk_tc.cu: 3xtf32 tensor cores, float samples): one partial per (tile, range).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace kafel::cuda {

// Lane tile edge of the SIMT kernel; the tensor-core kernel takes 64 or 128.
inline constexpr int kHerkTile = 64;
// Doubles per (batch, tile, range) partial of a T x T tile: the tile's co-moment sums row-major
// (lower entries valid on diagonal tiles), then on diagonal tiles the tile's lane sums.
__host__ __device__ constexpr long long herk_partial(int tile) {
  return static_cast<long long>(tile) * tile + tile;
}

// The tensor-core kernel's samples: planar rows padded to whole chunks, real lane k of batch b,
// sample s at x[b*bstep + (k/comps)*cstep + s*comps + k%comps] (cstep: the row pitch in floats,
// a multiple of kHerkTcChunk * comps). Lanes past `lanes` read as zero, samples past n add
// nothing. Off-diagonal and diagonal tiles have their own sample ranges (diagonal tiles do less
// work per sample, so they may take longer ranges): blocks x < off * splits take off-diagonal
// tile x % off and samples [range*r, min(n, range*(r+1))), r = x / off; the next rows * dsplits
// blocks diagonal tile (x' % rows) with drange. Each sums its tile after subtracting each lane's
// pilot into partial ((b * tiles + tile) * pstride + r).
struct HerkLaunch {
  const float* x = nullptr;
  long long cstep = 0, bstep = 0;
  int tile = 64, lanes = 0, comps = 1, batches = 1;
  long long n = 0, range = 0, drange = 0;
  int tiles = 1, rows = 1, splits = 1, dsplits = 1, pstride = 1, flush = 16;
  const float* pilot = nullptr;
  double* partial = nullptr;
  int blocks() const { return (tiles - rows) * splits + rows * dsplits; }
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
// Launches the tensor-core kernel; it needs herk_tc_shared_bytes(l.tile) of shared memory per
// block, and herk_tc_resident_blocks of them fit on one SM of the device.
void launch_herk_tc(const HerkLaunch& l, cudaStream_t stream);
std::size_t herk_tc_shared_bytes(int tile);
int herk_tc_resident_blocks(int ordinal, int tile, int comps);
// Its 128-lane tiles (cov_herk_tc_sm90a.cu: wgmma, compute capability 9.0 with sm_90a code).
void launch_herk_wg(const HerkLaunch& l, cudaStream_t stream);
std::size_t herk_wg_shared_bytes();
int herk_wg_resident_blocks(int ordinal, int comps);

}  // namespace kafel::cuda
