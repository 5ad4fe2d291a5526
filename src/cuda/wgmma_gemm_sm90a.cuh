// Hopper GEMM kernels (sm_90a): TMA fills a ring of 128-byte-swizzled shared tiles, wgmma
// multiplies them. Two kernels: one CTA per tile with every warp computing (ladder step 1),
// and the warp-specialised one (a producer warpgroup, two consumer warpgroups) that can run
// persistent, in grouped tile order, and in clusters of 2 sharing B by TMA multicast.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "cuda/sm90a_ptx.cuh"
#include "cuda/tensor_map.hpp"
#include "cuda/wgmma.hpp"

namespace kafel::cuda::sm90 {

// What one wgmma input type means for tiles: element size, accumulator, transposable layouts.
template <class Tag>
struct Elem;
template <>
struct Elem<Bf16> {
  using acc = float;
  static constexpr int size = 2;
  static constexpr bool mn_major = true;  // wgmma reads MN-major shared tiles of 16-bit types
};
template <>
struct Elem<F16> {
  using acc = float;
  static constexpr int size = 2;
  static constexpr bool mn_major = true;
};
template <>
struct Elem<Tf32> {
  using acc = float;
  static constexpr int size = 4;
  static constexpr bool mn_major = false;
};
template <>
struct Elem<E4m3> {
  using acc = float;
  static constexpr int size = 1;
  static constexpr bool mn_major = false;
};
template <>
struct Elem<E5m2> {
  using acc = float;
  static constexpr int size = 1;
  static constexpr bool mn_major = false;
};
template <>
struct Elem<S8> {
  using acc = std::int32_t;
  static constexpr int size = 1;
  static constexpr bool mn_major = false;
};

// A compiled tile shape. BK covers one 128-byte swizzle row of K; the two consumer warpgroups
// share a tile (WM = BM / 2 rows each; COLUMNS: all BM rows and WN = BN / 2 columns each, for
// 64-row tiles) or, PINGPONG, take whole tiles in turn (WM = BM), as MI wgmmas of 64 x WN per
// 32-byte k step.
// A_MN / B_MN: the operand is MN-major in memory (A stored k x m, B stored k x n).
// SPLIT (3xtf32, f16x3): each operand comes as a big and a small part, both in every ring slot
// (A big, A small, B big, B small), and a k-tile's three products go into a fresh accumulator.
template <class Tag_, int BM_, int BN_, bool A_MN_, bool B_MN_, bool SPLIT_ = false,
          bool PINGPONG_ = false, bool COLUMNS_ = false>
struct Cfg {
  using Tag = Tag_;
  using Acc = typename Elem<Tag>::acc;
  static constexpr int BM = BM_, BN = BN_;
  static constexpr bool A_MN = A_MN_, B_MN = B_MN_, SPLIT = SPLIT_, PINGPONG = PINGPONG_;
  static constexpr bool COLUMNS = COLUMNS_;
  static constexpr int BK = 128 / Elem<Tag>::size;
  static constexpr int KSTEPS = 4;                    // wgmma k steps of 32 bytes per 128-byte row
  static constexpr int CONSUMERS = PINGPONG ? 1 : 2;  // consumer warpgroups per tile
  static constexpr int WM = COLUMNS ? BM : BM / CONSUMERS;
  static constexpr int WN = COLUMNS ? BN / 2 : BN;  // each consumer's columns
  static constexpr int MI = WM / 64;
  static constexpr int ACC = WN / 2;  // accumulators per thread and m64 wgmma
  static constexpr int PART_A = BM * 128, PART_B = BN * 128;  // one part's tile
  static constexpr int A_BYTES = PART_A * (SPLIT ? 2 : 1), B_BYTES = PART_B * (SPLIT ? 2 : 1);
  static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
  static_assert(WM % 64 == 0 && (WN == 64 || WN == 128 || WN == 256) && BM <= 256,
                "unsupported tile");
  static_assert(!COLUMNS || (!SPLIT && !PINGPONG), "column parts: plain operands, shared tiles");
  static_assert(Elem<Tag>::mn_major || (!A_MN && !B_MN), "this type needs K-major tiles");
  static_assert(!SPLIT ||
                    ((std::is_same_v<Tag, Tf32> || std::is_same_v<Tag, F16>)&&MI == 1 && !PINGPONG),
                "split operands: tf32 or f16, one m64 wgmma per consumer (three accumulators)");
  // The C staging buffers, one per consumer: its WM x WN part in 16 bits (32-bit C passes
  // through it in two halves).
  static constexpr int C_BYTES = 2 * WM * WN * 2;
  // Dynamic shared memory: 1024-byte alignment slack, `stages` ring slots, the C staging
  // buffers when C or split-K partial sums leave through TMA (C_BYTES, or half of it when
  // stored in 2 rounds), and a full and an empty barrier per slot.
  static constexpr std::size_t smem_bytes(int stages, int c_rounds) {
    return 1024 + std::size_t(stages) * (STAGE_BYTES + 16) + (c_rounds ? C_BYTES / c_rounds : 0);
  }
};

// C and the scalars (alpha/beta as float for float accumulators, as int for i32).
struct Epilogue {
  void* c = nullptr;
  long long ldc = 0;
  int m = 0, n = 0;
  float alpha = 1.f, beta = 0.f;
  int ialpha = 1, ibeta = 0;
  CKind c_kind = CKind::f32;
  int paired = 1;  // 1: two adjacent columns may be stored as one access (aligned C)
};

// Order of work units. A unit is `cluster` vertically adjacent BM x BN tiles (the CTAs of one
// cluster share its B tile) and one of `splits` ranges of k-tiles (split-K: `per_split` k-tiles
// each, the last one shorter). Units run down columns inside groups of `group` unit rows, so the
// units in flight at one time cover a compact block of C and reuse A and B through L2; split
// s + 1's units follow all of split s's. `lower` (square tiles, no clusters): only the tiles
// (um, un) with un <= um, row by row. Stream-K tail (`whole` > 0): the first `whole` tiles
// are units of all k-tiles, and only the remaining tiles ("the tail", tail index i = tile -
// whole) run in `splits` ranges.
struct Schedule {
  int m_units = 0, n_blocks = 0, units = 0, group = 8, cluster = 1;
  int splits = 1, per_split = 0, k_tiles = 0;
  int lower = 0;
  int whole = 0;

  __host__ __device__ int tiles() const {
    return lower ? m_units * (m_units + 1) / 2 : m_units * n_blocks;
  }

  // Unit u's tile, k-tiles [kt0, kt1) and range: -1 when it stores C itself (no split, or a
  // whole tile before the tail), else the range whose raw sums it stores.
  __device__ __forceinline__ int unit(int u, int& um, int& un, int& kt0, int& kt1) const {
    int split = -1;
    if (u < whole) {
      kt0 = 0;
      kt1 = k_tiles;
    } else {
      const int rest = tiles() - whole;
      split = (u - whole) / rest;
      u -= split * rest;
      kt0 = split * per_split;
      kt1 = min(k_tiles, kt0 + per_split);
    }
    tile(u, um, un);
    return splits > 1 ? split : -1;
  }

