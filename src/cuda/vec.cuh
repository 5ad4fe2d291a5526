// 16-byte vectors of any element type and the cp.async primitives of the fast rungs.
// A Vec<T> is one 128-bit load/store (LDG.128 / LDS.128 / STG.128 in SASS).
#pragma once

#include <cuda_runtime.h>

namespace kafel::cuda {

template <class T>
struct alignas(16) Vec {
  static constexpr int N = 16 / sizeof(T);
  T v[N];
};

template <class T>
__device__ __forceinline__ Vec<T> load_vec(const T* p) {
  return *reinterpret_cast<const Vec<T>*>(p);
}
template <class T>
__device__ __forceinline__ void store_vec(T* p, const Vec<T>& x) {
  *reinterpret_cast<Vec<T>*>(p) = x;
}

// V consecutive elements of row r from column c on (row-major, leading dimension ld), zero
// outside rows x cols; `full` says the whole vector is inside, so one 16-byte load suffices.
template <class T>
__device__ __forceinline__ Vec<T> load_guarded(const T* base, long long ld, int r, int c, int rows,
                                               int cols, bool full) {
  if (full) return load_vec(base + r * ld + c);
  Vec<T> x;
#pragma unroll
  for (int v = 0; v < Vec<T>::N; ++v)
    x.v[v] = (r < rows && c + v < cols) ? base[r * ld + c + v] : T(0);
  return x;
}

// Copies 16 bytes global -> shared without passing through registers; only the first
// `src_bytes` are read, the rest of the 16 are zero-filled (how edge tiles are padded).
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, int src_bytes) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
// The same copy when all 16 bytes are inside the operand (no zero fill, no size register).
__device__ __forceinline__ void cp_async16_full(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
}
// Waits until at most N committed groups of this thread are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

}  // namespace kafel::cuda
