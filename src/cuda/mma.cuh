// Tensor-core building blocks of the mma.sync rungs (sm_80+): the PTX wrappers (ldmatrix,
// mma.sync, cvt to tf32, prmt) and one fragment policy per compute mode.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace kafel::cuda::tc {

// ---- PTX wrappers ---------------------------------------------------------------------------

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// Four 8x8 matrices of 16-bit elements; lane L gives the address of row L % 8 of matrix L / 8.
// Lane (g = L / 4, t = L % 4) receives row g, elements 2t and 2t+1 of each matrix (.trans: row
// 2t and 2t+1, element g).
__device__ __forceinline__ void ldsm4(std::uint32_t addr, std::uint32_t (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldsm4_trans(std::uint32_t addr, std::uint32_t (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ uint4 lds128(std::uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(addr));
  return v;
}
__device__ __forceinline__ std::uint32_t lds32(std::uint32_t addr) {
  std::uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(addr));
  return v;
}
__device__ __forceinline__ double lds64(std::uint32_t addr) {
  double v;
  asm volatile("ld.shared.f64 %0, [%1];\n" : "=d"(v) : "r"(addr));
  return v;
}

// fp32 -> tf32 (round to nearest, ties away), kept in a 32-bit register.
__device__ __forceinline__ std::uint32_t to_tf32(std::uint32_t x) {
  std::uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(__uint_as_float(x)));
  return r;
}

// Bytes of {b, a} (a: 0-3, b: 4-7) picked by the four selector nibbles.
__device__ __forceinline__ std::uint32_t prmt(std::uint32_t a, std::uint32_t b, std::uint32_t sel) {
  std::uint32_t r;
  asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(r) : "r"(a), "r"(b), "r"(sel));
  return r;
}

