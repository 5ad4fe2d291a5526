// AVX2 + FMA kernels of the direct small-matrix GEMM (cpu.small), built with -mavx2 -mfma
// (src/cpu/CMakeLists.txt) and called only when cpu_features says the CPU has AVX2 and FMA.
#include "cpu/small_gemm.hpp"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include "cpu/small_impl.hpp"

namespace kafel::cpu {
namespace {

struct F32 {
  using T = float;
  using R = __m256;
  static constexpr int lanes = 8;
  static constexpr int rows = 4;
  static R zero() { return _mm256_setzero_ps(); }
  static R loadu(const T* p) { return _mm256_loadu_ps(p); }
  static void storeu(T* p, R r) { _mm256_storeu_ps(p, r); }
  static R set1(T x) { return _mm256_set1_ps(x); }
  static R madd(R a, R b, R acc) { return _mm256_fmadd_ps(a, b, acc); }
  static R mul(R a, R b) { return _mm256_mul_ps(a, b); }
};

struct F64 {
  using T = double;
  using R = __m256d;
  static constexpr int lanes = 4;
  static constexpr int rows = 4;
  static R zero() { return _mm256_setzero_pd(); }
  static R loadu(const T* p) { return _mm256_loadu_pd(p); }
  static void storeu(T* p, R r) { _mm256_storeu_pd(p, r); }
  static R set1(T x) { return _mm256_set1_pd(x); }
  static R madd(R a, R b, R acc) { return _mm256_fmadd_pd(a, b, acc); }
  static R mul(R a, R b) { return _mm256_mul_pd(a, b); }
};

const SmallKernels kKernels{small::gemm<F32>, small::gemm<F64>};

}  // namespace

const SmallKernels* small_kernels_avx2() {
  return &kKernels;
}

}  // namespace kafel::cpu
#else
namespace kafel::cpu {
const SmallKernels* small_kernels_avx2() {
  return nullptr;
}
}  // namespace kafel::cpu
#endif
