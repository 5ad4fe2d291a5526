// CUDA covariance at array scale: cuda.herk (the default past cuda.onepass) on f32, cf32, ci8
// and ci16 samples, 1..1024 channels, batches and windows.
#include <gtest/gtest.h>

#include <vector>

#include "common/cov_checks.hpp"
#include "kafel/cov.hpp"
#include "kafel/error.hpp"
#include "kafel/kernels.hpp"

namespace kafel {
namespace {

const std::vector<DType> kTypes = {DType::f32, DType::c64, DType::ci8, DType::ci16};

std::vector<Device> cuda_devices() {
  std::vector<Device> out;
  for (const Device& d : list_devices())
    if (d.backend == "cuda") out.push_back(d);
  return out;
}

#define REQUIRE_CUDA(devs)                         \
  const std::vector<Device> devs = cuda_devices(); \
  if (devs.empty()) GTEST_SKIP() << "no CUDA device present"

TEST(CovArrayCuda, HerkEveryTypeAndChannelCount) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs) test::check_cov_kernel(d, "cuda.herk", kTypes);
}

TEST(CovArrayCuda, HerkOffsetMeanLongRuns) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs) {
    test::check_cov_case(d, "cuda.herk", SignalKind::Offset, DType::c64, 64, 1048576,
                         SampleLayout::Interleaved);
    test::check_cov_case(d, "cuda.herk", SignalKind::Offset, DType::f32, 256, 65537,
                         SampleLayout::Planar);
    test::check_cov_case(d, "cuda.herk", SignalKind::Offset, DType::ci8, 64, 262147,
                         SampleLayout::Planar);
    test::check_cov_case(d, "cuda.herk", SignalKind::Random, DType::c64, 64, 4096,
                         SampleLayout::Planar, 256);
  }
}

TEST(CovArrayCuda, HerkWindows) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs)
    for (DType t : kTypes) test::check_cov_windows(d, "cuda.herk", t);
}

TEST(CovArrayCuda, HerkIsTheDefaultPastTheOnePassKernel) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs) {
    EXPECT_EQ(choose_cov(d, CovDesc{10, 1000}).kernel, "cuda.onepass");
    EXPECT_EQ(choose_cov(d, CovDesc{100, 1000}).kernel, "cuda.herk");
    EXPECT_EQ(choose_cov(d, CovDesc{16, 1000, SampleLayout::Planar, 1, DType::c64}).kernel,
              "cuda.herk");
    EXPECT_EQ(choose_cov(d, CovDesc{10, 1000, SampleLayout::Planar, 1, DType::f32, 4}).kernel,
              "cuda.herk");
  }
}

}  // namespace
}  // namespace kafel
