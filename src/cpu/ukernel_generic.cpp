// Portable micro-kernels in plain C++ (the compiler vectorises them for the baseline ISA), so
// the packed GEMM runs on any CPU; also the dispatcher from an ISA to its micro-kernels.
#include <cstdint>

#include "cpu/ukernel.hpp"
#include "kafel/error.hpp"

namespace kafel::cpu {
namespace {

template <class T, int MR, int NR>
void ukernel(std::int64_t kc, const T* __restrict a, const T* __restrict b, T* __restrict c,
             std::int64_t ldc, T alpha, T beta) {
  T acc[MR][NR] = {};
  for (std::int64_t p = 0; p < kc; ++p, a += MR, b += NR)
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j) acc[i][j] += a[i] * b[j];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) {
      T* ci = c + i * ldc + j;
      *ci = beta == T(0) ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *ci;
    }
}

template <class T, DType D>
Ukernel<T> make() {
  constexpr TileShape s = tile_shape(Isa::generic, D);
  return {s.mr, s.nr, &ukernel<T, s.mr, s.nr>};
}

}  // namespace

const UkernelSet& ukernels_generic() {
  static const UkernelSet set{make<float, DType::f32>(), make<double, DType::f64>(),
                              make<std::uint32_t, DType::i32>()};
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
