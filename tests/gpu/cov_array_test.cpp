// CUDA covariance at array scale: cuda.tiled (the default past cuda.onepass) on f32, cf32, ci8
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

TEST(CovArrayCuda, TiledEveryTypeAndChannelCount) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs) test::check_cov_kernel(d, "cuda.tiled", kTypes);
}

TEST(CovArrayCuda, TiledOffsetMeanLongRuns) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs) {
    test::check_cov_case(d, "cuda.tiled", SignalKind::Offset, DType::c64, 64, 1048576,
                         SampleLayout::Interleaved);
    test::check_cov_case(d, "cuda.tiled", SignalKind::Offset, DType::f32, 256, 65537,
                         SampleLayout::Planar);
    test::check_cov_case(d, "cuda.tiled", SignalKind::Offset, DType::ci8, 64, 262147,
                         SampleLayout::Planar);
    test::check_cov_case(d, "cuda.tiled", SignalKind::Random, DType::c64, 64, 4096,
                         SampleLayout::Planar, 256);
  }
}

TEST(CovArrayCuda, TiledWindows) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs)
    for (DType t : kTypes) test::check_cov_windows(d, "cuda.tiled", t);
}

TEST(CovArrayCuda, TiledIsTheDefaultPastTheOnePassKernel) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs) {
    EXPECT_EQ(choose_cov(d, CovDesc{10, 1000}).kernel, "cuda.onepass");
    EXPECT_EQ(choose_cov(d, CovDesc{100, 1000}).kernel, "cuda.tiled");
    EXPECT_EQ(choose_cov(d, CovDesc{16, 1000, SampleLayout::Planar, 1, DType::c64}).kernel,
              "cuda.tiled");
    EXPECT_EQ(choose_cov(d, CovDesc{10, 1000, SampleLayout::Planar, 1, DType::f32, 4}).kernel,
              "cuda.tiled");
  }
}

}  // namespace
}  // namespace kafel
