// One micro-kernel body for every SIMD ISA: a register tile of MR x NV vectors, written once
// over a small vector-traits class (V) that each ISA file supplies for float, double and uint32.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace kafel::cpu::simd {

// V must provide: R (register type), lanes, zero(), load(p) (aligned), loadu(p), storeu(p, r),
// bcast(p) (one element to all lanes), set1(x), madd(a, b, acc) = acc + a*b, mul(a, b).
template <class V, int MR, int NV>
void ukernel(std::int64_t kc, const typename V::T* __restrict a, const typename V::T* __restrict b,
             typename V::T* __restrict c, std::int64_t ldc, typename V::T alpha,
             typename V::T beta) {
  using R = typename V::R;
  constexpr int L = V::lanes, NR = NV * L;
  R acc[MR][NV];
#pragma GCC unroll 32
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[i][v] = V::zero();
      // The C tile is written after the loop; start its lines on their way now.
#pragma GCC unroll 32
  for (int i = 0; i < MR; ++i)
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
#pragma GCC unroll 2
  for (std::int64_t p = 0; p < kc; ++p) {
    R bv[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) bv[v] = V::load(b + v * L);
    _mm_prefetch(reinterpret_cast<const char*>(b + 8 * NR), _MM_HINT_T0);
#pragma GCC unroll 32
    for (int i = 0; i < MR; ++i) {
      const R ai = V::bcast(a + i);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[i][v] = V::madd(ai, bv[v], acc[i][v]);
    }
    a += MR;
    b += NR;
  }
  const R va = V::set1(alpha);
  if (beta == typename V::T(0)) {
#pragma GCC unroll 32
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) V::storeu(c + i * ldc + v * L, V::mul(acc[i][v], va));
  } else {
    const R vb = V::set1(beta);
#pragma GCC unroll 32
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) {
        typename V::T* ci = c + i * ldc + v * L;
        V::storeu(ci, V::madd(acc[i][v], va, V::mul(V::loadu(ci), vb)));
      }
  }
}

}  // namespace kafel::cpu::simd
