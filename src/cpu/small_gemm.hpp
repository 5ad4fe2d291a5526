// The direct small-matrix GEMM (cpu.small): C tiles computed straight from the caller's A and B,
// no packing, one function per ISA. Below a measured size packing costs more than it saves.
#pragma once

#include <cstdint>

namespace kafel::cpu {

// One matrix: C (m x n, row stride ldc) = alpha * op(A) op(B) + beta * C, op(A)(i, p) at
// a[i * ars + p * acs], op(B) row-major k x n (row stride ldb, contiguous along n). beta == 0
// never reads C; k == 0 gives beta * C.
template <class T>
using SmallFn = void (*)(std::int64_t m, std::int64_t n, std::int64_t k, const T* a,
                         std::int64_t ars, std::int64_t acs, const T* b, std::int64_t ldb, T* c,
                         std::int64_t ldc, T alpha, T beta);

struct SmallKernels {
  SmallFn<float> f32 = nullptr;
  SmallFn<double> f64 = nullptr;
};

// Null when this build has no kernels of that ISA (see src/cpu/CMakeLists.txt).
const SmallKernels* small_kernels_avx512();
const SmallKernels* small_kernels_avx2();
const SmallKernels& small_kernels_generic();

}  // namespace kafel::cpu
