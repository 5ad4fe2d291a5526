// The fast covariance worker for AVX2 + FMA (8 float lanes, 3x3 pair tiles: 9 accumulators + 3
// operands fit the 16 ymm registers). Chosen at run time by cov_fast.cpp's choose_worker.
#include "cpu/cov_fast.hpp"

// Built with -mavx2 -mfma by src/cpu/CMakeLists.txt on x86 with GCC/Clang; any other build
// gets only the stub below, and cpu_features never offers avx2 there.
#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include <cstdint>

namespace {

struct V256 {
  using T = __m256;
  static constexpr int kLanes = 8;
  static T zero() { return _mm256_setzero_ps(); }
  static T load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, T v) { _mm256_storeu_ps(p, v); }
  static T set1(float f) { return _mm256_set1_ps(f); }
  static T sub(T a, T b) { return _mm256_sub_ps(a, b); }
  static T add(T a, T b) { return _mm256_add_ps(a, b); }
  static T fmadd(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  static double hsum_d(T v) {
    const __m256d s = _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)),
                                    _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
    const __m128d h = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
    return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
  }
};

}  // namespace

#include "cpu/cov_fast_impl.hpp"

namespace {
void range_avx2(const kafel::cpu::covfast::Job& j, std::int64_t n0, std::int64_t n1, float* y,
                double* sum, double* q) {
  process_range<V256, 3>(j, n0, n1, y, sum, q);
}
}  // namespace

namespace kafel::cpu::covfast {
Worker worker_avx2() {
  return {"avx2", 8, 3, &range_avx2};
}
}  // namespace kafel::cpu::covfast

#else

namespace kafel::cpu::covfast {
Worker worker_avx2() {
  return {"avx2", 8, 3, nullptr};
}
}  // namespace kafel::cpu::covfast

#endif
