// CPU covariance at array scale: cpu.fast, cpu.herk and cpu.reference on f32, cf32, ci8 and
// ci16 samples, 1..1024 channels, batches, windows, forgetting and forward-backward averaging.
#include <gtest/gtest.h>

#include <vector>

#include "common/cov_checks.hpp"
#include "kafel/cov.hpp"
#include "kafel/error.hpp"
#include "kafel/kernels.hpp"

namespace kafel {
namespace {

const std::vector<DType> kTypes = {DType::f32, DType::c64, DType::ci8, DType::ci16};

Device cpu() {
  return select_device("cpu");
}

TEST(CovArrayCpu, FastEveryTypeAndChannelCount) {
  test::check_cov_kernel(cpu(), "cpu.fast", kTypes);
}

TEST(CovArrayCpu, HerkEveryTypeAndChannelCount) {
  test::check_cov_kernel(cpu(), "cpu.herk", kTypes);
}

TEST(CovArrayCpu, ReferenceAgreesWithTheTestsOracle) {
  test::check_cov_kernel(cpu(), "cpu.reference", kTypes, 100, false);
}

TEST(CovArrayCpu, OffsetMeanLongRuns) {
  for (const char* k : {"cpu.fast", "cpu.herk"}) {
    test::check_cov_case(cpu(), k, SignalKind::Offset, DType::c64, 16, 300007,
                         SampleLayout::Interleaved);
    test::check_cov_case(cpu(), k, SignalKind::Offset, DType::f32, 100, 50021,
                         SampleLayout::Planar);
    test::check_cov_case(cpu(), k, SignalKind::Offset, DType::ci8, 8, 200003, SampleLayout::Planar);
    // 16 real lanes: with AVX-512 the 4x4 worker, planar rows read in place over many blocks.
    test::check_cov_case(cpu(), k, SignalKind::Offset, DType::f32, 16, 300007,
                         SampleLayout::Planar);
  }
}

TEST(CovArrayCpu, ManyBatchesOneCall) {
  test::check_cov_case(cpu(), "", SignalKind::Random, DType::c64, 8, 256, SampleLayout::Planar, 64);
  test::check_cov_case(cpu(), "cpu.herk", SignalKind::Random, DType::ci16, 40, 100,
                       SampleLayout::Interleaved, 5);
}

TEST(CovArrayCpu, WindowsForgettingForwardBackward) {
  for (DType t : kTypes) test::check_cov_windows(cpu(), "", t);
  test::check_cov_windows(cpu(), "cpu.herk", DType::c64);
}

TEST(CovArrayCpu, DefaultChoiceByLanes) {
  const Device d = cpu();
  EXPECT_EQ(choose_cov(d, CovDesc{10, 1000}).kernel, "cpu.fast");
  EXPECT_EQ(choose_cov(d, CovDesc{100, 1000}).kernel, "cpu.herk");
  // Complex samples are two lanes per channel: 48 complex channels are 96 lanes.
  EXPECT_EQ(choose_cov(d, CovDesc{47, 1000, SampleLayout::Planar, 1, DType::c64}).kernel,
            "cpu.fast");
  EXPECT_EQ(choose_cov(d, CovDesc{48, 1000, SampleLayout::Planar, 1, DType::c64}).kernel,
            "cpu.herk");
  EXPECT_EQ(choose_cov(d, CovDesc{10, 1000, SampleLayout::Planar, 1, DType::ci8, 7}).kernel,
            "cpu.fast");
  // Baselines and one-block rungs refuse what they cannot do, by name.
  EXPECT_THROW(choose_cov(d, CovDesc{10, 100, SampleLayout::Planar, 1, DType::c64}, "cpu.serial"),
               Unsupported);
  EXPECT_THROW(choose_cov(d, CovDesc{10, 100, SampleLayout::Planar, 1, DType::f32, 2}, "cpu.syrk"),
               Unsupported);
}

TEST(CovArrayCpu, HermitianOutputAndPackedTriangle) {
  const test::CovSamples s =
      test::make_cov_samples(SignalKind::Random, DType::c64, 5, 301, SampleLayout::Planar, 2);
  const CovResult r = covariance(cpu(), s.view);
  test::expect_hermitian(r, "cf32 5x301 x2");
  EXPECT_TRUE(r.cov_f32.empty());
  std::vector<double> im;
  const std::vector<double> re = lower_packed(r, 1, &im);
  ASSERT_EQ(re.size(), 15u);
  ASSERT_EQ(im.size(), 15u);
  EXPECT_EQ(re[4 * 5 / 2 + 1], r.at(4, 1, 1));  // entry (4, 1) of batch 1
  EXPECT_EQ(im[4 * 5 / 2 + 1], r.imag_at(4, 1, 1));
  EXPECT_EQ(im[2], 0.0);  // (1, 1): the diagonal is real
  const CovResult one = r.batch_result(1);
  EXPECT_EQ(one.batch, 1);
  EXPECT_EQ(one.at(4, 1), r.at(4, 1, 1));
  EXPECT_THROW(r.batch_result(2), InvalidArgument);
}

TEST(CovArrayCpu, ForwardBackwardByDefinition) {
  const test::CovSamples s =
      test::make_cov_samples(SignalKind::Random, DType::c64, 4, 64, SampleLayout::Planar);
  const CovResult r = covariance(cpu(), s.view);
  const CovResult f = forward_backward(r);
  // (R + J conj(R) J) / 2 at (0, 1): (R_01 + conj(R_32)) / 2.
  EXPECT_DOUBLE_EQ(f.at(0, 1), (r.at(0, 1) + r.at(3, 2)) / 2);
  EXPECT_DOUBLE_EQ(f.imag_at(0, 1), (r.imag_at(0, 1) - r.imag_at(3, 2)) / 2);
  test::expect_hermitian(f, "forward-backward");
  // Persymmetric: f = J conj(f) J.
  EXPECT_DOUBLE_EQ(f.at(0, 1), f.at(3, 2));
  EXPECT_DOUBLE_EQ(f.imag_at(0, 1), -f.imag_at(3, 2));
}

TEST(CovArrayCpu, BadInputIsRefused) {
  const Device d = cpu();
  std::vector<float> x(64, 1.0f);
  SamplesView v{x.data(), 4, 8};
  v.type = DType::i32;
  EXPECT_THROW(covariance(d, v), InvalidArgument);
  v.type = DType::c64;
  v.batch = 0;
  EXPECT_THROW(covariance(d, v), InvalidArgument);
  v.batch = 2;
  v.batch_stride = -1;
  EXPECT_THROW(covariance(d, v), InvalidArgument);
  EXPECT_THROW(CovWindowOptions({-1, 0, 0, false}).validate(), InvalidArgument);
  EXPECT_THROW(CovWindowOptions({10, 0, -0.5, false}).validate(), InvalidArgument);
  EXPECT_THROW(
      generate_samples(SignalKind::Random, DType::f64, x.data(), 2, 4, SampleLayout::Planar),
      InvalidArgument);
}

}  // namespace
}  // namespace kafel
