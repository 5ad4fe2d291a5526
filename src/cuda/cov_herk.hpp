// The launch contract shared by the tiled covariance kernels (cov_herk.cu: SIMT, every sample
// type; cov_herk_tc.cu: 3xtf32 tensor cores, float samples): one partial per (tile, range).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstring>

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
// nothing. Off-diagonal and diagonal tiles have their own range counts (diagonal tiles do less
// work per sample, so they may take fewer, longer ranges): blocks x < off * splits take
// off-diagonal tile x % off and range r = x / off of `splits`; the next rows * dsplits blocks
// diagonal tile (x' % rows) and range x' / rows of `dsplits`. Range r of S takes the 32-sample
// chunks r, r + S, r + 2S, ... (so the resident blocks read neighbouring chunks of the same
// rows: 0-4 % faster than a run of chunks each at 64 f32 x 1M, even elsewhere; H100,
// session 30). Each sums its tile after subtracting each lane's pilot (found by the kernel,
// see lane_pilots) into partial ((b * tiles + tile) * pstride + r): stored at its first flush,
// added at the later ones, so every entry the host's merge reads is written and the partials
// need no zeroing.
struct HerkLaunch {
  const float* x = nullptr;
  long long cstep = 0, bstep = 0;
  int tile = 64, lanes = 0, comps = 1, batches = 1;
  long long n = 0;
  int tiles = 1, rows = 1, splits = 1, dsplits = 1, pstride = 1, flush = 16;
  bool wg64 = false;       // herk_tc_halves' one tile on wgmma (sm_90a) rather than mma.sync
  float* pilot = nullptr;  // stored by the kernel: each lane's pilot, for the host's merge
  // The 128-lane tiles' f16 split (herk_tc_f16_shape): each lane's power-of-two scale stored
  // beside its pilot (the partials hold scaled sums; the merge divides), and `epoch` put into
  // *redo where a lane's scale did not hold (the host then runs the tf32 split).
  bool f16 = false;
  float* scale = nullptr;
  int* redo = nullptr;
  int epoch = 0;
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
// Where the tensor-core kernel runs one 64-lane tile (lanes <= 64), its partials hold a full
// square F whose F + F^T is the tile's sums (merged so on the host). With v = big + small and
// w = v - big / 2, F = big * w^T gives F + F^T = big big^T + big small^T + small big^T: two
// tf32 products (w in two parts) where the lower triangle takes three, and no warp idle. (The
// 128-lane wgmma tile the same way ran 4-7 % slower: H200, 64 cf32 x 1M, 0.416 against
// 0.386-0.401 ms; its diagonal tiles then take one chunk per item where they take two.)
inline bool herk_tc_halves(int tile, long long tiles) {
  return tile == 64 && tiles == 1;
}
// Where the tensor-core kernel splits into scaled f16 parts instead of tf32 ones: its 128-lane
// tiles (more than 64 real lanes, or any with TILE=128), whose three products per sample then
// run at f16's rate and read half the shared-memory bytes.
inline bool herk_tc_f16_shape(int tile) {
  return tile == 128;
}
// Launches the tensor-core kernel; it needs at most herk_tc_shared_bytes(l.tile) of shared memory
// per block, and herk_tc_resident_blocks of a launch of `tiles` lane tiles per batch fit on one SM
// of the device (with one tile, 64-lane blocks need half the shared memory).
void launch_herk_tc(const HerkLaunch& l, cudaStream_t stream);
std::size_t herk_tc_shared_bytes(int tile);
int herk_tc_resident_blocks(int ordinal, int tile, int comps, int tiles, bool wg64);
// Its 128-lane tiles (cov_herk_tc_sm90a.cu: wgmma, compute capability 9.0 with sm_90a code).
void launch_herk_wg(const HerkLaunch& l, cudaStream_t stream);
std::size_t herk_wg_shared_bytes();
int herk_wg_resident_blocks(int ordinal, int comps);
// The one 64-lane tile of herk_tc_halves on wgmma (cov_herk_tc64_sm90a.cu, HerkLaunch::wg64):
// the big parts in registers as wgmma's A, big / 2 and small in shared memory as B.
void launch_herk_wg64(const HerkLaunch& l, cudaStream_t stream);
std::size_t herk_wg64_shared_bytes();
int herk_wg64_resident_blocks(int ordinal, int comps);

// cuda.herk_h3 (cov_herk_h3.cu, Hopper): every lane scaled by a power of two so that its
// largest |x - pilot| stays below 2^15, split into f16 big and small parts (big + small carries
// 22 bits), and the lower-triangle tiles multiplied by the split-operand wgmma GEMM (small
// products first into a fresh accumulator per 64 samples, added in float; sample ranges by
// split-K). One batch per launch: lane k, sample s at x[(k/comps)*cstep + s*sstep + k%comps].
struct H3Launch {
  const float* x = nullptr;
  long long cstep = 0, sstep = 1;
  int lanes = 0, comps = 1;
  long long n = 0;
  const float* pilot = nullptr;  // per lane
  // Per lane: float bits of the largest |x - pilot| (exact: over every sample, zeroed before;
  // otherwise 2^8 times the largest over the first kH3PilotSamples), from which the scale.
  unsigned* peak = nullptr;
  bool exact = false;
  // Set (to 1) where the scale from the first samples does not hold: a lane whose first samples
  // are all equal to the pilot or not finite, or a scaled value outside (-2^15, 2^15) (overflow,
  // NaN or an infinity). The caller then runs again with exact peaks. Zeroed before.
  int* redo = nullptr;
  double* sums = nullptr;  // per lane: sum of (x - pilot), zeroed before
  void* planes = nullptr;  // 2 * lanes rows of ld halves: big parts, then small parts
  long long ld = 0;
  float* c = nullptr;  // lanes x lanes: sums of scaled products
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  int splits = 1;
};
void launch_herk_h3(const H3Launch& l, cudaStream_t stream);
// Samples per lane behind the fast scale (H3Launch::exact false).
inline constexpr long long kH3PilotSamples = 8192;
// The plane row pitch (halves: 16-byte rows), the split count for `sms` SMs (sample ranges of
// at most 8192 that fill the SMs once) and the split-K workspace it needs.
long long h3_ld(long long n);
int h3_splits(int lanes, long long n, int sms);
std::size_t h3_workspace_bytes(int lanes, long long n, int splits);
// The power of two lane scale for a largest |x - pilot| with these float bits: peak * scale
// < 2^15 (f16 holds 65504); 1 for a zero or non-finite peak (NaN and inf propagate).
__host__ __device__ inline float h3_scale(unsigned peak_bits) {
  if (peak_bits == 0 || peak_bits >= 0x7f800000u) return 1.0f;
  const int e = static_cast<int>((peak_bits >> 23) & 0xffu) - 126;  // peak < 2^e
  int field = 127 + 15 - e;
  field = field < 1 ? 1 : field > 254 ? 254 : field;
  const unsigned bits = static_cast<unsigned>(field) << 23;
#ifdef __CUDA_ARCH__
  return __uint_as_float(bits);
#else
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
#endif
}

}  // namespace kafel::cuda
