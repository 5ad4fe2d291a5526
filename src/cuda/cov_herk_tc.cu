// Covariance rung cuda.herk_tc: cuda.herk's lower-tile SYRK/HERK on tensor cores, every product
// as three tf32 mma.sync (small*big + big*small + big*big: float accuracy), sm_80 and later.
#include <cstdint>

#include "cuda/cov_herk.hpp"
#include "cuda/mma.cuh"
#include "cuda/runtime.hpp"

namespace kafel::cuda {

namespace {

constexpr int kTile = kHerkTile, kChunk = kHerkTcChunk, kThreads = 128, kStages = 4;
constexpr int kSteps = kChunk / 8;  // m16n8k8 steps per chunk
// A panel is kTile / COMPS channel rows of kChunk samples (COMPS floats each) plus 4 / 8 floats
// of padding: fragment loads (lane g, column t) then hit all 32 banks, real or complex.
template <int COMPS>
constexpr int kRow = kChunk* COMPS + 4 * COMPS;
constexpr int kPanel = kTile * (kChunk + 4);  // floats, the same for both
constexpr int kStage = 2 * kPanel;
constexpr std::size_t kSharedBytes = std::size_t(kStages) * kStage * sizeof(float);

// v = big + small with both parts tf32: the products the mma.sync drops (small*small) are
// 2^-22 of the value, below float's own rounding of the sums.
__device__ __forceinline__ void split_tf32(float v, std::uint32_t& big, std::uint32_t& small) {
  big = tc::to_tf32(__float_as_uint(v));
  small = tc::to_tf32(__float_as_uint(v - __uint_as_float(big)));
}

__device__ __forceinline__ void cp_async16(float* dst, const float* src, bool fill) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(tc::smem_addr(dst)),
               "l"(src), "r"(fill ? 16 : 0));
}
__device__ __forceinline__ void cp_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int N>
__device__ __forceinline__ void cp_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// Copies chunk c of the panel whose first channel is `ch0` (16-byte pieces, channels past the
// last zero-filled) into S.
template <int COMPS>
__device__ __forceinline__ void copy_panel(const HerkLaunch& l, const float* xb, int ch0,
                                           long long s0, float* S) {
  constexpr int pieces = kChunk * COMPS / 4;  // per channel row
  constexpr int per_thread = kTile / COMPS * pieces / kThreads;
#pragma unroll
  for (int u = 0; u < per_thread; ++u) {
    const int e = threadIdx.x + u * kThreads, row = e / pieces, piece = e % pieces;
    const bool in = (ch0 + row) * COMPS < l.lanes;
    const float* src = xb + (in ? (ch0 + row) * l.cstep : 0) + s0 * COMPS + piece * 4;
    cp_async16(S + row * kRow<COMPS> + piece * 4, src, in);
  }
}

// Adds the float sums to the block's partial (the first flush writes it) and zeroes them.
__device__ __forceinline__ void flush(double* out, bool first, bool sums_lanes,
                                      float (&sum)[2][4][4], float (&lsum)[2]) {
  const int lid = threadIdx.x, warp = lid / 32, g = (lid % 32) / 4, t = lid % 4;
  if (sums_lanes) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      double& o = out[kTile * kTile + lid % 32 + 32 * h];
      o = (first ? 0.0 : o) + static_cast<double>(lsum[h]);
      lsum[h] = 0.0f;
    }
    return;
  }
  const int wm = warp / 2, wn = warp % 2;
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = wm * 32 + i * 16 + g + (e / 2) * 8, col = wn * 32 + j * 8 + 2 * t + e % 2;
        double& o = out[row * kTile + col];
        o = (first ? 0.0 : o) + static_cast<double>(sum[i][j][e]);
        sum[i][j][e] = 0.0f;
      }
}