  // The tile of unit index t (without its range).
  __device__ __forceinline__ void tile(int t, int& um, int& un) const {
    if (lower) {  // row i holds tiles i(i+1)/2 .. i(i+1)/2 + i: float root, then exact
      int i = static_cast<int>((sqrtf(8.0f * static_cast<float>(t) + 1.0f) - 1.0f) * 0.5f);
      while ((i + 1) * (i + 2) / 2 <= t) ++i;
      while (i * (i + 1) / 2 > t) --i;
      um = i;
      un = t - i * (i + 1) / 2;
      return;
    }
    const int per_group = group * n_blocks;
    const int g = t / per_group, first = g * group;
    const int rows = min(m_units - first, group);
    const int r = t - g * per_group;
    um = first + r % rows;
    un = r / rows;
  }
};

struct KernelArgs {
  Epilogue epi;
  Schedule sched;
  int k_tiles = 0;
  int stages = 4;
  // Split operands: the small part of A (B) starts this many rows below its big part.
  int a_part = 0, b_part = 0;
  // C (beta = 0) leaves through shared memory and TMA stores in this many rounds of 16-bit
  // tiles (1 or 2; 0: direct stores from registers).
  int c_rounds = 0;
  // Split-K (sched.splits > 1): unit tiles of split s go raw (alpha 1, beta 0, Acc's type) to
  // partial + s * partial_slice elements, rows partial_ld apart; splitk_reduce makes C of them.
  // With c_rounds > 0 they leave through shared memory and TMA stores like C, to rows
  // s * partial_rows + row of a map over the whole workspace (tma_c).
  void* partial = nullptr;
  long long partial_ld = 0, partial_slice = 0;
  int partial_rows = 0;
};

// ---- tile movement (one producer thread) -------------------------------------------------

template <class C>
__device__ __forceinline__ void load_a(std::uint8_t* sa, const CUtensorMap* map, std::uint64_t* bar,
                                       int m0, int k0) {
  if constexpr (C::A_MN) {  // 64-row-wide chunks of the k x m matrix
#pragma unroll
    for (int j = 0; j < C::BM / 64; ++j) tma_load(sa + j * 8192, map, bar, m0 + 64 * j, k0);
  } else {
    tma_load(sa, map, bar, k0, m0);
  }
}

// B tile into this CTA, or this CTA's half of it into both CTAs of a cluster of 2.
template <class C>
__device__ __forceinline__ void load_b(std::uint8_t* sb, const CUtensorMap* map, std::uint64_t* bar,
                                       int n0, int k0, int rank, int cluster) {
  if (cluster == 1) {
    if constexpr (C::B_MN) {
#pragma unroll
      for (int j = 0; j < C::BN / 64; ++j) tma_load(sb + j * 8192, map, bar, n0 + 64 * j, k0);
    } else {
      tma_load(sb, map, bar, k0, n0);
    }
  } else {
    constexpr int HALF = C::BN / 2;
    if constexpr (C::B_MN) {
#pragma unroll
      for (int j = 0; j < HALF / 64; ++j) {
        const int chunk = rank * (HALF / 64) + j;
        tma_load_multicast(sb + chunk * 8192, map, bar, n0 + 64 * chunk, k0, 0x3);
      }
    } else {
      tma_load_multicast(sb + rank * HALF * 128, map, bar, k0, n0 + rank * HALF, 0x3);
    }
  }
}

// ---- the multiply (one consumer warpgroup) -----------------------------------------------

// Descriptor of the 64-row slice `row` (0, 64, ...) of the A tile at k step kk.
template <class C>
__device__ __forceinline__ std::uint64_t desc_a(std::uint32_t a, int row, int kk) {
  if constexpr (C::A_MN) return smem_desc(a + (row / 64) * 8192 + kk * 2048, 8192, 1024);
  return smem_desc(a + row * 128 + kk * 32, 16, 1024);
}
template <class C>
__device__ __forceinline__ std::uint64_t desc_b(std::uint32_t b, int kk) {
  if constexpr (C::B_MN) return smem_desc(b + kk * 2048, 8192, 1024);
  return smem_desc(b + kk * 32, 16, 1024);
}

// acc += rows [part * WM, (part + 1) * WM) of A tile x B tile or, COLUMNS, A tile x columns
// [part * WN, (part + 1) * WN) of B tile (issues and commits, does not wait). A column part
// starts WN 128-byte rows into a K-major B tile, WN / 64 chunks of 8192 bytes into an MN-major
// one: WN * 128 bytes either way.
template <class C>
__device__ __forceinline__ void mma_tile(typename C::Acc (&acc)[C::MI][C::ACC], std::uint32_t a,
                                         std::uint32_t b, int part) {
  const int row = C::COLUMNS ? 0 : part * C::WM;
  if constexpr (C::COLUMNS) b += static_cast<std::uint32_t>(part * C::WN * 128);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < C::KSTEPS; ++kk)
#pragma unroll
    for (int mi = 0; mi < C::MI; ++mi) {
      const std::uint64_t da = desc_a<C>(a, row + mi * 64, kk);
      const std::uint64_t db = desc_b<C>(b, kk);
      if constexpr (Elem<typename C::Tag>::mn_major)
        wgmma<C::A_MN ? 1 : 0, C::B_MN ? 1 : 0>(typename C::Tag{}, acc[mi], da, db, 1u);
      else
        wgmma(typename C::Tag{}, acc[mi], da, db, 1u);
    }
  wgmma_commit();
}

// Split operands (3xtf32, f16x3): fresh = small(A) big(B) + big(A) small(B) + big(A) big(B) over
// the k-tile, the small
// products first so that the tensor core's truncating additions see a small running sum while
// they are added; fresh is not read (scale-d 0 on the first wgmma). Issues and commits.
// One K-major wgmma of C's input type (16-bit types take their layout as template arguments).
template <class C>
__device__ __forceinline__ void wgmma_k_major(float (&d)[C::ACC], std::uint64_t a, std::uint64_t b,
                                              std::uint32_t scale_d) {
  if constexpr (Elem<typename C::Tag>::mn_major)
    wgmma<0, 0>(typename C::Tag{}, d, a, b, scale_d);
  else
    wgmma(typename C::Tag{}, d, a, b, scale_d);
}

template <class C>
__device__ __forceinline__ void mma_tile_split(float (&fresh)[C::MI][C::ACC], std::uint32_t a,
                                               std::uint32_t b, int part) {
  const int row = part * C::WM;
  const std::uint32_t a_small = a + C::PART_A, b_small = b + C::PART_B;
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < C::KSTEPS; ++kk)
    wgmma_k_major<C>(fresh[0], desc_a<C>(a_small, row, kk), desc_b<C>(b, kk), kk == 0 ? 0u : 1u);
#pragma unroll
  for (int kk = 0; kk < C::KSTEPS; ++kk)
    wgmma_k_major<C>(fresh[0], desc_a<C>(a, row, kk), desc_b<C>(b_small, kk), 1u);
