// Peak-probe loops for AVX2 + FMA (f32, f64 FMA chains; i8 as vpmaddwd + vpaddd, what the AVX2
// i8 micro-kernel runs) and the AVX2 streaming read; compiled with -mavx2 -mfma.
#include "cpu/peak_loops.hpp"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace kafel::cpu {
namespace {

// acc = acc * x + y converges to y / (1 - x) = 1: no overflow, no subnormals, and every step
// depends on the previous one, so nothing can be hoisted or folded.
double fma_f32(std::int64_t iters, double* sink) {
  __m256 acc[kPeakChains];
  for (int c = 0; c < kPeakChains; ++c) acc[c] = _mm256_set1_ps(1.0f + float(c) * 0x1p-10f);
  const __m256 x = _mm256_set1_ps(1.0f - 0x1p-20f), y = _mm256_set1_ps(0x1p-20f);
  for (std::int64_t i = 0; i < iters; ++i)
#pragma GCC unroll 16
    for (int c = 0; c < kPeakChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], x, y);
  __m256 s = acc[0];
  for (int c = 1; c < kPeakChains; ++c) s = _mm256_add_ps(s, acc[c]);
  *sink = double(_mm256_cvtss_f32(s));
  return double(iters) * kPeakChains * 8 * 2;
}

double fma_f64(std::int64_t iters, double* sink) {
  __m256d acc[kPeakChains];
  for (int c = 0; c < kPeakChains; ++c) acc[c] = _mm256_set1_pd(1.0 + double(c) * 0x1p-10);
  const __m256d x = _mm256_set1_pd(1.0 - 0x1p-20), y = _mm256_set1_pd(0x1p-20);
  for (std::int64_t i = 0; i < iters; ++i)
#pragma GCC unroll 16
    for (int c = 0; c < kPeakChains; ++c) acc[c] = _mm256_fmadd_pd(acc[c], x, y);
  __m256d s = acc[0];
  for (int c = 1; c < kPeakChains; ++c) s = _mm256_add_pd(s, acc[c]);
  *sink = _mm256_cvtsd_f64(s);
  return double(iters) * kPeakChains * 4 * 2;
}

// 16 multiply-adds of 16-bit pairs per vpmaddwd (integers wrap, which is fine here).
double madd_i16(std::int64_t iters, double* sink) {
  __m256i acc[kPeakChains];
  for (int c = 0; c < kPeakChains; ++c) acc[c] = _mm256_set1_epi32(c + 1);
  const __m256i w = _mm256_set1_epi16(3);
  for (std::int64_t i = 0; i < iters; ++i)
#pragma GCC unroll 16
    for (int c = 0; c < kPeakChains; ++c)
      acc[c] = _mm256_add_epi32(acc[c], _mm256_madd_epi16(acc[c], w));
  __m256i s = acc[0];
  for (int c = 1; c < kPeakChains; ++c) s = _mm256_add_epi32(s, acc[c]);
  *sink = double(_mm256_extract_epi32(s, 0));
  return double(iters) * kPeakChains * 16 * 2;
}

}  // namespace

PeakLoops peak_loops_avx2() {
  return {&fma_f32, &fma_f64, nullptr, &madd_i16};
}

std::uint64_t read_stream_avx2(const void* p, std::size_t bytes) {
  const auto* v = static_cast<const __m256i*>(p);
  __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
  for (std::size_t i = 0; i < bytes / 32; i += 4) {
    s0 = _mm256_xor_si256(s0, _mm256_load_si256(v + i));
    s1 = _mm256_xor_si256(s1, _mm256_load_si256(v + i + 1));
    s2 = _mm256_xor_si256(s2, _mm256_load_si256(v + i + 2));
    s3 = _mm256_xor_si256(s3, _mm256_load_si256(v + i + 3));
  }
  const __m256i s = _mm256_xor_si256(_mm256_xor_si256(s0, s1), _mm256_xor_si256(s2, s3));
  return std::uint64_t(_mm256_extract_epi64(s, 0) ^ _mm256_extract_epi64(s, 3));
}

}  // namespace kafel::cpu

#else

namespace kafel::cpu {
PeakLoops peak_loops_avx2() {
  return {};
}
std::uint64_t read_stream_avx2(const void* p, std::size_t bytes) {
  return read_stream_generic(p, bytes);
}
}  // namespace kafel::cpu

#endif