// D = A B + D for one 16x8 tile of C (m16n8kK). C fragment of every shape: lane (g, t) holds
// c0, c1 = C(g, 2t), C(g, 2t+1) and c2, c3 = C(g+8, 2t), C(g+8, 2t+1).
__device__ __forceinline__ void mma_f16(float (&c)[4], const std::uint32_t (&a)[4],
                                        const std::uint32_t (&b)[2]) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void mma_bf16(float (&c)[4], const std::uint32_t (&a)[4],
                                         const std::uint32_t (&b)[2]) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void mma_tf32(float (&c)[4], const std::uint32_t (&a)[4],
                                         const std::uint32_t (&b)[2]) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void mma_s8(int (&c)[4], const std::uint32_t (&a)[4],
                                       const std::uint32_t (&b)[2]) {
  asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void mma_f64_k8(double (&c)[4], const double (&a)[4],
                                           const double (&b)[2]) {
  asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
}
// m16n8k16 f64 exists from sm_90 on (DMMA.16x8x16 in SASS).
__device__ __forceinline__ void mma_f64_k16(double (&c)[4], const double (&a)[8],
                                            const double (&b)[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7, %8, %9, %10, %11}, {%12, %13, %14, %15}, {%0, %1, %2, %3};\n"
      : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
        "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
#else
  const double a0[4] = {a[0], a[1], a[2], a[3]}, a1[4] = {a[4], a[5], a[6], a[7]};
  const double b0[2] = {b[0], b[1]}, b1[2] = {b[2], b[3]};
  mma_f64_k8(c, a0, b0);
  mma_f64_k8(c, a1, b1);
#endif
}

// ---- shared-memory swizzles -----------------------------------------------------------------
// A tile row is R chunks of 16 bytes. The physical chunk of logical chunk c in row r is
// c ^ x(r), x < 8, so a swizzle permutes chunks inside aligned groups of 8 (a 128-byte line:
// all 32 banks). Each x is chosen for the rows one fragment load touches at once (see the
// policies), so those land on distinct 16-byte bank groups.

// 8 consecutive rows, one chunk each (ldmatrix, and LDS.128 fragments of 8 rows).
struct SwzRows {
  template <int R>
  __device__ static __forceinline__ int x(int r) {
    static_assert(R == 4 || R % 8 == 0, "ldmatrix tiles need rows of 4 or 8k chunks");
    return R >= 8 ? (r & 7) : ((r >> 1) & 3);
  }
};
// Four rows (t < 4) of two neighbouring chunks each: tf32 B (LDS.32 of 8 columns), f64 A and B
// (LDS.64 of 4 rows or columns per half-warp).
struct SwzPairs4 {
  template <int R>
  __device__ static __forceinline__ int x(int r) {
    static_assert(R % 8 == 0, "needs rows of 8k chunks");
    return (r & 3) << 1;
  }
};
// i8 B: the rows {0,1,4,5,8,9,12,13} (+2) of one transposed ldmatrix (see OpI8).
struct SwzI8B {
  template <int R>
  __device__ static __forceinline__ int x(int r) {
    static_assert(R % 8 == 0, "needs rows of 8k chunks");
    return (r & 1) | ((r >> 1) & 6);
  }
};

// Byte offset of (row, chunk) in a tile of R chunks per row: swizzled, or (the first
// tensor-core rung) rows padded by one chunk.
template <int R, class Swz, bool SWIZZLE>
struct TileLayout {
  static constexpr int ROW_BYTES = SWIZZLE ? R * 16 : (R + 1) * 16;
  __device__ static __forceinline__ std::uint32_t off(int row, int chunk) {
    const int c = SWIZZLE ? (chunk ^ Swz::template x<R>(row)) : chunk;
    return static_cast<std::uint32_t>(row * ROW_BYTES + c * 16);
  }
};

// ---- fragment policies ----------------------------------------------------------------------
// One per compute mode. A policy says how a warp reads its A (MT tiles of 16 rows) and B (NT
// tiles of 8 columns) fragments for k step `ks` from the shared tiles (A: rows m, chunks along
// k; B: rows k, chunks along n; both as the global layout, copied by cp.async) and issues the
// mma.sync instructions. Where the hardware fragment is not a run of contiguous elements, the
// policy permutes k (the same permutation for A and B) and interleaves P tiles of 8 columns,
// so every load is one ldmatrix or LDS.128: logical column n of tile P*h + p sits at physical
// column 8*P*h + P*n + p. Lane (g, t) then holds, for rows g and g+8 of each 16-row tile, the
// 2P physical columns 8*P*h + 2*P*t ... + 2P - 1: element e of that run is accumulator
// c[2*half + e / P] of tile P*h + e % P (used by the epilogue).

// f16 / bf16 inputs, f32 accumulation: m16n8k16, A by ldmatrix, B by ldmatrix.trans.
template <bool BF16>
struct Op16 {
  using Acc = float;
  static constexpr int ES = 2, IK = 16, P = 1;
  using SwzA = SwzRows;
  using SwzB = SwzRows;
  template <int MT, int NT>
  struct Frags {
    std::uint32_t a[MT][4], b[NT][2];
  };
  template <class LA, class LB, int MT, int NT>
  __device__ static __forceinline__ void load(std::uint32_t sa, std::uint32_t sb, int wm0, int wn0,
                                              int ks, int lane, Frags<MT, NT>& f) {
#pragma unroll
    for (int i = 0; i < MT; ++i)
      ldsm4(sa + LA::off(wm0 + 16 * i + (lane & 15), 2 * ks + (lane >> 4)), f.a[i]);
#pragma unroll
    for (int j = 0; j < NT; j += 2) {
      std::uint32_t r[4];
      const int krow = 16 * ks + (lane & 7) + (lane & 8);
      ldsm4_trans(sb + LB::off(krow, (wn0 + 8 * j) / 8 + (lane >> 4)), r);
      f.b[j][0] = r[0];
      f.b[j][1] = r[1];
      f.b[j + 1][0] = r[2];
      f.b[j + 1][1] = r[3];
    }
  }
  template <int MT, int NT>
  __device__ static __forceinline__ void mma(float (&acc)[MT][NT][4], const Frags<MT, NT>& f) {
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int jj = 0; jj < NT; ++jj) {
        const int j = (i & 1) ? NT - 1 - jj : jj;  // serpentine: reuse the B operand
        if constexpr (BF16)
          mma_bf16(acc[i][j], f.a[i], f.b[j]);
        else
          mma_f16(acc[i][j], f.a[i], f.b[j]);
      }
  }
};

