// Covariance rung cuda.herk_tc on 128-lane tiles (sm_90a): the split planes in wgmma's 128-byte
// swizzled layout, two warpgroups of 64 x 128 lanes, three tf32 (or scaled f16) wgmma per k step.
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "cuda/cov_herk.hpp"
#include "cuda/cov_herk_tc.cuh"
#include "cuda/runtime.hpp"
#include "cuda/sm90a_ptx.cuh"

namespace kafel::cuda {
namespace {

using namespace herk_tc;

constexpr int T = 128, kThreads = 2 * T, kRing = 3;
constexpr int kPlane = T * kChunk;  // floats: 128 lane rows of 128 bytes
constexpr int kBuf = 4 * kPlane;    // one chunk's planes: big and small of each panel
// The planes of two chunks (1024-byte aligned, as the swizzle needs), then the sample ring
// (cp.async's, or on the f16 tile TMA's: 1024-byte aligned stages).
constexpr std::size_t kSharedBytes = (2 * kBuf + kRing * 2 * kRawPanel<T>)*sizeof(float) + 1024;

// The f16 split of one chunk of a one-tile launch (every tile diagonal, 2T threads in 16-float
// runs, as split_chunk's): y = (x - pilot) * scale, a power of two per lane that puts the lane's
// first samples below 2^7, is exact; big = y to f16 and small = y - big to f16 carry 22 bits, as
// tf32's two parts do, at twice tf32's rate and half its shared-memory bytes. The item's planes
// hold 64 samples (two chunks, `at` = 0 or 32 the chunk's first) in rows of 128 bytes, the same
// swizzled rows as the tf32 planes. Sums y (the host divides by the scale) and keeps the
// largest |y|, which must stay below 2^15 for the scale to hold.
template <int T, int COMPS, bool TAIL>
__device__ __forceinline__ void split_chunk_f16(const float* raw, std::uint8_t* big,
                                                const float* pilots, const float* scales, int at,
                                                int valid, float (&lsum)[COMPS],
                                                float (&peak)[COMPS]) {
  constexpr int runs = kChunk * COMPS / 16, n = 16 / COMPS;
  const int r = threadIdx.x / runs, q = threadIdx.x % runs;
  const float* src = raw + r * kRawRow<COMPS>;
  float v[16];
#pragma unroll
  for (int u = 0; u < 4; ++u) {
    const float4 f = *reinterpret_cast<const float4*>(src + tma_piece<COMPS>(r, q * 4 + u));
    v[4 * u] = f.x, v[4 * u + 1] = f.y, v[4 * u + 2] = f.z, v[4 * u + 3] = f.w;
  }
  const int s0 = q * n;  // the chunk's first sample of these
#pragma unroll
  for (int k = 0; k < COMPS; ++k) {
    const int lane = r * COMPS + k;
    const float sc = fabsf(scales[lane]), shift = -pilots[lane] * sc;
    std::uint32_t hb[n / 2], hs[n / 2];
#pragma unroll
    for (int i = 0; i < n; i += 2) {
      float y0 = fmaf(v[i * COMPS + k], sc, shift), y1 = fmaf(v[(i + 1) * COMPS + k], sc, shift);
      if (TAIL) {
        y0 = s0 + i < valid ? y0 : 0.0f;
        y1 = s0 + i + 1 < valid ? y1 : 0.0f;
      }
      lsum[k] += y0 + y1;
      peak[k] = fmaxf(peak[k], fmaxf(fabsf(y0), fabsf(y1)));
      const __half2 b = __floats2half2_rn(y0, y1);
      const float2 back = __half22float2(b);
      const __half2 sm = __floats2half2_rn(y0 - back.x, y1 - back.y);
      hb[i / 2] = *reinterpret_cast<const std::uint32_t*>(&b);
      hs[i / 2] = *reinterpret_cast<const std::uint32_t*>(&sm);
    }
#pragma unroll
    for (int j = 0; j < n / 8; ++j) {
      const int piece = (at + s0) / 8 + j;
      std::uint8_t* d = big + lane * 128 + ((piece ^ (lane % 8)) * 16);
      *reinterpret_cast<uint4*>(d) =
          make_uint4(hb[4 * j], hb[4 * j + 1], hb[4 * j + 2], hb[4 * j + 3]);
      *reinterpret_cast<uint4*>(d + T * 128) =
          make_uint4(hs[4 * j], hs[4 * j + 1], hs[4 * j + 2], hs[4 * j + 3]);
    }
  }
}

// Grid (tiles * splits, batches), 256 threads = two warpgroups, each 64 rows x 128 columns of a
// 128 x 128 lower tile (on diagonal tiles, 64 x 64 for the first).
// Per chunk: the split pass writes the next chunk's planes while the tensor cores multiply this
// one's (big*small + small*big + big*big per k step into a chunk-fresh accumulator, then a
// round-to-nearest float addition into the running sums: the tensor cores' own accumulation
// truncates) and the previous chunk's accumulator is folded; the ring keeps two chunks in
// flight meanwhile.
// F16SPLIT (HerkLaunch::f16, one tile: every block diagonal): split_chunk_f16's parts, a step is an
// item of two chunks (k16 wgmma over its 64 samples) instead of a chunk; the block raises
// l.redo (to l.epoch) where a lane's scale did not hold, and the host runs tf32 instead. Its
// planes take half the space, so it keeps three items' and one accumulator: one barrier per
// item, and 64 registers more for the split pass (H100, session 33: 64 cf32 x 1M 0.261-0.269
// -> 0.248-0.249 ms, 128 f32 0.251-0.254 -> 0.236). Its samples come by TMA, one thread
// starting an item's boxes where every thread's cp.async copies took ~100 instructions an item
// (H100, session 34: 64 cf32 x 1M 0.248-0.251 -> 0.221-0.223 ms, 128 f32 0.238 -> 0.220).
template <int COMPS, bool F16SPLIT>
__global__ void __launch_bounds__(kThreads, 1)
    cov_herk_wg(const HerkLaunch l, const __grid_constant__ CUtensorMap map) {
#if KAFEL_SM90A_DEVICE
  using namespace sm90;
  constexpr bool TMA = F16SPLIT;  // the samples by TMA (`map`), not by each thread's cp.async
  __shared__ alignas(8) std::uint64_t landed_bar[kRing];
  extern __shared__ std::uint8_t smem_raw[];
  float* planes =
      reinterpret_cast<float*>(smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023));
  float* ring = planes + 2 * kBuf;
  __shared__ float pilots[2 * T];
  __shared__ float scales[F16SPLIT ? T : 1];  // each lane's scale, negative where it has none
  const Work w = work_of<T>(l);
  // The warpgroup index through a shuffle: the compiler then knows it is uniform per warp, and
  // a wgmma issued under a branch on it is not taken for a divergent one (which it serialises).
  const int wg = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 128, 0),
            warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
  // Diagonal tiles read one panel per chunk, so they fill half of a ring stage and of a plane
  // buffer: they take their chunks in pairs, the second in the other panel's place. Item i is
  // chunk i, or on a diagonal tile chunks 2i and 2i + 1 (the second zero past the range), and
  // chunk c is half c % 2 of item c / 2 there.
  auto issue = [&](int i) {
    float* raw = ring + (i % kRing) * 2 * kRawPanel<T>;
    if constexpr (TMA) {
      // One thread starts both chunks' boxes (rows x 32 COMPS floats); lanes past the last
      // read as zero.
      if (threadIdx.x == 0 && 2 * i < w.chunks) {
        const int boxes = 2 * i + 1 < w.chunks ? 2 : 1;
        std::uint64_t* bar = &landed_bar[i % kRing];
        mbar_arrive_expect_tx(bar, boxes * kRawPanel<T> * sizeof(float));
        for (int h = 0; h < boxes; ++h) {
          const long long s = w.n0 + static_cast<long long>(2 * i + h) * w.step;
          tma_load(raw + h * kRawPanel<T>, &map, bar, 0, static_cast<int>(s / kChunk * COMPS),
                   w.ti * (T / COMPS), w.b);
        }
      }
      return;
    }
    if (!w.diag) return fetch_chunk<T, COMPS>(l, w, i, raw);
    copy_chunk<T, COMPS>(l, w, 2 * i, raw);
    copy_chunk<T, COMPS>(l, w, 2 * i + 1, raw + kRawPanel<T>);
    cp_commit();
  };
  float lsum[COMPS], peak[COMPS];
#pragma unroll
  for (int k = 0; k < COMPS; ++k) lsum[k] = peak[k] = 0.0f;
  // Item i's planes: buffer i % 2; panel (or half) p's big plane at p * 2 * kPlane, its small
  // plane after. The f16 split's planes take half a buffer: three of them, item i's at i % 3.
  auto plane_buffer = [](int i) { return F16SPLIT ? (i % 3) * (kBuf / 2) : (i % 2) * kBuf; };
  auto valid = [&](int c) { return c < w.chunks - 1 ? kChunk : c == w.chunks - 1 ? w.tail : 0; };
  // Item i's raw samples visible to this thread (cp.async: after the wait and barrier before).
  auto land = [&](int i) {
    if constexpr (TMA) mbar_wait_in_asm(&landed_bar[i % kRing], (i / kRing) & 1);
  };
  auto split = [&](int i) {
    land(i);
    const float* raw = ring + (i % kRing) * 2 * kRawPanel<T>;
    float* dst = planes + plane_buffer(i);
    if constexpr (F16SPLIT) {
      auto* big = reinterpret_cast<std::uint8_t*>(dst);
      auto half = [&](int h) {
        const int v = valid(2 * i + h);
        const float* r = raw + h * kRawPanel<T>;
        if (v < kChunk)
          split_chunk_f16<T, COMPS, true>(r, big, pilots, scales, 32 * h, v, lsum, peak);
        else
          split_chunk_f16<T, COMPS, false>(r, big, pilots, scales, 32 * h, v, lsum, peak);
      };
      if (valid(2 * i + 1) == kChunk) {  // both chunks whole (all but a range's last item)
        split_chunk_f16<T, COMPS, false>(raw, big, pilots, scales, 0, kChunk, lsum, peak);
        split_chunk_f16<T, COMPS, false>(raw + kRawPanel<T>, big, pilots, scales, 32, kChunk, lsum,
                                         peak);
      } else {
#pragma unroll 1
        for (int h = 0; h < 2; ++h) half(h);
      }
    } else if (w.diag) {
#pragma unroll 1
      for (int h = 0; h < 2; ++h)
        split_tile_chunk<T, COMPS, true>(true, raw + h * kRawPanel<T>, dst + h * 2 * kPlane,
                                         2 * kPlane, kPlane, pilots, valid(2 * i + h), lsum);
    } else {
      split_tile_chunk<T, COMPS, true>(false, raw, dst, 2 * kPlane, kPlane, pilots, valid(i), lsum);
    }
    fence_proxy_async_smem();  // written by this thread, read by wgmma (the async proxy)
  };

