// The block-level GEMM kernel of the tensor-core rungs: cp.async tile copies with zero-filled
// edges into a ring of STAGES shared-memory stages, warp tiles computed by a fragment policy of
// mma.cuh, and an alpha/beta epilogue that writes f32/f16/bf16, i32 or f64.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "cuda/mma.cuh"
#include "cuda/mma_rungs.hpp"
#include "cuda/runtime.hpp"
#include "cuda/vec.cuh"
#include "kafel/error.hpp"

namespace kafel::cuda::tc {

// What a launch gets: row-major A (m x k), B (k x n), C (m x n), leading dimensions in elements,
// rows 16-byte aligned (the plan pads them). Scalars in the accumulator type.
template <class Acc>
struct Args {
  const void* a;
  const void* b;
  void* c;
  long long lda, ldb, ldc;
  int m, n, k;
  Out out;
  bool beta_zero;  // C is never read (it may hold NaN)
  Acc alpha, beta;
};

// One compiled tile shape. STAGES = 1: load, wait, compute, no overlap (the first rung).
// XFRAG: the first fragments of tile kt+1 are read before the last k step of tile kt is
// computed (the barrier moves before that step), so no warp waits on shared-memory latency
// after a barrier.
template <class Op_, int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_, bool SWIZZLE_,
          bool XFRAG_ = true>
struct Config {
  using Op = Op_;
  using Acc = typename Op::Acc;
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, STAGES = STAGES_;
  static constexpr bool XFRAG = XFRAG_ && STAGES_ >= 3;
  static constexpr int NWARPS = (BM / WM) * (BN / WN), NT = 32 * NWARPS;
  static constexpr int MT = WM / 16, NTL = WN / 8;    // mma tiles per warp
  static constexpr int EPC = 16 / Op::ES;             // elements per 16-byte chunk
  static constexpr int RA = BK / EPC, RB = BN / EPC;  // chunks per tile row
  using LA = TileLayout<RA, typename Op::SwzA, SWIZZLE_>;
  using LB = TileLayout<RB, typename Op::SwzB, SWIZZLE_>;
  static constexpr int A_BYTES = BM * LA::ROW_BYTES, B_BYTES = BK * LB::ROW_BYTES;
  static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
  static constexpr int SMEM = (STAGES > 1 ? STAGES : 1) * STAGE_BYTES;
  static constexpr int CA = BM * RA / NT, CB = BK * RB / NT;  // chunks each thread copies
  static constexpr int KSTEPS = BK / Op::IK;
  static constexpr int MIN_BLOCKS = NT <= 128 ? 2 : 1;  // 128-thread blocks: two per SM
  static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % (8 * Op::P) == 0, "warp tile");
  static_assert(BK % Op::IK == 0 && (BM * RA) % NT == 0 && (BK * RB) % NT == 0, "copy split");
  static_assert(NT % RA == 0 && NT % RB == 0, "a thread's chunks must share a column");
  static_assert(!XFRAG || KSTEPS % 2 == 0, "fragment double buffer needs an even k-step count");
};

// A thread's part of copying one k-tile of A and B into a stage: its chunks share one column
// (of A: k; of B: n) and lie NT / R rows apart, so the addresses are fixed for the whole k
// loop up to the k offset. `full` tiles (inside A and B) skip all bounds arithmetic.
template <class C>
struct Copier {
  static constexpr int ES = C::Op::ES;
  const char* a0;  // A(bm + ra, ca) and B(rb, bn + cb) in bytes; the k offset is added per tile
  const char* b0;
  long long a_rows, b_rows, b_k;       // bytes between this thread's chunks; B bytes per k row
  int ra, ca, rb, cb;                  // first chunk's row and column inside the tile (elements)
  std::uint32_t sa[C::CA], sb[C::CB];  // chunk offsets inside a stage

