// Element traits for CPU kernels: storage type, accumulator type, and the conversions between.
// i32 accumulates in uint32 so overflow wraps modulo 2^32 without undefined behaviour.
#pragma once

#include <cstdint>
#include <utility>

#include "kafel/error.hpp"
#include "kafel/types.hpp"

namespace kafel::cpu {

template <DType T>
struct Elem;

template <>
struct Elem<DType::f32> {
  using Storage = float;
  using Acc = float;
  static Acc load(Storage s) { return s; }
  static Storage store(Acc a) { return a; }
  static Acc scalar(double d) { return static_cast<Acc>(d); }
};

template <>
struct Elem<DType::f64> {
  using Storage = double;
  using Acc = double;
  static Acc load(Storage s) { return s; }
  static Storage store(Acc a) { return a; }
  static Acc scalar(double d) { return d; }
};

template <>
struct Elem<DType::f16> {
  using Storage = std::uint16_t;
  using Acc = float;
  static Acc load(Storage s) { return half_to_float(s); }
  static Storage store(Acc a) { return float_to_half(a); }
  static Acc scalar(double d) { return static_cast<Acc>(d); }
};

template <>
struct Elem<DType::i32> {
  using Storage = std::int32_t;
  using Acc = std::uint32_t;
  static Acc load(Storage s) { return static_cast<Acc>(s); }
  static Storage store(Acc a) { return static_cast<Storage>(a); }
  static Acc scalar(double d) { return static_cast<Acc>(static_cast<std::int32_t>(d)); }
};

// Calls fn.template operator()<T>() with the DType known at compile time.
template <class Fn>
decltype(auto) dispatch_dtype(DType t, Fn&& fn) {
  switch (t) {
    case DType::f32:
      return std::forward<Fn>(fn).template operator()<DType::f32>();
    case DType::f64:
      return std::forward<Fn>(fn).template operator()<DType::f64>();
    case DType::f16:
      return std::forward<Fn>(fn).template operator()<DType::f16>();
    case DType::i32:
      return std::forward<Fn>(fn).template operator()<DType::i32>();
  }
  throw InvalidArgument("unknown element type");
}

}  // namespace kafel::cpu
