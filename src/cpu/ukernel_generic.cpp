// Portable micro-kernels in plain C++ (the compiler vectorises them for the baseline ISA), so
// the packed GEMM runs on any CPU, including the grouped formats the AVX-512 dot-product
// kernels read (bf16 pairs, i8 quads with the +128 correction); also the ISA dispatcher.
#include <cstdint>
#include <cstring>

#include "cpu/ukernel.hpp"
#include "kafel/error.hpp"

namespace kafel::cpu {
namespace {

// How a format's packed values widen to the compute type: wa for A, wb for B.
template <class P_, class T_, int G_, bool Corrected = false>
struct Widen {
  using P = P_;
  using T = T_;
  static constexpr int G = G_;
  static constexpr bool kCorrected = Corrected;
  static T wa(P v) { return static_cast<T>(v); }
  static T wb(P v) { return static_cast<T>(v); }
};

struct Bf16x2 : Widen<std::uint16_t, float, 2> {
  static float wa(std::uint16_t v) {
    const std::uint32_t bits = std::uint32_t(v) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  static float wb(std::uint16_t v) { return wa(v); }
};

// A holds a + 128 as uint8, B the int8 bits; both widen to uint32 (wrapping arithmetic).
struct U8s8x4 : Widen<std::uint8_t, std::uint32_t, 4, true> {
  static std::uint32_t wa(std::uint8_t v) { return v; }
  static std::uint32_t wb(std::uint8_t v) {
    return static_cast<std::uint32_t>(std::int32_t(static_cast<std::int8_t>(v)));
  }
};

template <class E, int MR, int NR>
void ukernel(std::int64_t kc, const typename E::P* __restrict a, const typename E::P* __restrict b,
             typename E::T* __restrict c, std::int64_t ldc, typename E::T alpha, typename E::T beta,
             Prefetch) {
  using T = typename E::T;
  constexpr int G = E::G;
  T acc[MR][NR] = {};
  const std::int64_t groups = (kc + G - 1) / G;
  for (std::int64_t p = 0; p < groups; ++p, a += MR * G, b += NR * G)
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j)
        for (int g = 0; g < G; ++g) acc[i][j] += E::wa(a[i * G + g]) * E::wb(b[j * G + g]);
  if constexpr (E::kCorrected) {  // b points at the NR int32 corrections after the panel
    std::int32_t corr[NR];
    std::memcpy(corr, b, sizeof corr);
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j) acc[i][j] -= static_cast<T>(corr[j]);
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) {
      T* ci = c + i * ldc + j;
      *ci = beta == T(0) ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *ci;
    }
}

template <class E, Format F>
Ukernel<typename E::P, typename E::T> make() {
  constexpr TileShape s = tile_shape(Isa::generic, F);
  return {s.mr, s.nr, &ukernel<E, s.mr, s.nr>};
}

}  // namespace

const UkernelSet& ukernels_generic() {
  static const UkernelSet set{make<Widen<float, float, 1>, Format::f32>(),
                              make<Widen<double, double, 1>, Format::f64>(),
                              make<Widen<std::uint32_t, std::uint32_t, 1>, Format::u32>(),
                              make<Bf16x2, Format::bf16x2>(),
                              {},
                              make<U8s8x4, Format::u8s8x4>(),
                              {},
                              {}};
  return set;
}

const UkernelSet& ukernels_for(Isa isa) {
  const UkernelSet* set = nullptr;
  if (isa == Isa::avx512) set = ukernels_avx512();
  if (isa == Isa::avx2) set = ukernels_avx2();
  if (isa == Isa::generic) set = &ukernels_generic();
  if (!set)
    throw Unsupported("this build has no " + std::string(to_string(isa)) + " micro-kernels");
  return *set;
}

}  // namespace kafel::cpu