#pragma unroll
  for (int kk = 0; kk < C::KSTEPS; ++kk)
    wgmma_k_major<C>(fresh[0], desc_a<C>(a, row, kk), desc_b<C>(b, kk), 1u);
  wgmma_commit();
}

// acc += fresh in fp32 with round to nearest, once its wgmmas are known to be complete.
template <class C>
__device__ __forceinline__ void add_fresh(float (&acc)[C::MI][C::ACC],
                                          float (&fresh)[C::MI][C::ACC]) {
#pragma unroll
  for (int mi = 0; mi < C::MI; ++mi) {
    fence_registers(fresh[mi]);
#pragma unroll
    for (int i = 0; i < C::ACC; ++i) acc[mi][i] += fresh[mi][i];
  }
}

template <class C>
__device__ __forceinline__ void zero(typename C::Acc (&acc)[C::MI][C::ACC]) {
#pragma unroll
  for (int mi = 0; mi < C::MI; ++mi)
#pragma unroll
    for (int i = 0; i < C::ACC; ++i) acc[mi][i] = 0;
}

template <class C>
__device__ __forceinline__ void fence_acc(typename C::Acc (&acc)[C::MI][C::ACC]) {
#pragma unroll
  for (int mi = 0; mi < C::MI; ++mi) fence_registers(acc[mi]);
}

// ---- epilogue ----------------------------------------------------------------------------

// C[row][col..col+1] = alpha * (v0, v1) + beta * C (beta == 0: C is not read, NaN-safe).
__device__ __forceinline__ void store_pair(const Epilogue& e, int row, int col, float v0,
                                           float v1) {
  const bool two = col + 1 < e.n;
  const long long at = row * e.ldc + col;
  switch (e.c_kind) {
    case CKind::f32: {
      float* p = static_cast<float*>(e.c) + at;
      if (two && e.paired) {
        float2 r{e.alpha * v0, e.alpha * v1};
        if (e.beta != 0.f) {
          const float2 old = *reinterpret_cast<const float2*>(p);
          r.x = fmaf(e.beta, old.x, r.x);
          r.y = fmaf(e.beta, old.y, r.y);
        }
        *reinterpret_cast<float2*>(p) = r;
      } else {
        p[0] = e.beta != 0.f ? fmaf(e.beta, p[0], e.alpha * v0) : e.alpha * v0;
        if (two) p[1] = e.beta != 0.f ? fmaf(e.beta, p[1], e.alpha * v1) : e.alpha * v1;
      }
      break;
    }
    case CKind::bf16: {
      __nv_bfloat16* p = static_cast<__nv_bfloat16*>(e.c) + at;
      float r0 = e.alpha * v0, r1 = e.alpha * v1;
      if (two && e.paired) {
        if (e.beta != 0.f) {
          const float2 old = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(p));
          r0 = fmaf(e.beta, old.x, r0);
          r1 = fmaf(e.beta, old.y, r1);
        }
        *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(r0, r1);
      } else {
        if (e.beta != 0.f) r0 = fmaf(e.beta, __bfloat162float(p[0]), r0);
        p[0] = __float2bfloat16_rn(r0);
        if (two) {
          if (e.beta != 0.f) r1 = fmaf(e.beta, __bfloat162float(p[1]), r1);
          p[1] = __float2bfloat16_rn(r1);
        }
      }
      break;
    }
    case CKind::f16: {
      __half* p = static_cast<__half*>(e.c) + at;
      float r0 = e.alpha * v0, r1 = e.alpha * v1;
      if (two && e.paired) {
        if (e.beta != 0.f) {
          const float2 old = __half22float2(*reinterpret_cast<const __half2*>(p));
          r0 = fmaf(e.beta, old.x, r0);
          r1 = fmaf(e.beta, old.y, r1);
        }
        *reinterpret_cast<__half2*>(p) = __floats2half2_rn(r0, r1);
      } else {
        if (e.beta != 0.f) r0 = fmaf(e.beta, __half2float(p[0]), r0);
        p[0] = __float2half_rn(r0);
        if (two) {
          if (e.beta != 0.f) r1 = fmaf(e.beta, __half2float(p[1]), r1);
          p[1] = __float2half_rn(r1);
        }
      }
      break;
    }
    default:
      break;
  }
}

// Integer C = alpha * acc + beta * C modulo 2^32 (unsigned arithmetic: wrapping is defined).
__device__ __forceinline__ void store_pair(const Epilogue& e, int row, int col, std::int32_t v0,
                                           std::int32_t v1) {
  const bool two = col + 1 < e.n;
  std::int32_t* p = static_cast<std::int32_t*>(e.c) + row * e.ldc + col;
  const auto a = static_cast<std::uint32_t>(e.ialpha), b = static_cast<std::uint32_t>(e.ibeta);
  auto f = [&](std::int32_t v, const std::int32_t* old) {
    std::uint32_t r = a * static_cast<std::uint32_t>(v);
    if (b != 0) r += b * static_cast<std::uint32_t>(*old);
    return static_cast<std::int32_t>(r);
  };
  if (two && e.paired) {
    int2 r{f(v0, p), f(v1, p + 1)};
    *reinterpret_cast<int2*>(p) = r;
  } else {
    p[0] = f(v0, p);
    if (two) p[1] = f(v1, p + 1);
  }
}

// The wgmma accumulator layout: in each 64 x BN slice, warp w of the warpgroup holds rows
// 16w + lane/4 (+8), and register 4i + {0,1} (+{2,3} for the row 8 below) is columns
// 8i + 2 (lane % 4) + {0, 1}.
template <class C>
__device__ __forceinline__ void store_tile(const typename C::Acc (&acc)[C::MI][C::ACC],
                                           const Epilogue& e, int row0, int col0) {
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
#pragma unroll
  for (int mi = 0; mi < C::MI; ++mi)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row0 + mi * 64 + warp * 16 + lane / 4 + h * 8;
      if (row >= e.m) continue;
#pragma unroll
      for (int i = 0; i < C::WN / 8; ++i) {
        const int col = col0 + 8 * i + 2 * (lane % 4);
        if (col < e.n) store_pair(e, row, col, acc[mi][4 * i + 2 * h], acc[mi][4 * i + 2 * h + 1]);
      }
    }
}

