// Every CUDA kernel (cuBLAS included) x every element-role combination it registers, through the
// shared ladder bodies on cuda:0; then the CUDA facts: limits and choices made before any device
// call (these run without a GPU too), the device description, out-of-memory.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/ladder.hpp"
#include "common/problems.hpp"
#include "common/tuning_db_scope.hpp"
#include "core/backend.hpp"
#include "core/cov_backend.hpp"
#include "cuda/device_facts.hpp"
#include "kafel/bench.hpp"
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
Device described_gpu(int sm_version = 90, std::uint64_t shared = 227 * 1024) {
  Device d;
  d.id = "cuda:0";
  d.backend = "cuda";
  d.name = "described GPU (no device)";
  d.is_gpu = true;
  d.compute_units = 132;
  d.clock_mhz = 1980;
  d.local_memory = shared;
  d.sm_version = sm_version;
  d.caps = cuda::cuda_caps(sm_version, false);
  d.tensor_peaks = cuda::tensor_peaks_for(sm_version, d.compute_units, d.clock_mhz);
  d.peak_gflops_f32 = 132 * 128 * 2 * 1.98;
  d.global_memory = std::uint64_t(80) << 30;
  d.bandwidth_gbs = 3352;  // HBM3, as cudaGetDeviceProperties gives it (the model's memory term)
  return d;
}

using test::NoTuningDb;

GemmDesc cube(std::int64_t n, GemmTypes t = DType::f32) {
  return {n, n, n, Op::N, Op::N, 1.0, 0.0, t};
}

std::string refusal(const Device& dev, const GemmDesc& d, const std::string& kernel,
                    const Params& p = {}) {
  try {
    choose_gemm(dev, d, kernel, p);
  } catch (const Unsupported& e) {
    return e.what();
  }
  return "";
}

// ---- the ladder ----------------------------------------------------------------------------

class CudaLadder : public ::testing::TestWithParam<test::LadderCase> {};

TEST_P(CudaLadder, OddShapesTransposesAndScalars) {
  KAFEL_REQUIRE_CUDA();
  test::ladder_odd_shapes(cuda0(), GetParam());
}
TEST_P(CudaLadder, LayoutsAndLeadingDimensions) {
  KAFEL_REQUIRE_CUDA();
  test::ladder_layouts(cuda0(), GetParam());
}
TEST_P(CudaLadder, ExactOnIntegerValuedInputs) {
  KAFEL_REQUIRE_CUDA();
  test::ladder_exact(cuda0(), GetParam());
}
TEST_P(CudaLadder, LargerThanSeveralTiles) {
  KAFEL_REQUIRE_CUDA();
  test::ladder_large(cuda0(), GetParam());
}
TEST_P(CudaLadder, SampledParameters) {
  KAFEL_REQUIRE_CUDA();
  test::ladder_sampled_params(cuda0(), GetParam());
}

// The cases come from the registry: the GPU's own description where there is one; otherwise the
// described H100, so the list of cases is the same everywhere (and each one skips).
INSTANTIATE_TEST_SUITE_P(Kernels, CudaLadder,
                         ::testing::ValuesIn(test::ladder_cases(cuda0() ? *cuda0()
                                                                        : described_gpu())),
                         [](const auto& info) { return test::ladder_case_name(info.param); });

// ---- limits and choices, checked before anything touches a device --------------------------

TEST(CudaLimits, OneBlockRefusesMoreThan1024Threads) {
  const Device dev = described_gpu();
  const std::string why =
      refusal(dev, {33, 32, 8, Op::N, Op::N, 1.0, 0.0, DType::f32}, "cuda.oneblock");
  EXPECT_NE(why.find("1024"), std::string::npos) << "33x32 = 1056 threads accepted: " << why;
  EXPECT_EQ(
      choose_gemm(dev, {32, 32, 8, Op::N, Op::N, 1.0, 0.0, DType::f32}, "cuda.oneblock").kernel,
      "cuda.oneblock");
}

TEST(CudaLimits, GridRowsOfEveryTiledRung) {
  const Device dev = described_gpu();
  NoTuningDb no_db;
  // 65535 block rows of 128 are the most gridDim.y holds.
  const GemmDesc tall{65535 * 128 + 1, 8, 8, Op::N, Op::N, 1.0, 0.0, DType::f32};
  for (const char* k :
       {"cuda.blocks", "cuda.smem", "cuda.reg1d", "cuda.reg2d", "cuda.vec", "cuda.warptile"})
    EXPECT_NE(refusal(dev, tall, k).find("grid"), std::string::npos) << k;
  // cuda.pipelined takes its 256-row tile there; beyond 65535 rows of 256 it refuses too, and
  // the grid-stride rung, which covers any size, is what the default falls back to.
  EXPECT_EQ(choose_gemm(dev, tall).params.at("BM"), 256);
  const GemmDesc taller{65535 * 256 + 1, 8, 8, Op::N, Op::N, 1.0, 0.0, DType::f32};
  EXPECT_NE(refusal(dev, taller, "cuda.pipelined").find("grid"), std::string::npos);
  EXPECT_EQ(choose_gemm(dev, taller).kernel, "cuda.gridstride");
  EXPECT_EQ(choose_gemm(dev, {65535 * 128, 8, 8, Op::N, Op::N, 1.0, 0.0, DType::f32}).kernel,
            "cuda.pipelined");
}

