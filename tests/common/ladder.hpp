// The one GEMM ladder test body, shared by the cpu, opencl and gpu suites: every registered
// kernel of a device x every element-role combination it declares, on odd shapes, transposes,
// layouts, leading dimensions, alpha/beta, exact integer-valued inputs and sampled parameters.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kafel/device.hpp"
#include "kafel/params.hpp"
#include "kafel/types.hpp"

namespace kafel::test {

struct LadderCase {
  std::string kernel;
  GemmTypes types;
  Params params;  // empty: what choose_gemm picks
  // Empty when the kernel runs these roles on the device; otherwise the registry's reason
  // (a missing capability), and the case checks that the kernel refuses them cleanly.
  std::string unsupported;
  // A comparison library that is not installed here (cpu.mkl without MKL): every test of the
  // case is skipped with `unsupported` as the reason.
  bool absent = false;
};

// Every (kernel, roles) of the device's backend from the registry, in ladder order (baselines
// included). Without a device: one placeholder case, which the tests skip.
std::vector<LadderCase> ladder_cases(const std::optional<Device>& device);
// A readable gtest name: "pipelined_bf16_to_f32".
std::string ladder_case_name(const LadderCase& c);

// The bodies. Each skips (GTEST_SKIP) with the reason when the device is absent, and for an
// unsupported case asserts the clean refusal instead.
void ladder_odd_shapes(const std::optional<Device>& device, const LadderCase& c);
void ladder_layouts(const std::optional<Device>& device, const LadderCase& c);
// Integer-valued inputs: the result must equal the reference exactly (every rounding is exact)
// at 13x24x35 and at sizes that cover several tiles (interior fast paths included).
void ladder_exact(const std::optional<Device>& device, const LadderCase& c);
// Problems larger than several tiles, both ops, beta != 0.
void ladder_large(const std::optional<Device>& device, const LadderCase& c);
// A few valid points of the kernel's parameter space (tuner candidates), checked on an odd
// shape: any of them may be chosen by `kafel tune`.
void ladder_sampled_params(const std::optional<Device>& device, const LadderCase& c);

}  // namespace kafel::test
