// Covariance rung cuda.herk_h3 (Hopper): lanes scaled by powers of two (from the first samples,
// or exact peaks after a redo) and split into f16 big and small planes, then one split-operand
// wgmma GEMM per batch.
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

constexpr int kThreads = 256, kPairs = 4;  // each thread: kPairs pairs of adjacent samples
constexpr long long kSpan = 2LL * kThreads * kPairs;  // samples per block of the passes
constexpr int kRangeTiles = 128;                      // k-tiles (64 samples) per range at most

// The COMPS components (re, im) of channel c at sample s: one 8-byte load for complex samples.
template <int COMPS>
__device__ __forceinline__ void load(const H3Launch& l, int c, long long s, float (&v)[COMPS]) {
  const float* p = l.x + c * l.cstep + s * l.sstep;
  if constexpr (COMPS == 2) {
    const float2 t = *reinterpret_cast<const float2*>(p);
    v[0] = t.x;
    v[1] = t.y;
  } else {
    v[0] = *p;
  }
}

// Sample pairs (s, s + 1) of this thread: kPairs of them, a warp's pairs adjacent in memory.
__device__ __forceinline__ long long pair_at(int i) {
  return blockIdx.x * kSpan + 2LL * (i * kThreads + threadIdx.x);
}

// The block's largest `most[k]` for each component k, returned to thread k (< COMPS).
template <int COMPS>
__device__ __forceinline__ unsigned block_max(unsigned (&most)[COMPS]) {
  __shared__ unsigned part[kThreads / 32][COMPS];
#pragma unroll
  for (int k = 0; k < COMPS; ++k) {
    for (int o = 16; o > 0; o /= 2)
      most[k] = max(most[k], __shfl_xor_sync(0xffffffffu, most[k], o));
    if (threadIdx.x % 32 == 0) part[threadIdx.x / 32][k] = most[k];
  }
  __syncthreads();
  unsigned m = 0;
  if (threadIdx.x < COMPS)
    for (int w = 0; w < kThreads / 32; ++w) m = max(m, part[w][threadIdx.x]);
  return m;
}

// Grid (spans, channels): the largest |x - pilot| of each of the channel's lanes, as float bits
// (non-negative floats order as their bits; NaN's above inf's, both above every finite value),
// one atomicMax per lane and block.
template <int COMPS>
__global__ void __launch_bounds__(kThreads) h3_peak(const H3Launch l) {
  const int c = blockIdx.y;
  float p[COMPS];
  unsigned most[COMPS];
#pragma unroll
  for (int k = 0; k < COMPS; ++k) {
    p[k] = l.pilot[c * COMPS + k];
    most[k] = 0;
  }
#pragma unroll
  for (int i = 0; i < kPairs; ++i) {
    const long long s = pair_at(i);
#pragma unroll
    for (int h = 0; h < 2; ++h)
      if (s + h < l.n) {
        float v[COMPS];
        load<COMPS>(l, c, s + h, v);
#pragma unroll
        for (int k = 0; k < COMPS; ++k) most[k] = max(most[k], __float_as_uint(fabsf(v[k] - p[k])));
      }
  }
  const unsigned m = block_max<COMPS>(most);
  if (threadIdx.x < COMPS) atomicMax(l.peak + c * COMPS + threadIdx.x, m);
}

// Grid (channels): 2^8 times the largest |x - pilot| over the first kH3PilotSamples samples of
// each lane (headroom for later samples up to 2^8 times larger before a redo); a lane whose
// first samples give 0 or a non-finite value asks for the exact peaks.
template <int COMPS>
__global__ void __launch_bounds__(kThreads) h3_pilot_peak(const H3Launch l) {
  const int c = blockIdx.x;
  const long long count = l.n < kH3PilotSamples ? l.n : kH3PilotSamples;
  float p[COMPS];
  unsigned most[COMPS];
#pragma unroll
  for (int k = 0; k < COMPS; ++k) {
    p[k] = l.pilot[c * COMPS + k];
    most[k] = 0;
  }
  for (long long s = threadIdx.x; s < count; s += kThreads) {
    float v[COMPS];
    load<COMPS>(l, c, s, v);
#pragma unroll
    for (int k = 0; k < COMPS; ++k) most[k] = max(most[k], __float_as_uint(fabsf(v[k] - p[k])));
  }
  const unsigned m = block_max<COMPS>(most);
  if (threadIdx.x < COMPS) {
    const float peak = __uint_as_float(m) * 256.0f;
    if (m == 0 || !isfinite(peak)) *l.redo = 1;
    l.peak[c * COMPS + threadIdx.x] = __float_as_uint(peak);
  }
}