// The consumer's WM x WN part of C through shared memory: alpha * acc in C's type, in chunks of
// 128-byte rows (64 columns of 16-bit C, 32 of 32-bit C; WM rows each, 128-byte swizzled:
// conflict-free), then one thread stores them with TMA and the warpgroup moves on while the copy
// engine writes C. Before the buffer is overwritten, the previous stores must have read it.
// The buffer holds the part's chunks / ROUNDS at a time. Pack: (epilogue, acc pair) -> the two
// values' bits (std::uint32_t for 16-bit C, uint2 for 32-bit C).
template <class C, int ROUNDS, class Pack>
__device__ __forceinline__ void store_tile_tma(const typename C::Acc (&acc)[C::MI][C::ACC],
                                               const Epilogue& e, std::uint8_t* buf,
                                               const CUtensorMap* map, int row0, int col0,
                                               int consumer, Pack pack) {
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
  constexpr int ES = Pack::size;                 // bytes of a C element
  constexpr int COLS = 128 / ES;                 // columns per chunk
  constexpr int GROUPS = COLS / 8;               // 8-column accumulator groups per chunk
  constexpr int CHUNKS = C::WN / COLS / ROUNDS;  // chunks per round
  static_assert(CHUNKS >= 1, "more rounds than chunks");
#pragma unroll
  for (int round = 0; round < ROUNDS; ++round) {
    if (t == 0) bulk_wait_read();
    named_barrier(1 + consumer, 128);
#pragma unroll
    for (int mi = 0; mi < C::MI; ++mi)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = mi * 64 + warp * 16 + lane / 4 + h * 8;
#pragma unroll
        for (int i = round * CHUNKS * GROUPS; i < (round + 1) * CHUNKS * GROUPS; ++i) {
          const int chunk = i / GROUPS - round * CHUNKS;
          // Byte of this lane's pair in the chunk's row: 16-byte unit j, then inside it.
          const int byte = (i % GROUPS) * 8 * ES + (lane % 4) * 2 * ES;
          const int j = byte / 16;
          std::uint8_t* at =
              buf + chunk * (C::WM * 128) + r * 128 + ((j ^ (r % 8)) * 16) + byte % 16;
          *reinterpret_cast<typename Pack::bits*>(at) =
              pack(e, acc[mi][4 * i + 2 * h], acc[mi][4 * i + 2 * h + 1]);
        }
      }
    fence_proxy_async_smem();
    named_barrier(1 + consumer, 128);
    if (t == 0) {
#pragma unroll
      for (int chunk = 0; chunk < CHUNKS; ++chunk)
        tma_store(map, buf + chunk * (C::WM * 128), col0 + COLS * (round * CHUNKS + chunk), row0);
      bulk_commit();
    }
  }
}

// c_rounds: the buffer holds a 16-bit part / c_rounds; 32-bit C goes in twice as many rounds.
template <class C, class Pack>
__device__ __forceinline__ void store_tile_tma(const typename C::Acc (&acc)[C::MI][C::ACC],
                                               const Epilogue& e, std::uint8_t* buf,
                                               const CUtensorMap* map, int row0, int col0,
                                               int consumer, int c_rounds, Pack pack) {
  constexpr int X = Pack::size / 2;
  // A part of fewer 128-byte chunks than two rounds need (64 columns) is compiled for one round
  // only; check_options refuses two for it.
  if constexpr (C::WN * Pack::size / 128 >= 2 * X)
    if (c_rounds != 1) {
      store_tile_tma<C, 2 * X>(acc, e, buf, map, row0, col0, consumer, pack);
      return;
    }
  store_tile_tma<C, X>(acc, e, buf, map, row0, col0, consumer, pack);
}

struct PackBf16 {
  static constexpr int size = 2;
  using bits = std::uint32_t;
  __device__ bits operator()(const Epilogue& e, float a, float b) const {
    const __nv_bfloat162 v = __floats2bfloat162_rn(e.alpha * a, e.alpha * b);
    return *reinterpret_cast<const bits*>(&v);
  }
};
struct PackF16 {
  static constexpr int size = 2;
  using bits = std::uint32_t;
  __device__ bits operator()(const Epilogue& e, float a, float b) const {
    const __half2 v = __floats2half2_rn(e.alpha * a, e.alpha * b);
    return *reinterpret_cast<const bits*>(&v);
  }
};
struct PackF32 {
  static constexpr int size = 4;
  using bits = uint2;
  __device__ bits operator()(const Epilogue& e, float a, float b) const {
    return {__float_as_uint(e.alpha * a), __float_as_uint(e.alpha * b)};
  }
};
// alpha * acc modulo 2^32, as the direct store computes it (beta is 0 here).
struct PackI32 {
  static constexpr int size = 4;
  using bits = uint2;
  __device__ bits operator()(const Epilogue& e, std::int32_t a, std::int32_t b) const {
    const auto s = static_cast<std::uint32_t>(e.ialpha);
    return {s * static_cast<std::uint32_t>(a), s * static_cast<std::uint32_t>(b)};
  }
};

// ---- kernel 1: one CTA per tile, both warpgroups compute, thread 0 refills the ring ------

template <class C>
__global__ void __launch_bounds__(256, 1)
    gemm_tma_wgmma(const __grid_constant__ CUtensorMap tma_a,
                   const __grid_constant__ CUtensorMap tma_b, const KernelArgs args) {
#if KAFEL_SM90A_DEVICE
  extern __shared__ std::uint8_t smem_raw[];
  std::uint8_t* smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
  const int stages = args.stages;
  auto* full = reinterpret_cast<std::uint64_t*>(smem + stages * C::STAGE_BYTES);
  const int consumer = threadIdx.x / 128;
  int um, un, kt0, kt1;  // kernel 0 runs without split-K: kt0 = 0, kt1 = k_tiles
  args.sched.unit(blockIdx.x, um, un, kt0, kt1);
  const int m0 = um * C::BM, n0 = un * C::BN;
  auto a_tile = [&](int s) { return smem + s * C::STAGE_BYTES; };
  auto issue = [&](int kt) {
    const int s = kt % stages;
    mbar_arrive_expect_tx(&full[s], C::STAGE_BYTES);
    load_a<C>(a_tile(s), &tma_a, &full[s], m0, kt * C::BK);
    load_b<C>(a_tile(s) + C::A_BYTES, &tma_b, &full[s], n0, kt * C::BK, 0, 1);
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) mbar_init(&full[s], 1);
    fence_barrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0)
    for (int kt = 0; kt < stages && kt < args.k_tiles; ++kt) issue(kt);

  typename C::Acc acc[C::MI][C::ACC];
  zero<C>(acc);
  for (int kt = 0; kt < args.k_tiles; ++kt) {
    const int s = kt % stages;
    mbar_wait(&full[s], (kt / stages) & 1);
    mma_tile<C>(acc, smem_addr(a_tile(s)), smem_addr(a_tile(s) + C::A_BYTES), consumer);
    wgmma_wait<0>();
    fence_acc<C>(acc);
    __syncthreads();  // both warpgroups are done reading slot s
    if (threadIdx.x == 0 && kt + stages < args.k_tiles) issue(kt + stages);
  }
  store_tile<C>(acc, args.epi, m0 + consumer * C::WM, n0);
#else
  __trap();
#endif
}

// The epilogue of raw partial sums (alpha 1, beta 0, Acc's type) at c, rows ldc apart, m x n of
// them addressable (split-K ranges and stream-K tail tiles).
template <class Acc>
__device__ __forceinline__ Epilogue raw_sums(const Epilogue& e, Acc* c, long long ldc, int m,
                                             int n) {
  Epilogue pe = e;
  pe.c = c;
  pe.ldc = ldc;
  pe.m = m;
  pe.n = n;
  pe.c_kind = std::is_same_v<Acc, float> ? CKind::f32 : CKind::i32;
  pe.alpha = 1.f;
  pe.beta = 0.f;
  pe.ialpha = 1;
  pe.ibeta = 0;
  pe.paired = 1;
  return pe;
}

