// AVX512_BF16 code: the vdpbf16ps peak-probe loop and the bf16 -> f32 micro-kernel; compiled
// with -mavx512bf16 (src/cpu/CMakeLists.txt), run only when cpu_has_avx512_bf16().
#include "cpu/peak_loops.hpp"
#include "cpu/ukernel.hpp"

#if defined(__AVX512BF16__)
#include "cpu/ukernel_avx512_ops.hpp"
#include "cpu/ukernel_simd.hpp"

namespace kafel::cpu {
namespace {

// Each vdpbf16ps does 32 multiply-adds (16 lanes x a pair); acc keeps the chain dependent.
double dot_bf16(std::int64_t iters, double* sink) {
  __m512 acc[kPeakChains];
  for (int c = 0; c < kPeakChains; ++c) acc[c] = _mm512_set1_ps(float(c));
  const __m512bh x = (__m512bh)_mm512_set1_epi16(0x3f80);  // bf16 1.0
  const __m512bh y = (__m512bh)_mm512_set1_epi16(0x3380);  // bf16 2^-24
  for (std::int64_t i = 0; i < iters; ++i)
#pragma GCC unroll 16
    for (int c = 0; c < kPeakChains; ++c) acc[c] = _mm512_dpbf16_ps(acc[c], x, y);
  __m512 s = acc[0];
  for (int c = 1; c < kPeakChains; ++c) s = _mm512_add_ps(s, acc[c]);
  *sink = double(_mm512_cvtss_f32(s));
  return double(iters) * kPeakChains * 32 * 2;
}

// bf16 pairs: each f32 lane adds a[2i] b[2i] + a[2i+1] b[2i+1] (vdpbf16ps: products exact in
// f32, subnormal inputs and results flushed to zero, round to nearest even).
struct Bf16x2 : avx512::F32 {
  using P = std::uint16_t;
  using B = __m512bh;
  static constexpr int G = 2;
  static constexpr bool kCorrected = false;
  static B load_b(const P* p) { return (__m512bh)_mm512_load_si512(p); }
  static B bcast_a(const P* p) { return (__m512bh)avx512::bcast32(p); }
  static R madd(B a, B b, R acc) { return _mm512_dpbf16_ps(acc, a, b); }
};

}  // namespace

PeakLoop peak_loop_avx512_bf16() {
  return &dot_bf16;
}

Ukernel<std::uint16_t, float> ukernel_avx512_bf16() {
  return simd::make_ukernel<Bf16x2, Isa::avx512, Format::bf16x2>();
}

}  // namespace kafel::cpu

#else

namespace kafel::cpu {
PeakLoop peak_loop_avx512_bf16() {
  return nullptr;
}
Ukernel<std::uint16_t, float> ukernel_avx512_bf16() {
  return {};
}
}  // namespace kafel::cpu

#endif
