// One micro-kernel body for every SIMD ISA and packed format: a register tile of MR x NV
// vectors, written once over a small traits class (V) that each ISA file supplies per format.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <type_traits>

#include "cpu/ukernel.hpp"

namespace kafel::cpu::simd {

// V provides: T (compute type), P (packed type), G (k values per group), R (accumulator
// register), B (register of packed B values), lanes (T lanes of R), zero(), load_b(p) (aligned),
// bcast_a(p) (the G values of one row of A into every lane group), madd(a, b, acc) (acc += the
// products of each lane's group), loadu(p), storeu(p, r), set1(x), mul(r, s), fma(r, s, acc)
// (acc + r*s in T); and when kCorrected, sub(r, s) and load_corr(p) (NR int32 after the B panel).
// ROWS: A is read in place, row i of the tile at a + i * lda, k contiguous (plain formats); else
// a is the packed micro-panel (lda unused).
template <class V, int MR, int NV, bool ROWS>
__attribute__((always_inline)) inline void ukernel_body(
    std::int64_t kc, const typename V::P* __restrict a, std::int64_t lda,
    const typename V::P* __restrict b, typename V::T* __restrict c, std::int64_t ldc,
    typename V::T alpha, typename V::T beta, Prefetch pf) {
  using R = typename V::R;
  using T = typename V::T;
  constexpr int L = V::lanes, NR = NV * L, G = V::G;
  const std::int64_t groups = (kc + G - 1) / G;
  const std::int64_t pfa = std::int64_t(pf.a) * MR * G, pfb = std::int64_t(pf.b) * NR * G;
  // alpha and beta arrive in vector registers; parked in memory they leave all 32 to the
  // loop (kept live, they made GCC spill a B vector of the f64 6 x 32 tile to the stack).
  T scale[2] = {alpha, beta};
  asm volatile("" : "+m"(scale));
  R acc[MR][NV];
#pragma GCC unroll 32
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[i][v] = V::zero();
  // The C tile is read and written after the loop; start all its lines (not only each row's
  // first) on their way now, so that the epilogue does not wait on memory when C is larger than
  // the caches (f64 2048^3 is 32 MB).
  constexpr int kLineElems = 64 / int(sizeof(T));
#pragma GCC unroll 32
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 16
    for (int j = 0; j < NR; j += kLineElems)
      _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + j), _MM_HINT_T0);
#pragma GCC unroll 2
  for (std::int64_t p = 0; p < groups; ++p) {
    typename V::B bv[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) bv[v] = V::load_b(b + v * L * G);
    _mm_prefetch(reinterpret_cast<const char*>(b + pfb), _MM_HINT_T0);
    // In place, A's rows are MR sequential streams the hardware prefetcher follows.
    if constexpr (!ROWS) _mm_prefetch(reinterpret_cast<const char*>(a + pfa), _MM_HINT_T1);
#pragma GCC unroll 32
    for (int i = 0; i < MR; ++i) {
      const auto ai = V::bcast_a(ROWS ? a + i * lda : a + i * G);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[i][v] = V::madd(ai, bv[v], acc[i][v]);
    }
    a += ROWS ? G : MR * G;
    b += NR * G;
  }
  if constexpr (V::kCorrected) {  // b now points at the corrections after the panel
    R corr[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) corr[v] = V::load_corr(b, v * L);
#pragma GCC unroll 32
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[i][v] = V::sub(acc[i][v], corr[v]);
  }
  asm volatile("" : "+m"(scale));
  alpha = scale[0];
  beta = scale[1];
  const R va = V::set1(alpha);
  if (beta == T(0)) {
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
        T* ci = c + i * ldc + v * L;
        V::storeu(ci, V::fma(acc[i][v], va, V::mul(V::loadu(ci), vb)));
      }
  }
}

template <class V, int MR, int NV>
void ukernel(std::int64_t kc, const typename V::P* __restrict a, const typename V::P* __restrict b,
             typename V::T* __restrict c, std::int64_t ldc, typename V::T alpha, typename V::T beta,
             Prefetch pf) {
  ukernel_body<V, MR, NV, false>(kc, a, 0, b, c, ldc, alpha, beta, pf);
}

template <class V, int MR, int NV>
void ukernel_rows(std::int64_t kc, const typename V::P* __restrict a, std::int64_t lda,
                  const typename V::P* __restrict b, typename V::T* __restrict c, std::int64_t ldc,
                  typename V::T alpha, typename V::T beta, Prefetch pf) {
  ukernel_body<V, MR, NV, true>(kc, a, lda, b, c, ldc, alpha, beta, pf);
}

// Traits of the plain formats (P = T, one k per step) built from an ISA's vector ops W:
// W supplies R, lanes, zero, load, loadu, storeu, bcast (one element), set1, fma, mul.
template <class W>
struct Plain : W {
  using P = typename W::T;
  using B = typename W::R;
  static constexpr int G = 1;
  static constexpr bool kCorrected = false;
  static B load_b(const P* p) { return W::load(p); }
  static typename W::R bcast_a(const P* p) { return W::bcast(p); }
  static typename W::R madd(typename W::R a, B b, typename W::R acc) { return W::fma(a, b, acc); }
};

// A Ukernel from the tile table for traits V, format F and ISA I.
template <class V, Isa I, Format F>
Ukernel<typename V::P, typename V::T> make_ukernel() {
  constexpr TileShape s = tile_shape(I, F);
  static_assert(s.nr % V::lanes == 0, "NR must be a multiple of the vector width");
  // Plain formats (one value per k, the compute type) may read A in place.
  if constexpr (V::G == 1 && !V::kCorrected && std::is_same_v<typename V::P, typename V::T>)
    return {s.mr, s.nr, &ukernel<V, s.mr, s.nr / V::lanes>,
            &ukernel_rows<V, s.mr, s.nr / V::lanes>};
  else
    return {s.mr, s.nr, &ukernel<V, s.mr, s.nr / V::lanes>};
}

}  // namespace kafel::cpu::simd
