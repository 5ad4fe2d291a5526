// Element roles for CPU kernels: storage types (what A, B and C hold), accumulator types (what a
// compute mode adds in) and the conversions between, plus the dispatch from GemmTypes to them.
// Integer compute accumulates in uint32 so overflow wraps modulo 2^32 without UB.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "kafel/error.hpp"
#include "kafel/kernels.hpp"
#include "kafel/types.hpp"

namespace kafel::cpu {

// Storage of one element: its C++ type and the exact widening to float / double / uint32.
template <DType D>
struct Storage;

template <>
struct Storage<DType::f32> {
  using T = float;
  static float widen(T v) { return v; }
};
template <>
struct Storage<DType::f64> {
  using T = double;
  static double widen(T v) { return v; }
};
template <>
struct Storage<DType::i32> {
  using T = std::int32_t;
  static std::uint32_t widen(T v) { return static_cast<std::uint32_t>(v); }
};
template <>
struct Storage<DType::i8> {
  using T = std::int8_t;
  static std::uint32_t widen(T v) { return static_cast<std::uint32_t>(std::int32_t(v)); }
};
template <>
struct Storage<DType::f16> {
  using T = std::uint16_t;
  static float widen(T v) { return half_to_float(v); }
};
template <>
struct Storage<DType::bf16> {
  using T = std::uint16_t;
  // bf16 is the top half of a binary32: widening is a shift, inlined into the packing loops
  // (through bf16_to_float, a call per element, bf16 -> f32 ran at 71 % of f32's rate).
  static float widen(T v) {
    const std::uint32_t bits = std::uint32_t(v) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
};

// fp8 decodes through a 256-entry table (exact: every fp8 value is a float).
const std::array<float, 256>& fp8_table(DType t);
template <>
struct Storage<DType::e4m3> {
  using T = std::uint8_t;
  static float widen(T v) { return fp8_table(DType::e4m3)[v]; }
};
template <>
struct Storage<DType::e5m2> {
  using T = std::uint8_t;
  static float widen(T v) { return fp8_table(DType::e5m2)[v]; }
};

// The accumulator of a storage type's natural compute: float (f32, f16, bf16, fp8), double,
// uint32 (i32, i8).
template <DType D>
using AccOf = decltype(Storage<D>::widen(typename Storage<D>::T{}));

// C's storage for the natural roles of A's storage type (GemmTypes::of, as a constant).
template <DType A>
inline constexpr DType kNaturalC = A == DType::i8                         ? DType::i32
                                   : A == DType::e4m3 || A == DType::e5m2 ? DType::bf16
                                                                          : A;

// Storage `v` converted to accumulator type Acc (exact; integers keep their bits).
template <class Acc, DType D>
inline Acc load(typename Storage<D>::T v) {
  return static_cast<Acc>(Storage<D>::widen(v));
}

// Accumulator value rounded into C's storage (round to nearest even; uint32 keeps its bits).
template <DType D, class Acc>
inline typename Storage<D>::T store(Acc v) {
  if constexpr (D == DType::f16)
    return float_to_half(static_cast<float>(v));
  else if constexpr (D == DType::bf16)
    return float_to_bf16(static_cast<float>(v));
  else if constexpr (D == DType::i32)
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
  else
    return static_cast<typename Storage<D>::T>(v);
}

// alpha / beta in the accumulator type (integer compute: validated int32 values, as uint32).
template <class Acc>
inline Acc scalar(double d) {
  if constexpr (std::is_same_v<Acc, std::uint32_t>)
    return static_cast<std::uint32_t>(static_cast<std::int32_t>(d));
  else
    return static_cast<Acc>(d);
}

// The element roles every CPU GEMM kernel implements: the natural roles of each storage type,
// and f32 results for the 16-bit and fp8 inputs (C in f32 instead of rounding to the input's
// width). The reference computes anything; tensor-core modes (tf32, 3xtf32) are GPU-only.
std::vector<TypeSupport> cpu_gemm_types();

// Calls fn.template operator()<A, C>() with A = storage of A and B, C = storage of C, for the
// roles in cpu_gemm_types(); the accumulator is AccOf<A>. Throws Unsupported otherwise.
template <class Fn>
void dispatch_roles(const GemmTypes& t, Fn&& fn) {
  if (t.a != t.b || t.compute != default_compute(t.a))
    throw Unsupported("CPU kernels: element roles " + t.name() + " are not implemented");
  auto with_c = [&]<DType A>() {
    if (t.c == kNaturalC<A>) return fn.template operator()<A, kNaturalC<A>>();
    if constexpr (std::is_same_v<AccOf<A>, float>)
      if (t.c == DType::f32) return fn.template operator()<A, DType::f32>();
    throw Unsupported("CPU kernels: element roles " + t.name() + " are not implemented");
  };
  switch (t.a) {
    case DType::f32:
      return with_c.template operator()<DType::f32>();
    case DType::f64:
      return with_c.template operator()<DType::f64>();
    case DType::i32:
      return with_c.template operator()<DType::i32>();
    case DType::i8:
      return with_c.template operator()<DType::i8>();
    case DType::f16:
      return with_c.template operator()<DType::f16>();
    case DType::bf16:
      return with_c.template operator()<DType::bf16>();
    case DType::e4m3:
      return with_c.template operator()<DType::e4m3>();
    case DType::e5m2:
      return with_c.template operator()<DType::e5m2>();
    default:
      throw Unsupported("CPU kernels: element roles " + t.name() + " are not implemented");
  }
}

}  // namespace kafel::cpu
