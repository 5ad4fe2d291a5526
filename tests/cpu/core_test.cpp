// Core pieces: half conversion, parameters, device names, layout normalisation, report helpers,
// and that the verifier catches a wrong element (a verifier that cannot fail proves nothing).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>

#include "common/problems.hpp"
#include "core/backend.hpp"
#include "kafel/bench.hpp"
#include "kafel/error.hpp"

namespace kafel {
namespace {

TEST(Half, RoundTripsEveryHalfValue) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    const float f = half_to_float(bits);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(half_to_float(float_to_half(f))));
      continue;
    }
    EXPECT_EQ(float_to_half(f), bits) << "half bits " << h;
  }
}

TEST(Half, RoundsToNearestEven) {
  // Half spacing at 1 is 2^-10: 1 + 2^-11 is a tie (to even: 1), 1 + 3*2^-11 ties to 1 + 2^-9.
  EXPECT_EQ(half_to_float(float_to_half(1.0f + 1.0f / 2048)), 1.0f);
  EXPECT_EQ(half_to_float(float_to_half(1.0f + 3.0f / 2048)), 1.0f + 1.0f / 512);
  EXPECT_EQ(half_to_float(float_to_half(1.0f + 3.0f / 4096)), 1.0f + 1.0f / 1024);
  EXPECT_TRUE(std::isinf(half_to_float(float_to_half(70000.0f))));
  EXPECT_EQ(half_to_float(float_to_half(65504.0f)), 65504.0f);
  EXPECT_EQ(half_to_float(float_to_half(1e-8f)), 0.0f);
}

TEST(Types, ParseNamesAndRejectUnknown) {
  EXPECT_EQ(parse_dtype("float"), DType::f32);
  EXPECT_EQ(parse_dtype("F64"), DType::f64);
  EXPECT_EQ(parse_layout("col"), Layout::ColMajor);
  EXPECT_EQ(parse_op("t"), Op::T);
  EXPECT_THROW(parse_dtype("f8"), InvalidArgument);
  EXPECT_THROW(parse_layout("diagonal"), InvalidArgument);
}

TEST(Params, ResolveEnumerateAndReject) {
  ParamSpace s{{param("TS", 16, {8, 16, 32}, 1, 64, ""), param("WPT", 4, {1, 2, 4, 8}, 1, 64, "")},
               [](const Params& p) {
                 return p.at("WPT") > p.at("TS") ? std::string("WPT > TS") : std::string();
               }};
  EXPECT_EQ(s.resolve({{"TS", 32}}).at("TS"), 32);
  EXPECT_THROW(s.resolve({{"XX", 1}}), InvalidArgument);
  EXPECT_THROW(s.resolve({{"TS", 8}, {"WPT", 16}}), InvalidArgument);
  EXPECT_EQ(s.enumerate().size(), 12u);
  EXPECT_EQ(format_params(parse_params("TS=8,WPT=2")), "TS=8 WPT=2");
  EXPECT_THROW(parse_params("TS"), InvalidArgument);
  EXPECT_THROW(parse_params("TS=abc"), InvalidArgument);
}

TEST(ReportUtil, FormatsSizesAndNumbers) {
  EXPECT_EQ(human_bytes(0), "0 B");
  EXPECT_EQ(human_bytes(1023), "1023 B");
  EXPECT_EQ(human_bytes(1536), "1.5 KB");
  EXPECT_EQ(human_bytes(32.0 * 1024 * 1024), "32.0 MB");
  EXPECT_EQ(human_bytes(1.5 * 1024 * 1024 * 1024), "1.5 GB");
  EXPECT_EQ(human_bytes(3.0 * 1024 * 1024 * 1024 * 1024 * 1024), "3.0 PB");
  EXPECT_EQ(format_num("%.2f GFLOP/s", 12.345), "12.35 GFLOP/s");
  EXPECT_EQ(format_num("%g", 0.5), "0.5");
}

TEST(ReportUtil, MedianAndQuantiles) {
  EXPECT_EQ(median({}), 0);
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);  // the mean of the two middle values
  EXPECT_EQ(quantile({}, 0.5), 0);
  EXPECT_EQ(quantile({4, 1, 3, 2}, 0.5), 2);  // nearest rank: the lower middle value
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(101 - i);
  EXPECT_EQ(quantile(v, 0.99), 99);
  EXPECT_EQ(quantile(v, 1.0), 100);
  EXPECT_EQ(quantile(v, 0.0), 1);
}

