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
// The f16 split's items take half a tf32 buffer: the one tile keeps three, launches of several
// tiles four (their off-diagonal tiles chain two items per accumulator).
template <bool MULTI>
constexpr int kF16Items = MULTI ? 4 : 3;
// The planes (1024-byte aligned, as the swizzle needs: two tf32 buffers, or kF16Items f16
// items), then the TMA ring (1024-byte aligned stages).
template <bool F16SPLIT, bool MULTI>
constexpr int kPlaneFloats = F16SPLIT ? kF16Items<MULTI>* kBuf / 2 : 2 * kBuf;
template <bool F16SPLIT, bool MULTI>
constexpr std::size_t kSharedBytes = (kPlaneFloats<F16SPLIT, MULTI> +
                                      kRing * 2 * kRawPanel<T>)*sizeof(float) +
                                     1024;

// A lane's f16 scale in shared memory: the float exponent field of its power of two, bit 8 set
// where it has none (then 1). 16 bits, where a float would not leave the four-item launches
// room.
__device__ __forceinline__ float lane_scale(std::uint16_t s) {
  return __uint_as_float((s & 0xffu) << 23);
}

// The f16 split of one chunk of one panel, 2T threads in 16-float runs (as split_chunk's):
// y = (x - pilot) * scale, a power of two per lane that puts the lane's first samples below
// 2^7, is exact; big = y to f16 and small = y - big to f16 carry 22 bits, as tf32's two parts
// do, at twice tf32's rate and half its shared-memory bytes. Planes of rows of 128 bytes (64
// halves), swizzled as the tf32 planes: on diagonal tiles an item's big rows hold 64 samples
// (two chunks, `at` = 0 or 32 the chunk's first), its small rows T * 128 bytes on; PACKED
// (off-diagonal tiles, one chunk an item) a row holds the chunk's 32 big halves, then its 32
// small ones, so that both panels of an item fit where a diagonal item's one does. SUMS: sums y
// (the host divides by the scale; diagonal tiles only). Keeps the largest |y|, which must stay
// below 2^15 for the scale to hold.
template <int T, int COMPS, bool TAIL, bool PACKED = false, bool SUMS = true>
__device__ __forceinline__ void split_chunk_f16(const float* raw, std::uint8_t* big,
                                                const float* pilots, const std::uint16_t* scales,
                                                int at, int valid, float (&lsum)[COMPS],
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
    const float sc = lane_scale(scales[lane]), shift = -pilots[lane] * sc;
    std::uint32_t hb[n / 2], hs[n / 2];
#pragma unroll
    for (int i = 0; i < n; i += 2) {
      float y0 = fmaf(v[i * COMPS + k], sc, shift), y1 = fmaf(v[(i + 1) * COMPS + k], sc, shift);
      if (TAIL) {
        y0 = s0 + i < valid ? y0 : 0.0f;
        y1 = s0 + i + 1 < valid ? y1 : 0.0f;
      }
      if (SUMS) lsum[k] += y0 + y1;
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
      std::uint8_t* row = big + lane * 128;
      std::uint8_t* d = row + ((piece ^ (lane % 8)) * 16);
      std::uint8_t* ds = PACKED ? row + (((piece + 4) ^ (lane % 8)) * 16) : d + T * 128;
      *reinterpret_cast<uint4*>(d) =
          make_uint4(hb[4 * j], hb[4 * j + 1], hb[4 * j + 2], hb[4 * j + 3]);
      *reinterpret_cast<uint4*>(ds) =
          make_uint4(hs[4 * j], hs[4 * j + 1], hs[4 * j + 2], hs[4 * j + 3]);
    }
  }
}

