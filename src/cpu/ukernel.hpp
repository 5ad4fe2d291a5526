// The micro-kernel contract of the packed GEMM, its packed-panel formats and the register-tile
// table of every ISA. A micro-kernel computes one full MR x NR tile of C from packed panels.
#pragma once

#include <cstdint>

#include "cpu/cpu_features.hpp"
#include "kafel/types.hpp"

namespace kafel::cpu {

// How A and B are packed and what the micro-kernel computes in. Plain formats hold one value
// per k (widened to the compute type); grouped ones hold G consecutive k values of a row of A
// (or a column of B) side by side, as the dot-product instructions read them.
enum class Format : int {
  f32,     // float (f32, f16, fp8 and bf16 without vdpbf16ps, widened on packing)
  f64,     // double
  u32,     // uint32: i32 (and i8 where no dot product exists), wraps modulo 2^32
  bf16x2,  // bf16 pairs -> f32 (vdpbf16ps)
  i16x2,   // i8 sign-extended to int16 pairs -> i32 (vpmaddwd)
  u8s8x4,  // i8 quads -> i32 (vpdpbusd): A + 128 as uint8, B as int8, then the correction
  // AMX tiles: B as the pairs / quads above (the layout tdpbf16ps / tdpbssd read), A as rows of
  // 64 bytes per k step of the tile (32 bf16 or 64 int8 values of one row side by side), k
  // padded with zeros to whole tile steps.
  amx_bf16,  // bf16 -> f32 (tdpbf16ps)
  amx_i8,    // i8 x i8 -> i32 (tdpbssd, signed x signed: no correction)
};

// k values per group (G) and bytes per packed value of a format.
constexpr int format_group(Format f) {
  switch (f) {
    case Format::u8s8x4:
    case Format::amx_i8:
      return 4;
    case Format::bf16x2:
    case Format::i16x2:
    case Format::amx_bf16:
      return 2;
    default:
      return 1;
  }
}
// Whether a format runs on AMX tiles.
constexpr bool format_is_amx(Format f) {
  return f == Format::amx_bf16 || f == Format::amx_i8;
}
// The k values a packed panel is padded to (zeros past kc): one tile step (64 bytes of a row
// of A) for AMX, one group otherwise. Every KC block but the last is a multiple of it.
constexpr int format_kstep(Format f) {
  return f == Format::amx_bf16 ? 32 : f == Format::amx_i8 ? 64 : format_group(f);
}
constexpr int format_bytes(Format f) {
  switch (f) {
    case Format::f64:
      return 8;
    case Format::bf16x2:
    case Format::i16x2:
    case Format::amx_bf16:
      return 2;
    case Format::u8s8x4:
    case Format::amx_i8:
      return 1;
    default:
      return 4;
  }
}

// Software prefetch distances of a micro-kernel, in k steps ahead of the one being computed;
// 0 turns that prefetch off. Parameters PFA / PFB of cpu.packed.
struct Prefetch {
  int a = 0, b = 8;
};

// C[0:MR, 0:NR] = alpha * sum_p a[p][i] * b[p][j] + beta * C, for p < kc. a: ceil(kc / G)
// groups of MR x G values, b: groups of NR x G values (u8s8x4: then NR int32 corrections,
// 128 x the column sums of B, subtracted from every row); both 64-byte aligned and zero-padded
// by the packing. c: row-major, row stride ldc, any alignment. beta == 0: C is not read.
// kc may be 0 (then C = beta * C).
template <class P, class T>
using UkernelFn = void (*)(std::int64_t kc, const P* a, const P* b, T* c, std::int64_t ldc, T alpha,
                           T beta, Prefetch pf);

// The same with A read in place: MR rows of a row-major A of the compute type, lda elements
// apart, k contiguous (what a plain format's packed A micro-panel would copy).
template <class P, class T>
using UkernelRowsFn = void (*)(std::int64_t kc, const P* a, std::int64_t lda, const P* b, T* c,
                               std::int64_t ldc, T alpha, T beta, Prefetch pf);

template <class P, class T>
struct Ukernel {
  int mr = 0, nr = 0;
  UkernelFn<P, T> fn = nullptr;        // nullptr: this ISA (or CPU) has no such micro-kernel
  UkernelRowsFn<P, T> rows = nullptr;  // nullptr: A must be packed (grouped formats)
  // Run by each thread of a GEMM before its first tile and after its last (AMX: load the tile
  // configuration once, release the tiles); the micro-kernel relies on what `start` set up.
  void (*start)() = nullptr;
  void (*done)() = nullptr;
};

// Integer compute runs on uint32 so that products and sums wrap modulo 2^32 without UB.
struct UkernelSet {
  Ukernel<float, float> f32;
  Ukernel<double, double> f64;
  Ukernel<std::uint32_t, std::uint32_t> u32;
  Ukernel<std::uint16_t, float> bf16x2;
  Ukernel<std::int16_t, std::uint32_t> i16x2;
  Ukernel<std::uint8_t, std::uint32_t> u8s8x4;
  Ukernel<std::uint16_t, float> amx_bf16;  // only where cpu_has_amx()
  Ukernel<std::int8_t, std::uint32_t> amx_i8;
};

// Register tiles: MR rows (broadcast from A) x NR columns (vector loads from B).
struct TileShape {
  int mr, nr;
};

// THE table of register tiles. Accumulators use MR * NR / lanes registers; the rest hold B
// and the broadcast of A (AVX-512: 32 zmm, AVX2: 16 ymm). Chosen by measurement, docs/cpu.md.
// The dot formats keep the accumulator layout of their compute type (f32 or i32 lanes).
constexpr TileShape tile_shape(Isa isa, Format f) {
  // Four 16 x 16 accumulator tiles, two of A and two of B: the eight AMX tile registers.
  if (format_is_amx(f)) return {32, 32};
  const bool dbl = f == Format::f64;
  switch (isa) {
    case Isa::avx512:
      return dbl ? TileShape{6, 32} : TileShape{6, 64};
    case Isa::avx2:
      return dbl ? TileShape{6, 8} : TileShape{6, 16};
    default:
      return dbl ? TileShape{4, 8} : TileShape{4, 16};
  }
}

// Micro-kernels of each ISA; avx512/avx2 return nullptr when the build lacks them. The
// AVX-512 set has bf16x2 / u8s8x4 only on CPUs with AVX512_BF16 / AVX512_VNNI.
const UkernelSet* ukernels_avx512();
const UkernelSet* ukernels_avx2();
const UkernelSet& ukernels_generic();
// The set for a resolved ISA (never Isa::automatic).
const UkernelSet& ukernels_for(Isa isa);

// The AVX-512 dot-product micro-kernels (dot_avx512bf16.cpp, dot_avx512vnni.cpp); fn is null
// when the build lacks them.
Ukernel<std::uint16_t, float> ukernel_avx512_bf16();
Ukernel<std::uint8_t, std::uint32_t> ukernel_avx512_vnni();
// The AMX micro-kernels (ukernel_amx.cpp); fn is null when the build lacks them.
Ukernel<std::uint16_t, float> ukernel_amx_bf16();
Ukernel<std::int8_t, std::uint32_t> ukernel_amx_i8();

}  // namespace kafel::cpu