TEST(CudaLimits, PipelinedTilesByTypeAndSharedMemory) {
  NoTuningDb no_db;
  const Params wide = {{"BM", 128}, {"BN", 256}, {"BK", 32},   {"WM", 64},
                       {"WN", 64},  {"AROW", 1}, {"UNROLL", 8}};
  const std::string f64 = refusal(described_gpu(), cube(512, DType::f64), "cuda.pipelined", wide);
  EXPECT_NE(f64.find("f32 only"), std::string::npos) << f64;
  // 128x256x32 f32 needs 99 KiB of shared memory: refused where a block may have 48 KiB, and
  // the heuristic then takes the 33 KiB 128x128x16 tile.
  const Device small = described_gpu(90, 48 * 1024);
  const std::string smem = refusal(small, cube(4096), "cuda.pipelined", wide);
  EXPECT_NE(smem.find("shared memory"), std::string::npos) << smem;
  const GemmChoice fallback = choose_gemm(small, cube(4096));
  EXPECT_EQ(fallback.kernel, "cuda.pipelined");
  EXPECT_EQ(fallback.params.at("BN"), 128);
  // A shape that is not compiled is an invalid parameter combination, not a launch failure.
  Params odd = wide;
  odd["BN"] = 128;
  EXPECT_THROW(choose_gemm(described_gpu(), cube(512), "cuda.pipelined", odd), InvalidArgument);
}

TEST(CudaHeuristic, PipelinedTileBySizeAndType) {
  NoTuningDb no_db;
  const Device dev = described_gpu();
  // f64 is named: its default is the DMMA rung cuda.mma_tiles.
  auto tile = [&](std::int64_t n, GemmTypes t) {
    const GemmChoice c =
        choose_gemm(dev, cube(n, t), t == GemmTypes::of(DType::f64) ? "cuda.pipelined" : "");
    EXPECT_EQ(c.kernel, "cuda.pipelined");
    EXPECT_EQ(c.source, "heuristic");
    return std::to_string(c.params.at("BN")) + "/" + std::to_string(c.params.at("BK")) + "/" +
           std::to_string(c.params.at("UNROLL")) + "/" + std::to_string(c.params.at("SPLITK"));
  };
  // The measured choices (docs/BENCHMARKS.md run 8 and session 14): 128x256x32 UNROLL 8 once its
  // tiles fill the SMs, 64x64x32 UNROLL 8 at 1024^3 (256 blocks); between them the model splits
  // k (1536^3: 144 tiles of 128x128 x 3 slices); f64 and i32 always use 128x128x16.
  EXPECT_EQ(tile(8192, DType::f32), "256/32/8/1");
  EXPECT_EQ(tile(2048, DType::f32), "256/32/8/1");
  EXPECT_EQ(tile(1536, DType::f32), "128/16/0/3");
  EXPECT_EQ(tile(1024, DType::f32), "64/32/8/1");
  EXPECT_EQ(tile(4096, DType::f64), "128/16/0/1");
  EXPECT_EQ(tile(4096, DType::i32), "128/16/0/1");
}

TEST(CudaRegistry, PipelinedSpaceIsExactlyTheCompiledShapes) {
  const Device dev = described_gpu();
  const GemmKernel& k = find_gemm_kernel(dev, "cuda.pipelined");
  std::set<std::string> from_space, from_variants;
  for (const Params& p : k.params.enumerate())
    from_space.insert("cuda.pipelined.m" + std::to_string(p.at("BM")) + "n" +
                      std::to_string(p.at("BN")) + "k" + std::to_string(p.at("BK")) + "w" +
                      std::to_string(p.at("WM")) + "x" + std::to_string(p.at("WN")) +
                      (p.at("AROW") ? "" : ".acol") +
                      (p.at("UNROLL") ? ".u" + std::to_string(p.at("UNROLL")) : ""));
  for (const auto& v : kernels_for(dev))
    if (v.name.rfind("cuda.pipelined.", 0) == 0) from_variants.insert(v.name);
  EXPECT_EQ(from_space, from_variants);
  EXPECT_EQ(from_space.size(), 5u);
  EXPECT_EQ(k.params.check(k.params.defaults()), "");
}

// Structural, so that a new rung needs no line here: the registry lists kernels by rung, the
// seeds' nine rungs keep their order at the front, and the baseline comes after the ladder.
TEST(CudaRegistry, LadderOrderAndCovarianceKernels) {
  const Device dev = described_gpu();
  std::vector<std::string> rungs;
  int last_rung = -1;
  for (const auto& k : kernels_for(dev)) {
    EXPECT_EQ(k.name.rfind("cuda.", 0), 0u) << k.name;
    EXPECT_GE(k.rung, last_rung) << k.name << " is listed out of rung order";
    last_rung = k.rung;
    if (k.name.find('.', 5) == std::string::npos) rungs.push_back(k.name);
  }
  const std::vector<std::string> seeds = {"cuda.oneblock", "cuda.blocks",   "cuda.gridstride",
                                          "cuda.smem",     "cuda.reg1d",    "cuda.reg2d",
                                          "cuda.vec",      "cuda.warptile", "cuda.pipelined"};
  ASSERT_GT(rungs.size(), seeds.size());
  EXPECT_EQ(std::vector<std::string>(rungs.begin(), rungs.begin() + seeds.size()), seeds);
  EXPECT_EQ(rungs.back(), "cuda.cublas");
  std::vector<std::string> cov;
  for (const auto& k : cov_kernels_for(dev)) cov.push_back(k.name);
  ASSERT_FALSE(cov.empty());
  EXPECT_EQ(cov.front(), "cuda.onepass");
  for (const char* name : {"cuda.onepass32", "cuda.onepass64", "cuda.herk", "cuda.herk_tc",
                           "cuda.herk_h3", "cuda.syrk", "cuda.cublas-ssyrk", "cuda.cublas-dsyrk"})
    EXPECT_NE(std::find(cov.begin(), cov.end(), name), cov.end()) << name;
  EXPECT_EQ(default_cov_kernel(dev, 10), "cuda.onepass");
  EXPECT_EQ(default_cov_kernel(dev, 11), "cuda.onepass32");
  EXPECT_EQ(default_cov_kernel(dev, 16), "cuda.onepass32");
  EXPECT_EQ(default_cov_kernel(dev, 17), "cuda.onepass32");
  EXPECT_EQ(default_cov_kernel(dev, 32), "cuda.onepass32");
  EXPECT_EQ(default_cov_kernel(dev, 33), "cuda.onepass64");
  EXPECT_EQ(default_cov_kernel(dev, 64), "cuda.onepass64");
  EXPECT_EQ(default_cov_kernel(dev, 65),
            dev.caps.has(Cap::mma_sm80) ? "cuda.herk_tc" : "cuda.herk");
}

