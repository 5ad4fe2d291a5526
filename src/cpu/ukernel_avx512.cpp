// AVX-512 micro-kernels (f32, f64, u32, i8 as int16 pairs) built with -mavx512f/bw/dq/vl -mfma
// (src/cpu/CMakeLists.txt), called only when cpu_features says the CPU has AVX-512; the set
// also carries the bf16 / i8 dot-product kernels of the CPUs that have AVX512_BF16 / VNNI / AMX.
#include "cpu/ukernel.hpp"

#if defined(__AVX512F__) && defined(__FMA__)
#include "cpu/ukernel_avx512_ops.hpp"
#include "cpu/ukernel_simd.hpp"

namespace kafel::cpu {
namespace {

// i8 as sign-extended int16 pairs through vpmaddwd (AVX-512 BW), for CPUs without VNNI.
struct I16x2 : avx512::U32 {
  using P = std::int16_t;
  using B = __m512i;
  static constexpr int G = 2;
  static constexpr bool kCorrected = false;
  static B load_b(const P* p) { return _mm512_load_si512(p); }
  static R bcast_a(const P* p) { return avx512::bcast32(p); }
  static R madd(R a, B b, R acc) { return _mm512_add_epi32(acc, _mm512_madd_epi16(a, b)); }
};

}  // namespace

const UkernelSet* ukernels_avx512() {
  using simd::make_ukernel;
  using simd::Plain;
  static const UkernelSet set{
      make_ukernel<Plain<avx512::F32>, Isa::avx512, Format::f32>(),
      make_ukernel<Plain<avx512::F64>, Isa::avx512, Format::f64>(),
      make_ukernel<Plain<avx512::U32>, Isa::avx512, Format::u32>(),
      cpu_has_avx512_bf16() ? ukernel_avx512_bf16() : Ukernel<std::uint16_t, float>{},
      make_ukernel<I16x2, Isa::avx512, Format::i16x2>(),
      cpu_has_avx512_vnni() ? ukernel_avx512_vnni() : Ukernel<std::uint8_t, std::uint32_t>{},
      cpu_has_amx() ? ukernel_amx_bf16() : Ukernel<std::uint16_t, float>{},
      cpu_has_amx() ? ukernel_amx_i8() : Ukernel<std::int8_t, std::uint32_t>{}};
  return &set;
}

}  // namespace kafel::cpu

#else

namespace kafel::cpu {
const UkernelSet* ukernels_avx512() {
  return nullptr;
}
}  // namespace kafel::cpu

#endif