  // Two accumulators, alternating by chunk: chunk c + 1's multiplies are queued while chunk c's
  // accumulator is folded into the sums, so the tensor cores are not drained at every chunk.
  // (The f16 split uses acc0 only: its products take half as long as the split pass beside.)
  float acc0[64], acc1[64], sum[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc0[i] = acc1[i] = sum[i] = 0.0f;
  double* out = l.partial + w.part * herk_partial(T);
  constexpr std::uint32_t kSmall = kPlane * sizeof(float);  // big plane -> small plane (bytes)
  // On diagonal tiles the first warpgroup's rows (0..63) need only columns 0..63: it issues
  // 64-column multiplies into the accumulator's first half (the second stays zero).
  auto multiply = [&](auto narrow, int c, float(&acc)[64]) {
    const int i = F16SPLIT || !w.diag ? c : c / 2, h = !F16SPLIT && w.diag ? c % 2 : 0;
    const std::uint32_t buf = smem_addr(planes + plane_buffer(i)) + h * 2 * kSmall;
    const std::uint32_t a = buf + wg * 64 * 128;  // this warpgroup's 64 rows of the row panel
    const std::uint32_t b = w.diag ? buf : buf + 2 * kSmall;
    float(&half)[32] = reinterpret_cast<float(&)[32]>(acc);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kChunk / 8; ++kk) {
      const std::uint64_t ab = smem_desc(a + kk * 32, 16, 1024);
      const std::uint64_t as = smem_desc(a + kSmall + kk * 32, 16, 1024);
      const std::uint64_t bb = smem_desc(b + kk * 32, 16, 1024);
      const std::uint64_t bs = smem_desc(b + kSmall + kk * 32, 16, 1024);
      if constexpr (F16SPLIT && decltype(narrow)::value) {
        wgmma<0, 0>(F16{}, half, as, bb, kk == 0 ? 0u : 1u);
        wgmma<0, 0>(F16{}, half, ab, bs, 1u);
        wgmma<0, 0>(F16{}, half, ab, bb, 1u);
      } else if constexpr (F16SPLIT) {
        wgmma<0, 0>(F16{}, acc, as, bb, kk == 0 ? 0u : 1u);
        wgmma<0, 0>(F16{}, acc, ab, bs, 1u);
        wgmma<0, 0>(F16{}, acc, ab, bb, 1u);
      } else if constexpr (decltype(narrow)::value) {
        wgmma(Tf32{}, half, as, bb, kk == 0 ? 0u : 1u);
        wgmma(Tf32{}, half, ab, bs, 1u);
        wgmma(Tf32{}, half, ab, bb, 1u);
      } else {
        wgmma(Tf32{}, acc, as, bb, kk == 0 ? 0u : 1u);
        wgmma(Tf32{}, acc, ab, bs, 1u);
        wgmma(Tf32{}, acc, ab, bb, 1u);
      }
    }
    wgmma_commit();
  };
  // The pipeline's steps: chunks, or with the f16 split items (two chunks, one k16 pass), of
  // which a flush takes half as many.
  const int steps = F16SPLIT ? (w.chunks + 1) / 2 : w.chunks,
            per_flush = F16SPLIT ? (l.flush + 1) / 2 : l.flush;
  int unflushed = per_flush;  // steps to the next flush: a countdown, where c % per_flush took
                              // ~20 instructions a step
  // Step c's products (complete in `acc`) into the sums, flushed every per_flush steps.
  auto fold = [&](int c, float(&acc)[64]) {
    fence_registers(acc);
#pragma unroll
    for (int i = 0; i < 64; ++i) sum[i] += acc[i];
    if (--unflushed == 0 || c + 1 == steps) {
      unflushed = per_flush;
      const bool add = c + 1 > per_flush;  // not the range's first flush
      // Register 4i + 2h + e: row 16 warp + lane / 4 + 8h, column 8i + 2 (lane % 4) + e.
#pragma unroll
      for (int i = 0; i < 16; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int row = wg * 64 + warp * 16 + lane / 4 + 8 * h,
                      col = 8 * i + 2 * (lane % 4) + e;
            float& s = sum[4 * i + 2 * h + e];
            if (!w.diag || col <= row) put_partial(out + row * T + col, s, add);
            s = 0.0f;
          }
      if (w.diag) flush_lanes<T, COMPS>(out, lsum, add);
    }
  };
  // Where step c + 1 starts an item: that item's planes from its raw samples, once they have
  // landed and every warpgroup is done with step c - 1's multiplies (the planes it overwrites
  // are those of the item before step c's).
  auto prepare = [&](int c) {
    if (c + 1 < steps && (F16SPLIT || !w.diag || c % 2 == 1)) {
      const int i = !F16SPLIT && w.diag ? (c + 1) / 2 : c + 1;  // the item step c + 1 starts
      if constexpr (F16SPLIT) {
        // Three plane buffers: item i's was item i - 3's, whose multiplies every warpgroup had
        // waited for before the last barrier; so had item i - 1's split of the ring stage
        // refilled here. One barrier then completes item i's planes (each thread waits for an
        // item's samples itself, in split).
        issue(i - 1 + kRing);
        split(i);
        block_barrier();
        return;
      }
      cp_wait<kRing - 2>();
      block_barrier();
      issue(i - 1 + kRing);
      split(i);
      block_barrier();  // item i's planes are complete
    }
  };

