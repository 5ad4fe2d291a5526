// Every CPU GEMM kernel x every element-role combination it registers, through the shared
// ladder bodies (tests/common/ladder.hpp): odd shapes, layouts, exact integers, large, params.
#include <gtest/gtest.h>

#include "common/ladder.hpp"

namespace kafel {
namespace {

std::optional<Device> cpu() {
  return select_device("cpu");
}

class CpuLadder : public ::testing::TestWithParam<test::LadderCase> {};

TEST_P(CpuLadder, OddShapesTransposesAndScalars) {
  test::ladder_odd_shapes(cpu(), GetParam());
}
TEST_P(CpuLadder, LayoutsAndLeadingDimensions) {
  test::ladder_layouts(cpu(), GetParam());
}
TEST_P(CpuLadder, ExactOnIntegerValuedInputs) {
  test::ladder_exact(cpu(), GetParam());
}
TEST_P(CpuLadder, LargerThanSeveralTiles) {
  test::ladder_large(cpu(), GetParam());
}
TEST_P(CpuLadder, SampledParameters) {
  test::ladder_sampled_params(cpu(), GetParam());
}

INSTANTIATE_TEST_SUITE_P(Kernels, CpuLadder, ::testing::ValuesIn(test::ladder_cases(cpu())),
                         [](const auto& info) { return test::ladder_case_name(info.param); });

}  // namespace
}  // namespace kafel