// The tensor-core covariance kernels name a tensor peak the device describes (a misspelt one
// would leave their bench rows without a compute floor).
TEST(CudaRegistry, CovarianceTensorPeaksAreDescribed) {
  const Device dev = described_gpu();
  int named = 0;
  for (const CovKernelInfo& k : cov_kernels(dev)) {
    if (k.tensor_peak.empty()) continue;
    ++named;
    bool found = false;
    for (const auto& [name, gflops] : dev.tensor_peaks) found = found || (name == k.tensor_peak);
    EXPECT_TRUE(found) << k.name << " names " << k.tensor_peak;
    EXPECT_GE(k.products, 1) << k.name;
  }
  EXPECT_GE(named, 3);  // cuda.herk_tc, cuda.herk_h3, cuda.herk_i8
}

TEST(CudaBaseline, EveryTypeHasACublasEntry) {
  const Device dev = described_gpu();
  const GemmKernel& k = find_gemm_kernel(dev, "cuda.cublas");
  EXPECT_TRUE(k.baseline);
  for (const char* t : {"f32", "f64", "f32/tf32", "f16", "f16->f32", "bf16", "bf16->f32", "i8",
                        "e4m3", "e4m3->f32", "e4m3*e5m2", "e5m2*e4m3->f32"})
    EXPECT_EQ(k.runs(GemmTypes::parse(t), dev), "") << t;
  // cuBLASLt has no e5m2 x e5m2 kernel and cuBLAS no int32 GEMM: not declared, so refused.
  EXPECT_NE(k.runs(GemmTypes::parse("e5m2"), dev), "");
  EXPECT_NE(k.runs(GemmTypes::parse("i32"), dev), "");
  // The default never picks a baseline: fp8 has no kafel kernel on CUDA yet.
  EXPECT_THROW(choose_gemm(dev, cube(256, GemmTypes::parse("e4m3"))), Unsupported);
}

// ---- the tensor-core rungs (cuda.mma, cuda.mma_pipe, cuda.mma_tiles) ------------------------

TEST(CudaTensorCores, DefaultKernelOfEveryTensorRole) {
  NoTuningDb no_db;
  const Device dev = described_gpu();
  for (const char* t :
       {"f16", "f16->f32", "bf16", "bf16->f32", "f32/tf32", "f32/3xtf32", "i8", "f64"}) {
    const GemmChoice c = choose_gemm(dev, cube(4096, GemmTypes::parse(t)));
    EXPECT_EQ(c.kernel, "cuda.mma_tiles") << t;
    EXPECT_EQ(c.source, "heuristic") << t;
  }
  // Plain fp32 stays on the SIMT ladder (IEEE products), i32 too.
  EXPECT_EQ(choose_gemm(dev, cube(4096)).kernel, "cuda.pipelined");
  EXPECT_EQ(choose_gemm(dev, cube(4096, DType::i32)).kernel, "cuda.pipelined");
}

TEST(CudaTensorCores, TileBySizeAndType) {
  NoTuningDb no_db;
  const Device dev = described_gpu();
  auto tile = [&](std::int64_t n, const char* t) {
    const GemmChoice c = choose_gemm(dev, cube(n, GemmTypes::parse(t)));
    return std::to_string(c.params.at("BM")) + "x" + std::to_string(c.params.at("BN")) + "x" +
           std::to_string(c.params.at("BK")) + "s" + std::to_string(c.params.at("STAGES"));
  };
  // 16-bit: 256 x 128 once its tiles fill 4 waves of the 132 SMs (6144^3: 1,152 tiles; 4096^3:
  // 512, under 528), else 128 x 128.
  EXPECT_EQ(tile(8192, "bf16"), "256x128x64s3");
  EXPECT_EQ(tile(6144, "f16"), "256x128x64s3");
  EXPECT_EQ(tile(4096, "bf16"), "128x128x64s3");
  EXPECT_EQ(tile(8192, "f16->f32"), "256x128x64s3");
  EXPECT_EQ(tile(1024, "f16->f32"), "128x128x64s3");
  // The next k-tile's fragments are loaded across the barrier where that entry is compiled.
  auto xfrag = [&](const char* t) {
    return choose_gemm(dev, cube(4096, GemmTypes::parse(t))).params.at("XFRAG");
  };
  for (const char* t : {"bf16", "f16->f32", "i8", "f32/tf32"}) EXPECT_EQ(xfrag(t), 1) << t;
  for (const char* t : {"f32/3xtf32", "f64"}) EXPECT_EQ(xfrag(t), 0) << t;
  EXPECT_EQ(tile(4096, "i8"), "128x128x128s3");
  EXPECT_EQ(tile(4096, "f32/tf32"), "128x128x32s3");
  EXPECT_EQ(tile(4096, "f32/3xtf32"), "128x128x16s4");
  EXPECT_EQ(tile(4096, "f64"), "128x64x16s4");
}

TEST(CudaTensorCores, TileSpaceIsExactlyTheCompiledShapes) {
  const Device dev = described_gpu();
  const GemmKernel& k = find_gemm_kernel(dev, "cuda.mma_tiles");
  std::set<std::string> from_space, from_variants;
  for (const Params& p : k.params.enumerate()) from_space.insert(k.params.format(p));
  for (const auto& v : kernels_for(dev)) {
    if (v.name.rfind("cuda.mma_tiles.", 0) != 0) continue;
    EXPECT_FALSE(v.types.empty()) << v.name;
    from_variants.insert(v.name);
  }
  EXPECT_EQ(from_space.size(), from_variants.size());
  EXPECT_EQ(k.params.check(k.params.defaults()), "");
  // A compiled shape of another type is refused for this one, naming what is compiled.
  Params bf16_tile = k.params.defaults();
  const std::string why =
      refusal(dev, cube(512, GemmTypes::parse("f64")), "cuda.mma_tiles", bf16_tile);
  EXPECT_NE(why.find("not compiled for f64"), std::string::npos) << why;
}

