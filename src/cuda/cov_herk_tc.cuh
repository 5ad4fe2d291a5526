// Device pieces shared by the tensor-core covariance kernels (cov_herk_tc.cu: mma.sync, 64-lane
// tiles; cov_herk_tc_sm90a.cu: wgmma, 128-lane tiles; cov_herk_tc64_sm90a.cu: one 64-lane tile on
// wgmma): the sample rings (cp.async, TMA), the split pass, the float64 flushes.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "core/cov_backend.hpp"
#include "cuda/cov_herk.hpp"
#include "cuda/mma.cuh"
#include "cuda/runtime.hpp"
#include "cuda/tensor_map.hpp"

namespace kafel::cuda::herk_tc {

constexpr int kChunk = kHerkTcChunk;
// A raw panel: the T / COMPS channel rows of one chunk, kChunk * COMPS floats each, 16-byte
// piece p of row r stored at p ^ (r % 8) by cp.async (raw_piece; TMA's swizzle: tma_piece), so
// that the split pass reads the same piece of 8 rows at once on distinct banks.
template <int COMPS>
constexpr int kRawRow = kChunk* COMPS;
template <int T>
constexpr int kRawPanel = T* kChunk;  // floats, real or complex
__device__ __forceinline__ int raw_piece(int r, int piece) {
  return (piece ^ (r % 8)) * 4;
}

// Where a TMA box (128-byte swizzled, a raw row of COMPS 128-byte segments) keeps raw row r's
// 16-byte piece `piece` (floats from the row's start): at piece ^ (g % 8) within segment g =
// r * COMPS + piece / 8. For real samples that is raw_piece's place; for complex ones another,
// as conflict-free for the split passes' reads (two rows of four runs per quarter warp).
template <int COMPS>
__device__ __forceinline__ int tma_piece(int r, int piece) {
  return ((piece & ~7) + ((piece & 7) ^ ((r * COMPS + piece / 8) & 7))) * 4;
}

__device__ __forceinline__ void cp_async16(std::uint32_t dst, const float* src, bool fill) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(fill ? 16 : 0));
}
__device__ __forceinline__ void cp_async16(float* dst, const float* src, bool fill) {
  cp_async16(tc::smem_addr(dst), src, fill);
}
__device__ __forceinline__ void cp_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
template <int N>
__device__ __forceinline__ void cp_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// Copies the chunk starting at sample s0 of the panel whose first channel is `ch0` (16-byte
// pieces, channels past the last zero-filled) into S; 2T threads.
template <int T, int COMPS>
__device__ __forceinline__ void copy_panel(const HerkLaunch& l, const float* xb, int ch0,
                                           long long s0, float* S) {
  constexpr int pieces = kChunk * COMPS / 4;  // per channel row
  constexpr int per_thread = T / COMPS * pieces / (2 * T);
#pragma unroll
  for (int u = 0; u < per_thread; ++u) {
    const int e = threadIdx.x + u * 2 * T, r = e / pieces, piece = e % pieces;
    const bool in = (ch0 + r) * COMPS < l.lanes;
    const float* src = xb + (in ? (ch0 + r) * l.cstep : 0) + s0 * COMPS + piece * 4;
    cp_async16(S + r * kRawRow<COMPS> + raw_piece(r, piece), src, in);
  }
}

// v = big + small: big is v rounded to tf32 (to nearest, ties away, by integer addition: 2
// instructions where cvt.rna takes 4), so small = v - big is exact and at most 2^-11 |v|; small
// is cut to tf32 (1 instruction; rounding it would take 4), which leaves at most 2^-21 |v| out,
// half that on average and of either sign, below float's own rounding of the sums. The products
// the three MMAs leave out (small*small) are 2^-22 of the value. On a NaN, big may be anything,
// but small is then NaN (as for an infinity: inf - inf) and stays NaN when cut: a non-finite
// sample still makes a non-finite result.
__device__ __forceinline__ void split_tf32(float v, float& big, float& small) {
  big = __uint_as_float((__float_as_uint(v) + 0x1000u) & 0xffffe000u);
  small = __uint_as_float(__float_as_uint(v - big) & 0xffffe000u);
}