  if constexpr (TMA) {
    if (threadIdx.x == 0) {
      for (int i = 0; i < kRing; ++i) mbar_init(&landed_bar[i], 1);
      fence_barrier_init();
    }
  }
#pragma unroll
  for (int c = 0; c < kRing; ++c) issue(c);
  if constexpr (F16SPLIT) {
    // One tile: lane e's pilot and scale, from its first samples (2^8 of headroom for later
    // ones; none where they are all the pilot or not finite).
    for (int e = threadIdx.x; e < T; e += blockDim.x) {
      float p = 0.0f, first = 0.0f, sc = -1.0f;
      if (e < l.lanes) {
        p = row_pilot<COMPS>(l.x + w.b * l.bstep + e / COMPS * l.cstep + e % COMPS, l.n, first);
        const float head = first * 256.0f;
        if (head > 0.0f && head < INFINITY) sc = h3_scale(__float_as_uint(head));
        if (w.split == 0) {
          l.pilot[w.b * l.lanes + e] = p;
          l.scale[w.b * l.lanes + e] = fabsf(sc);
        }
      }
      pilots[e] = p;
      scales[e] = sc;
    }
  } else {
    lane_pilots<T, COMPS>(l, w, pilots);
  }
  if constexpr (!TMA) cp_wait<kRing - 1>();
  __syncthreads();  // chunk 0 (cp.async) and the pilots
  split(0);
  __syncthreads();
  // Chunk c's multiplies are queued while chunk c - 1's accumulator is folded. The loop takes
  // chunks in pairs with one group in flight at its top and bottom (acc0's): the compiler then
  // sees which accumulator each wait frees, where a conditional step would make it serialise
  // every multiply. Diagonal tiles' first warpgroup runs its own copy (64-column multiplies), so
  // the barriers in prepare() are reached from two places: hence barrier.sync without .aligned.
  auto pipeline = [&](auto narrow) {
    if constexpr (F16SPLIT) {
      // One accumulator: item c's multiplies run while item c + 1 is split, then fold.
      for (int c = 0; c < steps; ++c) {
        multiply(narrow, c, acc0);
        prepare(c);
        wgmma_wait<0>();
        fold(c, acc0);
      }
      return;
    }
    multiply(narrow, 0, acc0);
    prepare(0);
    int c = 1;
    for (; c + 1 < steps; c += 2) {
      multiply(narrow, c, acc1);
      wgmma_wait<1>();
      fold(c - 1, acc0);
      prepare(c);
      multiply(narrow, c + 1, acc0);
      wgmma_wait<1>();
      fold(c, acc1);
      prepare(c + 1);
    }
    if (c < steps) {
      multiply(narrow, c, acc1);
      wgmma_wait<1>();
      fold(c - 1, acc0);
      wgmma_wait<0>();
      fold(c, acc1);
    } else {
      wgmma_wait<0>();
      fold(c - 1, acc0);
    }
  };
  if (w.diag && wg == 0)
    pipeline(std::true_type{});
  else
    pipeline(std::false_type{});
  if constexpr (F16SPLIT) {
    // A scaled value at 2^15 or past (f16 ends at 65504), or one of a lane without a scale.
    bool bad = false;
#pragma unroll
    for (int k = 0; k < COMPS; ++k) {
      const int e = threadIdx.x / (kChunk * COMPS / 16) * COMPS + k;
      bad |= !(peak[k] < 32768.0f) || (scales[e] < 0.0f && peak[k] > 0.0f);
    }
    if (bad) *l.redo = l.epoch;
  }
#else
  (void)l;
  __trap();
#endif
}

