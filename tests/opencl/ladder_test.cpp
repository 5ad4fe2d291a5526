// Every OpenCL GEMM kernel x every element-role combination it registers, through the shared
// ladder bodies (tests/common/ladder.hpp), on the OpenCL device the suite runs on. A combination
// whose capability the device lacks (the registry's TypeSupport needs) must be refused cleanly.
#include <gtest/gtest.h>

#include "common/ladder.hpp"
#include "opencl_device.hpp"

namespace kafel {
namespace {

class OpenclLadder : public ::testing::TestWithParam<test::LadderCase> {};

TEST_P(OpenclLadder, OddShapesTransposesAndScalars) {
  test::ladder_odd_shapes(test::opencl_device(), GetParam());
}
TEST_P(OpenclLadder, LayoutsAndLeadingDimensions) {
  test::ladder_layouts(test::opencl_device(), GetParam());
}
TEST_P(OpenclLadder, ExactOnIntegerValuedInputs) {
  test::ladder_exact(test::opencl_device(), GetParam());
}
TEST_P(OpenclLadder, LargerThanSeveralTiles) {
  test::ladder_large(test::opencl_device(), GetParam());
}
TEST_P(OpenclLadder, SampledParameters) {
  test::ladder_sampled_params(test::opencl_device(), GetParam());
}

INSTANTIATE_TEST_SUITE_P(Kernels, OpenclLadder,
                         ::testing::ValuesIn(test::ladder_cases(test::opencl_device())),
                         [](const auto& info) { return test::ladder_case_name(info.param); });

}  // namespace
}  // namespace kafel