// ---- kernel 2: warp-specialised, optionally persistent and clustered ----------------------

// Releases a ring slot to the producer(s): one arrival per consumer warp on the slot's empty
// barrier in this CTA and, in a cluster of 2, in the peer CTA (whose producer multicasts into
// this CTA's slot too).
__device__ __forceinline__ void release_slot(std::uint64_t* empty, int cluster, int rank) {
  if (threadIdx.x % 32 != 0) return;
  mbar_arrive(empty);
  if (cluster > 1) mbar_arrive_remote(empty, static_cast<std::uint32_t>(rank ^ 1));
}

template <class C>
__global__ void __launch_bounds__(384, 1)
    gemm_warp_specialized(const __grid_constant__ CUtensorMap tma_a,
                          const __grid_constant__ CUtensorMap tma_b,
                          const __grid_constant__ CUtensorMap tma_c, const KernelArgs args) {
#if KAFEL_SM90A_DEVICE
  extern __shared__ std::uint8_t smem_raw[];
  std::uint8_t* smem = smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023);
  const int stages = args.stages;
  std::uint8_t* c_buf = smem + stages * C::STAGE_BYTES;  // used when args.c_rounds > 0
  const int c_part = args.c_rounds ? C::C_BYTES / 2 / args.c_rounds : 0;  // per consumer
  auto* full = reinterpret_cast<std::uint64_t*>(c_buf + 2 * c_part);
  std::uint64_t* empty = full + stages;
  const Schedule& sched = args.sched;
  const int cluster = sched.cluster;
  const int rank = cluster > 1 ? static_cast<int>(cluster_ctarank()) : 0;
  const int first_unit = blockIdx.x / cluster, unit_step = gridDim.x / cluster;
  auto a_tile = [&](int s) { return smem + s * C::STAGE_BYTES; };

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], C::CONSUMERS * 4 * cluster);
    }
    fence_barrier_init();
  }
  if (cluster > 1)
    cluster_sync();  // peers' barriers are initialised before anyone signals them
  else
    __syncthreads();
  // splitk_reduce's CTAs may take the SMs this grid leaves free and wait there for its end, so
  // the reduction starts without a launch gap.
  if (sched.splits > 1 && threadIdx.x == 0) launch_dependents();

  const int warpgroup = threadIdx.x / 128;
  if (warpgroup == 0) {  // producer: one thread issues every TMA copy
    setmaxnreg_dec<40>();
    if (threadIdx.x == 0) {
      prefetch_tensor_map(&tma_a);
      prefetch_tensor_map(&tma_b);
      int s = 0;
      std::uint32_t phase = 0;
      for (int u = first_unit; u < sched.units; u += unit_step) {
        int um, un, kt0, kt1;
        sched.unit(u, um, un, kt0, kt1);
        const int m0 = (um * cluster + rank) * C::BM, n0 = un * C::BN;
        for (int kt = kt0; kt < kt1; ++kt) {
          mbar_wait(&empty[s], phase ^ 1);
          mbar_arrive_expect_tx(&full[s], C::STAGE_BYTES);
          load_a<C>(a_tile(s), &tma_a, &full[s], m0, kt * C::BK);
          load_b<C>(a_tile(s) + C::A_BYTES, &tma_b, &full[s], n0, kt * C::BK, rank, cluster);
          if constexpr (C::SPLIT) {  // the small parts (cluster 1 only)
            load_a<C>(a_tile(s) + C::PART_A, &tma_a, &full[s], m0 + args.a_part, kt * C::BK);
            load_b<C>(a_tile(s) + C::A_BYTES + C::PART_B, &tma_b, &full[s], n0 + args.b_part,
                      kt * C::BK, 0, 1);
          }
          if (++s == stages) {
            s = 0;
            phase ^= 1;
          }
        }
      }
    }
  } else {
    // Consumers: warpgroups 1 and 2 take rows [0, WM) and [WM, BM) of each tile or, PINGPONG,
    // this CTA's tiles whole and in turn: one's epilogue runs while the other multiplies.
    // A consumer waits for its turn (named barrier 3 + consumer, signalled by the other once it
    // has waited for its tile's last slot): a slot's full barrier is then at most one phase
    // behind the one this consumer waits for, which a parity wait needs.
    setmaxnreg_inc<232>();
    const int consumer = warpgroup - 1;
    const int part = C::PINGPONG ? 0 : consumer;  // the consumer's part of a tile
    typename C::Acc acc[C::MI][C::ACC];
    int s = 0;
    std::uint32_t phase = 0;
    int turn = 0;  // PINGPONG: the index of the unit among this CTA's units
    for (int u = first_unit; u < sched.units; u += unit_step, ++turn) {
      int um, un, kt0, kt1;
      const int split = sched.unit(u, um, un, kt0, kt1);
      const int m0 = (um * cluster + rank) * C::BM, n0 = un * C::BN;
      const int k_tiles = kt1 - kt0;
      if constexpr (C::PINGPONG) {
        if ((turn & 1) != consumer) {  // the other's tile: skip its slots
          s += k_tiles;
          const int wraps = s / stages;
          s -= wraps * stages;
          phase ^= static_cast<std::uint32_t>(wraps & 1);
          continue;
        }
        if (turn > 0) named_barrier(3 + consumer, 256);
      }
      zero<C>(acc);
      int previous = -1;
      if constexpr (C::SPLIT) {
        // k-tiles alternate between two fresh accumulators: while one k-tile's wgmmas run, the
        // previous one's sum is added to acc. The loop takes k-tiles in pairs with fresh0's
        // group in flight at its top and bottom, so the compiler sees which accumulator each
        // wait frees (a conditional choice would make it serialise every wgmma).
        typename C::Acc fresh0[C::MI][C::ACC], fresh1[C::MI][C::ACC];
        auto issue = [&](typename C::Acc(&fresh)[C::MI][C::ACC]) {
          mbar_wait(&full[s], phase);
          mma_tile_split<C>(fresh, smem_addr(a_tile(s)), smem_addr(a_tile(s) + C::A_BYTES), part);
          const int used = s;
          if (++s == stages) {
            s = 0;
            phase ^= 1;
          }
          return used;
        };
        // The group before the one just issued is complete: add it, hand its slot back.
        auto retire = [&](typename C::Acc(&done)[C::MI][C::ACC], int used) {
          wgmma_wait<1>();
          add_fresh<C>(acc, done);
          release_slot(&empty[previous], cluster, rank);
          previous = used;
        };
        if (k_tiles > 0) {
          previous = issue(fresh0);
          int kt = 1;
          for (; kt + 1 < k_tiles; kt += 2) {
            retire(fresh0, issue(fresh1));
            retire(fresh1, issue(fresh0));
          }
          if (kt < k_tiles) {
            retire(fresh0, issue(fresh1));
            wgmma_wait<0>();
            add_fresh<C>(acc, fresh1);
          } else {
            wgmma_wait<0>();
            add_fresh<C>(acc, fresh0);
          }
        }
      } else {
        for (int kt = 0; kt < k_tiles; ++kt) {
          mbar_wait(&full[s], phase);
          mma_tile<C>(acc, smem_addr(a_tile(s)), smem_addr(a_tile(s) + C::A_BYTES), part);
          wgmma_wait<1>();  // the previous k-tile's wgmmas are done: its slot can be refilled
          if (previous >= 0) release_slot(&empty[previous], cluster, rank);
          previous = s;
          if (++s == stages) {
            s = 0;
            phase ^= 1;
          }
        }
        if constexpr (C::PINGPONG)  // the next unit's consumer may wait for its slots now
          if (u + unit_step < sched.units) named_barrier_arrive(3 + (consumer ^ 1), 256);
        wgmma_wait<0>();
      }
      fence_acc<C>(acc);
      if (previous >= 0) release_slot(&empty[previous], cluster, rank);
      const int row0 = m0 + (C::COLUMNS ? 0 : part * C::WM);
      const int col0 = n0 + (C::COLUMNS ? part * C::WN : 0);
      std::uint8_t* staged = c_buf + consumer * c_part;
      if (split >= 0 && sched.whole > 0) {  // a tail tile's raw sum, for tail_reduce
        // Whole tiles one after another, BN wide, in unit order: range s of tail tile i (unit
        // whole + s * tail + i) at rows ((u - whole) * cluster + rank) * BM (rows past m
        // included: their sums are 0).
        const long long slot = static_cast<long long>(u - sched.whole) * cluster + rank;
        const Epilogue pe =
            raw_sums(args.epi, static_cast<typename C::Acc*>(args.partial) + slot * C::BM * C::BN,
                     C::BN, C::BM, C::BN);
        store_tile<C>(acc, pe, C::COLUMNS ? 0 : part * C::WM, C::COLUMNS ? part * C::WN : 0);
      } else if (split >= 0) {  // this k range's raw sum, for splitk_reduce
        const Epilogue pe = raw_sums(
            args.epi, static_cast<typename C::Acc*>(args.partial) + split * args.partial_slice,
            args.partial_ld, args.epi.m, args.epi.n);
        // A part below row m (the second CTA of a cluster past the last rows) is not stored:
        // its rows would lie past partial_rows, in the next split's.
        const int prow = split * args.partial_rows + row0;
        if (!args.c_rounds) {
          store_tile<C>(acc, pe, row0, col0);
        } else if (row0 < args.epi.m) {
          if constexpr (std::is_same_v<typename C::Acc, float>)
            store_tile_tma<C>(acc, pe, staged, &tma_c, prow, col0, consumer, args.c_rounds,
                              PackF32{});
          else
            store_tile_tma<C>(acc, pe, staged, &tma_c, prow, col0, consumer, args.c_rounds,
                              PackI32{});
        }
      } else if (!args.c_rounds) {
        store_tile<C>(acc, args.epi, row0, col0);
      } else if constexpr (std::is_same_v<typename C::Acc, float>) {
        if (args.epi.c_kind == CKind::bf16)
          store_tile_tma<C>(acc, args.epi, staged, &tma_c, row0, col0, consumer, args.c_rounds,
                            PackBf16{});
        else if (args.epi.c_kind == CKind::f16)
          store_tile_tma<C>(acc, args.epi, staged, &tma_c, row0, col0, consumer, args.c_rounds,
                            PackF16{});
        else
          store_tile_tma<C>(acc, args.epi, staged, &tma_c, row0, col0, consumer, args.c_rounds,
                            PackF32{});
      } else {
        store_tile_tma<C>(acc, args.epi, staged, &tma_c, row0, col0, consumer, args.c_rounds,
                          PackI32{});
      }
    }
    if (args.c_rounds && threadIdx.x % 128 == 0) bulk_wait_all();
  }
  if (cluster > 1) cluster_sync();
