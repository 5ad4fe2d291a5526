// Covariance rung cuda.herk_h3 (Hopper): lanes scaled by powers of two and split into f16 big
// and small planes by two passes over the samples, then one split-operand wgmma GEMM per batch.
#include <algorithm>
#include <cmath>
#include <string>

#include <cuda_fp16.h>

#include "cuda/cov_herk.hpp"
#include "cuda/runtime.hpp"
#include "cuda/wgmma.hpp"
#include "kafel/error.hpp"

namespace kafel::cuda {

namespace {

constexpr int kThreads = 256, kPerThread = 8;
constexpr long long kSpan = kThreads * kPerThread;  // samples per block of the passes
constexpr int kRangeTiles = 128;                    // k-tiles (64 samples) per range at most

__device__ __forceinline__ float sample(const H3Launch& l, int lane, long long s) {
  return l.x[(lane / l.comps) * l.cstep + s * l.sstep + lane % l.comps];
}

// Grid (spans, lanes): the largest |x - pilot| of each lane, as float bits (non-negative floats
// order as their bits; NaN's above inf's, both above every finite value).
__global__ void __launch_bounds__(kThreads) h3_peak(const H3Launch l) {
  const int lane = blockIdx.y;
  const float p = l.pilot[lane];
  unsigned most = 0;
  for (int i = 0; i < kPerThread; ++i) {
    const long long s = blockIdx.x * kSpan + i * kThreads + threadIdx.x;
    if (s < l.n) most = max(most, __float_as_uint(fabsf(sample(l, lane, s) - p)));
  }
  for (int o = 16; o > 0; o /= 2) most = max(most, __shfl_xor_sync(0xffffffffu, most, o));
  if (threadIdx.x % 32 == 0) atomicMax(l.peak + lane, most);
}

// Grid (spans, lanes): big = f16(v), small = f16(v - big) for v = (x - pilot) * scale, and the
// lane's sum of x - pilot in float64.
__global__ void __launch_bounds__(kThreads) h3_split(const H3Launch l) {
  __shared__ double part[kThreads / 32];
  const int lane = blockIdx.y;
  const float p = l.pilot[lane], scale = h3_scale(l.peak[lane]);
  __half* big = static_cast<__half*>(l.planes) + lane * l.ld;
  __half* small = big + static_cast<long long>(l.lanes) * l.ld;
  double sum = 0;
  for (int i = 0; i < kPerThread; ++i) {
    const long long s = blockIdx.x * kSpan + i * kThreads + threadIdx.x;
    if (s >= l.n) break;
    const float d = sample(l, lane, s) - p, v = d * scale;
    const __half hb = __float2half_rn(v);
    big[s] = hb;
    small[s] = __float2half_rn(v - __half2float(hb));
    sum += d;
  }
  for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    double t = 0;
    for (double x : part) t += x;
    atomicAdd(l.sums + lane, t);
  }
}

sm90::Options options(int splits) {
  sm90::Options o;
  o.kernel = 1;
  o.bm = sm90::kSplitShape[0];
  o.bn = sm90::kSplitShape[1];
  o.stages = 3;
  o.splits = splits;
  return o;
}

}  // namespace

long long h3_ld(long long n) {
  return std::max(8LL, (n + 7) / 8 * 8);
}

// Sample ranges: at least enough that none is longer than kRangeTiles k-tiles (float sums of at
// most 8192 samples), then the count whose whole waves of one CTA per SM, plus the partial sums
// written and read back, finish soonest (fewest ranges within 1 %). Costs measured on an H100
// (session 12): a 128 x 128 tile's k-tile (64 samples, three f16 products) ~1.2 us on one SM,
// partial sums at ~3 TB/s. 1024 lanes x 65536 samples: 11 ranges (3 whole waves) against 8
// (3 waves, the last a fifth full).
int h3_splits(int lanes, long long n, int sms) {
  constexpr double kTileSeconds = 1.2e-6, kBandwidth = 3e12;
  const long long rows = (lanes + 127) / 128, tiles = rows * (rows + 1) / 2;
  const long long k_tiles = (n + 63) / 64;
  const long long least = std::max(1LL, (k_tiles + kRangeTiles - 1) / kRangeTiles);
  const long long most = std::max(least, std::min<long long>(k_tiles / 4, sm90::kMaxSplits));
  const double slots = std::max(1, sms);
  long long best = least;
  double best_time = 0;
  for (long long s = least; s <= most; ++s) {
    const double waves = std::ceil(double(tiles * s) / slots);
    const double per_range = std::ceil(double(k_tiles) / double(s));
    const double time = waves * per_range * kTileSeconds +
                        double(s) * double(lanes) * double(lanes) * 8.0 / kBandwidth;
    if (s == least || time < best_time * 0.99) {
      best = s;
      best_time = time;
    }
  }
  return static_cast<int>(best);
}

std::size_t h3_workspace_bytes(int lanes, long long n, int splits) {
  return sm90::split_workspace_bytes(sm90::Input::f16x3, lanes, lanes, n, options(splits));
}

void launch_herk_h3(const H3Launch& l, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((l.n + kSpan - 1) / kSpan), static_cast<unsigned>(l.lanes));
  h3_peak<<<grid, kThreads, 0, stream>>>(l);
  KAFEL_CUDA_CHECK_LAUNCH("h3_peak");
  h3_split<<<grid, kThreads, 0, stream>>>(l);
  KAFEL_CUDA_CHECK_LAUNCH("h3_split");
  sm90::Problem p;
  p.m = p.n = l.lanes;
  p.k = static_cast<int>(l.n);
  p.a = p.b = l.planes;
  p.lda = p.ldb = l.ld;
  p.b_t = true;
  p.c = l.c;
  p.ldc = l.lanes;
  p.a_part = p.b_part = l.lanes;
  p.lower = true;  // merge_h3 reads the lower triangle only
  p.workspace = l.workspace;
  p.workspace_bytes = l.workspace_bytes;
  if (std::string err = sm90::launch_gemm(sm90::Input::f16x3, p, options(l.splits), stream);
      !err.empty())
    throw DeviceError("cuda.herk_h3 (" + std::to_string(l.lanes) + " lanes x " +
                      std::to_string(l.n) + " samples): " + err);
}

}  // namespace kafel::cuda
