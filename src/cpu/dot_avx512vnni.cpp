// AVX512_VNNI code: the vpdpbusd peak-probe loop and the i8 -> i32 micro-kernel; compiled
// with -mavx512vnni (src/cpu/CMakeLists.txt), run only when cpu_has_avx512_vnni().
#include "cpu/peak_loops.hpp"

#if defined(__AVX512VNNI__)
#include <immintrin.h>

namespace kafel::cpu {
namespace {

// Each vpdpbusd does 64 multiply-adds (16 lanes x 4 bytes); integers wrap, which is fine.
double dot_u8s8(std::int64_t iters, double* sink) {
  __m512i acc[kPeakChains];
  for (int c = 0; c < kPeakChains; ++c) acc[c] = _mm512_set1_epi32(c);
  const __m512i x = _mm512_set1_epi8(3), y = _mm512_set1_epi8(-5);
  for (std::int64_t i = 0; i < iters; ++i)
#pragma GCC unroll 16
    for (int c = 0; c < kPeakChains; ++c) acc[c] = _mm512_dpbusd_epi32(acc[c], x, y);
  __m512i s = acc[0];
  for (int c = 1; c < kPeakChains; ++c) s = _mm512_add_epi32(s, acc[c]);
  alignas(64) std::int32_t lanes[16];
  _mm512_store_si512(lanes, s);
  *sink = double(lanes[0]);
  return double(iters) * kPeakChains * 64 * 2;
}

}  // namespace

PeakLoop peak_loop_avx512_vnni() {
  return &dot_u8s8;
}

}  // namespace kafel::cpu

#else

namespace kafel::cpu {
PeakLoop peak_loop_avx512_vnni() {
  return nullptr;
}
}  // namespace kafel::cpu

#endif
