// AVX-512 vector operations per compute type (f32, f64, wrapping u32), shared by the plain
// micro-kernels (ukernel_avx512.cpp) and the dot-product ones (dot_avx512*.cpp).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace kafel::cpu::avx512 {

struct F32 {
  using T = float;
  using R = __m512;
  static constexpr int lanes = 16;
  static R zero() { return _mm512_setzero_ps(); }
  static R load(const T* p) { return _mm512_load_ps(p); }
  static R loadu(const T* p) { return _mm512_loadu_ps(p); }
  static void storeu(T* p, R r) { _mm512_storeu_ps(p, r); }
  static R bcast(const T* p) { return _mm512_set1_ps(*p); }
  static R set1(T x) { return _mm512_set1_ps(x); }
  static R fma(R a, R b, R acc) { return _mm512_fmadd_ps(a, b, acc); }
  static R mul(R a, R b) { return _mm512_mul_ps(a, b); }
};

struct F64 {
  using T = double;
  using R = __m512d;
  static constexpr int lanes = 8;
  static R zero() { return _mm512_setzero_pd(); }
  static R load(const T* p) { return _mm512_load_pd(p); }
  static R loadu(const T* p) { return _mm512_loadu_pd(p); }
  static void storeu(T* p, R r) { _mm512_storeu_pd(p, r); }
  static R bcast(const T* p) { return _mm512_set1_pd(*p); }
  static R set1(T x) { return _mm512_set1_pd(x); }
  static R fma(R a, R b, R acc) { return _mm512_fmadd_pd(a, b, acc); }
  static R mul(R a, R b) { return _mm512_mul_pd(a, b); }
};

// 32-bit integers wrap: vpmulld keeps the low 32 bits of each product, vpaddd wraps.
struct U32 {
  using T = std::uint32_t;
  using R = __m512i;
  static constexpr int lanes = 16;
  static R zero() { return _mm512_setzero_si512(); }
  static R load(const T* p) { return _mm512_load_si512(p); }
  static R loadu(const T* p) { return _mm512_loadu_si512(p); }
  static void storeu(T* p, R r) { _mm512_storeu_si512(p, r); }
  static R bcast(const T* p) { return _mm512_set1_epi32(static_cast<int>(*p)); }
  static R set1(T x) { return _mm512_set1_epi32(static_cast<int>(x)); }
  static R fma(R a, R b, R acc) { return _mm512_add_epi32(acc, _mm512_mullo_epi32(a, b)); }
  static R mul(R a, R b) { return _mm512_mullo_epi32(a, b); }
};

// The G packed values of one row of A as one 32-bit pattern, broadcast to every lane.
template <class P>
inline __m512i bcast32(const P* p) {
  std::int32_t v;
  __builtin_memcpy(&v, p, sizeof v);
  return _mm512_set1_epi32(v);
}

}  // namespace kafel::cpu::avx512
