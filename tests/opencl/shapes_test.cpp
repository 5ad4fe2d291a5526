// The shape suite (tests/common/shapes.hpp) on the OpenCL kernels that split k or run batches in
// one launch (ocl.reg, ocl.reg2): edge sizes, split-K counts, exactness, determinism, batches.
#include <gtest/gtest.h>

#include <vector>

#include "common/shapes.hpp"
#include "core/backend.hpp"
#include "kafel/kernels.hpp"
#include "opencl_device.hpp"

namespace kafel {
namespace {

// PoCL compiles every configuration slowly, so the suite is kept to our kernels with SPLITK or
// one-launch batches (the other rungs' batches are the framework's loop, covered by the CPU
// suite; their edge sizes by the ladder). `f32`: the full suite on the primary roles; else the
// other roles of those kernels. Without a device: the placeholder case, which skips.
std::vector<test::LadderCase> shape_cases(bool f32) {
  const auto dev = test::opencl_device();
  std::vector<test::LadderCase> all = test::ladder_cases(dev), out;
  if (!dev) return f32 ? all : out;
  for (const test::LadderCase& c : all) {
    const GemmKernel& k = find_gemm_kernel(*dev, c.kernel);
    const bool ours = !k.baseline && (k.batches || k.params.has("SPLITK"));
    if (ours && (c.types == GemmTypes::of(DType::f32)) == f32) out.push_back(c);
  }
  return out;
}

class OpenclShapes : public ::testing::TestWithParam<test::LadderCase> {};

TEST_P(OpenclShapes, EdgeSizesAndLongK) {
  test::shapes_edge_sizes(test::opencl_device(), GetParam());
}
TEST_P(OpenclShapes, EverySplitCount) {
  test::shapes_split_counts(test::opencl_device(), GetParam());
}
TEST_P(OpenclShapes, SplitReductionIsExact) {
  test::shapes_split_exact(test::opencl_device(), GetParam());
}
TEST_P(OpenclShapes, SameBitsTwice) {
  test::shapes_deterministic(test::opencl_device(), GetParam());
}
TEST_P(OpenclShapes, Batches) {
  test::shapes_batched(test::opencl_device(), GetParam());
}

INSTANTIATE_TEST_SUITE_P(Kernels, OpenclShapes, ::testing::ValuesIn(shape_cases(true)),
                         [](const auto& info) { return test::ladder_case_name(info.param); });

// The other element roles: batches on both rungs; the split reduction (splitk_reduce and the
// partial-tile store, shared by both rungs) on ocl.reg, whose programs PoCL builds fastest.
class OpenclShapeTypes : public ::testing::TestWithParam<test::LadderCase> {};

TEST_P(OpenclShapeTypes, Batches) {
  test::shapes_batched(test::opencl_device(), GetParam());
}
TEST_P(OpenclShapeTypes, SplitReductionIsExact) {
  if (GetParam().kernel != "ocl.reg") GTEST_SKIP() << "covered by ocl.reg (same reduction)";
  test::shapes_split_exact(test::opencl_device(), GetParam());
}

INSTANTIATE_TEST_SUITE_P(Kernels, OpenclShapeTypes, ::testing::ValuesIn(shape_cases(false)),
                         [](const auto& info) { return test::ladder_case_name(info.param); });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(OpenclShapeTypes);

TEST(OpenclBatches, DefaultChoiceRunsABatchOf1000) {
  test::shapes_batched_default(test::opencl_device());
}

TEST(OpenclBatches, OverlapsAndBadListsAreRefused) {
  test::shapes_batch_refusals(test::opencl_device());
}

// The GPU default's shape choices (no GPU needed: a described device with the suite's OpenCL
// context): 256x64 tiles for n <= 64, a k split while the tiles cannot fill the compute units.
TEST(OpenclShapeHeuristic, SkinnyTilesAndSplitsOnAGpu) {
  KAFEL_OPENCL_DEVICE_OR_SKIP(real);
  Device gpu = real;
  gpu.is_gpu = true;
  gpu.compute_units = 132;
  gpu.local_memory = 48 * 1024;
  auto chosen = [&](std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch = 1) {
    return choose_gemm(gpu, {m, n, k, Op::N, Op::N, 1.0, 0.0, DType::f32, batch});
  };
  const GemmChoice skinny = chosen(16384, 64, 16384);
  EXPECT_EQ(skinny.kernel, "ocl.reg2");
  EXPECT_EQ(skinny.params.at("MWG"), 256) << skinny.config();
  EXPECT_EQ(skinny.params.at("NWG"), 64) << skinny.config();
  EXPECT_EQ(skinny.params.at("SPLITK"), 4)
      << skinny.config();  // 64 tiles -> one wave of 2 per unit
  const GemmChoice small_out = chosen(256, 256, 65536);
  EXPECT_EQ(small_out.params.at("MWG"), 128) << small_out.config();
  EXPECT_EQ(small_out.params.at("SPLITK"), 64) << small_out.config();
  EXPECT_EQ(chosen(4096, 4096, 4096).params.at("SPLITK"), 1);
  const GemmChoice batch64 = chosen(64, 64, 64, 4096);
  EXPECT_EQ(batch64.params.at("SPLITK"), 1) << batch64.config();  // batches fill the units
  // Small matrices take one 64 x 64 tile each, not a 128 x 128 one padded to four times the work.
  EXPECT_EQ(batch64.params.at("MWG"), 64) << batch64.config();
  EXPECT_EQ(batch64.params.at("NWG"), 64) << batch64.config();
  EXPECT_EQ(chosen(33, 17, 200, 1000).params.at("MWG"), 64);
  // More than 65535 matrices x slices do not fit dimension 2 of the range: refused, and the
  // default moves on to a kernel that loops over the batch.
  const GemmDesc huge{8, 8, 8, Op::N, Op::N, 1.0, 0.0, DType::f32, 70000};
  EXPECT_NE(find_gemm_kernel(gpu, "ocl.reg2").can_run(gpu, huge, skinny.params), "");
}

}  // namespace
}  // namespace kafel
