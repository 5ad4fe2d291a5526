// AVX-512 kernels of the direct small-matrix GEMM (cpu.small), built with the AVX-512 flags of
// src/cpu/CMakeLists.txt and called only when cpu_features says the CPU has AVX-512.
#include "cpu/small_gemm.hpp"

#if defined(__AVX512F__) && defined(__FMA__)
#include <immintrin.h>

#include "cpu/small_impl.hpp"

namespace kafel::cpu {
namespace {

struct F32 {
  using T = float;
  using R = __m512;
  static constexpr int lanes = 16;
  static constexpr int rows = 8;
  static R zero() { return _mm512_setzero_ps(); }
  static R loadu(const T* p) { return _mm512_loadu_ps(p); }
  static void storeu(T* p, R r) { _mm512_storeu_ps(p, r); }
  static R set1(T x) { return _mm512_set1_ps(x); }
  static R madd(R a, R b, R acc) { return _mm512_fmadd_ps(a, b, acc); }
  static R mul(R a, R b) { return _mm512_mul_ps(a, b); }
};

struct F64 {
  using T = double;
  using R = __m512d;
  static constexpr int lanes = 8;
  static constexpr int rows = 8;
  static R zero() { return _mm512_setzero_pd(); }
  static R loadu(const T* p) { return _mm512_loadu_pd(p); }
  static void storeu(T* p, R r) { _mm512_storeu_pd(p, r); }
  static R set1(T x) { return _mm512_set1_pd(x); }
  static R madd(R a, R b, R acc) { return _mm512_fmadd_pd(a, b, acc); }
  static R mul(R a, R b) { return _mm512_mul_pd(a, b); }
};

const SmallKernels kKernels{small::gemm<F32>, small::gemm<F64>};

}  // namespace

const SmallKernels* small_kernels_avx512() {
  return &kKernels;
}

}  // namespace kafel::cpu
#else
namespace kafel::cpu {
const SmallKernels* small_kernels_avx512() {
  return nullptr;
}
}  // namespace kafel::cpu
#endif