// Grid (tiles * splits, batches), 256 threads = two warpgroups, each 64 rows x 128 columns of a
// 128 x 128 lower tile (on diagonal tiles, 64 x 64 for the first).
// Per chunk: the split pass writes the next chunk's planes while the tensor cores multiply this
// one's (big*small + small*big + big*big per k step into a chunk-fresh accumulator, then a
// round-to-nearest float addition into the running sums: the tensor cores' own accumulation
// truncates) and the previous chunk's accumulator is folded; the TMA ring keeps two items in
// flight meanwhile, one thread starting an item's boxes where every thread's cp.async copies
// took ~100 instructions an item (H100, session 34: 64 cf32 x 1M 0.248-0.251 -> 0.221-0.223 ms;
// session 35, tf32: 0.387-0.391 -> 0.339-0.343).
// F16SPLIT (HerkLaunch::f16): split_chunk_f16's parts, a step is an item of two chunks of a
// diagonal tile (k16 wgmma over its 64 samples) instead of a chunk; the block raises l.redo (to
// l.epoch) where a lane's scale did not hold, and the host runs tf32 instead. Its planes take
// half the space, so it keeps three items' (MULTI: four) and one accumulator: one barrier per
// item, and 64 registers more for the split pass (H100, session 33: 64 cf32 x 1M 0.261-0.269
// -> 0.248-0.249 ms). MULTI (launches of several tiles): an off-diagonal tile's item is one
// chunk of both panels (PACKED planes), two of them chained per fold (H100, session 35, two
// calls: 256 f32 x 262,144 0.345 ms on cuda.herk_h3, 0.350 on the tf32 split -> 0.208-0.212).
template <int COMPS, bool F16SPLIT, bool MULTI = false>
__global__ void __launch_bounds__(kThreads, 1)
    cov_herk_wg(const HerkLaunch l, const __grid_constant__ CUtensorMap map) {
#if KAFEL_SM90A_DEVICE
  using namespace sm90;
  __shared__ alignas(8) std::uint64_t landed_bar[kRing];
  extern __shared__ std::uint8_t smem_raw[];
  float* planes =
      reinterpret_cast<float*>(smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023));
  float* ring = planes + kPlaneFloats<F16SPLIT, MULTI>;
  __shared__ float pilots[2 * T];
  __shared__ std::uint16_t scales[F16SPLIT ? 2 * T : 1];  // lane_scale's
  const Work w = work_of<T>(l);
  // The warpgroup index through a shuffle: the compiler then knows it is uniform per warp, and
  // a wgmma issued under a branch on it is not taken for a divergent one (which it serialises).
  const int wg = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 128, 0),
            warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
  // Diagonal tiles read one panel per chunk, so they fill half of a ring stage and of a plane
  // buffer: they take their chunks in pairs, the second in the other panel's place. Item i is
  // chunk i, or on a diagonal tile chunks 2i and 2i + 1 (the second zero past the range), and
  // chunk c is half c % 2 of item c / 2 there. The pipeline's steps: with the tf32 split
  // chunks; with the f16 split items (one k16 pass over a diagonal tile's two chunks), of which
  // an off-diagonal tile chains two into an accumulator (the last, past an odd count of chunks,
  // all zero). A fold is a chunk of tf32 products, two of f16 ones. (Both through a shuffle, as
  // `wg`: the compiler otherwise serialises every wgmma behind the pair loop.)
  const bool chained = __shfl_sync(0xffffffffu, F16SPLIT && MULTI && !w.diag ? 1 : 0, 0);
  const int steps = __shfl_sync(0xffffffffu,
                                !F16SPLIT ? w.chunks
                                : chained ? (w.chunks + 1) / 2 * 2
                                          : (w.chunks + 1) / 2,
                                0);
  // One thread starts an item's two boxes (rows x 32 COMPS floats; lanes past the last read as
  // zero) on its ring stage's barrier: chunks 2i and 2i + 1 of a diagonal tile's rows, chunk i
  // of both panels of another.
  auto issue = [&](int i) {
    float* raw = ring + (i % kRing) * 2 * kRawPanel<T>;
    const bool diag = (F16SPLIT && !MULTI) || w.diag;
    const int first = diag ? 2 * i : i;
    if (threadIdx.x == 0 && i < steps) {
      const int boxes = first >= w.chunks ? 0 : !diag || first + 1 < w.chunks ? 2 : 1;
      std::uint64_t* bar = &landed_bar[i % kRing];
      mbar_arrive_expect_tx(bar, boxes * kRawPanel<T> * sizeof(float));
      for (int h = 0; h < boxes; ++h) {
        const long long s = w.n0 + static_cast<long long>(diag ? first + h : first) * w.step;
        tma_load(raw + h * kRawPanel<T>, &map, bar, 0, static_cast<int>(s / kChunk * COMPS),
                 (h == 1 && !diag ? w.tj : w.ti) * (T / COMPS), w.b);
      }
    }
  };
  float lsum[COMPS], peak[COMPS], peak_b[COMPS];  // peak_b: an off-diagonal tile's column panel