// fp32 inputs on tf32 tensor cores: m16n8k8. A by ldmatrix (a 32-bit element is two 16-bit
// halves: lane (g, t) gets A(g, t)). A B fragment is {B(t, g), B(t + 4, g)} in two consecutive
// registers, and B is n-contiguous in shared memory, so each is one LDS.32 (a wider load would
// put the values in the wrong registers and cost a MOV per value). X3: 3xtf32, each operand
// split into big = tf32(x) and small = tf32(x - big); per k step the three products
// small*big + big*small + big*big go into a fresh f32 tile, added to the accumulator by FADD:
// the tensor core's own accumulation truncates, and over a long k that bias would dominate.
template <bool X3, bool ROUND = true>
struct OpTf32 {
  using Acc = float;
  static constexpr int ES = 4, IK = 8, P = 1;
  using SwzA = SwzRows;
  using SwzB = SwzPairs4;
  template <int MT, int NT>
  struct Frags {
    std::uint32_t a[MT][4], b[NT][2];
    std::uint32_t as[X3 ? MT : 1][4], bs[X3 ? NT : 1][2];  // small parts (3xtf32)
  };
  __device__ static __forceinline__ void split(std::uint32_t& big, std::uint32_t& small) {
    const std::uint32_t x = big;
    if constexpr (ROUND || X3) big = to_tf32(x);
    if constexpr (X3) {
      big &= 0xffffe000u;  // exact tf32, so x - big is the exact remainder
      small = to_tf32(__float_as_uint(__uint_as_float(x) - __uint_as_float(big)));
    }
  }
  template <class LA, class LB, int MT, int NT>
  __device__ static __forceinline__ void load(std::uint32_t sa, std::uint32_t sb, int wm0, int wn0,
                                              int ks, int lane, Frags<MT, NT>& f) {
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < MT; ++i) {
      ldsm4(sa + LA::off(wm0 + 16 * i + (lane & 15), 2 * ks + (lane >> 4)), f.a[i]);
#pragma unroll
      for (int r = 0; r < 4; ++r) split(f.a[i][r], f.as[X3 ? i : 0][r]);
    }
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int col = wn0 + 8 * j + g;
        f.b[j][half] = lds32(sb + LB::off(8 * ks + t + 4 * half, col / 4) + (col % 4) * 4);
        split(f.b[j][half], f.bs[X3 ? j : 0][half]);
      }
  }
  template <int MT, int NT>
  __device__ static __forceinline__ void mma(float (&acc)[MT][NT][4], const Frags<MT, NT>& f) {
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int jj = 0; jj < NT; ++jj) {
        const int j = (i & 1) ? NT - 1 - jj : jj;
        if constexpr (X3) {
          float d[4] = {0.f, 0.f, 0.f, 0.f};
          mma_tf32(d, f.as[i], f.b[j]);
          mma_tf32(d, f.a[i], f.bs[j]);
          mma_tf32(d, f.a[i], f.b[j]);
#pragma unroll
          for (int r = 0; r < 4; ++r) acc[i][j][r] += d[r];
        } else {
          mma_tf32(acc[i][j], f.a[i], f.b[j]);
        }
      }
  }
};

