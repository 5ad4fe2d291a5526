// Covariance rung cuda.herk_tc's one 64-lane tile on wgmma (sm_90a): each warpgroup keeps its
// samples' tf32 big parts in registers as wgmma's A and multiplies them by big/2 and small in B.
#include <cstdint>
#include <type_traits>

#include "cuda/cov_herk.hpp"
#include "cuda/cov_herk_tc.cuh"
#include "cuda/runtime.hpp"
#include "cuda/sm90a_ptx.cuh"

namespace kafel::cuda {
namespace {

using namespace herk_tc;

constexpr int T = 64, kThreads = 128, kBlocksPerSm = 3;
constexpr int kPlane = T * kChunk;  // floats: 64 lane rows of 128 bytes
constexpr int kBuf = 2 * kPlane;    // one chunk's B planes: big / 2, then small
// The samples arrive through a TMA ring of kStages chunks (rows past the last lane read as zero;
// each thread's cp.async copies, their addresses kept, ran 48 f32 x 1M in 0.108-0.110 ms against
// TMA's 0.098-0.099, 64 f32 and 32 cf32 the same: H100, session 34). Straight into registers (one
// chunk ahead, L2 prefetches four ahead; a second register chunk spilled at the 168 registers three
// blocks allow) ran 64 f32 x 1M in 0.150-0.157 ms against the ring's 0.137-0.141, 32 cf32
// 0.143-0.146 against 0.146-0.151 (H200, session 25).
constexpr int kStages = 4;
constexpr int kStage = kRawPanel<T>;  // floats: one chunk of 64 lanes (32 complex channels)
// Two chunks' planes (1024-byte aligned, as the swizzle needs), then the ring.
constexpr std::size_t kSharedBytes = (2 * kBuf + kStages * kStage) * sizeof(float) + 1024;

// Where a thread's samples sit. Thread (warp w, lane: g = lane / 4, t = lane % 4) owns the
// register fragment rows r0 = 16w + g and r1 = r0 + 8 of A and, of every 32-sample chunk, the
// samples 8t .. 8t + 7 of both rows: two 32-byte runs (f32 lanes r0, r1) or one 64-byte run
// (cf32: channel 8w + g, whose real part is row r0 and imaginary part row r1). The product
// does not care in which order samples meet along k, as long as A and B agree: sample
// 8t + 2kk + j of a row is k position 8kk + t + 4j, which is where wgmma's fragment (a0..a3 =
// rows r0, r1 at k t, then at k t + 4) and the B plane put it.
template <int COMPS>
__device__ __forceinline__ int lane_of(int row) {
  if constexpr (COMPS == 1) return row;
  return 2 * (8 * (row / 16) + row % 8) + (row / 8) % 2;
}

// The plane float where row r's sample 8t + 2kk + j goes: k position 8kk + t + 4j in the
// 128-byte swizzled K-major layout (16-byte piece p of row r at p ^ (r % 8)). For one (kk, j)
// the 32 lanes of a warp hit 32 distinct banks.
__device__ __forceinline__ int plane_slot(int r, int t, int kk, int j) {
  return r * kChunk + (((2 * kk + j) ^ (r % 8)) * 4) + t;
}

// Grid (splits, batches) of one diagonal tile, 128 threads: one warpgroup sums the square
// F = big * (big / 2 + small)^T of its sample range, whose F + F^T (the host merge) is
// big big^T + big small^T + small big^T: float accuracy in two tf32 products per k step.
// Per chunk: chunk c + 3 is requested into the ring, chunk c is split (pilots subtracted) into
// A registers and B planes while chunk c - 1's products run, then chunk c - 1's accumulator,
// complete, is added in float to the sums (the tensor cores' own accumulation truncates) and
// chunk c's wgmmas are issued; one barrier per chunk. Every l.flush chunks the sums go to the
// float64 partial (herk_tc_halves' layout: F in lane order, then the lane sums).
template <int COMPS>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    cov_herk_wg64(const HerkLaunch l, const __grid_constant__ CUtensorMap map) {
#if KAFEL_SM90A_DEVICE
  using namespace sm90;
  __shared__ alignas(8) std::uint64_t landed_bar[kStages];
  extern __shared__ std::uint8_t smem_raw[];
  float* planes =
      reinterpret_cast<float*>(smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023));
  __shared__ float pilots[2 * T];
  const Work w = work_of<T>(l);
  const int warp = threadIdx.x / 32, g = (threadIdx.x % 32) / 4, t = threadIdx.x % 4;
  const int r0 = 16 * warp + g, r1 = r0 + 8;
  float* ring = planes + 2 * kBuf;
  // Chunk c's box (64 lanes' rows of 32 COMPS floats; rows past the last lane read as zero)
  // into its ring slot, started by one thread.
  auto fetch = [&](int c) {
    if (threadIdx.x == 0 && c < w.chunks) {
      std::uint64_t* bar = &landed_bar[c % kStages];
      mbar_arrive_expect_tx(bar, kStage * sizeof(float));
      const long long s = w.n0 + static_cast<long long>(c) * w.step;
      tma_load(ring + (c % kStages) * kStage, &map, bar, 0, static_cast<int>(s / kChunk * COMPS), 0,
               w.b);
    }
  };
  if (threadIdx.x == 0) {
    for (int i = 0; i < kStages; ++i) mbar_init(&landed_bar[i], 1);
    fence_barrier_init();
  }
#pragma unroll
  for (int c = 0; c < kStages - 1; ++c) fetch(c);
  lane_pilots<T, COMPS>(l, w, pilots);
  __syncthreads();  // the pilots are there
  const float p0 = pilots[lane_of<COMPS>(r0)], p1 = pilots[lane_of<COMPS>(r1)];
  // The thread's 16 floats of chunk c from its ring slot, once landed (tma_piece's layout:
  // the 8 threads of each quarter warp read distinct banks): f32 rows r0 then r1 (8 samples
  // each), cf32 8 interleaved samples.
  auto read_ring = [&](int c, float4(&v)[4]) {
    mbar_wait_in_asm(&landed_bar[c % kStages], (c / kStages) & 1);
    const float* S = ring + (c % kStages) * kStage;
    if constexpr (COMPS == 1) {
      v[0] = *reinterpret_cast<const float4*>(S + r0 * kChunk + tma_piece<1>(r0, 2 * t));
      v[1] = *reinterpret_cast<const float4*>(S + r0 * kChunk + tma_piece<1>(r0, 2 * t + 1));
      v[2] = *reinterpret_cast<const float4*>(S + r1 * kChunk + tma_piece<1>(r1, 2 * t));
      v[3] = *reinterpret_cast<const float4*>(S + r1 * kChunk + tma_piece<1>(r1, 2 * t + 1));
    } else {
      const int ch = 8 * warp + g;
#pragma unroll
      for (int q = 0; q < 4; ++q)
        v[q] = *reinterpret_cast<const float4*>(S + ch * 2 * kChunk + tma_piece<2>(ch, 4 * t + q));
    }
  };