#pragma unroll
  for (int k = 0; k < COMPS; ++k) lsum[k] = peak[k] = peak_b[k] = 0.0f;
  // Item i's planes: buffer i % 2; panel (or half) p's big plane at p * 2 * kPlane, its small
  // plane after. The f16 split's items take half a buffer, item i's at i % kF16Items.
  auto plane_buffer = [](int i) {
    return F16SPLIT ? (i % kF16Items<MULTI>)*(kBuf / 2) : (i % 2) * kBuf;
  };
  auto valid = [&](int c) { return c < w.chunks - 1 ? kChunk : c == w.chunks - 1 ? w.tail : 0; };
  auto split = [&](int i) {
    mbar_wait_in_asm(&landed_bar[i % kRing], (i / kRing) & 1);  // item i's samples have landed
    const float* raw = ring + (i % kRing) * 2 * kRawPanel<T>;
    float* dst = planes + plane_buffer(i);
    if constexpr (F16SPLIT) {
      auto* big = reinterpret_cast<std::uint8_t*>(dst);
      if (MULTI && !w.diag) {
        // Chunk i of both panels, each into T rows of 128 bytes (PACKED).
        auto panels = [&](auto tail) {
          constexpr bool kTail = decltype(tail)::value;
          split_chunk_f16<T, COMPS, kTail, true, false>(raw, big, pilots, scales, 0, valid(i), lsum,
                                                        peak);
          split_chunk_f16<T, COMPS, kTail, true, false>(
              raw + kRawPanel<T>, big + T * 128, pilots + T, scales + T, 0, valid(i), lsum, peak_b);
        };
        if (valid(i) < kChunk)
          panels(std::true_type{});
        else
          panels(std::false_type{});
        fence_proxy_async_smem();
        return;
      }
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
  // 64-column multiplies into the accumulator's first half (the second stays zero). `fresh`:
  // the first k step overwrites the accumulator (else adds to it: a chained item).
  auto multiply = [&](auto narrow, int c, float(&acc)[64], bool fresh = true) {
    const int i = F16SPLIT || !w.diag ? c : c / 2, h = !F16SPLIT && w.diag ? c % 2 : 0;
    if constexpr (F16SPLIT && MULTI) {
      if (!w.diag) {
        // One chunk of both panels: each row's big halves, then its small ones (PACKED).
        const std::uint32_t buf = smem_addr(planes + plane_buffer(i));
        const std::uint32_t a = buf + wg * 64 * 128, b = buf + T * 128;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kChunk / 16; ++kk) {
          const std::uint64_t ab = smem_desc(a + kk * 32, 16, 1024);
          const std::uint64_t as = smem_desc(a + 64 + kk * 32, 16, 1024);
          const std::uint64_t bb = smem_desc(b + kk * 32, 16, 1024);
          const std::uint64_t bs = smem_desc(b + 64 + kk * 32, 16, 1024);
          wgmma<0, 0>(F16{}, acc, as, bb, kk == 0 && fresh ? 0u : 1u);
          wgmma<0, 0>(F16{}, acc, ab, bs, 1u);
          wgmma<0, 0>(F16{}, acc, ab, bb, 1u);
        }
        wgmma_commit();
        return;
      }
    }
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
  const int per_flush = F16SPLIT ? (l.flush + 1) / 2 : l.flush;
  int unflushed = per_flush;  // folds to the next flush: a countdown, where c % per_flush took
                              // ~20 instructions a step
  bool flushed = false;       // since the range's start: later flushes add to the partials
  // The products of the steps to c (complete in `acc`) into the sums, flushed every per_flush
  // folds and after the last step.
  auto fold = [&](int c, float(&acc)[64]) {
    fence_registers(acc);
#pragma unroll
    for (int i = 0; i < 64; ++i) sum[i] += acc[i];
    if (--unflushed == 0 || c + 1 == steps) {
      unflushed = per_flush;
      const bool add = flushed;
      flushed = true;
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
        // kF16Items plane buffers: item i's was item i - 3's (or i - 4's), whose multiplies
        // every warpgroup had waited for before the last barrier (a chained pair's first item:
        // before the one ahead of it); so had item i - 1's split of the ring stage refilled
        // here. One barrier then completes item i's planes (each thread waits for an item's
        // samples itself, in split).
        issue(i - 1 + kRing);
        split(i);
        block_barrier();
        return;
      }
      block_barrier();
      issue(i - 1 + kRing);
      split(i);
      block_barrier();  // item i's planes are complete
    }
  };

  if (threadIdx.x == 0) {
    for (int i = 0; i < kRing; ++i) mbar_init(&landed_bar[i], 1);
    fence_barrier_init();
  }
#pragma unroll
  for (int c = 0; c < kRing; ++c) issue(c);
  if constexpr (F16SPLIT) {
    // Lane e's pilot and scale (e < T the row panel's, then the column panel's), from its
    // first samples (2^8 of headroom for later ones; none where they are all the pilot or not
    // finite). Range 0 of each diagonal tile stores its lanes' for the host's merge.
    for (int e = threadIdx.x; e < (MULTI ? 2 * T : T); e += blockDim.x) {
      const int lane = (e < T ? w.ti : w.tj) * T + e % T;
      float p = 0.0f, first = 0.0f, sc = -1.0f;  // (negative: none)
      if (lane < l.lanes && (e < T || !w.diag)) {
        p = row_pilot<COMPS>(l.x + w.b * l.bstep + lane / COMPS * l.cstep + lane % COMPS, l.n,
                             first);
        const float head = first * 256.0f;
        if (head > 0.0f && head < INFINITY) sc = h3_scale(__float_as_uint(head));
        if (w.diag && w.split == 0 && e < T) {
          l.pilot[w.b * l.lanes + lane] = p;
          l.scale[w.b * l.lanes + lane] = fabsf(sc);
        }
      }
      pilots[e] = p;
      scales[e] = static_cast<std::uint16_t>(sc > 0.0f ? __float_as_uint(sc) >> 23 : 0x17fu);
    }
  } else {
    lane_pilots<T, COMPS>(l, w, pilots);
  }
  __syncthreads();  // the pilots and barriers
  split(0);
  __syncthreads();
  // Chunk c's multiplies are queued while chunk c - 1's accumulator is folded. The loop takes
  // chunks in pairs with one group in flight at its top and bottom (acc0's): the compiler then
  // sees which accumulator each wait frees, where a conditional step would make it serialise
  // every multiply. Diagonal tiles' first warpgroup runs its own copy (64-column multiplies), so
  // the barriers in prepare() are reached from two places: hence barrier.sync without .aligned.
  auto pipeline = [&](auto narrow) {
    if constexpr (F16SPLIT) {
      // One accumulator: item c's multiplies run while item c + 1 is split, then fold (chained:
      // two items' multiplies, then one wait and one fold).
      if constexpr (MULTI && !decltype(narrow)::value) {
        if (chained) {
          for (int c = 0; c < steps; c += 2) {
            multiply(narrow, c, acc0, true);
            prepare(c);
            multiply(narrow, c + 1, acc0, false);
            prepare(c + 1);
            wgmma_wait<0>();
            fold(c + 1, acc0);
          }
          return;
        }
      }
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
      bad |= !(peak[k] < 32768.0f) || ((scales[e] >> 8) && peak[k] > 0.0f);
      if (MULTI && !w.diag)
        bad |= !(peak_b[k] < 32768.0f) || ((scales[T + e] >> 8) && peak_b[k] > 0.0f);
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

// The tf32 split's (the larger: f16 launches fall back to it).
std::size_t herk_wg_shared_bytes() {
  return kSharedBytes<false, false> + 2 * T * sizeof(float);
}

int herk_wg_resident_blocks(int ordinal, int comps) {
  return comps == 2
             ? resident_blocks(cov_herk_wg<2, false>, kThreads, kSharedBytes<false, false>, ordinal)
             : resident_blocks(cov_herk_wg<1, false>, kThreads, kSharedBytes<false, false>,
                               ordinal);
}

void launch_herk_wg(const HerkLaunch& l, cudaStream_t stream) {
  const bool multi = l.tiles > 1;
  const WgKernel k = !l.f16 ? (l.comps == 2 ? cov_herk_wg<2, false> : cov_herk_wg<1, false>)
                     : multi
                         ? (l.comps == 2 ? cov_herk_wg<2, true, true> : cov_herk_wg<1, true, true>)
                         : (l.comps == 2 ? cov_herk_wg<2, true> : cov_herk_wg<1, true>);
  const std::size_t bytes = !l.f16  ? kSharedBytes<false, false>
                            : multi ? kSharedBytes<true, true>
                                    : kSharedBytes<true, false>;
  launch_kernel(k, kThreads, bytes, l, stream, l.f16 ? "cov_herk_wg f16" : "cov_herk_wg",
                raw_map(l, T));
}

}  // namespace kafel::cuda