// Grid (tiles * splits, batches), 128 threads: four warps of 32x32 lanes. Samples arrive planar
// with rows padded to whole chunks (the plan lays them out so), through a kStages-deep ring of
// cp.async copies. On diagonal tiles the upper warp (rows 0-31, columns 32-63) has nothing to
// multiply and sums the lanes instead.
template <int COMPS>
__global__ void __launch_bounds__(kThreads, 3) cov_herk_tc(const HerkLaunch l) {
  extern __shared__ __align__(16) float smem[];
  __shared__ float Pa[kTile], Pb[kTile];
  constexpr int R = kRow<COMPS>;
  const int lid = threadIdx.x, warp = lid / 32, g = (lid % 32) / 4, t = lid % 4;
  const int tile = static_cast<int>(blockIdx.x % l.tiles);
  const int split = static_cast<int>(blockIdx.x / l.tiles), b = static_cast<int>(blockIdx.y);
  int ti, tj;
  herk_tile_of(tile, ti, tj);
  const bool diag = ti == tj;
  const bool sums_lanes = diag && warp == 1;
  const int wm = warp / 2, wn = warp % 2;

  const long long n0 = split * l.range;
  const long long n1 = n0 + l.range < l.n ? n0 + l.range : l.n;
  const int chunks = static_cast<int>((n1 - n0 + kChunk - 1) / kChunk);
  const int tail = static_cast<int>(n1 - n0 - static_cast<long long>(chunks - 1) * kChunk);
  const float* pilot = l.pilot + static_cast<long long>(b) * l.lanes;
  if (lid < kTile) {
    const int la = ti * kTile + lid, lb = tj * kTile + lid;
    Pa[lid] = la < l.lanes ? pilot[la] : 0.0f;
    Pb[lid] = lb < l.lanes ? pilot[lb] : 0.0f;
  }
  const float* xb = l.x + b * l.bstep;
  const int cha = ti * kTile / COMPS, chb = tj * kTile / COMPS;
  auto issue = [&](int c) {
    if (c < chunks) {
      float* S = smem + (c % kStages) * kStage;
      const long long s = n0 + static_cast<long long>(c) * kChunk;
      copy_panel<COMPS>(l, xb, cha, s, S);
      if (!diag) copy_panel<COMPS>(l, xb, chb, s, S + kPanel);
    }
    cp_commit();
  };
#pragma unroll
  for (int c = 0; c < kStages - 1; ++c) issue(c);
  __syncthreads();  // the pilots

  // This thread's fragment rows (lanes) as offsets into a panel, and their pilots.
  auto lane_at = [](int r) { return (r / COMPS) * R + r % COMPS; };
  int offa[2][2], offb[4];
  float pa[2][2], pb[4];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = wm * 32 + i * 16 + g + 8 * h;
      offa[i][h] = lane_at(r);
      pa[i][h] = Pa[r];
    }
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int r = wn * 32 + j * 8 + g;
    offb[j] = lane_at(r);
    pb[j] = (diag ? Pa : Pb)[r];
  }

  float acc[2][4][4], sum[2][4][4];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = sum[i][j][e] = 0.0f;
  float lsum[2] = {0.0f, 0.0f};
  double* out =
      l.partial + (static_cast<long long>(b * l.tiles + tile) * l.splits + split) * kHerkPartial;

  for (int c = 0; c < chunks; ++c) {
    cp_wait<kStages - 2>();
    __syncthreads();  // chunk c has landed for every thread; chunk c-1's stage is free
    float* As = smem + (c % kStages) * kStage;
    float* Bs = diag ? As : As + kPanel;
    if (c == chunks - 1 && tail < kChunk) {
      // Samples past the range read as the lane's pilot: they then add exactly nothing.
      for (int e = lid; e < kTile * (kChunk - tail); e += kThreads) {
        const int r = e % kTile, s = tail + e / kTile;
        As[lane_at(r) + s * COMPS] = Pa[r];
        if (!diag) Bs[lane_at(r) + s * COMPS] = Pb[r];
      }
      __syncthreads();
    }
    issue(c + kStages - 1);
    if (sums_lanes) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = lid % 32 + 32 * h;
        const float* row = As + lane_at(r);
        const float p = Pa[r];
        float s = 0.0f;
#pragma unroll 8
        for (int k = 0; k < kChunk; ++k) s += row[k * COMPS] - p;
        lsum[h] += s;
      }
    } else {
#pragma unroll
      for (int k = 0; k < kSteps; ++k) {
        const int col = (k * 8 + t) * COMPS;
        std::uint32_t ab[2][4], as[2][4], bb[4][2], bs[4][2];
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          split_tf32(As[offa[i][0] + col] - pa[i][0], ab[i][0], as[i][0]);
          split_tf32(As[offa[i][1] + col] - pa[i][1], ab[i][1], as[i][1]);
          split_tf32(As[offa[i][0] + col + 4 * COMPS] - pa[i][0], ab[i][2], as[i][2]);
          split_tf32(As[offa[i][1] + col + 4 * COMPS] - pa[i][1], ab[i][3], as[i][3]);
        }
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          split_tf32(Bs[offb[j] + col] - pb[j], bb[j][0], bs[j][0]);
          split_tf32(Bs[offb[j] + col + 4 * COMPS] - pb[j], bb[j][1], bs[j][1]);
        }
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            tc::mma_tf32(acc[i][j], as[i], bb[j]);
            tc::mma_tf32(acc[i][j], ab[i], bs[j]);
            tc::mma_tf32(acc[i][j], ab[i], bb[j]);
          }
      }
      // The tensor cores add into their float accumulator rounding toward zero, a bias of about
      // 2^-25 per accumulation (measured: 4.7e-6 relative after 16 chunks); one chunk's 12, then
      // a round-to-nearest float addition, keeps it near 3e-7.
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            sum[i][j][e] += acc[i][j][e];
            acc[i][j][e] = 0.0f;
          }
    }
    if ((c + 1) % l.flush == 0 || c + 1 == chunks) flush(out, c < l.flush, sums_lanes, sum, lsum);
  }
  cp_wait<0>();
}

template <int COMPS>
void launch(const HerkLaunch& l, cudaStream_t stream) {
  // Per launch: the attribute belongs to the current device's context.
  KAFEL_CUDA_CHECK(cudaFuncSetAttribute(cov_herk_tc<COMPS>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(kSharedBytes)));
  const dim3 grid(static_cast<unsigned>(l.tiles) * static_cast<unsigned>(l.splits),
                  static_cast<unsigned>(l.batches));
  cov_herk_tc<COMPS><<<grid, kThreads, kSharedBytes, stream>>>(l);
  KAFEL_CUDA_CHECK_LAUNCH("cov_herk_tc");
}

}  // namespace

std::size_t herk_tc_shared_bytes() {
  return kSharedBytes + 2 * kTile * sizeof(float);
}

void launch_herk_tc(const HerkLaunch& l, cudaStream_t stream) {
  if (l.comps == 2)
    launch<2>(l, stream);
  else
    launch<1>(l, stream);
}

}  // namespace kafel::cuda
