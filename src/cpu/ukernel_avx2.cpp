// AVX2 + FMA micro-kernels (f32, f64, u32, and i8 as int16 pairs through vpmaddwd) built with
// -mavx2 -mfma (src/cpu/CMakeLists.txt), called only when cpu_features says the CPU has them.
#include "cpu/ukernel.hpp"

#if defined(__AVX2__) && defined(__FMA__)
#include "cpu/ukernel_simd.hpp"

namespace kafel::cpu {
namespace {

struct F32 {
  using T = float;
  using R = __m256;
  static constexpr int lanes = 8;
  static R zero() { return _mm256_setzero_ps(); }
  static R load(const T* p) { return _mm256_load_ps(p); }
  static R loadu(const T* p) { return _mm256_loadu_ps(p); }
  static void storeu(T* p, R r) { _mm256_storeu_ps(p, r); }
  static R bcast(const T* p) { return _mm256_broadcast_ss(p); }
  static R set1(T x) { return _mm256_set1_ps(x); }
  static R fma(R a, R b, R acc) { return _mm256_fmadd_ps(a, b, acc); }
  static R mul(R a, R b) { return _mm256_mul_ps(a, b); }
};

struct F64 {
  using T = double;
  using R = __m256d;
  static constexpr int lanes = 4;
  static R zero() { return _mm256_setzero_pd(); }
  static R load(const T* p) { return _mm256_load_pd(p); }
  static R loadu(const T* p) { return _mm256_loadu_pd(p); }
  static void storeu(T* p, R r) { _mm256_storeu_pd(p, r); }
  static R bcast(const T* p) { return _mm256_broadcast_sd(p); }
  static R set1(T x) { return _mm256_set1_pd(x); }
  static R fma(R a, R b, R acc) { return _mm256_fmadd_pd(a, b, acc); }
  static R mul(R a, R b) { return _mm256_mul_pd(a, b); }
};

// 32-bit integers wrap: vpmulld keeps the low 32 bits of each product, vpaddd wraps.
struct U32 {
  using T = std::uint32_t;
  using R = __m256i;
  static constexpr int lanes = 8;
  static R zero() { return _mm256_setzero_si256(); }
  static R load(const T* p) { return _mm256_load_si256(reinterpret_cast<const R*>(p)); }
  static R loadu(const T* p) { return _mm256_loadu_si256(reinterpret_cast<const R*>(p)); }
  static void storeu(T* p, R r) { _mm256_storeu_si256(reinterpret_cast<R*>(p), r); }
  static R bcast(const T* p) { return _mm256_set1_epi32(static_cast<int>(*p)); }
  static R set1(T x) { return _mm256_set1_epi32(static_cast<int>(x)); }
  static R fma(R a, R b, R acc) { return _mm256_add_epi32(acc, _mm256_mullo_epi32(a, b)); }
  static R mul(R a, R b) { return _mm256_mullo_epi32(a, b); }
};

// i8 as sign-extended int16 pairs: vpmaddwd multiplies 16 pairs and adds each pair into one
// int32 lane, exactly (|a0 b0 + a1 b1| <= 2 x 128 x 128 never saturates); vpaddd wraps.
struct I16x2 : U32 {
  using P = std::int16_t;
  using B = __m256i;
  static constexpr int G = 2;
  static constexpr bool kCorrected = false;
  static B load_b(const P* p) { return _mm256_load_si256(reinterpret_cast<const B*>(p)); }
  static R bcast_a(const P* p) {
    std::int32_t pair;
    __builtin_memcpy(&pair, p, sizeof pair);
    return _mm256_set1_epi32(pair);
  }
  static R madd(R a, B b, R acc) { return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b)); }
};

}  // namespace

const UkernelSet* ukernels_avx2() {
  using simd::make_ukernel;
  using simd::Plain;
  static const UkernelSet set{make_ukernel<Plain<F32>, Isa::avx2, Format::f32>(),
                              make_ukernel<Plain<F64>, Isa::avx2, Format::f64>(),
                              make_ukernel<Plain<U32>, Isa::avx2, Format::u32>(),
                              {},
                              make_ukernel<I16x2, Isa::avx2, Format::i16x2>(),
                              {},
                              {},
                              {}};
  return &set;
}

}  // namespace kafel::cpu

#else

namespace kafel::cpu {
const UkernelSet* ukernels_avx2() {
  return nullptr;
}
}  // namespace kafel::cpu

#endif
