// Portable kernels of the direct small-matrix GEMM (cpu.small): the same register tiles with
// one element per "vector", for CPUs or builds without the AVX2 / AVX-512 kernels.
#include "cpu/small_gemm.hpp"
#include "cpu/small_impl.hpp"

namespace kafel::cpu {
namespace {

template <class E>
struct Scalar {
  using T = E;
  using R = E;
  static constexpr int lanes = 1;
  static constexpr int rows = 4;
  static R zero() { return 0; }
  static R loadu(const T* p) { return *p; }
  static void storeu(T* p, R r) { *p = r; }
  static R set1(T x) { return x; }
  static R madd(R a, R b, R acc) { return a * b + acc; }
  static R mul(R a, R b) { return a * b; }
};

const SmallKernels kKernels{small::gemm<Scalar<float>>, small::gemm<Scalar<double>>};

}  // namespace

const SmallKernels& small_kernels_generic() {
  return kKernels;
}

}  // namespace kafel::cpu
