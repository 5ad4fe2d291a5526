// AVX512_VNNI code: the vpdpbusd peak-probe loop and the i8 -> i32 micro-kernel; compiled
// with -mavx512vnni (src/cpu/CMakeLists.txt), run only when cpu_has_avx512_vnni().
#include "cpu/peak_loops.hpp"
#include "cpu/ukernel.hpp"

#if defined(__AVX512VNNI__)
#include "cpu/ukernel_avx512_ops.hpp"
#include "cpu/ukernel_simd.hpp"

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

// i8 quads: vpdpbusd adds the four products of unsigned A bytes (A + 128) and signed B bytes
// into each int32 lane (|sum| <= 4 x 255 x 128, exact; the accumulation wraps). The packing
// stores 128 x the column sums of B after the panel; subtracting them makes the result exact.
struct U8s8x4 : avx512::U32 {
  using P = std::uint8_t;
  using B = __m512i;
  static constexpr int G = 4;
  static constexpr bool kCorrected = true;
  static B load_b(const P* p) { return _mm512_load_si512(p); }
  static B bcast_a(const P* p) { return avx512::bcast32(p); }
  // Through asm: GCC 12 copies and spills every accumulator around _mm512_dpbusd_epi32 in this
  // loop (1.18 against 2.12 TOP/s for the 6 x 64 tile on 2 Zen 5 cores, L1-resident panels).
  static R madd(B a, B b, R acc) {
    asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
    return acc;
  }
  static R load_corr(const P* p, int lane) {
    return _mm512_load_si512(reinterpret_cast<const std::int32_t*>(p) + lane);
  }
  static R sub(R a, R b) { return _mm512_sub_epi32(a, b); }
};

}  // namespace

PeakLoop peak_loop_avx512_vnni() {
  return &dot_u8s8;
}

Ukernel<std::uint8_t, std::uint32_t> ukernel_avx512_vnni() {
  return simd::make_ukernel<U8s8x4, Isa::avx512, Format::u8s8x4>();
}

}  // namespace kafel::cpu

#else

namespace kafel::cpu {
PeakLoop peak_loop_avx512_vnni() {
  return nullptr;
}
Ukernel<std::uint8_t, std::uint32_t> ukernel_avx512_vnni() {
  return {};
}
}  // namespace kafel::cpu

#endif