// Where the split planes keep lane r's samples s0..s0+3 (floats from the plane's start).
// Padded: rows of kChunk + 4 floats (ldmatrix rows on distinct banks). Swizzled: rows of 128
// bytes, 16-byte piece p stored at p ^ (r % 8), the layout wgmma reads with 128-byte swizzling.
template <bool SWIZZLED>
__device__ __forceinline__ int plane_at(int r, int s0) {
  if constexpr (SWIZZLED) return r * kChunk + (((s0 / 4) ^ (r % 8)) * 4);
  return r * (kChunk + 4) + s0;
}

// The split pass, 2T threads: each takes a run of F raw floats of one channel row (the panels
// one after the other), subtracts the lanes' pilots, splits, and writes the lanes' samples into
// panel p's big plane (planes + p * panel_step) and small plane (+ small_step); samples at or
// past `valid` (TAIL: the range's last chunk) become zero, so they add nothing. On diagonal
// tiles (F = 16, one panel) it also sums the lanes, each of the row's runs a part (flush_lanes
// adds them). HALVES (herk_tc_halves launches): w = v - big / 2, split the same way, in place
// of small (its big part at + small_step, its small part at + 2 small_step). SWIZZLED (the wgmma
// tiles) also reads the raw rows in tma_piece's layout (TMA boxes), else raw_piece's (cp.async).
template <int T, int COMPS, int F, bool SWIZZLED, bool TAIL, bool HALVES = false>
__device__ __forceinline__ void split_chunk(const float* raw, float* planes, int panel_step,
                                            int small_step, const float* pilots, int valid,
                                            float (&lsum)[COMPS]) {
  constexpr int runs = kChunk * COMPS / F, rows = T / COMPS;
  constexpr bool sums = F == 16;
  const int e = threadIdx.x / runs, q = threadIdx.x % runs;
  const int panel = e / rows, r = e % rows;
  const float* src = raw + panel * kRawPanel<T> + r * kRawRow<COMPS>;
  float* big = planes + panel * panel_step;
  float p[COMPS];
#pragma unroll
  for (int k = 0; k < COMPS; ++k) p[k] = pilots[panel * T + r * COMPS + k];
    // 8 raw floats at a time: 8 / COMPS samples of each of the COMPS lanes.
#pragma unroll
  for (int u = 0; u < F / 8; ++u) {
    const int piece = (q * F + 8 * u) / 4;
    const float4 v0 = *reinterpret_cast<const float4*>(
        src + (SWIZZLED ? tma_piece<COMPS>(r, piece) : raw_piece(r, piece)));
    const float4 v1 = *reinterpret_cast<const float4*>(
        src + (SWIZZLED ? tma_piece<COMPS>(r, piece + 1) : raw_piece(r, piece + 1)));
    const float v[8] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w};
    const int s0 = (q * F + 8 * u) / COMPS;  // the first sample of these 8 floats
#pragma unroll
    for (int k = 0; k < COMPS; ++k) {
      constexpr int n = 8 / COMPS;
      float b[n], s[n], h[n], l[n];  // v's parts; w's (HALVES)
#pragma unroll
      for (int i = 0; i < n; ++i) {
        const float d = !TAIL || s0 + i < valid ? v[i * COMPS + k] - p[k] : 0.0f;
        if constexpr (sums) lsum[k] += d;
        split_tf32(d, b[i], s[i]);
        if constexpr (HALVES) split_tf32(d - 0.5f * b[i], h[i], l[i]);
      }
#pragma unroll
      for (int i = 0; i < n; i += 4) {
        const int at = plane_at<SWIZZLED>(r * COMPS + k, s0 + i);
        *reinterpret_cast<float4*>(big + at) = make_float4(b[i], b[i + 1], b[i + 2], b[i + 3]);
        if constexpr (HALVES) {
          *reinterpret_cast<float4*>(big + small_step + at) =
              make_float4(h[i], h[i + 1], h[i + 2], h[i + 3]);
          *reinterpret_cast<float4*>(big + 2 * small_step + at) =
              make_float4(l[i], l[i + 1], l[i + 2], l[i + 3]);
        } else {
          *reinterpret_cast<float4*>(big + small_step + at) =
              make_float4(s[i], s[i + 1], s[i + 2], s[i + 3]);
        }
      }
    }
  }
}