#else
  __trap();
#endif
}

// (v0, v1) += x: float, or modulo 2^32 as the kernels' i32 accumulators.
template <class Acc, class Pair>
__device__ __forceinline__ void add_pair(Acc& v0, Acc& v1, const Pair& x) {
  if constexpr (std::is_same_v<Acc, float>) {
    v0 += x.x;
    v1 += x.y;
  } else {
    v0 = static_cast<Acc>(static_cast<std::uint32_t>(v0) + static_cast<std::uint32_t>(x.x));
    v1 = static_cast<Acc>(static_cast<std::uint32_t>(v1) + static_cast<std::uint32_t>(x.y));
  }
}

// C = alpha * (the splits' partial sums, split 0 first) + beta * C in C's type: the same bits
// from run to run for a given split count. A thread takes two adjacent columns; eight splits'
// loads are in flight before they are added, in order (32 in flight ran 2-25 % slower on an
// H200, session 18: more registers, and four ranges at 1024^2 x 16384 gain nothing).
template <class Acc>
__global__ void splitk_reduce(const Acc* __restrict__ partial, long long ld, long long slice,
                              int splits, const Epilogue e) {
#if KAFEL_SM90A_DEVICE
  grid_dependency_wait();
#endif
  using Pair = std::conditional_t<std::is_same_v<Acc, float>, float2, int2>;
  const long long pairs = (e.n + 1) / 2, total = static_cast<long long>(e.m) * pairs;
  for (long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int row = static_cast<int>(idx / pairs), col = static_cast<int>(idx % pairs) * 2;
    const Acc* p = partial + row * ld + col;
    Acc v0 = 0, v1 = 0;
    constexpr int kInFlight = 8;
    for (int s0 = 0; s0 < splits; s0 += kInFlight) {
      Pair x[kInFlight];
#pragma unroll
      for (int u = 0; u < kInFlight; ++u)
        if (s0 + u < splits) x[u] = *reinterpret_cast<const Pair*>(p + (s0 + u) * slice);
#pragma unroll
      for (int u = 0; u < kInFlight; ++u)
        if (s0 + u < splits) add_pair(v0, v1, x[u]);
    }
    store_pair(e, row, col, v0, v1);
  }
}

// Launches a reduction `kernel` of `blocks` x 256 threads behind the GEMM kernel on `stream`
// with programmatic stream serialisation (the GEMM triggers it early; the reduction waits in
// the kernel for the sums).
template <class... Params, class... Args>
cudaError_t launch_behind(void (*kernel)(Params...), long long blocks, cudaStream_t stream,
                          Args... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(std::min<long long>(blocks, 132 * 8)), 1, 1);
  cfg.blockDim = dim3(256, 1, 1);
  cfg.stream = stream;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, kernel, args...);
}

