// The micro-kernel contract of the packed GEMM and the register-tile table of every ISA.
// A micro-kernel computes one full MR x NR tile of C from packed panels; nothing else.
#pragma once

#include <cstdint>

#include "cpu/cpu_features.hpp"
#include "kafel/types.hpp"

namespace kafel::cpu {

// C[0:MR, 0:NR] = alpha * sum_p a[p*MR + i] * b[p*NR + j] + beta * C, for p < kc.
// a: kc x MR (MR values of one column of op(A) per step), b: kc x NR (one row of op(B) per
// step); both 64-byte aligned and zero-padded by the packing. c: row-major, row stride ldc,
// any alignment. beta == 0 means C is not read. kc may be 0 (then C = beta * C).
template <class T>
using UkernelFn = void (*)(std::int64_t kc, const T* a, const T* b, T* c, std::int64_t ldc, T alpha,
                           T beta);

template <class T>
struct Ukernel {
  int mr = 0, nr = 0;
  UkernelFn<T> fn = nullptr;
};

// i32 runs on uint32 so that products and sums wrap modulo 2^32 without undefined behaviour.
struct UkernelSet {
  Ukernel<float> f32;
  Ukernel<double> f64;
  Ukernel<std::uint32_t> i32;
};

// Register tiles: MR rows (broadcast from A) x NR columns (vector loads from B).
struct TileShape {
  int mr, nr;
};

// THE table of register tiles. Accumulators use MR * NR / lanes registers; the rest hold B
// and the broadcast of A (AVX-512: 32 zmm, AVX2: 16 ymm). Chosen by measurement, docs/cpu.md.
constexpr TileShape tile_shape(Isa isa, DType t) {
  const bool dbl = t == DType::f64;
  switch (isa) {
    case Isa::avx512:
      return dbl ? TileShape{6, 32} : TileShape{6, 64};
    case Isa::avx2:
      return dbl ? TileShape{6, 8} : TileShape{6, 16};
    default:
      return dbl ? TileShape{4, 8} : TileShape{4, 16};
  }
}

// Micro-kernels of each ISA; avx512/avx2 return nullptr when the build lacks them.
const UkernelSet* ukernels_avx512();
const UkernelSet* ukernels_avx2();
const UkernelSet& ukernels_generic();
// The set for a resolved ISA (never Isa::automatic).
const UkernelSet& ukernels_for(Isa isa);

}  // namespace kafel::cpu