// split_chunk for one chunk of a tile: diagonal tiles split their one panel in 16-float runs
// and sum the lanes (HALVES: with the w planes), off-diagonal ones both panels in 32-float runs.
template <int T, int COMPS, bool SWIZZLED, bool HALVES = false>
__device__ __forceinline__ void split_tile_chunk(bool diag, const float* raw, float* planes,
                                                 int panel_step, int small_step,
                                                 const float* pilots, int valid,
                                                 float (&lsum)[COMPS]) {
  const bool tail = valid < kChunk;
  if (diag && tail)
    split_chunk<T, COMPS, 16, SWIZZLED, true, HALVES>(raw, planes, panel_step, small_step, pilots,
                                                      valid, lsum);
  else if (diag)
    split_chunk<T, COMPS, 16, SWIZZLED, false, HALVES>(raw, planes, panel_step, small_step, pilots,
                                                       valid, lsum);
  else if (tail)
    split_chunk<T, COMPS, 32, SWIZZLED, true>(raw, planes, panel_step, small_step, pilots, valid,
                                              lsum);
  else
    split_chunk<T, COMPS, 32, SWIZZLED, false>(raw, planes, panel_step, small_step, pilots, valid,
                                               lsum);
}

// Puts v into base[OFFSET], a partial: stored at the range's first flush (so that no launch
// before the kernel zeroes the partials: 13-17 MB at 64 lanes x 1M samples), added at the later
// ones. Each partial has one writer, whose atomic additions take effect in its program order:
// deterministic, and a reduction the thread does not wait for, where a read-modify-write would
// stall it on the read at every flush. The conversion sits inside the statement: left to the
// compiler, a flush's 64 conversions are hoisted ahead of the additions and need 128 more
// registers at once. The offset sits inside the instruction, so that a flush of many sums at
// constant distances needs no register for each address (the compiler otherwise builds them all
// ahead of the stores: at 168 registers a thread, 64 of them spilled; session 26).
template <int OFFSET>
__device__ __forceinline__ void put_partial_at(double* base, float v, bool add) {
  if (add)
    asm volatile(
        "{\n.reg .f64 d;\ncvt.f64.f32 d, %1;\nred.global.add.f64 [%0+%2], d;\n}" ::"l"(base),
        "f"(v), "n"(OFFSET * 8)
        : "memory");
  else
    asm volatile("{\n.reg .f64 d;\ncvt.f64.f32 d, %1;\nst.global.f64 [%0+%2], d;\n}" ::"l"(base),
                 "f"(v), "n"(OFFSET * 8)
                 : "memory");
}
__device__ __forceinline__ void put_partial(double* o, float v, bool add) {
  put_partial_at<0>(o, v, add);
}

// f(std::integral_constant<int, I>) for I = 0 .. N - 1, unrolled with I a constant.
template <class F, int... I>
__device__ __forceinline__ void for_each_index(F&& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}
template <int N, class F>
__device__ __forceinline__ void for_each_index(F&& f) {
  for_each_index(f, std::make_integer_sequence<int, N>{});
}

// The lane sums of a diagonal tile into the partial after its T x T sums: the row's runs
// (adjacent threads) add theirs, the first adds the total.
template <int T, int COMPS>
__device__ __forceinline__ void flush_lanes(double* out, float (&lsum)[COMPS], bool add) {
  constexpr int runs = kChunk * COMPS / 16;  // diagonal tiles: 16-float runs
  const int r = threadIdx.x / runs;
#pragma unroll
  for (int k = 0; k < COMPS; ++k) {
    float s = lsum[k];
#pragma unroll
    for (int m = 1; m < runs; m *= 2) s += __shfl_xor_sync(0xffffffffu, s, m);
    if (threadIdx.x % runs == 0) {
      put_partial(out + T * T + r * COMPS + k, s, add);
    }
    lsum[k] = 0.0f;
  }
}