TEST(CudaTensorCores, LimitsBeforeAnyDeviceCall) {
  NoTuningDb no_db;
  // f64 uses mma.m16n8k8.f64, an sm_90 shape: an sm_80 GPU falls back to the SIMT rung.
  const Device a100 = described_gpu(80, 163 * 1024);
  EXPECT_EQ(choose_gemm(a100, cube(4096, DType::f64)).kernel, "cuda.pipelined");
  std::string why = refusal(a100, cube(4096, DType::f64), "cuda.mma_tiles");
  EXPECT_NE(why.find("9.0"), std::string::npos) << why;
  // The 4-stage ring of rung 11 does not fit 48 KiB of shared memory.
  const Device small = described_gpu(90, 48 * 1024);
  why = refusal(small, cube(1024, GemmTypes::parse("bf16")), "cuda.mma_pipe");
  EXPECT_NE(why.find("KiB"), std::string::npos) << why;
  // Without tensor cores (sm_75) the roles are refused by the registry.
  why = refusal(described_gpu(75), cube(256, GemmTypes::parse("bf16")), "cuda.mma");
  EXPECT_NE(why.find("needs"), std::string::npos) << why;
}

// 3xtf32 against the SIMT fp32 rung and plain tf32 at k >= 4096 (issue 10): fp32 inputs split
// into two tf32 parts, each k step summed on the tensor cores into a fresh tile and added to the
// accumulator by FADD (round to nearest). The tensor cores' own float additions round toward
// zero (a bias of about 2^-25 per addition, measured on the H100: 4.2e-7 / 8.2e-7 against SIMT's
// 3.0e-7 / 3.2e-7 at k = 4096 / 16384), so 3xtf32 is held to SIMT's error within a factor of 3,
// and to at least 100x better than one tf32 pass, which a lost low part would not be.
TEST(CudaTensorCores, ThreeTf32AsAccurateAsSimtFp32) {
  KAFEL_REQUIRE_CUDA();
  for (std::int64_t k : {4096, 16384}) {
    const GemmDesc simt{256, 256, k, Op::N, Op::N, 1.0, 0.0, DType::f32};
    GemmDesc x3 = simt, t1 = simt;
    x3.types = GemmTypes::parse("f32/3xtf32");
    t1.types = GemmTypes::parse("f32/tf32");
    test::ProblemOptions opt;
    opt.seed = 7 + k;
    test::Problem p = test::make_problem(simt, opt);
    test::Problem q{x3, p.a.clone(), p.b.clone(), p.c0.clone(), p.c.clone()};
    test::Problem r{t1, p.a.clone(), p.b.clone(), p.c0.clone(), p.c.clone()};
    const VerifyResult rs = test::run_and_verify(*cuda0(), "cuda.pipelined", p);
    const VerifyResult rt = test::run_and_verify(*cuda0(), "cuda.mma_tiles", r);
    EXPECT_TRUE(rs.passed) << rs.message;
    EXPECT_TRUE(rt.passed) << rt.message;
    // mma.sync sums one k step (8) per fresh tile, wgmma one k-tile (32, small products first).
    std::vector<std::string> x3_kernels{"cuda.mma_tiles"};
    if (cuda0()->caps.has(Cap::wgmma_sm90a)) x3_kernels.push_back("cuda.wgmma_3xtf32");
    for (const std::string& name : x3_kernels) {
      test::Problem qk{x3, q.a.clone(), q.b.clone(), q.c0.clone(), q.c.clone()};
      const VerifyResult rx = test::run_and_verify(*cuda0(), name, qk);
      EXPECT_TRUE(rx.passed) << name << ": " << rx.message;
      EXPECT_LE(rx.rel_err, 3 * rs.rel_err)
          << name << ", k = " << k << ": 3xtf32 " << rx.message << "; SIMT " << rs.message;
      EXPECT_LE(100 * rx.rel_err, rt.rel_err)
          << name << ", k = " << k << ": 3xtf32 " << rx.message << "; tf32 " << rt.message;
      std::printf("[ 3xtf32 ] %s k = %lld: rel_err %.3g (SIMT fp32 %.3g, tf32 %.3g)\n",
                  name.c_str(), static_cast<long long>(k), rx.rel_err, rs.rel_err, rt.rel_err);
    }
  }
}

// 3xtf32 split-K (cuda.wgmma_3xtf32): small outputs with long k take the default's k ranges
// (partial sums added by splitk_reduce with alpha and beta), explicit counts give unequal
// ranges, and transposed operands go through the split pre-pass.
TEST(CudaTensorCores, ThreeTf32SplitK) {
  KAFEL_REQUIRE_CUDA();
  if (!cuda0()->caps.has(Cap::wgmma_sm90a)) GTEST_SKIP() << "no wgmma on this GPU";
  struct Case {
    std::int64_t m, n, k;
    Op op_a, op_b;
    double beta;
    std::int64_t splits;  // 0: the default choice's
  };
  const Case cases[] = {
      {200, 130, 20000, Op::N, Op::N, 0.5, 0},  // 4 tiles: the default splits
      {256, 256, 65536, Op::T, Op::N, 0.0, 0},  // 33 ranges
      {1000, 1001, 999, Op::N, Op::T, 0.0, 3},  // 32 k-tiles in 3 ranges: 11, 11, 10
      {129, 257, 4099, Op::T, Op::T, -1.0, 7},  // edge tiles and a k-tile tail
  };
  for (const Case& c : cases) {
    const GemmDesc d{c.m, c.n, c.k, c.op_a, c.op_b, 1.5, c.beta, GemmTypes::parse("f32/3xtf32")};
    test::ProblemOptions opt;
    opt.seed = static_cast<std::uint64_t>(c.m * 7 + c.k);
    test::Problem p = test::make_problem(d, opt);
    Params params;
    if (c.splits > 0) {
      params["SPLITK"] = c.splits;
    } else {
      const GemmChoice chosen = choose_gemm(*cuda0(), d, "cuda.wgmma_3xtf32");
      EXPECT_GT(chosen.params.at("SPLITK"), 1) << d.shape();
    }
    const VerifyResult r = test::run_and_verify(*cuda0(), "cuda.wgmma_3xtf32", p, params);
    EXPECT_TRUE(r.passed) << d.shape() << ": " << r.message;
  }
}