// Grid (spans, channels): for each lane of the channel, big = f16(v), small = f16(v - big) for
// v = (x - pilot) * scale, stored as pairs of adjacent samples, and the lane's sum of x - pilot
// in float64 (one atomicAdd per lane and block).
template <int COMPS>
__global__ void __launch_bounds__(kThreads) h3_split(const H3Launch l) {
  __shared__ double part[kThreads / 32][COMPS];
  const int c = blockIdx.y;
  float p[COMPS], scale[COMPS];
  __half* big[COMPS];
  double sum[COMPS];
#pragma unroll
  for (int k = 0; k < COMPS; ++k) {
    const int lane = c * COMPS + k;
    p[k] = l.pilot[lane];
    scale[k] = h3_scale(l.peak[lane]);
    big[k] = static_cast<__half*>(l.planes) + lane * l.ld;
    sum[k] = 0;
  }
  const long long small = static_cast<long long>(l.lanes) * l.ld;  // big -> small plane
  bool bad = false;
#pragma unroll
  for (int i = 0; i < kPairs; ++i) {
    const long long s = pair_at(i);
    if (s >= l.n) break;
    const bool two = s + 1 < l.n;
    float a[COMPS], b[COMPS];
    load<COMPS>(l, c, s, a);
    if (two) load<COMPS>(l, c, s + 1, b);
#pragma unroll
    for (int k = 0; k < COMPS; ++k) {
      const float da = a[k] - p[k], db = two ? b[k] - p[k] : 0.0f;
      // Outside (-2^15, 2^15), NaN included: the scale from the first samples does not hold.
      if (!(fabsf(da * scale[k]) < 32768.0f && fabsf(db * scale[k]) < 32768.0f)) bad = true;
      const __half2 hb = __floats2half2_rn(da * scale[k], db * scale[k]);
      const float2 back = __half22float2(hb);
      const __half2 hs = __floats2half2_rn(da * scale[k] - back.x, db * scale[k] - back.y);
      // ld is a multiple of 8 and s even: 4-byte aligned pairs (a last odd sample's partner is
      // column n, which the GEMM never reads).
      *reinterpret_cast<__half2*>(big[k] + s) = hb;
      *reinterpret_cast<__half2*>(big[k] + small + s) = hs;
      sum[k] += double(da) + double(db);
    }
  }
#pragma unroll
  for (int k = 0; k < COMPS; ++k) {
    for (int o = 16; o > 0; o /= 2) sum[k] += __shfl_xor_sync(0xffffffffu, sum[k], o);
    if (threadIdx.x % 32 == 0) part[threadIdx.x / 32][k] = sum[k];
  }
  if (__any_sync(0xffffffffu, bad) && threadIdx.x % 32 == 0 && !l.exact) *l.redo = 1;
  __syncthreads();
  if (threadIdx.x < COMPS) {
    double t = 0;
    for (int w = 0; w < kThreads / 32; ++w) t += part[w][threadIdx.x];
    atomicAdd(l.sums + c * COMPS + threadIdx.x, t);
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
// most 8192 samples; longer past kMaxSplits ranges), then the count whose whole waves of one CTA
// per SM, plus the partial sums written and read back, finish soonest (fewest ranges within 1 %).
// Costs measured on an H100 (session 12): a 128 x 128 tile's k-tile (64 samples, three f16
// products) ~1.2 us on one SM, partial sums at ~3 TB/s. 1024 lanes x 65536 samples: 11 ranges (3
// whole waves) against 8 (3 waves, the last a fifth full).
int h3_splits(int lanes, long long n, int sms) {
  constexpr double kTileSeconds = 1.2e-6, kBandwidth = 3e12;
  const long long rows = (lanes + 127) / 128, tiles = rows * (rows + 1) / 2;
  const long long k_tiles = (n + 63) / 64;
  // Past 256 * 8192 samples the ranges grow instead (the GEMM takes at most kMaxSplits).
  const long long least =
      std::clamp<long long>((k_tiles + kRangeTiles - 1) / kRangeTiles, 1, sm90::kMaxSplits);
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
  const dim3 grid(static_cast<unsigned>((l.n + kSpan - 1) / kSpan),
                  static_cast<unsigned>(l.lanes / l.comps));
  const unsigned channels = static_cast<unsigned>(l.lanes / l.comps);
  if (l.comps == 2) {
    if (l.exact)
      h3_peak<2><<<grid, kThreads, 0, stream>>>(l);
    else
      h3_pilot_peak<2><<<channels, kThreads, 0, stream>>>(l);
    KAFEL_CUDA_CHECK_LAUNCH("h3_peak");
    h3_split<2><<<grid, kThreads, 0, stream>>>(l);
  } else {
    if (l.exact)
      h3_peak<1><<<grid, kThreads, 0, stream>>>(l);
    else
      h3_pilot_peak<1><<<channels, kThreads, 0, stream>>>(l);
    KAFEL_CUDA_CHECK_LAUNCH("h3_peak");
    h3_split<1><<<grid, kThreads, 0, stream>>>(l);
  }
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