// int8 inputs, int32 accumulation: m16n8k32. A by ldmatrix (lane (g, t) gets A(g, 4t..4t+3)).
// B is stored n-contiguous, but a B fragment needs 4 consecutive k of one column: one
// ldmatrix.trans over 16-bit pairs of columns, with its 8 row addresses at k = {0,1,4,5,8,9,
// 12,13} (matrix X) or those + 2 (Y), gives lane (g, t) k = 4t, 4t+1 (X) and 4t+2, 4t+3 (Y)
// for columns 2g and 2g+1; two byte permutes make the fragments of both columns (P = 2).
struct OpI8 {
  using Acc = int;
  static constexpr int ES = 1, IK = 32, P = 2;
  using SwzA = SwzRows;
  using SwzB = SwzI8B;
  template <int MT, int NT>
  struct Frags {
    std::uint32_t a[MT][4], b[NT][2];
  };
  template <class LA, class LB, int MT, int NT>
  __device__ static __forceinline__ void load(std::uint32_t sa, std::uint32_t sb, int wm0, int wn0,
                                              int ks, int lane, Frags<MT, NT>& f) {
#pragma unroll
    for (int i = 0; i < MT; ++i)
      ldsm4(sa + LA::off(wm0 + 16 * i + (lane & 15), 2 * ks + (lane >> 4)), f.a[i]);
    const int mat = lane >> 3, q = lane & 7;
    const int krow = 32 * ks + (mat >> 1) * 16 + (q >> 1) * 4 + (q & 1) + (mat & 1) * 2;
#pragma unroll
    for (int h = 0; h < NT / 2; ++h) {
      std::uint32_t r[4];
      ldsm4_trans(sb + LB::off(krow, (wn0 + 16 * h) / 16), r);
      f.b[2 * h][0] = prmt(r[0], r[1], 0x6420);
      f.b[2 * h][1] = prmt(r[2], r[3], 0x6420);
      f.b[2 * h + 1][0] = prmt(r[0], r[1], 0x7531);
      f.b[2 * h + 1][1] = prmt(r[2], r[3], 0x7531);
    }
  }
  template <int MT, int NT>
  __device__ static __forceinline__ void mma(int (&acc)[MT][NT][4], const Frags<MT, NT>& f) {
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int jj = 0; jj < NT; ++jj) {
        const int j = (i & 1) ? NT - 1 - jj : jj;
        mma_s8(acc[i][j], f.a[i], f.b[j]);
      }
  }
};

// f64 on the DMMA units: m16n8k8 (IK = 8) or m16n8k16 (IK = 16, sm_90). Fragments: a[2j] =
// A(g, t + 4j), a[2j+1] = A(g+8, t + 4j), b[j] = B(t + 4j, g), each in consecutive registers
// in that order; no two neighbours are neighbours in shared memory, so each is one LDS.64.
template <int IK_>
struct OpF64 {
  using Acc = double;
  static constexpr int ES = 8, IK = IK_, P = 1, J = IK / 4;
  using SwzA = SwzPairs4;  // one LDS.64: rows g (4 per half-warp) x k t (two chunks)
  using SwzB = SwzPairs4;  // rows t (4) x columns g (two chunks)
  template <int MT, int NT>
  struct Frags {
    double a[MT][2 * J], b[NT][J];
  };
  template <class LA, class LB, int MT, int NT>
  __device__ static __forceinline__ void load(std::uint32_t sa, std::uint32_t sb, int wm0, int wn0,
                                              int ks, int lane, Frags<MT, NT>& f) {
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int j = 0; j < J; ++j)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int k = IK * ks + t + 4 * j;
          f.a[i][2 * j + half] =
              lds64(sa + LA::off(wm0 + 16 * i + g + 8 * half, k / 2) + (k % 2) * 8);
        }
#pragma unroll
    for (int jt = 0; jt < NT; ++jt)
#pragma unroll
      for (int j = 0; j < J; ++j) {
        const int col = wn0 + 8 * jt + g;
        f.b[jt][j] = lds64(sb + LB::off(IK * ks + t + 4 * j, col / 2) + (col % 2) * 8);
      }
  }
  template <int MT, int NT>
  __device__ static __forceinline__ void mma(double (&acc)[MT][NT][4], const Frags<MT, NT>& f) {
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int jj = 0; jj < NT; ++jj) {
        const int j = (i & 1) ? NT - 1 - jj : jj;
        if constexpr (IK == 16)
          mma_f64_k16(acc[i][j], f.a[i], f.b[j]);
        else
          mma_f64_k8(acc[i][j], f.a[i], f.b[j]);
      }
  }
};

}  // namespace kafel::cuda::tc
