// AVX2 + FMA micro-kernels (f32, f64, i32) built with -mavx2 -mfma (src/cpu/CMakeLists.txt)
// and called only when cpu_features says the CPU has AVX2 and FMA.
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
  static R madd(R a, R b, R acc) { return _mm256_fmadd_ps(a, b, acc); }
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
  static R madd(R a, R b, R acc) { return _mm256_fmadd_pd(a, b, acc); }
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
  static R madd(R a, R b, R acc) { return _mm256_add_epi32(acc, _mm256_mullo_epi32(a, b)); }
  static R mul(R a, R b) { return _mm256_mullo_epi32(a, b); }
};

template <class V, DType D>
Ukernel<typename V::T> make() {
  constexpr TileShape s = tile_shape(Isa::avx2, D);
  static_assert(s.nr % V::lanes == 0, "NR must be a multiple of the vector width");
  return {s.mr, s.nr, &simd::ukernel<V, s.mr, s.nr / V::lanes>};
}

}  // namespace

const UkernelSet* ukernels_avx2() {
  static const UkernelSet set{make<F32, DType::f32>(), make<F64, DType::f64>(),
                              make<U32, DType::i32>()};
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
