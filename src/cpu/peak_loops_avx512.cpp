// Peak-probe loops for AVX-512 F (f32, f64 FMA chains on zmm registers); compiled with the
// AVX-512 flags of src/cpu/CMakeLists.txt and run only on CPUs that have AVX-512.
#include "cpu/peak_loops.hpp"

#if defined(__AVX512F__) && defined(__FMA__)
#include <immintrin.h>

namespace kafel::cpu {
namespace {

// acc = acc * x + y converges to 1 (see peak_loops_avx2.cpp).
double fma_f32(std::int64_t iters, double* sink) {
  __m512 acc[kPeakChains];
  for (int c = 0; c < kPeakChains; ++c) acc[c] = _mm512_set1_ps(1.0f + float(c) * 0x1p-10f);
  const __m512 x = _mm512_set1_ps(1.0f - 0x1p-20f), y = _mm512_set1_ps(0x1p-20f);
  for (std::int64_t i = 0; i < iters; ++i)
#pragma GCC unroll 16
    for (int c = 0; c < kPeakChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], x, y);
  __m512 s = acc[0];
  for (int c = 1; c < kPeakChains; ++c) s = _mm512_add_ps(s, acc[c]);
  *sink = double(_mm512_cvtss_f32(s));
  return double(iters) * kPeakChains * 16 * 2;
}

double fma_f64(std::int64_t iters, double* sink) {
  __m512d acc[kPeakChains];
  for (int c = 0; c < kPeakChains; ++c) acc[c] = _mm512_set1_pd(1.0 + double(c) * 0x1p-10);
  const __m512d x = _mm512_set1_pd(1.0 - 0x1p-20), y = _mm512_set1_pd(0x1p-20);
  for (std::int64_t i = 0; i < iters; ++i)
#pragma GCC unroll 16
    for (int c = 0; c < kPeakChains; ++c) acc[c] = _mm512_fmadd_pd(acc[c], x, y);
  __m512d s = acc[0];
  for (int c = 1; c < kPeakChains; ++c) s = _mm512_add_pd(s, acc[c]);
  *sink = _mm512_cvtsd_f64(s);
  return double(iters) * kPeakChains * 8 * 2;
}

}  // namespace

PeakLoops peak_loops_avx512() {
  return {&fma_f32, &fma_f64, nullptr, nullptr};
}

}  // namespace kafel::cpu

#else

namespace kafel::cpu {
PeakLoops peak_loops_avx512() {
  return {};
}
}  // namespace kafel::cpu

#endif
