// The shape suite (tests/common/shapes.hpp) on every CPU kernel, and the core's batch and
// size-class pieces: descriptors, overlap detection, verification of batches, tuning classes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "common/problems.hpp"
#include "common/shapes.hpp"
#include "core/backend.hpp"
#include "core/tuning_db.hpp"
#include "kafel/bench.hpp"
#include "kafel/error.hpp"

namespace kafel {
namespace {

std::optional<Device> cpu() {
  return select_device("cpu");
}

class CpuShapes : public ::testing::TestWithParam<test::LadderCase> {};

TEST_P(CpuShapes, EdgeSizesAndLongK) {
  test::shapes_edge_sizes(cpu(), GetParam());
}
TEST_P(CpuShapes, EverySplitCount) {
  test::shapes_split_counts(cpu(), GetParam());
}
TEST_P(CpuShapes, SplitReductionIsExact) {
  test::shapes_split_exact(cpu(), GetParam());
}
TEST_P(CpuShapes, SameBitsTwice) {
  test::shapes_deterministic(cpu(), GetParam());
}
TEST_P(CpuShapes, Batches) {
  test::shapes_batched(cpu(), GetParam());
}

INSTANTIATE_TEST_SUITE_P(Kernels, CpuShapes, ::testing::ValuesIn(test::ladder_cases(cpu())),
                         [](const auto& info) { return test::ladder_case_name(info.param); });

TEST(CpuBatches, DefaultChoiceRunsABatchOf1000) {
  test::shapes_batched_default(cpu());
}

TEST(CpuBatches, OverlapsAndBadListsAreRefused) {
  test::shapes_batch_refusals(cpu());
}

// ---- the core pieces ------------------------------------------------------------------------

TEST(BatchDesc, CountsEveryMatrix) {
  GemmDesc d{64, 32, 16, Op::N, Op::N, 1.0, 0.0, DType::f32, 10};
  EXPECT_DOUBLE_EQ(d.flops(), 10 * 2.0 * 64 * 32 * 16);
  EXPECT_DOUBLE_EQ(d.min_bytes(), 10 * 4.0 * (64 * 16 + 16 * 32 + 64 * 32));
  EXPECT_EQ(d.shape(), "64x32x16 NN f32 batch 10");
  EXPECT_EQ(d.single().shape(), "64x32x16 NN f32");
  d.batch = -1;
  EXPECT_THROW(d.validate(), InvalidArgument);
  d.batch = std::int64_t(1) << 50;
  EXPECT_THROW(d.validate(), InvalidArgument);  // the batch's elements overflow
}

TEST(BatchOverlap, FindsSharedElementsOnly) {
  auto at = [](std::int64_t elem) { return reinterpret_cast<void*>(4096 + 4 * elem); };
  // 4x4 matrices, ld 4: back to back is fine, 15 elements apart they share (3, 3) + ...
  EXPECT_EQ(output_overlap({at(0), at(16), at(32)}, 4, 4, 4, 4), "");
  EXPECT_EQ(output_overlap({at(0), at(32), at(15)}, 4, 4, 4, 4), "C[0] and C[2] share elements");
  // Side by side in a 4 x 12 array (ld 12): 4 apart interleave without sharing, 3 apart share.
  EXPECT_EQ(output_overlap({at(0), at(4), at(8)}, 4, 4, 12, 4), "");
  EXPECT_EQ(output_overlap({at(8), at(0), at(4)}, 4, 4, 12, 4), "");
  EXPECT_NE(output_overlap({at(0), at(3)}, 4, 4, 12, 4), "");
  // A row of one matrix may start right after the other's row in the gap: ld 10, width 4,
  // offset 5: rows 0..3 of the second use columns 5..8 of the first's rows: no sharing.
  EXPECT_EQ(output_overlap({at(0), at(5)}, 4, 4, 10, 4), "");
  EXPECT_NE(output_overlap({at(0), at(13)}, 4, 4, 10, 4), "");  // (1, 3) of the first
  // Misaligned starts (not a whole element apart) inside each other's bytes: refused.
  EXPECT_NE(
      output_overlap({reinterpret_cast<void*>(4096), reinterpret_cast<void*>(4098)}, 1, 1, 1, 4),
      "");
  EXPECT_EQ(output_overlap({at(0)}, 4, 4, 4, 4), "");
}

TEST(BatchVerify, NamesTheWrongMatrix) {
  const GemmDesc d{5, 4, 3, Op::N, Op::N, 1.0, 0.0, DType::f32, 3};
  const Matrix a(DType::f32, 15, 3), b(DType::f32, 9, 4), c(DType::f32, 15, 4);
  std::mt19937_64 rng(1);
  fill_random_normal(a, rng);
  fill_random_normal(b, rng);
  auto view = [](const Matrix& m, std::int64_t rows) {
    MatrixView v = m.view();
    v.rows = rows;
    return v;
  };
  const auto va = strided_views(view(a, 5), 15, 3), vb = strided_views(view(b, 3), 12, 3),
             vc = strided_views(view(c, 5), 20, 3);
  for (int i = 0; i < 3; ++i) reference_gemm(Op::N, Op::N, 1.0, va[i], vb[i], 0.0, vc[i]);
  EXPECT_TRUE(verify_gemm_batch(d, va, vb, {}, vc).passed);
  vc[1].set(2, 3, vc[1].get(2, 3) + 1.0);
  const VerifyResult r = verify_gemm_batch(d, va, vb, {}, vc);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.worst_matrix, 1);
  EXPECT_NE(r.message.find("matrix 1 of 3"), std::string::npos) << r.message;
  VerifyOptions freivalds;
  freivalds.method = VerifyMethod::Freivalds;
  EXPECT_FALSE(verify_gemm_batch(d, va, vb, {}, vc, freivalds).passed);
  EXPECT_THROW(verify_gemm_batch(d, va, vb, {}, {vc[0]}), InvalidArgument);
}

TEST(BatchBench, VerifiesAndTimesEveryMatrix) {
  BenchOptions opt;
  opt.reps = 2;
  opt.warmup = 1;
  const BenchRecord r =
      bench_gemm(*cpu(), "", {19, 23, 17, Op::N, Op::T, 1.0, 0.5, DType::f32, 50}, opt);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.batch, 50);
  EXPECT_TRUE(r.verified);
  EXPECT_NEAR(r.gflops, 50 * 2.0 * 19 * 23 * 17 / (r.median_ms * 1e6), 1e-9 * r.gflops);
}