using WgKernel = void (*)(HerkLaunch, CUtensorMap);

}  // namespace

std::size_t herk_wg_shared_bytes() {
  return kSharedBytes + 2 * T * sizeof(float);
}

int herk_wg_resident_blocks(int ordinal, int comps) {
  return comps == 2 ? resident_blocks(cov_herk_wg<2, false>, kThreads, kSharedBytes, ordinal)
                    : resident_blocks(cov_herk_wg<1, false>, kThreads, kSharedBytes, ordinal);
}

void launch_herk_wg(const HerkLaunch& l, cudaStream_t stream) {
  const WgKernel k = l.f16 ? (l.comps == 2 ? cov_herk_wg<2, true> : cov_herk_wg<1, true>)
                           : (l.comps == 2 ? cov_herk_wg<2, false> : cov_herk_wg<1, false>);
  CUtensorMap map{};  // read by the f16 tile only
  if (l.f16) map = raw_map(l, T);
  allow_shared(k, kSharedBytes);
  const dim3 grid(static_cast<unsigned>(l.blocks()), static_cast<unsigned>(l.batches));
  k<<<grid, kThreads, kSharedBytes, stream>>>(l, map);
  KAFEL_CUDA_CHECK_LAUNCH(l.f16 ? "cov_herk_wg f16" : "cov_herk_wg");
}

}  // namespace kafel::cuda
