// The Hopper (wgmma) rungs' registrations without a GPU: every role needs Cap::wgmma_sm90a, so
// a GPU without it is refused before anything runs; configurations that exceed a block's shared
// memory or were not compiled are refused by can_run. (Correctness runs in the ladder tests.)
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <string>
#include <utility>

#include "common/tuning_db_scope.hpp"
#include "core/backend.hpp"
#include "core/registry.hpp"
#include "cuda/wgmma.hpp"
#include "kafel/error.hpp"

namespace kafel {
namespace {

// A CUDA device as cuda_device.cpp describes an H100 (227 KiB of shared memory per block).
Device fake_gpu(Caps caps) {
  Device d;
  d.id = "cuda:9";
  d.backend = "cuda";
  d.name = "test GPU";
  d.is_gpu = true;
  d.local_memory = 232448;
  d.caps = caps;
  return d;
}

// The choices checked here must not depend on a tuning database on the machine running them.
class Wgmma : public ::testing::Test {
 private:
  test::NoTuningDb no_db_;
};

const GemmKernel& kernel(const std::string& name) {
  for (const GemmKernel* k : all_gemm_kernels())
    if (k->name == name) return *k;
  throw InvalidArgument("no kernel " + name);
}

GemmDesc bf16_problem(double beta = 0.0) {
  return {4096, 4096, 4096, Op::N, Op::N, 1.0, beta, GemmTypes::of(DType::bf16)};
}

TEST_F(Wgmma, EveryRoleNeedsTheHopperCapability) {
  int found = 0;
  for (const GemmKernel* k : all_gemm_kernels()) {
    if (k->name.rfind("cuda.wgmma", 0) != 0) continue;
    ++found;
    ASSERT_FALSE(k->types.empty()) << k->name;
    for (const TypeSupport& s : k->types)
      EXPECT_TRUE(s.needs.has(Cap::wgmma_sm90a)) << k->name << " " << s.types.name();
  }
  EXPECT_GE(found, 2);
}

TEST_F(Wgmma, GpuWithoutWgmmaIsRefusedWithTheReason) {
  const Device ampere = fake_gpu(Caps(Cap::fp64) | Cap::fp16 | Cap::mma_sm80);
  for (const char* name : {"cuda.wgmma", "cuda.wgmma_ws"}) {
    const GemmKernel& k = kernel(name);
    const std::string why = k.can_run(ampere, bf16_problem(), k.params.defaults());
    EXPECT_NE(why.find("needs"), std::string::npos) << why;
    EXPECT_NE(why.find("sm_90a"), std::string::npos) << why;
    EXPECT_THROW(choose_params_for(k, ampere, bf16_problem(), {}), Unsupported) << name;
  }
}

TEST_F(Wgmma, DefaultsAndHeuristicFitAHopperBlock) {
  const Device hopper = fake_gpu(Caps(Cap::fp64) | Cap::fp16 | Cap::mma_sm80 | Cap::wgmma_sm90a);
  for (const GemmDesc& d :
       {bf16_problem(), bf16_problem(0.5),
        GemmDesc{8192, 8192, 1024, Op::T, Op::N, 1.0, 0.0, GemmTypes::of(DType::f16)}}) {
    const GemmKernel& k = kernel("cuda.wgmma_ws");
    const GemmChoice c = choose_params_for(k, hopper, d, {});
    EXPECT_EQ(k.can_run(hopper, d, c.params), "") << d.shape() << " " << c.config();
  }
}

TEST_F(Wgmma, SharedMemoryBeyondTheBlockLimitIsRefused) {
  const Device hopper = fake_gpu(Caps(Cap::fp64) | Cap::fp16 | Cap::mma_sm80 | Cap::wgmma_sm90a);
  const GemmKernel& k = kernel("cuda.wgmma_ws");
  Params p = k.params.defaults();
  p["STAGES"] = 4;
  p["CSTORE"] = 1;  // the whole 64 KiB C tile staged next to 4 x 48 KiB slots
  const std::string why = k.can_run(hopper, bf16_problem(), p);
  EXPECT_NE(why.find("shared memory"), std::string::npos) << why;
  p["CSTORE"] = 2;  // staged in two rounds: fits
  EXPECT_EQ(k.can_run(hopper, bf16_problem(), p), "");
  // With beta != 0, C is not staged at all, so the same parameters fit.
  p["CSTORE"] = 1;
  EXPECT_EQ(k.can_run(hopper, bf16_problem(0.5), p), "");
}

TEST_F(Wgmma, OnlyCompiledTilesAreAccepted) {
  const GemmKernel& k = kernel("cuda.wgmma_ws");
  Params p = k.params.defaults();
  p["BM"] = 256;
  p["BN"] = 256;
  EXPECT_NE(k.params.check(p), "");
  p["BN"] = 128;
  EXPECT_EQ(k.params.check(p), "");
}

// 128 x 128 tiles run ping-pong: persistent only; 32 KiB slots, a whole staged C tile per
// consumer.
TEST_F(Wgmma, PingPongTilesArePersistentAndFitTheirStagingBuffers) {
  const Device hopper = fake_gpu(Caps(Cap::fp64) | Cap::fp16 | Cap::mma_sm80 | Cap::wgmma_sm90a);
  const GemmKernel& k = kernel("cuda.wgmma_ws");
  Params p = k.params.defaults();
  p["BM"] = 128;
  p["BN"] = 128;
  p["PERSISTENT"] = 0;
  EXPECT_NE(k.params.check(p), "");
  p["PERSISTENT"] = 1;
  p["STAGES"] = 5;
  p["CSTORE"] = 1;  // two 32 KiB C tiles next to 5 x 32 KiB slots
  EXPECT_EQ(k.params.check(p), "");
  EXPECT_EQ(k.can_run(hopper, bf16_problem(), p), "");
  p["STAGES"] = 6;
  const std::string why = k.can_run(hopper, bf16_problem(), p);
  EXPECT_NE(why.find("shared memory"), std::string::npos) << why;
  p["CSTORE"] = 2;  // half tiles: 6 slots fit
  EXPECT_EQ(k.can_run(hopper, bf16_problem(), p), "");
  cuda::sm90::Options o;
  o.bm = o.bn = 128;
  EXPECT_NE(cuda::sm90::check_options(cuda::sm90::Input::bf16, false, false, o), "");
  o.persistent = true;
  EXPECT_EQ(cuda::sm90::check_options(cuda::sm90::Input::bf16, false, false, o), "");
  EXPECT_EQ(cuda::sm90::check_options(cuda::sm90::Input::i8, false, true, o), "");
  o.kernel = 0;
  EXPECT_NE(cuda::sm90::check_options(cuda::sm90::Input::bf16, false, false, o), "");
}

TEST_F(Wgmma, EightBitInputsNeedKMajorOperands) {
  cuda::sm90::Options o;
  EXPECT_NE(cuda::sm90::check_options(cuda::sm90::Input::e4m3, false, false, o), "");
  EXPECT_NE(cuda::sm90::check_options(cuda::sm90::Input::i8, true, true, o), "");
  EXPECT_EQ(cuda::sm90::check_options(cuda::sm90::Input::i8, false, true, o), "");
  // 16-bit inputs take every layout.
  EXPECT_EQ(cuda::sm90::check_options(cuda::sm90::Input::bf16, true, false, o), "");
  o.kernel = 0;
  o.bm = 256;
  o.bn = 128;
  EXPECT_NE(cuda::sm90::check_options(cuda::sm90::Input::bf16, false, false, o), "");
}

// Where wgmma was measured ahead of mma.sync on an H100 (bf16, f16, tf32, i8), it is the default
// on a GPU with wgmma; an Ampere-class GPU keeps the mma.sync rung.
TEST_F(Wgmma, MeasuredRolesDefaultToTheWarpSpecialisedKernel) {
  const Device hopper = fake_gpu(Caps(Cap::fp64) | Cap::fp16 | Cap::mma_sm80 | Cap::wgmma_sm90a);
  const Device ampere = fake_gpu(Caps(Cap::fp64) | Cap::fp16 | Cap::mma_sm80);
  for (const char* t : {"bf16", "f16->f32", "f32/tf32", "i8"}) {
    const GemmDesc d{4096, 4096, 4096, Op::N, Op::N, 1.0, 0.0, GemmTypes::parse(t)};
    EXPECT_EQ(choose_gemm(hopper, d).kernel, "cuda.wgmma_ws") << t;
    EXPECT_EQ(choose_gemm(ampere, d).kernel, "cuda.mma_tiles") << t;
  }
}

// Small outputs with long k split k over the SMs (issue 18); large outputs do not, and every
// choice fits the block and leaves the workspace small.
TEST_F(Wgmma, SmallOutputsSplitKOverTheSms) {
  Device hopper = fake_gpu(Caps(Cap::fp64) | Cap::fp16 | Cap::mma_sm80 | Cap::wgmma_sm90a);
  hopper.compute_units = 132;
  hopper.global_memory = std::uint64_t(80) << 30;
  const GemmKernel& k = kernel("cuda.wgmma_ws");
  auto splits = [&](std::int64_t m, std::int64_t n, std::int64_t kk, const char* t) {
    const GemmDesc d{m, n, kk, Op::N, Op::N, 1.0, 0.0, GemmTypes::parse(t)};
    const GemmChoice c = choose_params_for(k, hopper, d, {});
    EXPECT_EQ(k.can_run(hopper, d, c.params), "") << d.shape() << " " << c.config();
    return c.params.at("SPLITK");
  };
  EXPECT_EQ(splits(256, 256, 65536, "bf16"), 66);  // 2 tiles: 66 ranges of 16 k-tiles
  EXPECT_EQ(splits(1024, 1024, 16384, "bf16"), 4);
  EXPECT_EQ(splits(256, 256, 65536, "i8"), 33);  // 4 ping-pong tiles of 128 x 128
  EXPECT_EQ(splits(256, 256, 256, "bf16"), 1);   // 4 k-tiles: nothing to split
  EXPECT_EQ(splits(4096, 4096, 4096, "bf16"), 1);
  EXPECT_EQ(splits(8192, 8192, 1024, "f32/tf32"), 1);
  // Where the device's peak and bandwidth are known, bandwidth-bound outputs take ranges of at
  // least 4096 k (i8's pairs 8192), never fewer than fill half the SMs.
  hopper.bandwidth_gbs = 3352;
  hopper.tensor_peaks = {{"bf16", 989000.0}};
  // 128 flop per operand byte < 295: ranges of at least 4096 k, or for half the SMs.
  EXPECT_EQ(splits(256, 256, 65536, "bf16"), 33);
  EXPECT_EQ(splits(512, 512, 65536, "bf16"), 16);
  EXPECT_EQ(splits(384, 384, 65536, "bf16"), 16);
  hopper.tensor_peaks.push_back({"i8", 1979000.0});
  EXPECT_EQ(splits(256, 256, 65536, "i8"), 16);  // 256 < 590: half the SMs' worth
  EXPECT_EQ(splits(512, 512, 65536, "i8"), 8);   // ranges of 8192 k
  EXPECT_EQ(splits(384, 384, 65536, "i8"), 8);
  EXPECT_EQ(splits(1024, 1024, 16384, "i8"), 2);    // 64 ping-pong tiles, 1024 > 590
  EXPECT_EQ(splits(1024, 1024, 16384, "bf16"), 4);  // 512 > 295
  EXPECT_EQ(splits(256, 256, 256, "bf16"), 1);      // still at most k-tiles / 4 ranges
  EXPECT_EQ(splits(256, 256, 2048, "bf16"), 8);     // 32 k-tiles: 8 ranges of 4
  hopper.tensor_peaks.clear();
  hopper.bandwidth_gbs = 0;
  // Where 128 x 128 tiles fill 90 % of the SMs (128 at 16384 x 128), or a quarter of them with
  // at most 32 k-tiles (64 at 1024^3), they run ping-pong without a split.
  for (const auto& [m, n, kk] : {std::array<std::int64_t, 3>{16384, 128, 16384},
                                 std::array<std::int64_t, 3>{1024, 1024, 1024}}) {
    const GemmDesc d{m, n, kk, Op::N, Op::N, 1.0, 0.0, GemmTypes::parse("bf16")};
    const Params p = choose_params_for(k, hopper, d, {}).params;
    EXPECT_EQ(p.at("BM"), 128) << d.shape();
    EXPECT_EQ(p.at("BN"), 128) << d.shape();
    EXPECT_EQ(p.at("PERSISTENT"), 1) << d.shape();
    EXPECT_EQ(splits(m, n, kk, "bf16"), 1) << d.shape();
  }
  // CTAs share B in clusters of 2 where that measured faster: persistent 128 x 256 tiles above
  // k = 2048 (every role), split 128 x 256 tiles of 16-bit inputs; not at k <= 2048 (groups of
  // 16 alone were faster), for split i8, narrow tiles or 2-tile outputs.
  auto cluster = [&](std::int64_t m, std::int64_t n, std::int64_t kk, const char* t) {
    const GemmDesc d{m, n, kk, Op::N, Op::N, 1.0, 0.0, GemmTypes::parse(t)};
    const GemmChoice c = choose_params_for(k, hopper, d, {});
    EXPECT_EQ(k.can_run(hopper, d, c.params), "") << d.shape() << " " << c.config();
    return c.params.at("CLUSTER");
  };
  EXPECT_EQ(cluster(1024, 1024, 16384, "bf16"), 2);
  // An odd count of tile rows: pairs take 6 x 3 CTAs per range, so 7 ranges fill the SMs once.
  EXPECT_EQ(cluster(640, 768, 32768, "bf16"), 2);
  EXPECT_EQ(splits(640, 768, 32768, "bf16"), 7);
  // Split 16-bit outputs that 256 x 128 tiles cover with less padding, or with as much where
  // the 256-column tiles' last column is at most half full, take those tiles without clusters;
  // 640 x 640 then has 3 x 5 tiles, 8 ranges.
  auto tile = [&](std::int64_t m, std::int64_t n, std::int64_t kk, const char* t) {
    const GemmDesc d{m, n, kk, Op::N, Op::N, 1.0, 0.0, GemmTypes::parse(t)};
    const Params p = choose_params_for(k, hopper, d, {}).params;
    return std::pair{p.at("BM"), p.at("BN")};
  };
  const std::pair<std::int64_t, std::int64_t> tall{256, 128}, wide{128, 256}, square{128, 128};
  for (const char* t : {"bf16", "f16", "bf16->f32"}) {
    EXPECT_EQ(tile(640, 640, 32768, t), tall) << t;
    EXPECT_EQ(tile(384, 384, 65536, t), tall) << t;
    EXPECT_EQ(tile(896, 896, 16384, t), tall) << t;
    EXPECT_EQ(tile(1024, 384, 16384, t), tall) << t;  // 12 full tiles against 16 half-used
    EXPECT_EQ(tile(640, 1024, 16384, t), wide) << t;  // wide tiles pad less
    EXPECT_EQ(tile(1024, 1024, 16384, t), wide) << t;
    EXPECT_EQ(tile(256, 256, 65536, t), wide) << t;
  }
  EXPECT_EQ(cluster(640, 640, 32768, "bf16"), 1);
  EXPECT_EQ(splits(640, 640, 32768, "bf16"), 8);
  EXPECT_EQ(tile(384, 384, 65536, "i8"), square);  // i8 splits its ping-pong pairs
  EXPECT_EQ(tile(384, 384, 65536, "e4m3"), wide);  // measured no faster in tall tiles
  EXPECT_EQ(tile(384, 384, 65536, "f32/tf32"), wide);
  EXPECT_EQ(cluster(1024, 1024, 16384, "i8"), 2);  // split 128 x 128 ping-pong tiles
  for (const auto& [m, n, kk] : {std::array<std::int64_t, 3>{256, 256, 65536},
                                 std::array<std::int64_t, 3>{1000, 1000, 16000}}) {
    const Params p =
        choose_params_for(k, hopper, GemmDesc{m, n, kk, Op::N, Op::N, 1.0, 0.0, DType::i8}, {})
            .params;
    EXPECT_EQ(p.at("BM"), 128);
    EXPECT_EQ(p.at("BN"), 128);
    EXPECT_EQ(p.at("STAGES"), 6);
    EXPECT_GE(p.at("SPLITK"), 2);
  }
  EXPECT_EQ(cluster(8192, 8192, 1024, "f16"), 1);
  EXPECT_EQ(cluster(8192, 8192, 1024, "i8"), 1);
  EXPECT_EQ(cluster(256, 256, 65536, "bf16"), 1);
  for (const char* t : {"bf16", "f16", "f32/tf32", "i8", "e4m3", "bf16->f32"}) {
    EXPECT_EQ(cluster(4096, 4096, 4096, t), 2) << t;
    EXPECT_EQ(cluster(8192, 8192, 8192, t), 2) << t;
    EXPECT_EQ(cluster(6144, 4000, 3001, t), 2) << t;  // tile edges in m and n
  }
  EXPECT_EQ(cluster(2048, 2048, 2048, "bf16"), 1);
  EXPECT_EQ(cluster(4096, 128, 16384, "bf16"), 1);
  // Above k = 2048 the tiles are persistent; at or below it, in groups of 16 tile rows.
  auto chosen = [&](std::int64_t m, std::int64_t n, std::int64_t kk) {
    return choose_params_for(k, hopper, GemmDesc{m, n, kk, Op::N, Op::N, 1.0, 0.0, DType::bf16}, {})
        .params;
  };
  EXPECT_EQ(chosen(8192, 8192, 8192).at("PERSISTENT"), 1);
  EXPECT_EQ(chosen(8192, 8192, 8192).at("GROUP"), 8);
  EXPECT_EQ(chosen(8192, 8192, 1024).at("PERSISTENT"), 1);
  EXPECT_EQ(chosen(8192, 8192, 1024).at("GROUP"), 16);
  // At k <= 1024, 16-bit inputs with an f32 C take 4 slots and C in two TMA rounds; a 16-bit C,
  // other inputs and k = 2048 keep 3 slots and one round.
  auto slots_and_store = [&](std::int64_t kk, const char* t) {
    const GemmDesc d{8192, 8192, kk, Op::N, Op::N, 1.0, 0.0, GemmTypes::parse(t)};
    const GemmChoice c = choose_params_for(k, hopper, d, {});
    EXPECT_EQ(k.can_run(hopper, d, c.params), "") << d.shape() << " " << c.config();
    return std::pair{c.params.at("STAGES"), c.params.at("CSTORE")};
  };
  EXPECT_EQ(slots_and_store(1024, "bf16->f32"), std::pair(std::int64_t(4), std::int64_t(2)));
  EXPECT_EQ(slots_and_store(1024, "f16->f32"), std::pair(std::int64_t(4), std::int64_t(2)));
  EXPECT_EQ(slots_and_store(2048, "bf16->f32"), std::pair(std::int64_t(3), std::int64_t(1)));
  for (const char* t : {"bf16", "f16", "f32/tf32", "i8", "e4m3->f32"})
    EXPECT_EQ(slots_and_store(1024, t), std::pair(std::int64_t(3), std::int64_t(1))) << t;
  // Narrow outputs (65-128 columns) with fewer tiles take 256 x 128 tiles and split.
  const GemmDesc narrow{4096, 128, 16384, Op::N, Op::N, 1.0, 0.0, GemmTypes::parse("bf16")};
  EXPECT_EQ(choose_params_for(k, hopper, narrow, {}).params.at("BM"), 256);
  EXPECT_EQ(splits(4096, 128, 16384, "bf16"), 8);  // 16 tiles: 8 ranges fill 128 SMs
  // The one-CTA-per-tile kernel has no split-K.
  cuda::sm90::Options o;
  o.kernel = 0;
  o.splits = 2;
  EXPECT_NE(cuda::sm90::check_options(cuda::sm90::Input::bf16, false, false, o), "");
  o.kernel = 1;
  o.splits = cuda::sm90::kMaxSplits + 1;
  EXPECT_NE(cuda::sm90::check_options(cuda::sm90::Input::bf16, false, false, o), "");
}

// Outputs at most 64 columns wide take 128 x 64 tiles, at most 64 rows tall 64 x 128 tiles (A
// K-major for 16-bit inputs, which wgmma could read either way but which is the only layout
// compiled for these tiles): 8 slots, C staged in one round, no clusters; fewer tiles than half
// the SMs split k to fill them.
TEST_F(Wgmma, SkinnyOutputsTakeSkinnyTiles) {
  Device hopper = fake_gpu(Caps(Cap::fp64) | Cap::fp16 | Cap::mma_sm80 | Cap::wgmma_sm90a);
  hopper.compute_units = 132;
  hopper.global_memory = std::uint64_t(80) << 30;
  const GemmKernel& k = kernel("cuda.wgmma_ws");
  auto chosen = [&](std::int64_t m, std::int64_t n, std::int64_t kk, const char* t,
                    Op op_a = Op::N) {
    const GemmDesc d{m, n, kk, op_a, Op::N, 1.0, 0.0, GemmTypes::parse(t)};
    const GemmChoice c = choose_params_for(k, hopper, d, {});
    EXPECT_EQ(k.can_run(hopper, d, c.params), "") << d.shape() << " " << c.config();
    return c.params;
  };
  for (const char* t : {"bf16", "f16->f32", "f32/tf32", "e4m3", "i8"}) {
    for (std::int64_t n : {1, 17, 64}) {
      const Params p = chosen(16384, n, 16384, t);
      EXPECT_EQ(p.at("BM"), 128) << t << " n " << n;
      EXPECT_EQ(p.at("BN"), 64) << t << " n " << n;
      EXPECT_EQ(p.at("STAGES"), 8) << t;
      EXPECT_EQ(p.at("CSTORE"), 1) << t;
      EXPECT_EQ(p.at("CLUSTER"), 1) << t;
      EXPECT_EQ(p.at("SPLITK"), 1) << t;  // 128 tiles fill the SMs
    }
    EXPECT_EQ(chosen(4096, 64, 16384, t).at("SPLITK"), 4) << t;  // 32 tiles, 4 ranges
    EXPECT_EQ(chosen(65536, 64, 4096, t).at("SPLITK"), 1) << t;  // 512 tiles, persistent
    EXPECT_EQ(chosen(16384, 65, 16384, t).at("BN"), 128) << t;
  }
  // Outputs at most 64 rows tall take 64 x 128 tiles (the consumers 64 columns each) alike.
  for (const char* t : {"bf16", "f16->f32", "f32/tf32", "e4m3", "i8"}) {
    for (std::int64_t m : {1, 17, 64}) {
      const Params p = chosen(m, 16384, 16384, t);
      EXPECT_EQ(p.at("BM"), 64) << t << " m " << m;
      EXPECT_EQ(p.at("BN"), 128) << t << " m " << m;
      EXPECT_EQ(p.at("STAGES"), 8) << t;
      EXPECT_EQ(p.at("SPLITK"), 1) << t;
    }
    EXPECT_EQ(chosen(64, 4096, 16384, t).at("SPLITK"), 4) << t;
    EXPECT_EQ(chosen(65, 16384, 16384, t).at("BM"), 128) << t;
    EXPECT_EQ(chosen(64, 64, 16384, t).at("BM"), 128) << t;  // both small: 128 x 64
  }
  // A transposed 16-bit A keeps the tiles compiled for it.
  EXPECT_EQ(chosen(16384, 64, 16384, "bf16", Op::T).at("BN"), 128);
  EXPECT_EQ(chosen(64, 16384, 16384, "bf16", Op::T).at("BM"), 128);
  EXPECT_EQ(chosen(16384, 64, 16384, "i8", Op::T).at("BN"), 64);  // relaid K-major
  // What the 128 x 64 tile is not compiled for is refused, with the reason.
  Params p = k.params.defaults();
  p["BM"] = 128;
  p["BN"] = 64;
  EXPECT_EQ(k.params.check(p), "");
  p["CLUSTER"] = 2;
  EXPECT_NE(k.params.check(p), "");
  p["CLUSTER"] = 1;
  p["CSTORE"] = 2;
  EXPECT_NE(k.params.check(p), "");
  p["CSTORE"] = 1;
  p["STAGES"] = 8;
  const GemmDesc t_a{4096, 64, 4096, Op::T, Op::N, 1.0, 0.0, GemmTypes::parse("bf16")};
  const std::string why = k.can_run(hopper, t_a, p);
  EXPECT_NE(why.find("K-major A"), std::string::npos) << why;
  for (const auto& [bm, bn] : {std::pair{128, 64}, std::pair{64, 128}}) {
    cuda::sm90::Options o;
    o.bm = bm;
    o.bn = bn;
    EXPECT_EQ(cuda::sm90::check_options(cuda::sm90::Input::bf16, false, false, o), "");
    EXPECT_EQ(cuda::sm90::check_options(cuda::sm90::Input::e4m3, false, true, o), "");
    EXPECT_NE(cuda::sm90::check_options(cuda::sm90::Input::bf16, true, false, o), "");
    o.c_rounds = 2;
    EXPECT_NE(cuda::sm90::check_options(cuda::sm90::Input::bf16, false, false, o), "");
    o.c_rounds = 1;
    o.cluster = 2;
    EXPECT_NE(cuda::sm90::check_options(cuda::sm90::Input::bf16, false, false, o), "");
    o.cluster = 1;
    o.kernel = 0;
    EXPECT_NE(cuda::sm90::check_options(cuda::sm90::Input::bf16, false, false, o), "");
  }
  p["BM"] = 64;
  p["BN"] = 64;  // not compiled
  EXPECT_NE(k.params.check(p), "");
}

// 3xtf32 on wgmma: the default for f32/3xtf32 where wgmma runs (mma.sync elsewhere), compiled
// for 128 x 128 tiles, K-major split operands and no clusters only.
TEST_F(Wgmma, ThreeTf32IsTheHopperDefaultAndItsLimitsHold) {
  const Device hopper = fake_gpu(Caps(Cap::fp64) | Cap::fp16 | Cap::mma_sm80 | Cap::wgmma_sm90a);
  const Device ampere = fake_gpu(Caps(Cap::fp64) | Cap::fp16 | Cap::mma_sm80);
  const GemmDesc d{4096, 4096, 4096, Op::T, Op::T, 1.0, 0.5, GemmTypes::parse("f32/3xtf32")};
  EXPECT_EQ(choose_gemm(hopper, d).kernel, "cuda.wgmma_3xtf32");
  EXPECT_NE(choose_gemm(ampere, d).kernel, "cuda.wgmma_3xtf32");
  const GemmKernel& k = kernel("cuda.wgmma_3xtf32");
  EXPECT_EQ(k.can_run(hopper, d, k.params.defaults()), "");
  Params p = k.params.defaults();
  p["STAGES"] = 4;  // 4 x 64 KiB slots: outside the parameter's range
  EXPECT_NE(k.params.check(p), "");
  Device small = hopper;
  small.local_memory = 160 * 1024;  // 3 slots of 64 KiB do not fit
  const std::string why = k.can_run(small, d, k.params.defaults());
  EXPECT_NE(why.find("shared memory"), std::string::npos) << why;
  using cuda::sm90::Input;
  cuda::sm90::Options o;
  o.bm = o.bn = 128;
  EXPECT_EQ(cuda::sm90::check_options(Input::tf32x3, false, true, o), "");
  EXPECT_NE(cuda::sm90::check_options(Input::tf32x3, false, false, o), "");
  o.cluster = 2;
  EXPECT_NE(cuda::sm90::check_options(Input::tf32x3, false, true, o), "");
  o.cluster = 1;
  o.bn = 256;
  EXPECT_NE(cuda::sm90::check_options(Input::tf32x3, false, true, o), "");
  // Two parts per slot: twice the bytes of a tf32 slot.
  o.bn = 128;
  EXPECT_EQ(cuda::sm90::smem_bytes(Input::tf32x3, o, false) - 1024,
            2 * (cuda::sm90::smem_bytes(Input::tf32, o, false) - 1024) - 16 * o.stages);
}

// 3xtf32 splits k where its 128 x 128 tiles fill fewer than half the SMs, in ranges of at least
// 8 k-tiles, and the plan's workspace holds the split operands and the partial sums.
TEST_F(Wgmma, ThreeTf32SplitsLongKOverTheSms) {
  Device hopper = fake_gpu(Caps(Cap::fp64) | Cap::fp16 | Cap::mma_sm80 | Cap::wgmma_sm90a);
  hopper.compute_units = 132;
  hopper.global_memory = std::uint64_t(80) << 30;
  const GemmKernel& k = kernel("cuda.wgmma_3xtf32");
  auto splits = [&](std::int64_t m, std::int64_t n, std::int64_t kk) {
    const GemmDesc d{m, n, kk, Op::N, Op::T, 1.0, 0.0, GemmTypes::parse("f32/3xtf32")};
    const GemmChoice c = choose_params_for(k, hopper, d, {});
    EXPECT_EQ(k.can_run(hopper, d, c.params), "") << d.shape() << " " << c.config();
    return c.params.at("SPLITK");
  };
  EXPECT_EQ(splits(256, 256, 262144), 33);  // 4 tiles
  EXPECT_EQ(splits(1024, 1024, 65536), 2);  // 64 tiles
  EXPECT_EQ(splits(256, 256, 1024), 4);     // 32 k-tiles: ranges of 8
  EXPECT_EQ(splits(256, 256, 200), 1);      // 7 k-tiles: nothing to split
  EXPECT_EQ(splits(4096, 4096, 4096), 1);   // 1024 tiles
  // A split that would take more than half the device's memory is refused with the reason.
  Device tiny = hopper;
  tiny.global_memory = std::uint64_t(64) << 20;
  const GemmDesc d{4096, 4096, 64, Op::N, Op::T, 1.0, 0.0, GemmTypes::parse("f32/3xtf32")};
  Params p = k.params.defaults();
  p["SPLITK"] = 2;
  const std::string why = k.can_run(tiny, d, p);
  EXPECT_NE(why.find("workspace"), std::string::npos) << why;
}

}  // namespace
}  // namespace kafel