  template <class Acc>
  __device__ __forceinline__ Copier(const Args<Acc>& g, int bm, int bn) {
    const int tid = threadIdx.x;
    ra = tid / C::RA;
    ca = (tid % C::RA) * C::EPC;
    rb = tid / C::RB;
    cb = (tid % C::RB) * C::EPC;
    a0 = static_cast<const char*>(g.a) + ((bm + ra) * g.lda + ca) * ES;
    b0 = static_cast<const char*>(g.b) + (static_cast<long long>(rb) * g.ldb + bn + cb) * ES;
    a_rows = (C::NT / C::RA) * g.lda * ES;
    b_rows = (C::NT / C::RB) * g.ldb * ES;
    b_k = g.ldb * ES;
#pragma unroll
    for (int i = 0; i < C::CA; ++i) sa[i] = C::LA::off(ra + i * (C::NT / C::RA), ca / C::EPC);
#pragma unroll
    for (int i = 0; i < C::CB; ++i)
      sb[i] = C::A_BYTES + C::LB::off(rb + i * (C::NT / C::RB), cb / C::EPC);
  }

  template <class Acc>
  __device__ __forceinline__ void load(const Args<Acc>& g, std::uint32_t stage, int k0, int bm,
                                       int bn, bool full) const {
    const char* pa = a0 + static_cast<long long>(k0) * ES;
    const char* pb = b0 + k0 * b_k;
    if (full) {
#pragma unroll
      for (int i = 0; i < C::CA; ++i) cp_async16_full(stage + sa[i], pa + i * a_rows);
#pragma unroll
      for (int i = 0; i < C::CB; ++i) cp_async16_full(stage + sb[i], pb + i * b_rows);
      return;
    }
    // Edge tiles: bytes past m, n or k are zero-filled (cp.async reads only `bytes`).
    const int a_bytes = clamp16((g.k - k0 - ca) * ES);
#pragma unroll
    for (int i = 0; i < C::CA; ++i) {
      const bool in = bm + ra + i * (C::NT / C::RA) < g.m && a_bytes > 0;
      cp_async16_zfill(stage + sa[i], in ? pa + i * a_rows : g.a, in ? a_bytes : 0);
    }
    const int b_bytes = clamp16((g.n - bn - cb) * ES);
#pragma unroll
    for (int i = 0; i < C::CB; ++i) {
      const bool in = k0 + rb + i * (C::NT / C::RB) < g.k && b_bytes > 0;
      cp_async16_zfill(stage + sb[i], in ? pb + i * b_rows : g.b, in ? b_bytes : 0);
    }
  }

  __device__ static __forceinline__ int clamp16(int bytes) {
    return bytes < 0 ? 0 : (bytes > 16 ? 16 : bytes);
  }
  __device__ static __forceinline__ void cp_async16_full(std::uint32_t s, const void* gmem) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
  }
  __device__ static __forceinline__ void cp_async16_zfill(std::uint32_t s, const void* gmem,
                                                          int bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(bytes)
                 : "memory");
  }
};

// ---- epilogue -------------------------------------------------------------------------------