// Block (x, batch)'s tile, sample range and partial; see HerkLaunch for the order of the blocks.
// The range's chunk c starts at sample n0 + c * step; its last (chunks - 1) holds `tail` samples.
struct Work {
  int tile, split, b, ti, tj, chunks, tail;
  long long n0, step, part;
  bool diag;
};
template <int T>
__device__ __forceinline__ Work work_of(const HerkLaunch& l) {
  Work w;
  const int off = l.tiles - l.rows, x = static_cast<int>(blockIdx.x);
  int ranges;
  if (x < off * l.splits) {
    herk_tile_of(x % off, w.ti, w.tj);  // the (x % off)-th tile below the diagonal
    ++w.ti;
    w.split = x / off;
    ranges = l.splits;
  } else {
    w.ti = w.tj = (x - off * l.splits) % l.rows;
    w.split = (x - off * l.splits) / l.rows;
    ranges = l.dsplits;
  }
  w.tile = w.ti * (w.ti + 1) / 2 + w.tj;
  w.b = static_cast<int>(blockIdx.y);
  w.diag = w.ti == w.tj;
  w.part = (static_cast<long long>(w.b) * l.tiles + w.tile) * l.pstride + w.split;
  // Chunks split, split + ranges, ...: every range has one (the host makes at most as many
  // ranges as chunks); the one holding the row's last chunk ends short.
  const long long all = (l.n + kChunk - 1) / kChunk, last = all - 1;
  w.n0 = static_cast<long long>(w.split) * kChunk;
  w.step = static_cast<long long>(ranges) * kChunk;
  w.chunks = static_cast<int>((all - w.split + ranges - 1) / ranges);
  w.tail = last % ranges == w.split ? static_cast<int>(l.n - last * kChunk) : kChunk;
  return w;
}

// The pilot of the lane whose samples are row[0], row[COMPS], ...: the float mean of its first
// min(n, kPilotSamples) samples summed in order, as the host's lane_pilot, so that every block
// that finds it gets the same value.
template <int COMPS>
__device__ __forceinline__ float row_pilot(const float* row, long long n) {
  float x[kPilotSamples];
#pragma unroll
  for (int i = 0; i < kPilotSamples; ++i) x[i] = i < n ? row[i * COMPS] : 0.0f;  // loads at once
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < kPilotSamples; ++i) s += x[i];  // adding 0 past n changes nothing
  return __fdiv_rn(s, static_cast<float>(n < kPilotSamples ? n : kPilotSamples));
}
// row_pilot, and the largest |x - pilot| over the same samples (from which the f16 split takes
// its lane scale; NaNs left out, an infinity gives an infinite or NaN pilot).
template <int COMPS>
__device__ __forceinline__ float row_pilot(const float* row, long long n, float& peak) {
  const float p = row_pilot<COMPS>(row, n);
  peak = 0.0f;
  for (int i = 0; i < kPilotSamples && i < n; ++i) peak = fmaxf(peak, fabsf(row[i * COMPS] - p));
  return p;
}

// The pilots of a block's tile into shared `pilots` (row tile's T, then column tile's T; 0 past
// the last lane), found by the block itself where a launch of their own before the kernel took
// ~5 us (64 f32 x 1M, H100). Range 0 of each diagonal tile also stores its lanes' to l.pilot,
// which the host's merge reads. Read after a barrier.
template <int T, int COMPS>
__device__ __forceinline__ void lane_pilots(const HerkLaunch& l, const Work& w, float* pilots) {
  for (int e = threadIdx.x; e < 2 * T; e += blockDim.x) {
    const int lane = (e < T ? w.ti : w.tj) * T + e % T;
    float p = 0.0f;
    if (lane < l.lanes) {
      p = row_pilot<COMPS>(l.x + w.b * l.bstep + lane / COMPS * l.cstep + lane % COMPS, l.n);
      if (w.diag && w.split == 0 && e < T) l.pilot[w.b * l.lanes + lane] = p;
    }
    pilots[e] = p;
  }
}