// cpu.small is the default only below its measured limits (m*n*k per matrix, the size of C) and
// for the types it has; everything larger keeps cpu.packed.
TEST(SmallRung, DefaultOnlyForSmallProblems) {
  auto kernel = [](std::int64_t m, std::int64_t n, std::int64_t k, DType t = DType::f32,
                   std::int64_t batch = 1) {
    return choose_gemm(*cpu(), GemmDesc{m, n, k, Op::N, Op::N, 1.0, 0.0, t, batch}).kernel;
  };
  EXPECT_EQ(kernel(32, 32, 32), "cpu.small");
  EXPECT_EQ(kernel(64, 64, 64, DType::f64), "cpu.small");
  EXPECT_EQ(kernel(96, 96, 96), "cpu.small");
  EXPECT_EQ(kernel(2048, 16, 16), "cpu.small");
  EXPECT_EQ(kernel(32, 32, 32, DType::f32, 10000), "cpu.small");  // per matrix of a batch
  EXPECT_EQ(kernel(97, 96, 96), "cpu.packed");
  EXPECT_EQ(kernel(96, 96, 96, DType::f64), "cpu.packed");
  EXPECT_EQ(kernel(900, 900, 1), "cpu.packed");  // a large C with a tiny k
  EXPECT_EQ(kernel(512, 512, 512), "cpu.packed");
  EXPECT_EQ(kernel(256, 256, 256, DType::f32, 100), "cpu.packed");
  EXPECT_EQ(kernel(32, 32, 32, DType::bf16), "cpu.packed");  // no bf16 kernels
}

TEST(SizeClass, ShapeClassesFirst) {
  auto cls = [](std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch = 1) {
    return size_class({m, n, k, Op::N, Op::N, 1.0, 0.0, DType::f32, batch});
  };
  EXPECT_EQ(cls(256, 256, 65536), "long-k");
  EXPECT_EQ(cls(1024, 1024, 16384), "long-k");
  EXPECT_EQ(cls(16384, 64, 16384), "skinny");
  EXPECT_EQ(cls(64, 16384, 4096), "skinny");
  EXPECT_EQ(cls(65536, 256, 256), "large");  // tall but not skinny in k
  EXPECT_EQ(cls(8192, 8192, 1024), "short-k");
  EXPECT_EQ(cls(4096, 4096, 1024), "short-k");
  EXPECT_EQ(cls(2048, 2048, 2048), "large");
  EXPECT_EQ(cls(512, 512, 64), "small");  // short k, but too small an output to matter
  EXPECT_EQ(cls(13, 24, 35), "small");
  EXPECT_EQ(cls(1024, 1024, 1024), "medium");
  EXPECT_EQ(cls(4096, 4096, 4096), "large");
  EXPECT_EQ(cls(64, 64, 64, 4096), "batched-small");
  EXPECT_EQ(cls(256, 256, 65536, 8), "batched-long-k");
  EXPECT_TRUE(shape_class("skinny"));
  EXPECT_TRUE(shape_class("short-k"));
  EXPECT_FALSE(shape_class("medium"));
}

TEST(SizeClass, ShapeClassEntriesServeOnlyTheirClass) {
  const Database db = Database::parse(R"({"entries": [
    {"device": "dev", "kernel": "k.x", "dtype": "f32", "size_class": "long-k",
     "params": {"SPLITK": 16}},
    {"device": "dev", "kernel": "k.y", "dtype": "f32", "size_class": "large",
     "params": {"TS": 32}}]})",
                                      "test");
  Device dev;
  dev.name = "dev";
  const GemmTypes f32 = DType::f32;
  EXPECT_NE(db.find(dev, "k.x", f32, "long-k").entry, nullptr);
  EXPECT_EQ(db.find(dev, "k.x", f32, "large").entry, nullptr);   // no split for squares
  EXPECT_EQ(db.find(dev, "k.y", f32, "skinny").entry, nullptr);  // no square tile for skinny
  EXPECT_NE(db.find(dev, "k.y", f32, "medium").entry, nullptr);  // general classes still fall back
}

}  // namespace
}  // namespace kafel
