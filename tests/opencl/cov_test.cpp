// OpenCL covariance (ocl.onepass, the ocl.syrk baseline) against the float64 oracle on every OpenCL
// device: the article's signal, random and offset data, odd sizes, both layouts, numpy semantics,
// NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kafel/cov.hpp"
#include "kafel/error.hpp"
#include "kafel/kernels.hpp"
#include "kafel/signal.hpp"

namespace kafel {
namespace {

std::vector<Device> opencl_devices() {
  std::vector<Device> out;
  for (const Device& d : list_devices())
    if (d.backend == "opencl") out.push_back(d);
  return out;
}

#define REQUIRE_OPENCL(devs)                         \
  const std::vector<Device> devs = opencl_devices(); \
  if (devs.empty()) GTEST_SKIP() << "no OpenCL device present"

void check(const Device& dev, const std::string& kernel, SignalKind s, std::int64_t c,
           std::int64_t n, SampleLayout l) {
  std::vector<float> x(static_cast<std::size_t>(c * n));
  generate_signal(s, x.data(), c, n, l, 11);
  const SamplesView v{x.data(), c, n, l, 0};
  CovOptions o;
  o.kernel = kernel;
  const CovResult got = covariance(dev, v, o);
  const CovResult ref = reference_covariance(v);
  EXPECT_LE(cov_rel_err(got, ref), 1e-6) << dev.id << " " << kernel << " " << to_string(s) << " "
                                         << c << "x" << n << " " << to_string(l);
  for (std::int64_t i = 0; i < c; ++i)
    EXPECT_NEAR(got.mean[i], ref.mean[i], 1e-6 * (1 + std::abs(ref.mean[i])));
}

const SampleLayout kLayouts[] = {SampleLayout::Planar, SampleLayout::Interleaved};
const SignalKind kSignals[] = {SignalKind::Seed, SignalKind::Random, SignalKind::Offset};

TEST(CovOpenCL, OnePassSmallShapes) {
  REQUIRE_OPENCL(devs);
  for (const Device& d : devs)
    for (std::int64_t c : {1, 2, 10, 16})
      for (std::int64_t n : {2, 3, 1001})
        for (SampleLayout l : kLayouts)
          for (SignalKind s : kSignals) check(d, "ocl.onepass", s, c, n, l);
}

TEST(CovOpenCL, OnePassMillionSamples) {
  REQUIRE_OPENCL(devs);
  for (const Device& d : devs) {
    check(d, "ocl.onepass", SignalKind::Offset, 10, 1000003, SampleLayout::Planar);
    check(d, "ocl.onepass", SignalKind::Seed, 10, 1000003, SampleLayout::Interleaved);
  }
}

TEST(CovOpenCL, SyrkManyChannels) {
  REQUIRE_OPENCL(devs);
  for (const Device& d : devs) {
    for (std::int64_t c : {33, 257})
      for (std::int64_t n : {2, 3})
        for (SampleLayout l : kLayouts) check(d, "ocl.syrk", SignalKind::Random, c, n, l);
    check(d, "ocl.syrk", SignalKind::Offset, 33, 5003, SampleLayout::Interleaved);
    EXPECT_EQ(default_cov_kernel(d, 257), "ocl.herk");
    EXPECT_EQ(default_cov_kernel(d, 10), "ocl.onepass");
  }
}

// numpy.cov([[1,2,3,4],[2,4,6,9]]) = [[5/3, 11.5/3], [11.5/3, 26.75/3]] (worked by hand).
TEST(CovOpenCL, HandCheckedAndNan) {
  REQUIRE_OPENCL(devs);
  std::vector<float> x = {1, 2, 3, 4, 2, 4, 6, 9};
  for (const Device& d : devs) {
    CovOptions o;
    o.kernel = "ocl.onepass";
    CovResult r = covariance(d, SamplesView{x.data(), 2, 4}, o);
    EXPECT_NEAR(r.at(0, 0), 5.0 / 3, 1e-9);
    EXPECT_NEAR(r.at(1, 0), 11.5 / 3, 1e-9);
    EXPECT_NEAR(r.at(1, 1), 26.75 / 3, 1e-9);
    std::vector<float> y = x;
    y[6] = std::nanf("");
    r = covariance(d, SamplesView{y.data(), 2, 4}, o);
    EXPECT_EQ(r.nan_entries, 3);
    EXPECT_NEAR(r.at(0, 0), 5.0 / 3, 1e-9);
    o.kernel = "ocl.onepass";
    EXPECT_THROW(covariance(d, SamplesView{x.data(), 1, 1}, o), InvalidArgument);
    std::vector<float> big(17 * 4, 1.0f);
    EXPECT_THROW(covariance(d, SamplesView{big.data(), 17, 4}, o), Unsupported);
  }
}

}  // namespace
}  // namespace kafel