TEST(Devices, CpuAlwaysPresentAndNamesResolve) {
  const Device cpu = select_device("cpu");
  EXPECT_EQ(cpu.backend, "cpu");
  EXPECT_GT(cpu.compute_units, 0);
  EXPECT_THROW(select_device("no-such-device-xyz"), InvalidArgument);
  EXPECT_THROW(select_device("cuda:99"), InvalidArgument);
  setenv("KAFEL_DEVICE", "cpu", 1);
  EXPECT_EQ(select_device().id, "cpu");
  unsetenv("KAFEL_DEVICE");
}

TEST(Gemm, ShapeMismatchIsAClearError) {
  const Device cpu = select_device("cpu");
  Matrix a(DType::f32, 4, 5), b(DType::f32, 6, 3), c(DType::f32, 4, 3);
  EXPECT_THROW(gemm(cpu, Op::N, Op::N, 1, a, b, 0, c), InvalidArgument);
  Matrix b2(DType::f64, 5, 3);
  EXPECT_THROW(gemm(cpu, Op::N, Op::N, 1, a, b2, 0, c), InvalidArgument);
  EXPECT_THROW(gemm(cpu, Op::N, Op::N, 1, a, b, 0, c, {"cpu.nope", {}, {}}), InvalidArgument);
  EXPECT_THROW(Matrix(DType::f32, -1, 3), InvalidArgument);
  MatrixView bad = a.view();
  bad.ld = 2;
  EXPECT_THROW(gemm(cpu, Op::N, Op::N, 1, bad, b, 0, c), InvalidArgument);
}

TEST(Gemm, ZeroKScalesC) {
  const Device cpu = select_device("cpu");
  GemmDesc d{5, 4, 0, Op::N, Op::N, 3.0, 0.5, DType::f64};
  auto p = test::make_problem(d);
  const auto r = test::run_and_verify(cpu, "cpu.naive", p);
  EXPECT_TRUE(r.passed) << r.message;
  EXPECT_DOUBLE_EQ(p.c.get(2, 3), 0.5 * p.c0.get(2, 3));
}

TEST(Verify, CatchesOneWrongElementFullAndFreivalds) {
  for (DType t : {DType::f32, DType::f64, DType::i32, DType::f16}) {
    GemmDesc d{40, 31, 57, Op::N, Op::T, test::scalar_for(t, 1.5), test::scalar_for(t, 0.25), t};
    auto p = test::make_problem(d);
    reference_gemm(d.op_a, d.op_b, d.alpha, p.a, p.b, d.beta, p.c);
    for (auto method : {VerifyMethod::Full, VerifyMethod::Freivalds}) {
      VerifyOptions o;
      o.method = method;
      EXPECT_TRUE(verify_gemm(d, p.a, p.b, p.c0, p.c, o).passed) << to_string(t);
      Matrix wrong = p.c.clone();
      wrong.set(17, 9, wrong.get(17, 9) + (t == DType::f16 ? 0.5 : 1.0));
      const auto r = verify_gemm(d, p.a, p.b, p.c0, wrong, o);
      EXPECT_FALSE(r.passed) << to_string(t) << " " << r.method;
      EXPECT_EQ(r.worst_i, 17) << r.message;
      Matrix nan = p.c.clone();
      if (t != DType::i32) {
        nan.set(3, 3, std::numeric_limits<double>::quiet_NaN());
        const auto rn = verify_gemm(d, p.a, p.b, p.c0, nan, o);
        EXPECT_FALSE(rn.passed) << to_string(t) << " " << rn.method << " " << rn.message;
      }
    }
  }
}

TEST(Normalize, ColumnMajorCSwapsOperands) {
  Matrix a(DType::f32, 3, 4, Layout::RowMajor), b(DType::f32, 4, 5, Layout::ColMajor);
  Matrix c(DType::f32, 3, 5, Layout::ColMajor);
  const GemmArgs g = normalize_gemm(Op::N, Op::N, 1, a, b, 0, c, Compute::f32);
  EXPECT_EQ(g.desc.m, 5);
  EXPECT_EQ(g.desc.n, 3);
  EXPECT_EQ(g.desc.k, 4);
  EXPECT_EQ(g.a, b.data());
  EXPECT_EQ(g.desc.op_a, Op::N);  // col-major B seen transposed is row-major B^T: op N
  EXPECT_EQ(g.desc.op_b, Op::T);  // row-major A seen as A^T flips to T
}

}  // namespace
}  // namespace kafel