// C of the stream-K tail's tiles = alpha * (their ranges' raw sums, range 0 first) + beta * C, in
// C's type: the layout gemm_warp_specialized stores them in (whole bm x bn tiles, range s of tail
// tile i at rows ((s * tail + i) * cluster + rank) * bm). A thread takes two adjacent columns.
template <class Acc>
__global__ void tail_reduce(const Acc* __restrict__ partial, const Schedule sched, int bm, int bn,
                            const Epilogue e) {
#if KAFEL_SM90A_DEVICE
  grid_dependency_wait();
#endif
  using Pair = std::conditional_t<std::is_same_v<Acc, float>, float2, int2>;
  const int tail = sched.tiles() - sched.whole, unit_rows = sched.cluster * bm;
  const long long pairs_per_tile = static_cast<long long>(unit_rows) * (bn / 2);
  const long long total = tail * pairs_per_tile;
  const long long range = static_cast<long long>(tail) * unit_rows * bn;  // elements per range
  for (long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int i = static_cast<int>(idx / pairs_per_tile);
    const int within = static_cast<int>(idx - i * pairs_per_tile);
    const int r = within / (bn / 2), c = (within % (bn / 2)) * 2;
    int um, un;
    sched.tile(sched.whole + i, um, un);
    const int row = um * unit_rows + r, col = un * bn + c;
    if (row >= e.m || col >= e.n) continue;
    const Acc* p = partial + (static_cast<long long>(i) * unit_rows + r) * bn + c;
    Acc v0 = 0, v1 = 0;
    for (int s = 0; s < sched.splits; ++s)
      add_pair(v0, v1, *reinterpret_cast<const Pair*>(p + s * range));
    store_pair(e, row, col, v0, v1);
  }
}

// The split-K plan of a problem with `k_tiles` k-tiles asked to run in `splits` ranges: k-tiles
// per range and the ranges that are not empty (1, k_tiles when there is no split).
inline void split_ranges(int k_tiles, int splits, int& per_split, int& ranges) {
  if (splits <= 1 || k_tiles <= 1) {
    per_split = k_tiles;
    ranges = 1;
    return;
  }
  per_split = (k_tiles + splits - 1) / splits;
  ranges = (k_tiles + per_split - 1) / per_split;
}

// ==== host side (templates instantiated by wgmma_sm90a.cu) ====================================

// Map of a row-major rows x cols matrix (ld elements of `esize` bytes) read or written in boxes
// of box_cols x box_rows with 128-byte swizzling; out-of-bounds elements read as zero and are
// not written. A map only describes memory, so maps already encoded are kept (the last 64,
// by their arguments): encoding took host time inside each timed launch of small problems.
inline std::string make_map(CUtensorMap* map, const void* base, int esize, long long rows,
                            long long cols, long long ld, int box_cols, int box_rows) {
  using Key = std::tuple<const void*, int, long long, long long, long long, int, int>;
  static std::mutex mu;
  static std::map<Key, CUtensorMap> cache;
  const Key key{base, esize, rows, cols, ld, box_cols, box_rows};
  {
    std::lock_guard<std::mutex> lock(mu);
    const auto it = cache.find(key);
    if (it != cache.end()) {
      *map = it->second;
      return "";
    }
  }
  const EncodeTiledFn fn = encode_tiled();
  if (!fn) return "cuTensorMapEncodeTiled is not available from the CUDA driver";
  const CUtensorMapDataType dt = esize == 1   ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                 : esize == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16
                                              : CU_TENSOR_MAP_DATA_TYPE_UINT32;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(ld) * esize};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t unit[2] = {1, 1};
  const CUresult r = fn(map, dt, 2, const_cast<void*>(base), dims, strides, box, unit,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r == CUDA_SUCCESS) {
    std::lock_guard<std::mutex> lock(mu);
    if (cache.size() >= 64) cache.clear();
    cache.emplace(key, *map);
    return "";
  }
  return "cuTensorMapEncodeTiled refused a " + std::to_string(rows) + " x " + std::to_string(cols) +
         " operand (ld " + std::to_string(ld) + ", error " + std::to_string(static_cast<int>(r)) +
         ")";
}

// Clusters of `cluster` CTAs of `kernel` that can be resident at once (cached per device,
// shared memory size and cluster size).
template <class K>
cudaError_t max_active_clusters(K kernel, int threads, std::size_t smem, int cluster, int* out) {
  static std::mutex mu;
  static std::map<std::tuple<const void*, int, std::size_t, int>, int> cache;
  int dev = 0;
  cudaError_t rc = cudaGetDevice(&dev);
  if (rc != cudaSuccess) return rc;
  std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_tuple(reinterpret_cast<const void*>(kernel), dev, smem, cluster);
  auto it = cache.find(key);
  if (it != cache.end()) {
    *out = it->second;
    return cudaSuccess;
  }
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(cluster, 1, 1);
  cfg.blockDim = dim3(threads, 1, 1);
  cfg.dynamicSmemBytes = smem;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = cluster;
  attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  int n = 0;
  rc = cudaOccupancyMaxActiveClusters(&n, kernel, &cfg);
  if (rc != cudaSuccess) return rc;
  cache[key] = n;
  *out = n;
  return cudaSuccess;
}

inline bool is_16bit(CKind c) {
  return c == CKind::bf16 || c == CKind::f16;
}

// Raises the kernel's dynamic shared-memory limit to at least `smem`: one driver call per kernel
// and device until a larger size is asked for (the limit is kept at the largest size asked, so a
// smaller configuration never lowers it under a larger one's launch).
template <class K>
cudaError_t allow_smem(K kernel, std::size_t smem) {
  static std::mutex mu;
  static std::map<std::pair<const void*, int>, std::size_t> allowed;
  int dev = 0;
  cudaError_t rc = cudaGetDevice(&dev);
  if (rc != cudaSuccess) return rc;
  const auto key = std::make_pair(reinterpret_cast<const void*>(kernel), dev);
  std::lock_guard<std::mutex> lock(mu);
  const auto it = allowed.find(key);
  if (it != allowed.end() && it->second >= smem) return cudaSuccess;
  rc = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            static_cast<int>(smem));
  if (rc == cudaSuccess) allowed[key] = smem;
  return rc;
}

// The stream-K tail of a persistent grid of `fit` clusters (sched has one unit per tile and no
// split): when the tiles leave the last round part-filled, the whole rounds stay as they are and
// the remaining tiles take as many k ranges as the grid has clusters for (at least
// kTailLeastKTiles k-tiles each). Leaves sched alone when nothing would be gained.
inline std::string plan_tail(const Problem& p, int fit, Schedule& sched, KernelArgs& args,
                             std::size_t tile_bytes) {
  if (p.lower || !p.reduce_splits || sched.splits > 1)
    return "the stream-K tail applies to full C without split-K only";
  const int tiles = sched.tiles(), rounds = tiles / fit, rest = tiles - rounds * fit;
  if (rounds < 1 || rest == 0) return "";
  int per_split = 0, ranges = 1;
  split_ranges(sched.k_tiles, std::min(fit / rest, sched.k_tiles / kTailLeastKTiles), per_split,
               ranges);
  if (ranges < 2) return "";
  const std::size_t need = std::size_t(rest) * ranges * sched.cluster * tile_bytes;
  if (!p.workspace || p.workspace_bytes < need)
    return "the stream-K tail needs " + std::to_string(need) +
           " bytes of workspace, the plan has " + std::to_string(p.workspace_bytes);
  sched.whole = rounds * fit;
  sched.splits = ranges;
  sched.per_split = per_split;
  sched.units = sched.whole + rest * ranges;
  args.partial = p.workspace;
  return "";
}