  float acc[32], sum[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) acc[i] = sum[i] = 0.0f;
  float lsum0 = 0.0f, lsum1 = 0.0f;
  double* out = l.partial + w.part * herk_partial(T);

  // Chunk c's samples `v`: A fragments (big, 4 per k step) into `a`, big / 2 and small into
  // plane buffer c % 2, the lane sums. Samples at or past the range's end add nothing.
  // PARITY (c % 2) and TAIL (c is the range's last chunk) are constants: the plane offsets
  // fold into the stores and a whole chunk's samples need no test.
  auto split = [&](auto parity, auto tail, int c, const float4(&v)[4], std::uint32_t(&a)[4][4]) {
    constexpr bool kTail = decltype(tail)::value;
    const int valid = kTail ? w.tail : kChunk;
    float* half = planes + decltype(parity)::value * kBuf;
    float* small = half + kPlane;
    float x0[8], x1[8];  // rows r0, r1: samples 8t .. 8t + 7
    if constexpr (COMPS == 1) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        x0[4 * h] = v[h].x, x0[4 * h + 1] = v[h].y, x0[4 * h + 2] = v[h].z;
        x0[4 * h + 3] = v[h].w;
        x1[4 * h] = v[2 + h].x, x1[4 * h + 1] = v[2 + h].y, x1[4 * h + 2] = v[2 + h].z;
        x1[4 * h + 3] = v[2 + h].w;
      }
    } else {
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        x0[2 * q] = v[q].x, x1[2 * q] = v[q].y;
        x0[2 * q + 1] = v[q].z, x1[2 * q + 1] = v[q].w;
      }
    }