// Split 16-bit outputs whose 256-column tiles would pad more (or leave their last column at
// most half full) take 256 x 128 tiles by default: edges in m and n, a k tail, both layouts of
// B, beta != 0 with an f32 C, each checked through the default choice.
TEST(CudaTensorCores, TallSplitTilesByDefault) {
  KAFEL_REQUIRE_CUDA();
  if (!cuda0()->caps.has(Cap::wgmma_sm90a)) GTEST_SKIP() << "no wgmma on this GPU";
  NoTuningDb no_db;  // the heuristic's choice
  struct Case {
    const char* types;
    std::int64_t m, n, k;
    Op op_b;
    double beta;
  };
  const Case cases[] = {
      {"bf16", 384, 384, 16384, Op::N, 0.0},      // 2 x 3 tiles, half of the second row empty
      {"f16", 1000, 380, 12040, Op::T, 0.0},      // 4 x 3 tiles against 8 x 2, k tail
      {"bf16->f32", 640, 640, 8200, Op::N, 0.5},  // 3 x 5 tiles, beta in the reduction
  };
  for (const Case& c : cases) {
    const GemmDesc d{c.m, c.n, c.k, Op::N, c.op_b, 1.0, c.beta, GemmTypes::parse(c.types)};
    const GemmChoice chosen = choose_gemm(*cuda0(), d);
    ASSERT_EQ(chosen.kernel, "cuda.wgmma_ws") << d.shape();
    EXPECT_EQ(chosen.params.at("BM"), 256) << d.shape() << " " << chosen.config();
    EXPECT_EQ(chosen.params.at("BN"), 128) << d.shape() << " " << chosen.config();
    EXPECT_GT(chosen.params.at("SPLITK"), 1) << d.shape() << " " << chosen.config();
    test::ProblemOptions opt;
    opt.seed = static_cast<std::uint64_t>(c.m + 3 * c.k);
    test::Problem p = test::make_problem(d, opt);
    const VerifyResult r = test::run_and_verify(*cuda0(), "cuda.wgmma_ws", p, chosen.params);
    EXPECT_TRUE(r.passed) << d.shape() << " " << chosen.config() << ": " << r.message;
  }
}

