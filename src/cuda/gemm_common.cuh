// Device-side helpers shared by the CUDA GEMM rungs: the operand view a kernel receives,
// wrapping int32 arithmetic, the alpha/beta epilogue and the per-type dispatch.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "cuda/plan.hpp"
#include "kafel/error.hpp"

namespace kafel::cuda {

// Multiply-add in the element type. int32 goes through uint32 so it wraps modulo 2^32
// (signed overflow would be undefined behaviour).
__device__ __forceinline__ float mad(float a, float b, float c) {
  return fmaf(a, b, c);
}
__device__ __forceinline__ double mad(double a, double b, double c) {
  return fma(a, b, c);
}
__device__ __forceinline__ int mad(int a, int b, int c) {
  return static_cast<int>(static_cast<unsigned>(a) * static_cast<unsigned>(b) +
                          static_cast<unsigned>(c));
}
__device__ __forceinline__ float mul(float a, float b) {
  return a * b;
}
__device__ __forceinline__ double mul(double a, double b) {
  return a * b;
}
__device__ __forceinline__ int mul(int a, int b) {
  return static_cast<int>(static_cast<unsigned>(a) * static_cast<unsigned>(b));
}

// Operands by value in kernel parameters. Row-major; ta/tb select op(A) = A^T / op(B) = B^T.
template <class T>
struct Operands {
  const T* a;
  const T* b;
  T* c;
  long long lda, ldb, ldc;
  int m, n, k;
  bool ta, tb;
  bool beta_zero;  // C is never read (it may hold NaN)
  T alpha, beta;

  // op(A)(i, p) and op(B)(p, j), by indexing (the simple rungs).
  __device__ __forceinline__ T A(int i, int p) const {
    return ta ? a[static_cast<long long>(p) * lda + i] : a[static_cast<long long>(i) * lda + p];
  }
  __device__ __forceinline__ T B(int p, int j) const {
    return tb ? b[static_cast<long long>(j) * ldb + p] : b[static_cast<long long>(p) * ldb + j];
  }
  // C(i, j) = alpha * acc + beta * C(i, j); the caller checks bounds.
  __device__ __forceinline__ void store(int i, int j, T acc) const {
    T* p = c + static_cast<long long>(i) * ldc + j;
    *p = beta_zero ? mul(alpha, acc) : mad(beta, *p, mul(alpha, acc));
  }
};

// Scalars in the element type; int32 takes the integer part and wraps modulo 2^32.
template <class T>
inline T scalar_as(double v) {
  if constexpr (sizeof(T) == 4 && T(0.5) == T(0)) {
    return static_cast<T>(static_cast<std::uint32_t>(static_cast<std::int64_t>(v)));
  } else {
    return static_cast<T>(v);
  }
}

template <class T>
inline Operands<T> operands_of(const DeviceGemm& g) {
  Operands<T> o;
  o.a = static_cast<const T*>(g.a);
  o.b = static_cast<const T*>(g.b);
  o.c = static_cast<T*>(g.c);
  o.lda = g.lda;
  o.ldb = g.ldb;
  o.ldc = g.ldc;
  o.m = static_cast<int>(g.desc.m);
  o.n = static_cast<int>(g.desc.n);
  o.k = static_cast<int>(g.desc.k);
  o.ta = g.desc.op_a == Op::T;
  o.tb = g.desc.op_b == Op::T;
  o.beta_zero = g.desc.beta == 0.0;
  o.alpha = scalar_as<T>(g.desc.alpha);
  o.beta = scalar_as<T>(g.desc.beta);
  return o;
}

inline unsigned ceil_div(long long a, long long b) {
  return static_cast<unsigned>((a + b - 1) / b);
}

// Calls f(T{}) for the natural roles f32, f64 or i32 of `g`; other roles are Unsupported
// (the registry lets only those through; this guards direct plan use).
template <class F>
void by_type(const DeviceGemm& g, const char* kernel, F&& f) {
  const GemmTypes& t = g.desc.types;
  if (t == GemmTypes::of(DType::f32)) return f(float{});
  if (t == GemmTypes::of(DType::f64)) return f(double{});
  if (t == GemmTypes::of(DType::i32)) return f(int{});
  throw Unsupported(std::string(kernel) + ": element roles " + t.name() +
                    " are not compiled in (f32, f64 and i32 are)");
}

}  // namespace kafel::cuda
