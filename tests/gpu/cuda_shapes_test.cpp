// The shape suite (tests/common/shapes.hpp) on every CUDA kernel, and the shape-aware default of
// cuda.pipelined: tile and split by the size class of m, n, k and the SM count (no GPU needed).
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "common/shapes.hpp"
#include "common/tuning_db_scope.hpp"
#include "core/backend.hpp"
#include "cuda/device_facts.hpp"
#include "kafel/error.hpp"
#include "kafel/kernels.hpp"

namespace kafel {
namespace {

std::optional<Device> cuda0() {
  static const std::optional<Device> found = []() -> std::optional<Device> {
    for (const auto& d : list_devices())
      if (d.id == "cuda:0") return d;
    return std::nullopt;
  }();
  return found;
}

#define KAFEL_REQUIRE_CUDA() \
  if (!cuda0()) GTEST_SKIP() << "no CUDA device present"

// What the registry's checks read of an H100 SXM, with no GPU behind it.
Device described_gpu() {
  Device d;
  d.id = "cuda:0";
  d.backend = "cuda";
  d.name = "described GPU (no device)";
  d.is_gpu = true;
  d.compute_units = 132;
  d.clock_mhz = 1980;
  d.local_memory = 227 * 1024;
  d.global_memory = std::uint64_t(80) << 30;
  d.sm_version = 90;
  d.caps = cuda::cuda_caps(90, false);
  d.peak_gflops_f32 = 132 * 128 * 2 * 1.98;
  d.peak_gflops_f64 = d.peak_gflops_f32 / 2;
  d.bandwidth_gbs = 3352;  // HBM3, as cudaGetDeviceProperties gives it (the model's memory term)
  return d;
}

using test::NoTuningDb;

class CudaShapes : public ::testing::TestWithParam<test::LadderCase> {};

TEST_P(CudaShapes, EdgeSizesAndLongK) {
  KAFEL_REQUIRE_CUDA();
  test::shapes_edge_sizes(cuda0(), GetParam());
}
TEST_P(CudaShapes, EverySplitCount) {
  KAFEL_REQUIRE_CUDA();
  test::shapes_split_counts(cuda0(), GetParam());
}
TEST_P(CudaShapes, SplitReductionIsExact) {
  KAFEL_REQUIRE_CUDA();
  test::shapes_split_exact(cuda0(), GetParam());
}
TEST_P(CudaShapes, SameBitsTwice) {
  KAFEL_REQUIRE_CUDA();
  test::shapes_deterministic(cuda0(), GetParam());
}
TEST_P(CudaShapes, Batches) {
  KAFEL_REQUIRE_CUDA();
  test::shapes_batched(cuda0(), GetParam());
}

INSTANTIATE_TEST_SUITE_P(Kernels, CudaShapes,
                         ::testing::ValuesIn(test::ladder_cases(cuda0() ? *cuda0()
                                                                        : described_gpu())),
                         [](const auto& info) { return test::ladder_case_name(info.param); });

TEST(CudaBatches, DefaultChoiceRunsABatchOf1000) {
  KAFEL_REQUIRE_CUDA();
  test::shapes_batched_default(cuda0());
}

TEST(CudaBatches, OverlapsAndBadListsAreRefused) {
  KAFEL_REQUIRE_CUDA();
  test::shapes_batch_refusals(cuda0());
}

// ---- the shape-aware default, decided before any device call ---------------------------------

GemmChoice chosen(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch = 1,
                  GemmTypes t = DType::f32) {
  return choose_gemm(described_gpu(), {m, n, k, Op::N, Op::N, 1.0, 0.0, t, batch});
}

std::string tile(const GemmChoice& c) {
  return std::to_string(c.params.at("BM")) + "x" + std::to_string(c.params.at("BN")) + "/" +
         std::to_string(c.params.at("SPLITK"));
}

// The table of docs/cuda.md ("Shapes").
TEST(CudaShapeHeuristic, SplitsKWhenOutputTilesCannotFillTheSms) {
  NoTuningDb no_db;
  const GemmChoice small_out = chosen(256, 256, 65536);
  EXPECT_EQ(small_out.kernel, "cuda.pipelined");
  EXPECT_EQ(small_out.source, "heuristic");
  EXPECT_EQ(tile(small_out), "128x256/64");
  EXPECT_EQ(tile(chosen(1024, 1024, 16384)), "128x256/4");
  EXPECT_EQ(tile(chosen(1536, 1536, 1536)), "128x128/3");
  // Bandwidth-bound (536 MB of operands, no reuse): many small blocks keep more loads in flight.
  EXPECT_EQ(tile(chosen(64, 64, 1048576)), "64x64/512");
  // Enough output tiles for every SM, or measured without a split: no split. Short k (256) takes
  // 128x128, two blocks per SM, whose C writes overlap the other block's work.
  EXPECT_EQ(tile(chosen(4096, 4096, 4096)), "128x256/1");
  EXPECT_EQ(tile(chosen(8192, 8192, 1024)), "128x256/1");
  EXPECT_EQ(tile(chosen(65536, 256, 256)), "128x128/1");
  // 256 blocks of 64 x 64 (two per SM) over 128 of 128 x 64: 0.068 vs 0.069 ms at 1024^3, 0.070
  // vs 0.072 at 1021^3 (H100, 2026-11-25).
  EXPECT_EQ(tile(chosen(1024, 1024, 1024)), "64x64/1");
}

TEST(CudaShapeHeuristic, SkinnyOutputsTakeNarrowTiles) {
  NoTuningDb no_db;
  EXPECT_EQ(tile(chosen(16384, 64, 16384)), "256x64/4");
  EXPECT_EQ(chosen(64, 16384, 16384).params.at("BM"), 64) << tile(chosen(64, 16384, 16384));
}

TEST(CudaShapeHeuristic, BatchesOfSmallMatricesTakeSmallTiles) {
  NoTuningDb no_db;
  EXPECT_EQ(tile(chosen(64, 64, 64, 4096)), "64x64/1");
  EXPECT_EQ(tile(chosen(256, 256, 256, 1024)), "128x128/1");
}

// cuda.pipelined's f64 and i32 tile (f64's default on tensor-core GPUs is the DMMA rung, which
// has no split yet: named here).
TEST(CudaShapeHeuristic, OtherTypesSplitTheirOneTile) {
  NoTuningDb no_db;
  auto pipelined = [](std::int64_t m, std::int64_t n, std::int64_t k, DType t) {
    return choose_gemm(described_gpu(), {m, n, k, Op::N, Op::N, 1.0, 0.0, t}, "cuda.pipelined");
  };
  const GemmChoice f64 = pipelined(256, 256, 65536, DType::f64);
  EXPECT_EQ(f64.params.at("BN"), 128);
  EXPECT_GT(f64.params.at("SPLITK"), 1);
  EXPECT_EQ(pipelined(4096, 4096, 4096, DType::i32).params.at("SPLITK"), 1);
}

TEST(CudaShapeHeuristic, WorkspaceAndGridLimits) {
  NoTuningDb no_db;
  // 256 slices of a 16384^2 f32 output need 256 GiB of partial tiles: refused before a launch.
  const GemmDesc big{16384, 16384, 65536, Op::N, Op::N, 1.0, 0.0, DType::f32};
  Params p = chosen(16384, 16384, 65536).params;
  p["SPLITK"] = 256;
  try {
    choose_gemm(described_gpu(), big, "cuda.pipelined", p);
    FAIL() << "a 256 GiB workspace was accepted";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("workspace"), std::string::npos) << e.what();
  }
  // Batches beyond gridDim.z go in several launches: any count is accepted.
  EXPECT_EQ(chosen(8, 8, 8, 200000).kernel, "cuda.pipelined");
}

}  // namespace
}  // namespace kafel