// Chunk c's raw samples (the tile's two panels; one on a diagonal tile) into the ring stage at
// `raw` as one cp.async group (empty past the last chunk, so that group counts stay in step).
template <int T, int COMPS>
__device__ __forceinline__ void fetch_chunk(const HerkLaunch& l, const Work& w, int c, float* raw) {
  if (c < w.chunks) {
    const float* xb = l.x + w.b * l.bstep;
    const long long s = w.n0 + static_cast<long long>(c) * w.step;
    copy_panel<T, COMPS>(l, xb, w.ti * T / COMPS, s, raw);
    if (!w.diag) copy_panel<T, COMPS>(l, xb, w.tj * T / COMPS, s, raw + kRawPanel<T>);
  }
  cp_commit();
}

// The samples as TMA sees them, for tiles of `tile` lanes: 32-float blocks (one 128-byte
// segment) of each padded row, channel rows, batches; a box is one chunk of a tile's rows
// (tile / comps channels, lanes past the last read as zero), 128-byte swizzled. Kept per buffer
// and shape: encoding inside a timed run would add its host time to the kernel's.
inline CUtensorMap raw_map(const HerkLaunch& l, int tile) {
  using Key = std::tuple<const float*, long long, long long, int, int, int, int>;
  static std::mutex mu;
  static std::map<Key, CUtensorMap> cache;
  const Key key{l.x, l.cstep, l.bstep, l.lanes, l.comps, l.batches, tile};
  std::lock_guard<std::mutex> lock(mu);
  if (const auto it = cache.find(key); it != cache.end()) return it->second;
  const EncodeTiledFn encode = encode_tiled();
  if (!encode) throw DeviceError("cuda.herk_tc: cuTensorMapEncodeTiled is not available");
  const cuuint64_t dims[4] = {32, static_cast<cuuint64_t>(l.cstep / 32),
                              static_cast<cuuint64_t>((l.lanes + l.comps - 1) / l.comps),
                              static_cast<cuuint64_t>(l.batches)};
  const cuuint64_t strides[3] = {128, static_cast<cuuint64_t>(l.cstep) * 4,
                                 static_cast<cuuint64_t>(l.bstep) * 4};
  const cuuint32_t box[4] = {32, static_cast<cuuint32_t>(l.comps),
                             static_cast<cuuint32_t>(tile / l.comps), 1};
  const cuuint32_t unit[4] = {1, 1, 1, 1};
  CUtensorMap map{};
  const CUresult r =
      encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, const_cast<float*>(l.x), dims, strides, box,
             unit, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw DeviceError("cuda.herk_tc: cuTensorMapEncodeTiled refused the samples (" +
                      std::to_string(l.lanes) + " lanes, row pitch " + std::to_string(l.cstep) +
                      " floats, error " + std::to_string(static_cast<int>(r)) + ")");
  if (cache.size() >= 64) cache.clear();
  cache.emplace(key, map);
  return map;
}

// Host side, for every kernel: its dynamic shared memory allowed (per launch: the attribute
// belongs to the current device's context), a launch over (tiles * splits, batches) with the
// kernel's arguments after the HerkLaunch (the TMA kernels' sample map), and how many blocks fit
// on one SM.
using Kernel = void (*)(HerkLaunch);
template <class K>
inline void allow_shared(K k, std::size_t bytes) {
  KAFEL_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(bytes)));
}
template <class... Args>
inline void launch_kernel(void (*k)(HerkLaunch, Args...), int threads, std::size_t bytes,
                          const HerkLaunch& l, cudaStream_t stream, const char* name,
                          const Args&... args) {
  allow_shared(k, bytes);
  const dim3 grid(static_cast<unsigned>(l.blocks()), static_cast<unsigned>(l.batches));
  k<<<grid, threads, bytes, stream>>>(l, args...);
  KAFEL_CUDA_CHECK_LAUNCH(name);
}
template <class K>
inline int resident_blocks(K k, int threads, std::size_t bytes, int ordinal) {
  DeviceGuard g(ordinal);
  allow_shared(k, bytes);
  int blocks = 0;
  KAFEL_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k, threads, bytes));
  return blocks;
}

}  // namespace kafel::cuda::herk_tc