#pragma unroll
    for (int s = 0; s < 8; ++s) {
      const bool ok = !kTail || 8 * t + s < valid;
      // Lanes past the last are zero-filled and their pilots zero: they stay zero.
      const float d0 = ok ? x0[s] - p0 : 0.0f, d1 = ok ? x1[s] - p1 : 0.0f;
      lsum0 += d0;
      lsum1 += d1;
      float b0, s0, b1, s1;
      split_tf32(d0, b0, s0);
      split_tf32(d1, b1, s1);
      const int kk = s / 2, j = s % 2;
      a[kk][2 * j] = __float_as_uint(b0);  // a0 / a2: row r0 at k t / t + 4
      a[kk][2 * j + 1] = __float_as_uint(b1);
      half[plane_slot(r0, t, kk, j)] = 0.5f * b0;  // exact: big has 11 significant bits
      half[plane_slot(r1, t, kk, j)] = 0.5f * b1;
      small[plane_slot(r0, t, kk, j)] = s0;
      small[plane_slot(r1, t, kk, j)] = s1;
    }
    fence_proxy_async_smem();  // written by this thread, read by wgmma (the async proxy)
  };
  // The planes' descriptors: one built, the others a constant past it (the address field is
  // in 16-byte units and the planes end far below its 256 KB; rebuilt for each wgmma, each
  // took an address add, a mask, a shift and the fields' OR).
  const std::uint64_t desc0 = smem_desc(smem_addr(planes), 16, 1024);
  auto multiply = [&](auto parity, const std::uint32_t(&a)[4][4]) {
    constexpr std::uint64_t half = decltype(parity)::value * kBuf * sizeof(float) / 16,
                            small = half + kPlane * sizeof(float) / 16;
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kChunk / 8; ++kk) {
      wgmma_rs(Tf32{}, acc, a[kk], desc0 + half + 2 * kk, kk == 0 ? 0u : 1u);
      wgmma_rs(Tf32{}, acc, a[kk], desc0 + small + 2 * kk, 1u);
    }
    wgmma_commit();
  };
  // Chunk c's products (complete in acc) into the sums; every l.flush chunks into the partial
  // (counted down: a remainder by the runtime l.flush took a multiply-high and more per chunk).
  int to_flush = l.flush;
  auto fold = [&](int c) {
    fence_registers(acc);
#pragma unroll
    for (int i = 0; i < 32; ++i) sum[i] += acc[i];
    if (--to_flush == 0 || c + 1 == w.chunks) {
      to_flush = l.flush;
      const bool add = c + 1 > l.flush;  // not the range's first flush
      // Register 4i + 2h + e: row r0 + 8h, column 8i + 2t + e, whose lane is 2t + (8i + e)
      // (f32) or 4t + (16 (i / 2) + 2e + i % 2) (cf32): a constant past the row's base.
      double* base[2];
#pragma unroll
      for (int h = 0; h < 2; ++h)
        base[h] = out + lane_of<COMPS>(r0 + 8 * h) * T + (COMPS == 1 ? 2 : 4) * t;
      for_each_index<32>([&](auto index) {
        constexpr int k = decltype(index)::value, i = k / 4, h = k / 2 % 2, e = k % 2;
        put_partial_at<COMPS == 1 ? 8 * i + e : 16 * (i / 2) + 2 * e + i % 2>(base[h], sum[k], add);
        sum[k] = 0.0f;
      });
      float s0 = lsum0, s1 = lsum1;
#pragma unroll
      for (int m = 1; m < 4; m *= 2) {
        s0 += __shfl_xor_sync(0xffffffffu, s0, m);
        s1 += __shfl_xor_sync(0xffffffffu, s1, m);
      }
      if (t == 0) {
        put_partial(out + T * T + lane_of<COMPS>(r0), s0, add);
        put_partial(out + T * T + lane_of<COMPS>(r1), s1, add);
      }
      lsum0 = lsum1 = 0.0f;
    }
  };

  // Two register sets of A, alternating by chunk: chunk c - 1's are read by its wgmmas while
  // chunk c's are made.
  std::uint32_t a0[4][4], a1[4][4];
  auto step = [&](auto parity, int c, std::uint32_t(&a)[4][4], std::uint32_t(&prev)[4][4]) {
    // Into the slot of chunk c - 1, which every thread read before the last barrier.
    fetch(c + kStages - 1);
    float4 v[4];
    read_ring(c, v);
    if (c == w.chunks - 1)
      split(parity, std::true_type{}, c, v, a);
    else
      split(parity, std::false_type{}, c, v, a);
    // The wait and the accumulator's reads in one branch: split over two, ptxas assumes a
    // path that reads it unwaited and serialises every wgmma (its warning C7514).
    if (c > 0) {
      wgmma_wait<0>();
      // Chunk c - 1's wgmmas read prev until here: its registers stay prev's, not chunk c's.
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
#pragma unroll
        for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(prev[kk][i])::"memory");
      fold(c - 1);
    }
    __syncthreads();  // chunk c's planes complete; chunk c - 1's wgmmas done in every warp
    multiply(parity, a);
  };
  using Even = std::integral_constant<int, 0>;
  using Odd = std::integral_constant<int, 1>;
  int c = 0;
  for (; c + 2 <= w.chunks; c += 2) {
    step(Even{}, c, a0, a1);
    step(Odd{}, c + 1, a1, a0);
  }
  if (c < w.chunks) step(Even{}, c, a0, a1);
  if (w.chunks > 0) {
    wgmma_wait<0>();
    fold(w.chunks - 1);
  }
#else
  (void)l;
  __trap();
#endif
}

}  // namespace

std::size_t herk_wg64_shared_bytes() {
  return kSharedBytes + 2 * T * sizeof(float);
}

int herk_wg64_resident_blocks(int ordinal, int comps) {
  return comps == 2 ? resident_blocks(cov_herk_wg64<2>, kThreads, kSharedBytes, ordinal)
                    : resident_blocks(cov_herk_wg64<1>, kThreads, kSharedBytes, ordinal);
}

void launch_herk_wg64(const HerkLaunch& l, cudaStream_t stream) {
  launch_kernel(l.comps == 2 ? cov_herk_wg64<2> : cov_herk_wg64<1>, kThreads, kSharedBytes, l,
                stream, "cov_herk_wg64", raw_map(l, T));
}

}  // namespace kafel::cuda
