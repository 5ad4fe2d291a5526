// The CPU kernels' element roles (cpu_gemm_types) and the fp8 decoding tables.
#include "cpu/element.hpp"

namespace kafel::cpu {

const std::array<float, 256>& fp8_table(DType t) {
  static const auto make = [](DType type) {
    std::array<float, 256> table{};
    for (int i = 0; i < 256; ++i) {
      const auto byte = static_cast<std::uint8_t>(i);
      table[std::size_t(i)] = static_cast<float>(load_as_double(type, &byte));
    }
    return table;
  };
  static const std::array<float, 256> e4m3 = make(DType::e4m3), e5m2 = make(DType::e5m2);
  return t == DType::e4m3 ? e4m3 : e5m2;
}

std::vector<TypeSupport> cpu_gemm_types() {
  std::vector<TypeSupport> out;
  for (DType t : {DType::f32, DType::f64, DType::i32, DType::f16, DType::bf16, DType::i8,
                  DType::e4m3, DType::e5m2})
    out.push_back({GemmTypes::of(t), {}});
  for (DType t : {DType::f16, DType::bf16, DType::e4m3, DType::e5m2}) {
    GemmTypes g = GemmTypes::of(t);
    g.c = DType::f32;
    out.push_back({g, {}});
  }
  return out;
}

}  // namespace kafel::cpu