// Encodes the maps, fills the arguments and launches configuration C with kernel KERNEL (0:
// gemm_tma_wgmma, 1: gemm_warp_specialized).
template <class C, int KERNEL>
std::string launch_config(const Problem& p, const Options& o, cudaStream_t stream) {
  constexpr int es = Elem<typename C::Tag>::size;
  const int cluster = KERNEL == 0 ? 1 : o.cluster;
  CUtensorMap ma{}, mb{}, mc{};  // k == 0: no tile is ever loaded, the maps stay unused
  std::string err;
  // Split operands hold the big part's rows, then the small part's from row a_part (b_part).
  const long long a_rows = C::SPLIT ? 2LL * p.a_part : p.m;
  const long long b_rows = C::SPLIT ? 2LL * p.b_part : p.n;
  if (p.k > 0) {
    err = p.a_t ? make_map(&ma, p.a, es, p.k, p.m, p.lda, 64, C::BK)
                : make_map(&ma, p.a, es, a_rows, p.k, p.lda, C::BK, C::BM);
    if (err.empty())
      err = p.b_t ? make_map(&mb, p.b, es, b_rows, p.k, p.ldb, C::BK, C::BN / cluster)
                  : make_map(&mb, p.b, es, p.k, p.n, p.ldb, 64, C::BK);
  }
  if (!err.empty()) return err;
  KernelArgs args;

  Epilogue& e = args.epi;
  e.c = p.c;
  e.ldc = p.ldc;
  e.m = p.m;
  e.n = p.n;
  e.alpha = static_cast<float>(p.alpha);
  e.beta = static_cast<float>(p.beta);
  // Integer scalars wrap modulo 2^32 like the rest of kafel's i32 arithmetic.
  e.ialpha = static_cast<int>(static_cast<unsigned>(static_cast<long long>(p.alpha)));
  e.ibeta = static_cast<int>(static_cast<unsigned>(static_cast<long long>(p.beta)));
  e.c_kind = p.c_kind;
  const int c_size = is_16bit(p.c_kind) ? 2 : 4;
  e.paired = p.ldc % 2 == 0 && reinterpret_cast<std::uintptr_t>(p.c) % (2 * c_size) == 0;
  Schedule& sc = args.sched;
  const int m_blocks = (p.m + C::BM - 1) / C::BM;
  sc.cluster = cluster;
  sc.m_units = (m_blocks + cluster - 1) / cluster;
  sc.n_blocks = (p.n + C::BN - 1) / C::BN;
  sc.units = sc.m_units * sc.n_blocks;
  if (p.lower) {
    if (C::BM != C::BN || cluster != 1 || p.m != p.n)
      return "lower-triangle tiles need a square C, square tiles and no clusters";
    sc.lower = 1;
    sc.units = sc.m_units * (sc.m_units + 1) / 2;
  }
  sc.group = o.group > 0 ? o.group : 1;
  args.k_tiles = (p.k + C::BK - 1) / C::BK;
  split_ranges(args.k_tiles, KERNEL == 0 ? 1 : o.splits, sc.per_split, sc.splits);
  sc.k_tiles = args.k_tiles;
  sc.units *= sc.splits;
  if (sc.splits > 1) {
    args.partial = p.workspace;
    args.partial_ld = partial_ld(p.n);
    args.partial_rows = static_cast<int>(partial_rows(p.m));
    args.partial_slice = args.partial_ld * args.partial_rows;
    const std::size_t need = std::size_t(sc.splits) * args.partial_slice * 4;
    if (!p.workspace || p.workspace_bytes < need)
      return "split-K needs " + std::to_string(need) + " bytes of workspace, the plan has " +
             std::to_string(p.workspace_bytes);
    // The partial sums go through shared memory as C would (beta plays no part in them).
    args.c_rounds = KERNEL == 1 ? o.c_rounds : 0;
    if (args.c_rounds)
      err = make_map(&mc, p.workspace, 4, static_cast<long long>(sc.splits) * args.partial_rows,
                     p.n, args.partial_ld, 32, C::WM);
  } else if (KERNEL == 1 && o.c_rounds > 0 && p.beta == 0) {
    args.c_rounds = o.c_rounds;
    const int c_size = is_16bit(p.c_kind) ? 2 : 4;
    err = make_map(&mc, p.c, c_size, p.m, p.n, p.ldc, 128 / c_size, C::WM);
  }
  if (!err.empty()) return err;
  args.stages = o.stages;
  args.a_part = p.a_part;
  args.b_part = p.b_part;
  const std::size_t smem = C::smem_bytes(o.stages, args.c_rounds);
  if (sc.units == 0) return "";

  cudaLaunchConfig_t cfg{};
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = cluster;
  attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  cudaError_t rc;
  if constexpr (KERNEL == 0) {
    auto kernel = gemm_tma_wgmma<C>;
    rc = allow_smem(kernel, smem);
    if (rc != cudaSuccess) return cudaGetErrorString(rc);
    cfg.blockDim = dim3(256, 1, 1);
    cfg.gridDim = dim3(sc.units, 1, 1);
    rc = cudaLaunchKernelEx(&cfg, kernel, ma, mb, args);
  } else {
    auto kernel = gemm_warp_specialized<C>;
    rc = allow_smem(kernel, smem);
    if (rc != cudaSuccess) return cudaGetErrorString(rc);
    int units = sc.units;
    if (o.persistent) {
      int fit = 0;
      rc = max_active_clusters(kernel, 384, smem, cluster, &fit);
      if (rc != cudaSuccess) return cudaGetErrorString(rc);
      if (fit < 1) return "no cluster of " + std::to_string(cluster) + " CTAs fits on the device";
      if (o.tail) {
        if (std::string why = plan_tail(p, fit, sc, args, C::BM * C::BN * 4); !why.empty())
          return why;
      }
      units = sc.units < fit ? sc.units : fit;
    }
    cfg.blockDim = dim3(384, 1, 1);
    cfg.gridDim = dim3(units * cluster, 1, 1);
    rc = cudaLaunchKernelEx(&cfg, kernel, ma, mb, mc, args);
    const auto* partial = static_cast<const typename C::Acc*>(args.partial);
    if (rc == cudaSuccess && sc.whole > 0) {
      const long long pairs =
          static_cast<long long>(sc.tiles() - sc.whole) * cluster * C::BM * (C::BN / 2);
      rc = launch_behind(tail_reduce<typename C::Acc>, (pairs + 255) / 256, stream, partial, sc,
                         C::BM, C::BN, e);
    } else if (rc == cudaSuccess && sc.splits > 1 && p.reduce_splits) {
      const long long pairs = static_cast<long long>(p.m) * ((p.n + 1) / 2);
      rc = launch_behind(splitk_reduce<typename C::Acc>, (pairs + 255) / 256, stream, partial,
                         args.partial_ld, args.partial_slice, sc.splits, e);
    }
  }
  return rc == cudaSuccess ? "" : cudaGetErrorString(rc);
}

// Launches the skinny configurations, 128 x 64 and 64 x 128 (wgmma_skinny_sm90a.cu), as
// launch_config does the others; `o` has passed check_options.
std::string launch_skinny(Input in, const Problem& p, const Options& o, cudaStream_t stream);

}  // namespace kafel::cuda::sm90