// Skinny outputs (cuda.wgmma_ws 128 x 64 tiles for n <= 64, 64 x 128 tiles split by columns
// between the consumers for m <= 64): every role, both layouts of B for 16-bit inputs, edges in
// m, n and k, n = 1 and m = 1, one k-tile, more tiles than SMs (the ring wraps across a
// persistent CTA's tiles), split-K with beta != 0, direct and staged stores; then the default
// choice of one shape of each kind, run as chosen.
TEST(CudaTensorCores, SkinnyTilesEveryRoleAndEdge) {
  KAFEL_REQUIRE_CUDA();
  if (!cuda0()->caps.has(Cap::wgmma_sm90a)) GTEST_SKIP() << "no wgmma on this GPU";
  struct Case {
    const char* types;
    std::int64_t m, n, k;
    Op op_b;
    double beta;
    std::int64_t cstore, splits, bm = 128;
  };
  const Case cases[] = {
      {"bf16", 64, 1000, 3000, Op::N, 0.0, 1, 1, 64},  // 64 x 128 tiles from here
      {"f16", 33, 777, 1030, Op::T, 0.0, 1, 1, 64},
      {"bf16->f32", 64, 300, 20000, Op::N, 0.5, 1, 5, 64},
      {"f16->f32", 40, 640, 9000, Op::T, 0.0, 1, 3, 64},
      {"f32/tf32", 17, 2000, 515, Op::N, 0.0, 1, 1, 64},
      {"e4m3", 64, 513, 4100, Op::N, 0.0, 1, 3, 64},
      {"e5m2->f32", 56, 200, 1000, Op::T, 0.0, 0, 1, 64},
      {"i8", 50, 1030, 2050, Op::N, 0.0, 1, 4, 64},
      {"bf16", 1, 4100, 700, Op::N, 0.0, 1, 1, 64},
      {"bf16", 64, 40000, 256, Op::N, 0.0, 1, 1, 64},
      {"bf16", 1000, 64, 3000, Op::N, 0.0, 1,
       1},  // 128 x 64 tiles from here       // 8 tiles, the last one part-filled
      {"f16", 777, 33, 1030, Op::T, 0.0, 1, 1},         // B K-major, n and k edges
      {"bf16->f32", 300, 64, 20000, Op::N, 0.5, 1, 5},  // split, beta in the reduction
      {"f16->f32", 640, 40, 9000, Op::T, 0.0, 1, 3},    // split sums staged through TMA
      {"f32/tf32", 2000, 17, 515, Op::N, 0.0, 1, 1},    // 32-bit C in two rounds
      {"e4m3", 513, 64, 4100, Op::N, 0.0, 1, 3},
      {"e5m2->f32", 200, 56, 1000, Op::T, 0.0, 0, 1},  // direct stores
      {"i8", 1030, 50, 2050, Op::N, 0.0, 1, 4},        // exact, split
      {"bf16", 4100, 1, 700, Op::N, 0.0, 1, 1},        // one column
      {"bf16", 129, 64, 64, Op::N, 0.0, 1, 1},         // one k-tile
      {"bf16", 40000, 64, 256, Op::N, 0.0, 1, 1},      // 313 tiles of 4 k-tiles
  };
  for (const Case& c : cases) {
    const GemmDesc d{c.m, c.n, c.k, Op::N, c.op_b, 1.0, c.beta, GemmTypes::parse(c.types)};
    test::ProblemOptions opt;
    opt.seed = static_cast<std::uint64_t>(c.m + 5 * c.k + c.n);
    opt.integer_values = d.types.a == DType::i8;
    test::Problem p = test::make_problem(d, opt);
    const Params params{{"BM", c.bm},  {"BN", 192 - c.bm},   {"PERSISTENT", 1},
                        {"STAGES", 8}, {"CSTORE", c.cstore}, {"SPLITK", c.splits}};
    const VerifyResult r = test::run_and_verify(*cuda0(), "cuda.wgmma_ws", p, params);
    EXPECT_TRUE(r.passed) << d.shape() << " BM " << c.bm << " splits " << c.splits << ": "
                          << r.message;
  }
  NoTuningDb no_db;  // the heuristic's choice
  for (const GemmDesc& d :
       {GemmDesc{8192, 64, 4096, Op::N, Op::N, 1.0, 0.0, GemmTypes::parse("bf16")},
        GemmDesc{1500, 48, 30000, Op::N, Op::T, 1.0, 0.0, GemmTypes::parse("e4m3")},
        GemmDesc{64, 8192, 4096, Op::N, Op::N, 1.0, 0.0, GemmTypes::parse("bf16")},
        GemmDesc{48, 1500, 30000, Op::N, Op::T, 1.0, 0.0, GemmTypes::parse("e4m3")}}) {
    const GemmChoice chosen = choose_gemm(*cuda0(), d);
    ASSERT_EQ(chosen.kernel, "cuda.wgmma_ws") << d.shape();
    EXPECT_EQ(chosen.params.at(d.n <= 64 ? "BN" : "BM"), 64) << d.shape() << " " << chosen.config();
    test::ProblemOptions opt;
    opt.seed = static_cast<std::uint64_t>(d.m + d.k);
    test::Problem p = test::make_problem(d, opt);
    const VerifyResult r = test::run_and_verify(*cuda0(), "cuda.wgmma_ws", p, chosen.params);
    EXPECT_TRUE(r.passed) << d.shape() << " " << chosen.config() << ": " << r.message;
  }
}

// Ping-pong (cuda.wgmma_ws, 128 x 128 tiles): the two consumer warpgroups take a persistent
// CTA's tiles in turn, each skipping the other's ring slots. Outputs of more tiles than SMs give
// CTAs one to four tiles (odd and even counts), short k wraps the ring inside and across tiles,
// split-K gives ranges of unequal length (partial sums stored directly here; the shape suite
// runs the ping-pong step with them through TMA), and beta != 0 takes the direct stores.
TEST(CudaTensorCores, PingPongConsumersTakeTilesInTurn) {
  KAFEL_REQUIRE_CUDA();
  if (!cuda0()->caps.has(Cap::wgmma_sm90a)) GTEST_SKIP() << "no wgmma on this GPU";
  struct Case {
    const char* types;
    std::int64_t m, n, k;
    double beta;
    std::int64_t stages, cstore, splits;
  };
  const Case cases[] = {
      {"bf16", 2113, 1539, 300, 0.0, 5, 1, 1},      // 17 x 13 tiles: one or two per CTA
      {"bf16", 4096, 2048, 192, 0.0, 3, 1, 1},      // 512 tiles, 3 k-tiles each: ring wraps
      {"f16->f32", 2048, 2176, 520, 0.5, 6, 2, 1},  // beta != 0: direct stores
      {"f32/tf32", 4096, 1024, 100, 0.0, 4, 2, 1},  // 32-bit C in four rounds
      {"i8", 3000, 2100, 1000, 0.0, 5, 1, 1},       // exact
      {"bf16", 1100, 1300, 1000, 0.0, 5, 0, 3},     // 99 tiles x 3 ranges of 6, 6, 4 k-tiles
  };
  for (const Case& c : cases) {
    const GemmDesc d{c.m, c.n, c.k, Op::N, Op::N, 1.0, c.beta, GemmTypes::parse(c.types)};
    test::ProblemOptions opt;
    opt.seed = static_cast<std::uint64_t>(c.m + c.k);
    opt.integer_values = d.types.a == DType::i8;
    test::Problem p = test::make_problem(d, opt);
    const Params params{{"BM", 128},          {"BN", 128},          {"PERSISTENT", 1},
                        {"STAGES", c.stages}, {"CSTORE", c.cstore}, {"SPLITK", c.splits}};
    const VerifyResult r = test::run_and_verify(*cuda0(), "cuda.wgmma_ws", p, params);
    EXPECT_TRUE(r.passed) << d.shape() << " stages " << c.stages << ": " << r.message;
  }
}

