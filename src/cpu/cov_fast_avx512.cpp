// The fast covariance workers for AVX-512 (16 float lanes; 5x5 pair tiles: 25 accumulators + 5
// operands fit the 32 zmm registers; 4x4 tiles for lane counts that 4 divides and 5 does not).
// Chosen at run time by cov_fast.cpp's choose_worker.
#include "cpu/cov_fast.hpp"

// Built with -mavx512f/bw/dq/vl -mfma by src/cpu/CMakeLists.txt on x86 with GCC/Clang; any
// other build gets only the stub below, and cpu_features never offers avx512 there.
#if defined(__AVX512F__) && defined(__FMA__)
#include <immintrin.h>

#include <cstdint>

namespace {

struct V512 {
  using T = __m512;
  static constexpr int kLanes = 16;
  static T zero() { return _mm512_setzero_ps(); }
  static T load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, T v) { _mm512_storeu_ps(p, v); }
  static T set1(float f) { return _mm512_set1_ps(f); }
  static T sub(T a, T b) { return _mm512_sub_ps(a, b); }
  static T add(T a, T b) { return _mm512_add_ps(a, b); }
  static T fmadd(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  // Lanes summed by a float tree (its 4u error is far below the 1e-6 budget since each lane
  // holds at most 64 products), then widened. Vector-extension shuffles: GCC 12 warns falsely
  // inside the masked AVX-512 shuffle/convert intrinsics.
  static double hsum_d(T v) {
    using F16 = float __attribute__((vector_size(64)));
    using F8 = float __attribute__((vector_size(32)));
    using F4 = float __attribute__((vector_size(16)));
    const F16 a = reinterpret_cast<F16&>(v);
    const F8 b = __builtin_shufflevector(a, a, 0, 1, 2, 3, 4, 5, 6, 7) +
                 __builtin_shufflevector(a, a, 8, 9, 10, 11, 12, 13, 14, 15);
    const F4 c =
        __builtin_shufflevector(b, b, 0, 1, 2, 3) + __builtin_shufflevector(b, b, 4, 5, 6, 7);
    return double((c[0] + c[2]) + (c[1] + c[3]));
  }
};

}  // namespace

#include "cpu/cov_fast_impl.hpp"

namespace {
void range_avx512(const kafel::cpu::covfast::Job& j, std::int64_t n0, std::int64_t n1, float* y,
                  double* sum, double* q) {
  process_range<V512, 5>(j, n0, n1, y, sum, q);
}
void range_avx512_tile4(const kafel::cpu::covfast::Job& j, std::int64_t n0, std::int64_t n1,
                        float* y, double* sum, double* q) {
  process_range<V512, 4>(j, n0, n1, y, sum, q);
}
}  // namespace

namespace kafel::cpu::covfast {
Worker worker_avx512() {
  return {"avx512", 16, 5, &range_avx512};
}
Worker worker_avx512_tile4() {
  return {"avx512", 16, 4, &range_avx512_tile4};
}
}  // namespace kafel::cpu::covfast

#else

namespace kafel::cpu::covfast {
Worker worker_avx512() {
  return {"avx512", 16, 5, nullptr};
}
Worker worker_avx512_tile4() {
  return {"avx512", 16, 4, nullptr};
}
}  // namespace kafel::cpu::covfast

#endif
