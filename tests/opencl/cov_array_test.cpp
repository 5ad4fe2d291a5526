// OpenCL covariance at array scale: ocl.herk on f32, cf32, ci8 and ci16 samples, 1..1024
// channels, batches and windows against the tests' complex128 oracle; the default choice.
#include <gtest/gtest.h>

#include <vector>

#include "common/cov_checks.hpp"
#include "kafel/cov.hpp"
#include "kafel/error.hpp"
#include "kafel/kernels.hpp"

namespace kafel {
namespace {

const std::vector<DType> kTypes = {DType::f32, DType::c64, DType::ci8, DType::ci16};

// OpenCL devices with fp64 (ocl.herk merges float sums in double; others must refuse it).
std::vector<Device> tiled_devices() {
  std::vector<Device> out;
  for (const Device& d : list_devices()) {
    if (d.backend != "opencl") continue;
    if (d.caps.has(Cap::fp64)) {
      out.push_back(d);
      continue;
    }
    EXPECT_THROW(choose_cov(d, CovDesc{100, 1000}, "ocl.herk"), Unsupported) << d.id;
  }
  return out;
}

#define REQUIRE_TILED(devs)                         \
  const std::vector<Device> devs = tiled_devices(); \
  if (devs.empty()) GTEST_SKIP() << "no OpenCL device with fp64 present"

TEST(CovArrayOpenCL, HerkEveryTypeAndChannelCount) {
  REQUIRE_TILED(devs);
  for (const Device& d : devs) test::check_cov_kernel(d, "ocl.herk", kTypes);
}

TEST(CovArrayOpenCL, HerkOffsetMeanLongRuns) {
  REQUIRE_TILED(devs);
  for (const Device& d : devs) {
    test::check_cov_case(d, "ocl.herk", SignalKind::Offset, DType::c64, 16, 200003,
                         SampleLayout::Interleaved);
    test::check_cov_case(d, "ocl.herk", SignalKind::Offset, DType::f32, 70, 30011,
                         SampleLayout::Planar);
    test::check_cov_case(d, "ocl.herk", SignalKind::Offset, DType::ci8, 8, 100003,
                         SampleLayout::Planar);
  }
}

TEST(CovArrayOpenCL, HerkBatchesAndWindows) {
  REQUIRE_TILED(devs);
  for (const Device& d : devs) {
    test::check_cov_case(d, "ocl.herk", SignalKind::Random, DType::c64, 8, 256,
                         SampleLayout::Planar, 64);
    for (DType t : kTypes) test::check_cov_windows(d, "ocl.herk", t);
  }
}

TEST(CovArrayOpenCL, DefaultChoice) {
  REQUIRE_TILED(devs);
  for (const Device& d : devs) {
    EXPECT_EQ(choose_cov(d, CovDesc{10, 1000}).kernel, "ocl.onepass");
    EXPECT_EQ(choose_cov(d, CovDesc{17, 1000}).kernel, "ocl.herk");
    EXPECT_EQ(choose_cov(d, CovDesc{10, 1000, SampleLayout::Planar, 1, DType::c64}).kernel,
              "ocl.herk");
    EXPECT_EQ(choose_cov(d, CovDesc{10, 1000, SampleLayout::Planar, 1, DType::f32, 4}).kernel,
              "ocl.herk");
    EXPECT_THROW(
        choose_cov(d, CovDesc{10, 100, SampleLayout::Planar, 1, DType::c64}, "ocl.onepass"),
        Unsupported);
  }
}

}  // namespace
}  // namespace kafel