// Stream-K tail (TAIL on): on a 132-SM H100 or H200 each shape leaves the persistent grid's last
// round part-filled (clusters of 2: 66 per round), so its tiles run in k ranges over the whole
// grid and tail_reduce adds them. Edges in m (the last cluster's second CTA past m), n and k,
// ranges of unequal length, beta != 0 (C read in the reduction, direct stores for the whole
// tiles), ping-pong and skinny tiles, exact integers; the same bits on a second run.
TEST(CudaTensorCores, StreamKTailEveryRoleAndEdge) {
  KAFEL_REQUIRE_CUDA();
  if (!cuda0()->caps.has(Cap::wgmma_sm90a)) GTEST_SKIP() << "no wgmma on this GPU";
  struct Case {
    const char* types;
    std::int64_t m, n, k;
    double beta;
    Params params;
  };
  const Params pairs{{"BM", 128},   {"BN", 256},   {"PERSISTENT", 1}, {"CLUSTER", 2},
                     {"STAGES", 4}, {"CSTORE", 2}, {"TAIL", 1}};
  const Params single{{"BM", 128},   {"BN", 256},   {"PERSISTENT", 1},
                      {"STAGES", 3}, {"CSTORE", 1}, {"TAIL", 1}};
  const Params pingpong{{"BM", 128},   {"BN", 128},   {"PERSISTENT", 1},
                        {"STAGES", 5}, {"CSTORE", 1}, {"TAIL", 1}};
  const Params skinny{{"BM", 128},   {"BN", 64},    {"PERSISTENT", 1},
                      {"STAGES", 8}, {"CSTORE", 1}, {"TAIL", 1}};
  const Case cases[] = {
      {"bf16", 2900, 1500, 3000, 0.0, pairs},  // 12 x 6 units, 47 k-tiles in ranges of 5
      {"i8", 1000, 4400, 5000, 0.0, pairs},    // exact
      {"f32/tf32", 1024, 4608, 1000, 0.0, pairs},  {"e4m3->f32", 1000, 4400, 2100, 0.0, pairs},
      {"f16", 2900, 1500, 1500, 0.5, pairs},        // beta: C read by tail_reduce
      {"bf16->f32", 4200, 2000, 700, 0.0, single},  // 33 x 8 tiles over 132 CTAs
      {"bf16", 1500, 1450, 2000, 0.0, pingpong},    // 144 tiles
      {"bf16", 17000, 64, 3000, 0.0, skinny},       // 133 tiles, one in the tail
      {"bf16", 2900, 1500, 100, 0.0, pairs},        // 2 k-tiles: no ranges, whole tiles only
  };
  for (const Case& c : cases) {
    const GemmDesc d{c.m, c.n, c.k, Op::N, Op::T, 1.0, c.beta, GemmTypes::parse(c.types)};
    test::ProblemOptions opt;
    opt.seed = static_cast<std::uint64_t>(c.m + 3 * c.k + c.n);
    opt.integer_values = d.types.a == DType::i8;
    test::Problem p = test::make_problem(d, opt);
    std::vector<std::vector<unsigned char>> bits;
    for (int run = 0; run < 2; ++run) {
      const VerifyResult r = test::run_and_verify(*cuda0(), "cuda.wgmma_ws", p, c.params);
      EXPECT_TRUE(r.passed) << d.shape() << " " << c.types << ": " << r.message;
      const auto* at = static_cast<const unsigned char*>(p.c.data());
      bits.emplace_back(at, at + p.c.bytes());
    }
    EXPECT_TRUE(bits[0] == bits[1]) << d.shape() << " " << c.types << ": two runs differ";
  }
}

// The default takes the tail where the tiles fill less than half of the last round after at most
// 8 whole rounds of tiles of 32 k-tiles or more, and the tail is refused where it cannot apply
// (before any device call).
TEST(CudaTensorCores, StreamKTailByDefaultWhereTheLastRoundIsThin) {
  Device gpu = described_gpu();
  gpu.caps = cuda::cuda_caps(90, true);  // an H100 with the sm_90a kernels
  NoTuningDb no_db;
  auto tail_of = [&](std::int64_t m, std::int64_t n, std::int64_t k, const char* types) {
    const GemmChoice c =
        choose_gemm(gpu, GemmDesc{m, n, k, Op::N, Op::N, 1.0, 0.0, GemmTypes::parse(types)});
    EXPECT_EQ(c.kernel, "cuda.wgmma_ws");
    const auto it = c.params.find("TAIL");
    return it != c.params.end() && it->second != 0;
  };
  EXPECT_TRUE(tail_of(3072, 3072, 3072, "bf16"));      // 144 units of 2 tiles: 2 rounds + 12
  EXPECT_TRUE(tail_of(5120, 5120, 5120, "i8"));        // 400: 6 rounds + 4
  EXPECT_FALSE(tail_of(4096, 4096, 4096, "bf16"));     // 256: 3 rounds + 58
  EXPECT_FALSE(tail_of(8192, 8192, 8192, "e4m3"));     // 1024: 15 rounds + 34
  EXPECT_FALSE(tail_of(256, 256, 65536, "bf16"));      // split-K instead
  EXPECT_TRUE(tail_of(3072, 3072, 3072, "f32/tf32"));  // 96 k-tiles a tile
  EXPECT_FALSE(tail_of(3072, 3072, 3072, "e4m3"));     // 24 k-tiles: the tail costs more
  EXPECT_FALSE(tail_of(3072, 3072, 1024, "bf16"));     // 16
  EXPECT_FALSE(tail_of(10240, 10240, 10240, "bf16"));  // 1600: 24 rounds + 16
  const GemmDesc cube3072{3072, 3072, 3072, Op::N, Op::N, 1.0, 0.0, GemmTypes::parse("bf16")};
  try {
    choose_gemm(gpu, cube3072, "cuda.wgmma_ws",
                Params{{"BM", 128}, {"BN", 256}, {"PERSISTENT", 0}, {"TAIL", 1}});
    ADD_FAILURE() << "TAIL without PERSISTENT was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("PERSISTENT on"), std::string::npos) << e.what();
  }
}