// C elements to the accumulator type and back (16-bit C: widened to f32, rounded once).
__device__ __forceinline__ float to_acc(float x) {
  return x;
}
__device__ __forceinline__ float to_acc(__half x) {
  return __half2float(x);
}
__device__ __forceinline__ float to_acc(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
__device__ __forceinline__ int to_acc(int x) {
  return x;
}
__device__ __forceinline__ double to_acc(double x) {
  return x;
}
template <class T, class Acc>
__device__ __forceinline__ T from_acc(Acc x) {
  if constexpr (std::is_same_v<T, __half>)
    return __float2half_rn(x);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16_rn(x);
  else
    return x;
}

// alpha * acc + beta * c in the accumulator type, rounded once to the output type.
__device__ __forceinline__ float scale(float acc, float c, const Args<float>& g) {
  return g.beta_zero ? g.alpha * acc : fmaf(g.beta, c, g.alpha * acc);
}
__device__ __forceinline__ double scale(double acc, double c, const Args<double>& g) {
  return g.beta_zero ? g.alpha * acc : fma(g.beta, c, g.alpha * acc);
}
__device__ __forceinline__ int scale(int acc, int c, const Args<int>& g) {  // wraps mod 2^32
  const unsigned r = static_cast<unsigned>(g.alpha) * static_cast<unsigned>(acc);
  return static_cast<int>(g.beta_zero ? r : r + static_cast<unsigned>(g.beta) * unsigned(c));
}

// Copies N bytes between 16-byte aligned places in the widest accesses that fit.
template <int N>
__device__ __forceinline__ void copy_aligned(void* dst, const void* src) {
  if constexpr (N % 16 == 0) {
#pragma unroll
    for (int i = 0; i < N / 16; ++i)
      reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(src)[i];
  } else if constexpr (N == 8) {
    *reinterpret_cast<uint2*>(dst) = *reinterpret_cast<const uint2*>(src);
  } else if constexpr (N == 4) {
    *reinterpret_cast<unsigned*>(dst) = *reinterpret_cast<const unsigned*>(src);
  } else {
    static_assert(N == 2, "run of 2, 4, 8 or 16k bytes");
    *reinterpret_cast<unsigned short*>(dst) = *reinterpret_cast<const unsigned short*>(src);
  }
}

// Writes RUN consecutive elements of row `row` from column `col`: one vector access when the
// run lies inside C (its start is RUN-element aligned), else element by element.
template <class T, class Acc, int RUN>
__device__ __forceinline__ void store_run(const Args<Acc>& g, int row, int col,
                                          const Acc (&v)[RUN]) {
  if (row >= g.m) return;
  T* p = static_cast<T*>(g.c) + row * g.ldc + col;
  if (col + RUN <= g.n) {
    alignas(16) T old[RUN];
    alignas(16) T out[RUN];
    if (!g.beta_zero) copy_aligned<RUN * sizeof(T)>(old, p);
#pragma unroll
    for (int e = 0; e < RUN; ++e) {
      const Acc c = g.beta_zero ? Acc(0) : to_acc(old[e]);
      out[e] = from_acc<T>(scale(v[e], c, g));
    }
    copy_aligned<RUN * sizeof(T)>(p, out);
    return;
  }
#pragma unroll
  for (int e = 0; e < RUN; ++e) {
    if (col + e >= g.n) break;
    const Acc c = g.beta_zero ? Acc(0) : to_acc(p[e]);
    p[e] = from_acc<T>(scale(v[e], c, g));
  }
}

// Every accumulator of the warp, as runs of 2P columns (see the fragment policies in mma.cuh).
template <class C, class T>
__device__ __forceinline__ void store_tile(const Args<typename C::Acc>& g,
                                           const typename C::Acc (&acc)[C::MT][C::NTL][4], int row0,
                                           int col0, int lane) {
  using Acc = typename C::Acc;
  constexpr int P = C::Op::P, RUN = 2 * P;
  const int gi = lane >> 2, t = lane & 3;
#pragma unroll
  for (int i = 0; i < C::MT; ++i)
#pragma unroll
    for (int half = 0; half < 2; ++half)
#pragma unroll
      for (int h = 0; h < C::NTL / P; ++h) {
        Acc v[RUN];
#pragma unroll
        for (int e = 0; e < RUN; ++e) v[e] = acc[i][P * h + e % P][2 * half + e / P];
        store_run<T>(g, row0 + 16 * i + gi + 8 * half, col0 + 8 * P * h + RUN * t, v);
      }
}

// ---- the kernel -----------------------------------------------------------------------------

// Blocks walk C in groups of GROUP_M block rows, column by column inside a group, so the blocks
// resident at one time share their A and B panels in L2.
constexpr int kGroupM = 8;

template <class C>
__device__ __forceinline__ void block_tile(const Args<typename C::Acc>& g, int& bm, int& bn) {
  const int tiles_m = (g.m + C::BM - 1) / C::BM, tiles_n = (g.n + C::BN - 1) / C::BN;
  const int pid = blockIdx.x, per_group = kGroupM * tiles_n;
  const int first_m = (pid / per_group) * kGroupM;
  const int rows = min(tiles_m - first_m, kGroupM);
  const int in_group = pid % per_group;
  bm = (first_m + in_group % rows) * C::BM;
  bn = (in_group / rows) * C::BN;
}

template <class C>
__device__ __forceinline__ void compute_stage(std::uint32_t stage, int wm0, int wn0, int lane,
                                              typename C::Acc (&acc)[C::MT][C::NTL][4]) {
  using Op = typename C::Op;
#pragma unroll
  for (int ks = 0; ks < C::KSTEPS; ++ks) {
    typename Op::template Frags<C::MT, C::NTL> f;
    Op::template load<typename C::LA, typename C::LB>(stage, stage + C::A_BYTES, wm0, wn0, ks, lane,
                                                      f);
    Op::mma(acc, f);
  }
}

template <class C>
__global__ void __launch_bounds__(C::NT, C::MIN_BLOCKS) mma_gemm(const Args<typename C::Acc> g) {
  using Acc = typename C::Acc;
  extern __shared__ __align__(128) unsigned char smem[];
  const std::uint32_t base = smem_addr(smem);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int wm0 = (warp / (C::BN / C::WN)) * C::WM, wn0 = (warp % (C::BN / C::WN)) * C::WN;
  int bm, bn;
  block_tile<C>(g, bm, bn);

  Acc acc[C::MT][C::NTL][4];
#pragma unroll
  for (int i = 0; i < C::MT; ++i)
#pragma unroll
    for (int j = 0; j < C::NTL; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = Acc(0);

  const Copier<C> cp(g, bm, bn);
  const int ktiles = (g.k + C::BK - 1) / C::BK;
  const bool inner = bm + C::BM <= g.m && bn + C::BN <= g.n;
  auto full = [&](int kt) { return inner && (kt + 1) * C::BK <= g.k; };

  if constexpr (C::STAGES == 1) {
    for (int kt = 0; kt < ktiles; ++kt) {
      cp.load(g, base, kt * C::BK, bm, bn, full(kt));
      cp_async_commit();
      cp_async_wait<0>();
      __syncthreads();
      compute_stage<C>(base, wm0, wn0, lane, acc);
      __syncthreads();
    }
  } else if constexpr (C::XFRAG) {
    using Op = typename C::Op;
    using Frags = typename Op::template Frags<C::MT, C::NTL>;
#pragma unroll
    for (int s = 0; s < C::STAGES - 1; ++s) {
      if (s < ktiles) cp.load(g, base + s * C::STAGE_BYTES, s * C::BK, bm, bn, full(s));
      cp_async_commit();
    }
    cp_async_wait<C::STAGES - 2>();
    __syncthreads();
    Frags f[2];
    if (ktiles > 0)
      Op::template load<typename C::LA, typename C::LB>(base, base + C::A_BYTES, wm0, wn0, 0, lane,
                                                        f[0]);
    int read = 0, write = C::STAGES - 1;
    for (int kt = 0; kt < ktiles; ++kt) {
#pragma unroll
      for (int ks = 0; ks < C::KSTEPS; ++ks) {
        if (ks == C::KSTEPS - 1) {
          // Tile kt+1 must have landed (groups are committed one per tile), and every warp has
          // read all of tile kt-1, whose stage the next copy overwrites.
          cp_async_wait<C::STAGES - 3>();
          __syncthreads();
          const int next = kt + C::STAGES - 1;
          if (next < ktiles)
            cp.load(g, base + write * C::STAGE_BYTES, next * C::BK, bm, bn, full(next));
          cp_async_commit();
          read = read + 1 == C::STAGES ? 0 : read + 1;
          write = write + 1 == C::STAGES ? 0 : write + 1;
        }
        const std::uint32_t stage = base + read * C::STAGE_BYTES;
        // After the last tile this reads a stale stage, unused; a branch here cost ptxas
        // registers (spills in the XFRAG kernels).
        Op::template load<typename C::LA, typename C::LB>(
            stage, stage + C::A_BYTES, wm0, wn0, (ks + 1) % C::KSTEPS, lane, f[(ks + 1) & 1]);
        Op::mma(acc, f[ks & 1]);
      }
    }
    cp_async_wait<0>();
  } else {
    // Ring of STAGES buffers: tiles kt+1 .. kt+STAGES-1 are in flight while kt is computed.
    // One commit per iteration (empty past the end) keeps wait_group's count uniform.
#pragma unroll
    for (int s = 0; s < C::STAGES - 1; ++s) {
      if (s < ktiles) cp.load(g, base + s * C::STAGE_BYTES, s * C::BK, bm, bn, full(s));
      cp_async_commit();
    }
    int read = 0, write = C::STAGES - 1;
    for (int kt = 0; kt < ktiles; ++kt) {
      cp_async_wait<C::STAGES - 2>();
      __syncthreads();  // tile kt is visible to all; stage `write` (tile kt-1) is free
      const int next = kt + C::STAGES - 1;
      if (next < ktiles)
        cp.load(g, base + write * C::STAGE_BYTES, next * C::BK, bm, bn, full(next));
      cp_async_commit();
      compute_stage<C>(base + read * C::STAGE_BYTES, wm0, wn0, lane, acc);
      read = read + 1 == C::STAGES ? 0 : read + 1;
      write = write + 1 == C::STAGES ? 0 : write + 1;
    }
    cp_async_wait<0>();
  }

  const int row0 = bm + wm0, col0 = bn + wn0;
  if constexpr (std::is_same_v<Acc, float>) {
    if (g.out == Out::f16)
      store_tile<C, __half>(g, acc, row0, col0, lane);
    else if (g.out == Out::bf16)
      store_tile<C, __nv_bfloat16>(g, acc, row0, col0, lane);
    else
      store_tile<C, float>(g, acc, row0, col0, lane);
  } else {
    store_tile<C, Acc>(g, acc, row0, col0, lane);
  }
}

// The kernel's arguments for a problem, scalars converted to the accumulator type (i32:
// truncated to an integer, then modulo 2^32).
template <class Acc>
Args<Acc> args_of(const Problem& p) {
  Args<Acc> g{p.a, p.b, p.c,   p.lda,         p.ldb,  p.ldc, p.m,
              p.n, p.k, p.out, p.beta == 0.0, Acc(0), Acc(0)};
  if constexpr (std::is_same_v<Acc, int>) {
    g.alpha = static_cast<int>(static_cast<std::uint32_t>(static_cast<long long>(p.alpha)));
    g.beta = static_cast<int>(static_cast<std::uint32_t>(static_cast<long long>(p.beta)));
  } else {
    g.alpha = static_cast<Acc>(p.alpha);
    g.beta = static_cast<Acc>(p.beta);
  }
  return g;
}

// Enqueues the kernel of config C (one block per tile of C, a 1-D grid); throws Unsupported
// when the tiles exceed the grid.
template <class C>
void launch(const Problem& p, cudaStream_t s) {
  const long long tiles =
      static_cast<long long>((p.m + C::BM - 1) / C::BM) * ((p.n + C::BN - 1) / C::BN);
  if (tiles > 0x7fffffffLL)
    throw Unsupported("tensor-core GEMM: " + std::to_string(tiles) +
                      " tiles of C exceed the grid limit of 2^31 - 1 blocks");
  if (tiles == 0) return;
  // The opt-in above 48 KB of shared memory holds for the current device only: set per launch.
  KAFEL_CUDA_CHECK(
      cudaFuncSetAttribute(mma_gemm<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, C::SMEM));
  mma_gemm<C><<<static_cast<unsigned>(tiles), C::NT, C::SMEM, s>>>(args_of<typename C::Acc>(p));
}

// The fragment policy of each mode.
template <Mode M>
struct OpOf;
template <>
struct OpOf<Mode::f16> {
  using type = Op16<false>;
};
template <>
struct OpOf<Mode::bf16> {
  using type = Op16<true>;
};
template <>
struct OpOf<Mode::tf32> {
  using type = OpTf32<false>;
};
template <>
struct OpOf<Mode::tf32x3> {
  using type = OpTf32<true>;
};
template <>
struct OpOf<Mode::i8> {
  using type = OpI8;
};
template <>
struct OpOf<Mode::f64> {
  using type = OpF64<8>;
};

// Calls f(std::integral_constant<Mode, m>{}) for the run-time mode m.
template <class F>
void by_mode(Mode m, F&& f) {
  switch (m) {
    case Mode::f16:
      return f(std::integral_constant<Mode, Mode::f16>{});
    case Mode::bf16:
      return f(std::integral_constant<Mode, Mode::bf16>{});
    case Mode::tf32:
      return f(std::integral_constant<Mode, Mode::tf32>{});
    case Mode::tf32x3:
      return f(std::integral_constant<Mode, Mode::tf32x3>{});
    case Mode::i8:
      return f(std::integral_constant<Mode, Mode::i8>{});
    case Mode::f64:
      return f(std::integral_constant<Mode, Mode::f64>{});
  }
}

// The table entry of one compiled kernel.
template <Mode M, int BM, int BN, int BK, int WM, int WN, int STAGES, bool SWIZZLE, bool XFRAG>
Compiled entry() {
  using C = Config<typename OpOf<M>::type, BM, BN, BK, WM, WN, STAGES, SWIZZLE, XFRAG>;
  return {M, {BM, BN, BK, WM, WN, STAGES, C::XFRAG}, C::SMEM, &launch<C>};
}

}  // namespace kafel::cuda::tc
