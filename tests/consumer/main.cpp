// Consumer of an installed kafel: one verified GEMM through the public API only.
// Exit code 0 means find_package(kafel), the headers and the library all work.
#include <kafel/gemm.hpp>
#include <kafel/version.hpp>

#include <cstdio>
#include <random>

int main() {
  const kafel::Device cpu = kafel::select_device("cpu");
  kafel::Matrix a(kafel::DType::f32, 37, 19), b(kafel::DType::f32, 19, 23);
  kafel::Matrix c(kafel::DType::f32, 37, 23), c0(kafel::DType::f32, 37, 23);
  std::mt19937_64 rng(3);
  kafel::fill_random_normal(a, rng);
  kafel::fill_random_normal(b, rng);
  kafel::gemm(cpu, kafel::Op::N, kafel::Op::N, 1.0, a, b, 0.0, c);
  const kafel::GemmDesc d{37, 23, 19, kafel::Op::N, kafel::Op::N, 1.0, 0.0, kafel::DType::f32};
  const auto r = kafel::verify_gemm(d, a, b, c0, c);
  std::printf("kafel %s consumer: %s\n", KAFEL_VERSION, r.message.c_str());
  return r.passed ? 0 : 1;
}