TEST(CudaBaseline, Fp8NeedsComputeCapability89AndTensorRolesNeedSm80) {
  const GemmDesc fp8 = cube(256, GemmTypes::parse("e4m3"));
  EXPECT_EQ(choose_gemm(described_gpu(90), fp8, "cuda.cublas").kernel, "cuda.cublas");
  const std::string why = refusal(described_gpu(80), fp8, "cuda.cublas");
  EXPECT_NE(why.find("8.9"), std::string::npos) << why;
  const std::string old =
      refusal(described_gpu(75), cube(256, GemmTypes::parse("bf16")), "cuda.cublas");
  EXPECT_NE(old.find("needs"), std::string::npos) << old;
}

// ---- device facts --------------------------------------------------------------------------

double peak(const std::vector<std::pair<std::string, double>>& peaks, const std::string& key) {
  for (const auto& [k, v] : peaks)
    if (k == key) return v;
  return 0;
}

TEST(CudaDeviceFacts, TensorPeaksReproduceNvidiasDatasheets) {
  // H100 SXM5: 132 SMs, 1830 MHz for tensor work, 1980 MHz for FP64.
  const auto h100 = cuda::tensor_peaks_for(90, 132, 1830);
  EXPECT_NEAR(peak(h100, "f16"), 989.4e3, 0.1e3);
  EXPECT_NEAR(peak(h100, "bf16"), 989.4e3, 0.1e3);
  EXPECT_NEAR(peak(h100, "tf32"), 494.7e3, 0.1e3);
  EXPECT_NEAR(peak(h100, "fp8"), 1978.9e3, 0.1e3);
  EXPECT_NEAR(peak(h100, "i8"), 1978.9e3, 0.1e3);
  EXPECT_NEAR(peak(cuda::tensor_peaks_for(90, 132, 1980), "f64"), 66.9e3, 0.1e3);
  // A100 SXM4: 108 SMs at 1410 MHz; no fp8 units.
  const auto a100 = cuda::tensor_peaks_for(80, 108, 1410);
  EXPECT_NEAR(peak(a100, "f16"), 312e3, 0.2e3);
  EXPECT_NEAR(peak(a100, "tf32"), 156e3, 0.1e3);
  EXPECT_NEAR(peak(a100, "i8"), 624e3, 0.3e3);
  EXPECT_NEAR(peak(a100, "f64"), 19.5e3, 0.05e3);
  EXPECT_EQ(peak(a100, "fp8"), 0.0);
  EXPECT_TRUE(cuda::tensor_peaks_for(86, 84, 1700).empty());  // rates not in the table
  // Device::peak_gflops picks the matrix-unit figure for the roles that run there.
  const Device dev = described_gpu();
  EXPECT_DOUBLE_EQ(dev.peak_gflops(GemmTypes::parse("bf16")), peak(dev.tensor_peaks, "bf16"));
  EXPECT_DOUBLE_EQ(dev.peak_gflops(GemmTypes::parse("f32")), dev.peak_gflops_f32);
}

TEST(CudaDeviceFacts, CapabilitiesByComputeCapability) {
  EXPECT_FALSE(cuda::cuda_caps(75, true).has(Cap::mma_sm80));
  EXPECT_TRUE(cuda::cuda_caps(80, true).has(Cap::mma_sm80));
  EXPECT_FALSE(cuda::cuda_caps(80, true).has(Cap::wgmma_sm90a));
  EXPECT_FALSE(cuda::cuda_caps(89, true).has(Cap::wgmma_sm90a));
  EXPECT_FALSE(cuda::cuda_caps(90, false).has(Cap::wgmma_sm90a));
  EXPECT_TRUE(cuda::cuda_caps(90, true).has(Cap::wgmma_sm90a | Cap::mma_sm80 | Cap::fp64));
  EXPECT_FALSE(cuda::cuda_caps(100, true).has(Cap::wgmma_sm90a));  // sm_90a code is 9.0 only
  EXPECT_DOUBLE_EQ(cuda::f64_ratio(90), 0.5);
  EXPECT_DOUBLE_EQ(cuda::f64_ratio(89), 1.0 / 64);
  EXPECT_DOUBLE_EQ(cuda::f64_ratio(75), 1.0 / 32);
}

TEST(CudaDevices, DescribeTheGpu) {
  KAFEL_REQUIRE_CUDA();
  const Device dev = *cuda0();
  EXPECT_EQ(dev.id, "cuda:0");
  EXPECT_TRUE(dev.is_gpu);
  EXPECT_GT(dev.compute_units, 0);
  EXPECT_GT(dev.peak_gflops_f32, 1000.0);
  EXPECT_GT(dev.peak_gflops_f64, 0.0);
  EXPECT_GT(dev.global_memory, 0u);
  EXPECT_GT(dev.cache_bytes, 0u);
  EXPECT_GE(dev.local_memory, 48u * 1024);
  EXPECT_GE(dev.sm_version, 50);
  EXPECT_EQ(dev.caps.has(Cap::mma_sm80), dev.sm_version >= 80);
  if (dev.sm_version == 80 || dev.sm_version == 90) {
    EXPECT_GT(peak(dev.tensor_peaks, "f16"), 4 * dev.peak_gflops_f32);
    EXPECT_GT(peak(dev.tensor_peaks, "tf32"), dev.peak_gflops_f32);
  }
  EXPECT_EQ(select_device("cuda:0").id, "cuda:0");
}

// A problem larger than the GPU's memory is a clear OutOfMemory naming the bytes.
TEST(CudaMemory, TooLargeProblemIsOutOfMemory) {
  KAFEL_REQUIRE_CUDA();
  const Device dev = *cuda0();
  const GemmKernel& k = find_gemm_kernel(dev, "cuda.blocks");
  GemmDesc d{1 << 20, 1 << 20, 1 << 20, Op::N, Op::N, 1.0, 0.0, DType::f32};
  auto plan = k.make_plan(dev, d, {});
  float dummy = 0;
  GemmArgs args{d, &dummy, d.k, &dummy, d.n, &dummy, d.n};
  try {
    plan->load(args, 1);
    FAIL() << "a 4 TiB operand was accepted";
  } catch (const OutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("bytes"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kafel
