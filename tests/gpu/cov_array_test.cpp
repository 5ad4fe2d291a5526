// CUDA covariance at array scale: cuda.onepass32 / cuda.onepass64 (up to 32 / 64 real lanes, the
// defaults there past cuda.onepass; cuda.onepass64 up to 65,536 samples), cuda.herk (every
// sample type), cuda.herk_tc (tensor cores, float samples; the default past them on sm_80+),
// cuda.herk_h3 (f16-split GEMM on Hopper, the default past 512 real lanes) and cuda.herk_i8 (ci8 on
// the integer tensor cores of Hopper) at 1..1024 channels, batches, windows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/cov_checks.hpp"
#include "kafel/bench.hpp"
#include "kafel/cov.hpp"
#include "kafel/error.hpp"
#include "kafel/kernels.hpp"

namespace kafel {
namespace {

const std::vector<DType> kTypes = {DType::f32, DType::c64, DType::ci8, DType::ci16};
const std::vector<DType> kFloatTypes = {DType::f32, DType::c64};
// The tensor-core kernels and what each needs of the GPU.
const std::pair<const char*, Cap> kTensorKernels[] = {{"cuda.herk_tc", Cap::mma_sm80},
                                                      {"cuda.herk_h3", Cap::wgmma_sm90a}};

// The tiled kernel choose_cov picks past cuda.onepass64's 64 lanes or 65,536 samples (past 32
// lanes for integer samples): the tensor-core one for float samples where the GPU has mma.sync.
std::string tiled_default(const Device& d, DType t) {
  const bool floats = t == DType::f32 || t == DType::c64;
  return floats && d.caps.has(Cap::mma_sm80) ? "cuda.herk_tc" : "cuda.herk";
}

std::vector<Device> cuda_devices() {
  std::vector<Device> out;
  for (const Device& d : list_devices())
    if (d.backend == "cuda") out.push_back(d);
  return out;
}

#define REQUIRE_CUDA(devs)                         \
  const std::vector<Device> devs = cuda_devices(); \
  if (devs.empty()) GTEST_SKIP() << "no CUDA device present"

// Every registered covariance kernel (baselines aside), each sample type it takes, on a small
// offset block: a new kernel is tested because it exists. Kernels the GPU cannot run say why.
TEST(CovArrayCuda, EveryRegisteredKernelOnASmallBlock) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs)
    for (const CovKernelInfo& k : cov_kernels(d)) {
      if (k.baseline) continue;
      for (DType t : k.sample_types) {
        const std::int64_t c = k.max_channels ? std::min<std::int64_t>(k.max_channels, 5) : 5;
        auto check = [&](SignalKind kind, std::int64_t n, SampleLayout l, std::int64_t batch) {
          try {
            choose_cov(d, CovDesc{c, n, l, 1, t, batch}, k.name);
          } catch (const Unsupported& e) {
            EXPECT_NE(std::string(e.what()), "") << k.name;  // refused, with the reason
            return;
          }
          test::check_cov_case(d, k.name, kind, t, c, n, l, batch);
        };
        check(SignalKind::Offset, 1001, SampleLayout::Planar, 1);
        check(SignalKind::Random, 333, SampleLayout::Interleaved, 2);
      }
    }
}

// `kafel cov --bench` sets every kernel of ours against one plain read of the block: each own
// kernel, each sample type, at a tiled shape (past the one-pass kernels' lanes where it can),
// verifies and reports a positive read floor and a compute floor.
TEST(CovArrayCuda, EveryOwnKernelBenchesAgainstTheReadFloor) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs)
    for (const CovKernelInfo& k : cov_kernels(d)) {
      if (k.baseline) continue;
      for (DType t : k.sample_types) {
        const std::int64_t c = k.max_channels ? std::min<std::int64_t>(k.max_channels, 40) : 40;
        try {
          choose_cov(d, CovDesc{c, 20000, SampleLayout::Planar, 1, t, 1}, k.name);
        } catch (const Unsupported&) {
          continue;  // EveryRegisteredKernelOnASmallBlock checks the refusal's message
        }
        const test::CovSamples s =
            test::make_cov_samples(SignalKind::Offset, t, c, 20000, SampleLayout::Planar);
        CovBenchOptions o;
        o.reps = 2;
        o.warmup = 1;
        o.e2e_reps = 0;
        const CovBenchRecord r = bench_cov(d, k.name, s.view, o);
        SCOPED_TRACE(k.name + " " + std::string(to_string(t)));
        ASSERT_TRUE(r.ok()) << r.error;
        EXPECT_TRUE(r.verified);
        EXPECT_GT(r.floor_ms, 0);
        EXPECT_GT(r.compute_floor_ms, 0);
        EXPECT_FALSE(r.bound.empty());
      }
    }
}

// The compute floor follows the units the run took: cuda.herk_tc's one 128-lane tile on f16
// parts is set against the f16 peak, on tf32 parts against the tf32 one (Hopper: twice).
TEST(CovArrayCuda, HerkTcComputeFloorFollowsTheSplit) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs) {
    if (!d.caps.has(Cap::wgmma_sm90a)) continue;
    const test::CovSamples s =
        test::make_cov_samples(SignalKind::Offset, DType::f32, 100, 20000, SampleLayout::Planar);
    double floor[2] = {0, 0};
    for (int split : {1, 2}) {  // tf32, f16
      CovBenchOptions o;
      o.reps = 2;
      o.warmup = 1;
      o.e2e_reps = 0;
      o.overrides = {{"SPLIT", split}};
      const CovBenchRecord r = bench_cov(d, "cuda.herk_tc", s.view, o);
      ASSERT_TRUE(r.ok()) << r.error;
      EXPECT_TRUE(r.verified);
      floor[split - 1] = r.compute_floor_ms;
    }
    double tf32 = 0, f16 = 0;
    for (const auto& [name, gflops] : d.tensor_peaks) {
      if (name == "tf32") tf32 = gflops;
      if (name == "f16") f16 = gflops;
    }
    ASSERT_GT(tf32, 0);
    ASSERT_GT(f16, 0);
    EXPECT_GT(floor[1], 0);
    EXPECT_NEAR(floor[0] / floor[1], f16 / tf32, 1e-9) << d.id;
  }
}

// Every channel count that fits 32 real lanes (real up to 32, complex up to 16), layouts,
// batches, one sample; refused past 32 lanes.
TEST(CovArrayCuda, Onepass32EveryChannelCountUpTo32Lanes) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs) {
    test::check_cov_kernel(d, "cuda.onepass32", {DType::f32}, 32, false);
    test::check_cov_kernel(d, "cuda.onepass32", {DType::c64}, 16, false);
    for (std::int64_t c : {18, 24, 31, 32})
      test::check_cov_case(d, "cuda.onepass32", SignalKind::Offset, DType::f32, c, 1001,
                           SampleLayout::Planar);
    EXPECT_THROW(choose_cov(d, CovDesc{33, 1000}, "cuda.onepass32"), Unsupported);
    EXPECT_THROW(
        choose_cov(d, CovDesc{17, 1000, SampleLayout::Planar, 1, DType::c64}, "cuda.onepass32"),
        Unsupported);
  }
}

// Long runs (many flushes per warp, many blocks, a tail stage) with a large common offset, and
// batches spread over the grid's rows.
TEST(CovArrayCuda, Onepass32LongRunsAndBatches) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs) {
    test::check_cov_case(d, "cuda.onepass32", SignalKind::Offset, DType::c64, 16, 1048573,
                         SampleLayout::Planar);
    test::check_cov_case(d, "cuda.onepass32", SignalKind::Offset, DType::f32, 32, 1000003,
                         SampleLayout::Interleaved);
    test::check_cov_case(d, "cuda.onepass32", SignalKind::Random, DType::c64, 13, 300007,
                         SampleLayout::Interleaved, 3);
    test::check_cov_case(d, "cuda.onepass32", SignalKind::Offset, DType::f32, 24, 4099,
                         SampleLayout::Planar, 300);
    // Up to 16 lanes one warp holds every pair (the narrow shape).
    test::check_cov_case(d, "cuda.onepass32", SignalKind::Offset, DType::c64, 8, 1048573,
                         SampleLayout::Planar);
    test::check_cov_case(d, "cuda.onepass32", SignalKind::Offset, DType::f32, 10, 1000003,
                         SampleLayout::Interleaved, 2);
    for (std::int64_t flush : {1, 7})
      for (std::int64_t c : {5, 9})
        test::check_cov_case(d, "cuda.onepass32", SignalKind::Offset, DType::c64, c, 100003,
                             SampleLayout::Planar, 1, 1e-6, Params{{"FLUSH", flush}, {"BPS", 1}});
  }
}

// Every channel count that fits 64 real lanes (real up to 64, complex up to 32: sixteen roles
// over two blocks), layouts, batches, one sample; refused past 64 lanes.
TEST(CovArrayCuda, Onepass64EveryChannelCountUpTo64Lanes) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs) {
    test::check_cov_kernel(d, "cuda.onepass64", {DType::f32}, 64, false);
    test::check_cov_kernel(d, "cuda.onepass64", {DType::c64}, 32, false);
    for (std::int64_t c : {33, 40, 47, 49, 56, 63, 64})
      test::check_cov_case(d, "cuda.onepass64", SignalKind::Offset, DType::f32, c, 1001,
                           SampleLayout::Planar);
    EXPECT_THROW(choose_cov(d, CovDesc{65, 1000}, "cuda.onepass64"), Unsupported);
    EXPECT_THROW(
        choose_cov(d, CovDesc{33, 1000, SampleLayout::Planar, 1, DType::c64}, "cuda.onepass64"),
        Unsupported);
  }
}

// Long runs with a large common offset (many flushes, a tail stage, ranges that are not a
// multiple of the grid), batches over the grid's rows, other flush and grid parameters.
TEST(CovArrayCuda, Onepass64LongRunsAndBatches) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs) {
    test::check_cov_case(d, "cuda.onepass64", SignalKind::Offset, DType::f32, 64, 1048573,
                         SampleLayout::Planar);
    test::check_cov_case(d, "cuda.onepass64", SignalKind::Offset, DType::c64, 32, 1000003,
                         SampleLayout::Interleaved);
    test::check_cov_case(d, "cuda.onepass64", SignalKind::Random, DType::f32, 50, 300007,
                         SampleLayout::Interleaved, 3);
    test::check_cov_case(d, "cuda.onepass64", SignalKind::Offset, DType::c64, 20, 4099,
                         SampleLayout::Planar, 300);
    for (std::int64_t flush : {1, 7})
      for (std::int64_t bps : {1, 3})
        test::check_cov_case(d, "cuda.onepass64", SignalKind::Offset, DType::f32, 61, 100003,
                             SampleLayout::Planar, 1, 1e-6, Params{{"FLUSH", flush}, {"BPS", bps}});
  }
}

// A NaN or an infinity in channel 5 makes exactly its row and column non-finite (every role's
// sums carry it: the diagonal block's, the rectangles', the other triangle's cross terms).
TEST(CovArrayCuda, OnepassRolesNonFiniteSamples) {
  REQUIRE_CUDA(devs);
  const std::int64_t N = 1000, bad = 5;
  for (const Device& d : devs)
    for (auto [kernel, t, C] : {std::tuple{"cuda.onepass32", DType::f32, std::int64_t(32)},
                                std::tuple{"cuda.onepass32", DType::c64, std::int64_t(16)},
                                std::tuple{"cuda.onepass32", DType::f32, std::int64_t(12)},
                                std::tuple{"cuda.onepass32", DType::c64, std::int64_t(6)},
                                std::tuple{"cuda.onepass64", DType::f32, std::int64_t(64)},
                                std::tuple{"cuda.onepass64", DType::c64, std::int64_t(32)}})
      for (float v : {std::nanf(""), INFINITY, -INFINITY}) {
        test::CovSamples s =
            test::make_cov_samples(SignalKind::Random, t, C, N, SampleLayout::Planar);
        const std::int64_t comps = t == DType::c64 ? 2 : 1;
        reinterpret_cast<float*>(s.bytes.data())[(bad * N + 500) * comps] = v;
        CovOptions o;
        o.kernel = kernel;
        const CovResult r = covariance(d, s.view, o);
        for (std::int64_t i = 0; i < C; ++i)
          for (std::int64_t j = 0; j < C; ++j) {
            const bool finite =
                std::isfinite(r.at(i, j)) && (!r.complex() || std::isfinite(r.cov_im[i * C + j]));
            EXPECT_EQ(finite, i != bad && j != bad) << kernel << " " << to_string(t) << " value "
                                                    << v << " at (" << i << ", " << j << ")";
          }
      }
}

TEST(CovArrayCuda, Onepass32Windows) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs)
    for (DType t : kFloatTypes)
      test::check_cov_windows(d, "cuda.onepass32", t, t == DType::c64 ? 16 : 32);
}

TEST(CovArrayCuda, Onepass64Windows) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs)
    for (DType t : kFloatTypes) test::check_cov_windows(d, "cuda.onepass64", t);
}

// cuda.herk_i8 where the GPU has wgmma (refused with the reason elsewhere): every channel
// count, layouts, batches (exact: checked to 1e-12 against the float64 oracle).
TEST(CovArrayCuda, HerkI8EveryChannelCount) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs) {
    const CovDesc ci8{64, 1000, SampleLayout::Planar, 1, DType::ci8};
    if (!d.caps.has(Cap::wgmma_sm90a)) {
      EXPECT_THROW(choose_cov(d, ci8, "cuda.herk_i8"), Unsupported) << d.id;
      continue;
    }
    test::check_cov_kernel(d, "cuda.herk_i8", {DType::ci8});
    EXPECT_THROW(choose_cov(d, CovDesc{64, 1000}, "cuda.herk_i8"), Unsupported);  // f32
  }
}

// Sums past int32: samples at the int8 extremes over more than one GEMM launch (2^24 samples)
// and many int32 ranges, against sums done exactly here (int64, the last step in __int128: a
// float64 two-pass oracle drifts by 1e-10 over 2^24 samples); then random runs and batches.
TEST(CovArrayCuda, HerkI8ExtremesAndLongRuns) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs) {
    if (!d.caps.has(Cap::wgmma_sm90a)) continue;
    const std::int64_t C = 2, N = (1LL << 24) + 4099;
    test::CovSamples s =
        test::make_cov_samples(SignalKind::Random, DType::ci8, C, N, SampleLayout::Planar);
    auto* x = reinterpret_cast<std::int8_t*>(s.bytes.data());
    for (std::int64_t n = 0; n < N; ++n) {
      const bool third = n % 3 == 0;
      x[2 * n] = -128;  // channel 0: (-128, -128) or (-128, 127)
      x[2 * n + 1] = third ? 127 : -128;
      x[2 * (N + n)] = third ? -128 : 127;  // channel 1: (-128, -128) or (127, -128)
      x[2 * (N + n) + 1] = -128;
    }
    // R_ij = (N sum x_i conj(x_j) - sum x_i conj(sum x_j)) / (N (N - 1)), numerators exact.
    std::int64_t sre[C] = {}, sim[C] = {}, qre[C][C] = {}, qim[C][C] = {};
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t i = 0; i < C; ++i) {
        const std::int64_t ar = x[2 * (i * N + n)], ai = x[2 * (i * N + n) + 1];
        sre[i] += ar;
        sim[i] += ai;
        for (std::int64_t j = 0; j < C; ++j) {
          const std::int64_t br = x[2 * (j * N + n)], bi = x[2 * (j * N + n) + 1];
          qre[i][j] += ar * br + ai * bi;
          qim[i][j] += ai * br - ar * bi;
        }
      }
    CovOptions o;
    o.kernel = "cuda.herk_i8";
    const CovResult got = covariance(d, s.view, o);
    const long double den = static_cast<long double>(N) * static_cast<long double>(N - 1);
    for (std::int64_t i = 0; i < C; ++i)
      for (std::int64_t j = 0; j < C; ++j) {
        const __int128 re =
            __int128(N) * qre[i][j] - (__int128(sre[i]) * sre[j] + __int128(sim[i]) * sim[j]);
        const __int128 im =
            __int128(N) * qim[i][j] - (__int128(sim[i]) * sre[j] - __int128(sre[i]) * sim[j]);
        const double want_re = double(static_cast<long double>(re) / den);
        const double want_im = double(static_cast<long double>(im) / den);
        EXPECT_NEAR(got.cov[i * C + j], want_re, 1e-13 * std::abs(want_re) + 1e-9) << i << j;
        EXPECT_NEAR(got.cov_im[i * C + j], want_im, 1e-13 * std::abs(want_im) + 1e-9) << i << j;
      }
    test::check_cov_case(d, "cuda.herk_i8", SignalKind::Random, DType::ci8, 40, 300007,
                         SampleLayout::Interleaved);
    test::check_cov_case(d, "cuda.herk_i8", SignalKind::Offset, DType::ci8, 130, 5003,
                         SampleLayout::Planar, 3);
  }
}

TEST(CovArrayCuda, HerkEveryTypeAndChannelCount) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs) test::check_cov_kernel(d, "cuda.herk", kTypes);
}

// The tensor-core kernels, each where the GPU has what it needs (refused with the reason
// elsewhere): cuda.herk_tc with mma.sync, cuda.herk_h3 with wgmma.
TEST(CovArrayCuda, TensorKernelsEveryTypeAndChannelCount) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs)
    for (const auto& [kernel, need] : kTensorKernels) {
      if (!d.caps.has(need)) {
        EXPECT_THROW(choose_cov(d, CovDesc{64, 1000}, kernel), Unsupported) << d.id << kernel;
        continue;
      }
      test::check_cov_kernel(d, kernel, kFloatTypes);
    }
}

TEST(CovArrayCuda, HerkTcOffsetMeanLongRunsAndBatches) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs) {
    if (!d.caps.has(Cap::mma_sm80)) continue;
    test::check_cov_case(d, "cuda.herk_tc", SignalKind::Offset, DType::c64, 64, 1048576,
                         SampleLayout::Interleaved);
    test::check_cov_case(d, "cuda.herk_tc", SignalKind::Offset, DType::c64, 33, 1048573,
                         SampleLayout::Planar);
    test::check_cov_case(d, "cuda.herk_tc", SignalKind::Offset, DType::f32, 256, 65537,
                         SampleLayout::Planar);
    test::check_cov_case(d, "cuda.herk_tc", SignalKind::Offset, DType::f32, 100, 300007,
                         SampleLayout::Interleaved);
    test::check_cov_case(d, "cuda.herk_tc", SignalKind::Random, DType::c64, 64, 4096,
                         SampleLayout::Planar, 256);
    test::check_cov_case(d, "cuda.herk_tc", SignalKind::Offset, DType::f32, 17, 1001,
                         SampleLayout::Interleaved, 7);
  }
}

// Both lane tiles on every shape class: one tile partly filled, diagonal and off-diagonal tiles,
// lanes past the last tile, complex lanes across a tile edge, chunk tails, batches.
TEST(CovArrayCuda, HerkTcBothTileSizes) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs) {
    if (!d.caps.has(Cap::mma_sm80)) continue;
    for (std::int64_t tile : {1, 2}) {  // TILE=64, TILE=128
      const Params p{{"TILE", tile}};
      try {
        choose_cov(d, CovDesc{300, 1000}, "cuda.herk_tc", p);
      } catch (const Unsupported& e) {
        std::printf("[ skipped  ] %s TILE=%s: %s\n", d.id.c_str(), tile == 1 ? "64" : "128",
                    e.what());
        continue;
      }
      for (DType t : kFloatTypes)
        for (std::int64_t c : {1, 31, 64, 65, 127, 129, 300})
          for (SampleLayout l : {SampleLayout::Planar, SampleLayout::Interleaved}) {
            test::check_cov_case(d, "cuda.herk_tc", SignalKind::Offset, t, c, 1000 + 33, l, 1, 1e-6,
                                 p);
            test::check_cov_case(d, "cuda.herk_tc", SignalKind::Random, t, c, 95, l, 3, 1e-6, p);
          }
      test::check_cov_case(d, "cuda.herk_tc", SignalKind::Offset, DType::f32, 200, 200003,
                           SampleLayout::Planar, 1, 1e-6, p);
    }
  }
}

// Channel `bad` of a random C x N planar block gets `v` in its middle sample; expects exactly
// that channel's row and column of the result non-finite. False where the kernel refuses the
// case (Unsupported).
bool only_channel_non_finite(const Device& d, const std::string& kernel, const Params& p, DType t,
                             std::int64_t C, std::int64_t N, std::int64_t bad, float v) {
  test::CovSamples s = test::make_cov_samples(SignalKind::Random, t, C, N, SampleLayout::Planar);
  const std::int64_t comps = t == DType::c64 ? 2 : 1;
  reinterpret_cast<float*>(s.bytes.data())[(bad * N + N / 2) * comps] = v;
  CovOptions o;
  o.kernel = kernel;
  o.params = p;
  CovResult r;
  try {
    r = covariance(d, s.view, o);
  } catch (const Unsupported&) {
    return false;
  }
  for (std::int64_t i = 0; i < C; ++i)
    for (std::int64_t j = 0; j < C; ++j) {
      const bool finite =
          std::isfinite(r.at(i, j)) && (!r.complex() || std::isfinite(r.cov_im[i * C + j]));
      EXPECT_EQ(finite, i != bad && j != bad) << d.id << " " << kernel << " " << to_string(t)
                                              << " value " << v << " at (" << i << ", " << j << ")";
    }
  return true;
}

// The one 64-lane tile (at most 64 real lanes) on both engines, MMA=sync (mma.sync, sm_80+) and
// MMA=wgmma (sm_90a; refused elsewhere with the reason): every lane count of a warp's rows and
// of complex channel pairs, chunk tails and one-chunk ranges, long runs split over the SMs with
// offset means, both layouts, batches; a NaN or an infinity makes exactly its channel's row and
// column non-finite; MMA=wgmma is refused past one tile.
TEST(CovArrayCuda, HerkTcOneTileOnBothEngines) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs) {
    if (!d.caps.has(Cap::mma_sm80)) continue;
    for (std::int64_t mma : {1, 2}) {  // sync, wgmma
      const Params p{{"MMA", mma}};
      const char* name = mma == 1 ? "sync" : "wgmma";
      try {
        choose_cov(d, CovDesc{64, 1000}, "cuda.herk_tc", p);
      } catch (const Unsupported& e) {
        EXPECT_EQ(mma, 2) << d.id << ": " << e.what();
        std::printf("[ skipped  ] %s MMA=%s: %s\n", d.id.c_str(), name, e.what());
        continue;
      }
      EXPECT_THROW(choose_cov(d, CovDesc{65, 1000}, "cuda.herk_tc", {{"MMA", 2}}), Unsupported);
      for (DType t : kFloatTypes) {
        const std::int64_t comps = t == DType::c64 ? 2 : 1;
        for (std::int64_t lanes : {1, 2, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48, 56, 63, 64}) {
          if (lanes % comps) continue;
          const std::int64_t c = lanes / comps;
          for (SampleLayout l : {SampleLayout::Planar, SampleLayout::Interleaved}) {
            test::check_cov_case(d, "cuda.herk_tc", SignalKind::Offset, t, c, 2, l, 1, 1e-6, p);
            test::check_cov_case(d, "cuda.herk_tc", SignalKind::Offset, t, c, 1000 + 33, l, 1, 1e-6,
                                 p);
            test::check_cov_case(d, "cuda.herk_tc", SignalKind::Random, t, c, 95, l, 3, 1e-6, p);
          }
        }
        for (std::int64_t n : {31, 32, 33, 64, 65, 191, 193, 4099})
          test::check_cov_case(d, "cuda.herk_tc", SignalKind::Offset, t, 32 / comps, n,
                               SampleLayout::Planar, 2, 1e-6, p);
        test::check_cov_case(d, "cuda.herk_tc", SignalKind::Offset, t, 64 / comps, 1048573,
                             SampleLayout::Planar, 1, 1e-6, p);
        test::check_cov_case(d, "cuda.herk_tc", SignalKind::Offset, t, 40 / comps, 16411,
                             SampleLayout::Interleaved, 37, 1e-6, p);
        for (float v : {std::nanf(""), INFINITY, -INFINITY})
          EXPECT_TRUE(only_channel_non_finite(d, "cuda.herk_tc", p, t, 48 / comps, 5000, 13, v));
      }
    }
  }
}

// A NaN or an infinity in one sample of channel 37 makes exactly that channel's row and column
// non-finite, on both tiles (the split keeps them: big may lose a NaN, small may not) and through
// the f16 split (the lane's scale stays 1, its parts NaN or infinite).
TEST(CovArrayCuda, HerkTcNonFiniteSamples) {
  REQUIRE_CUDA(devs);
  const std::int64_t C = 100, N = 1000, bad = 37;
  struct Variant {
    const char* kernel;
    Params params;
  };
  const Variant variants[] = {
      {"cuda.herk_tc", {{"TILE", 1}}}, {"cuda.herk_tc", {{"TILE", 2}}}, {"cuda.herk_h3", {}}};
  for (const Device& d : devs) {
    if (!d.caps.has(Cap::mma_sm80)) continue;
    for (const Variant& variant : variants)
      for (DType t : kFloatTypes)
        for (float v : {std::nanf(""), INFINITY, -INFINITY})
          // TILE=128 and the f16 split are refused without wgmma.
          only_channel_non_finite(d, variant.kernel, variant.params, t, C, N, bad, v);
  }
}

// Relative Frobenius error of a kernel's covariance of s (real and imaginary parts) against
// float64.
double cov_error(const Device& d, const std::string& kernel, const Params& p,
                 const test::CovSamples& s) {
  CovOptions o;
  o.kernel = kernel;
  o.params = p;
  const CovResult r = covariance(d, s.view, o);
  const CovResult ref = reference_covariance(s.view);
  double err = 0, norm = 0;
  for (std::size_t i = 0; i < ref.cov.size(); ++i) {
    err += (r.cov[i] - ref.cov[i]) * (r.cov[i] - ref.cov[i]);
    norm += ref.cov[i] * ref.cov[i];
    if (r.complex()) {
      err += (r.cov_im[i] - ref.cov_im[i]) * (r.cov_im[i] - ref.cov_im[i]);
      norm += ref.cov_im[i] * ref.cov_im[i];
    }
  }
  return std::sqrt(err / norm);
}

// C complex channels x N samples that break a lane scale taken from the first samples, in every
// other channel: growth by 1e4 from sample 9000 on (kind 0), or `silent` first samples of zero
// and the rest 1e-6 times smaller (kind 1).
test::CovSamples scale_breaking_samples(std::int64_t C, std::int64_t N, int kind,
                                        std::int64_t silent) {
  test::CovSamples s =
      test::make_cov_samples(SignalKind::Random, DType::c64, C, N, SampleLayout::Planar);
  auto* x = reinterpret_cast<float*>(s.bytes.data());
  for (std::int64_t c = 0; c < C; c += 2)
    for (std::int64_t i = 0; i < 2 * N; ++i) {
      float& v = x[c * 2 * N + i];
      if (kind == 0 && i >= 2 * 9000) v *= 1e4f;
      if (kind == 1) v = i < 2 * silent ? 0.0f : v * 1e-6f;
    }
  return s;
}

// C real channels x N samples, channel c scaled by magnitude * 2^(c % 7): lanes of different
// scales side by side.
test::CovSamples scaled_samples(std::int64_t C, std::int64_t N, float magnitude) {
  test::CovSamples s =
      test::make_cov_samples(SignalKind::Random, DType::f32, C, N, SampleLayout::Planar);
  auto* x = reinterpret_cast<float*>(s.bytes.data());
  for (std::int64_t c = 0; c < C; ++c)
    for (std::int64_t i = 0; i < N; ++i) x[c * N + i] *= magnitude * float(1 << (c % 7));
  return s;
}

// The one 128-lane tile with both splits, SPLIT=tf32 and SPLIT=f16 (sm_90a; refused elsewhere
// and on 64-lane tiles): lane counts around the warpgroups' rows, chunk tails and odd items, short
// and long runs with offset means, both layouts, batches, flushes of one and of an odd count of
// chunks; lanes of many magnitudes (for f16 from 1e-30 to 1e30: each lane its own scale) and
// the two cases where the f16 split's scale from the first samples does not hold (growth past
// 2^8, silent first samples), which the tf32 split then computes; a NaN or an infinity makes
// exactly its channel's row and column non-finite.
TEST(CovArrayCuda, HerkTcOne128LaneTileBothSplits) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs) {
    if (!d.caps.has(Cap::mma_sm80)) continue;
    for (std::int64_t split : {1, 2}) {  // tf32, f16
      const Params p{{"SPLIT", split}};
      try {
        choose_cov(d, CovDesc{100, 1000}, "cuda.herk_tc", p);
      } catch (const Unsupported& e) {
        EXPECT_FALSE(d.caps.has(Cap::wgmma_sm90a)) << d.id << ": " << e.what();
        std::printf("[ skipped  ] %s SPLIT=%s: %s\n", d.id.c_str(), split == 1 ? "tf32" : "f16",
                    e.what());
        continue;
      }
      if (split == 2) {
        EXPECT_NO_THROW(choose_cov(d, CovDesc{129, 1000}, "cuda.herk_tc", p));
        EXPECT_THROW(choose_cov(d, CovDesc{64, 1000}, "cuda.herk_tc", p), Unsupported);
        EXPECT_THROW(choose_cov(d, CovDesc{100, 1000}, "cuda.herk_tc", {{"SPLIT", 2}, {"TILE", 1}}),
                     Unsupported);
      }
      for (DType t : kFloatTypes) {
        const std::int64_t comps = t == DType::c64 ? 2 : 1;
        for (std::int64_t lanes : {66, 100, 128}) {
          const std::int64_t c = lanes / comps;
          for (SampleLayout l : {SampleLayout::Planar, SampleLayout::Interleaved}) {
            test::check_cov_case(d, "cuda.herk_tc", SignalKind::Offset, t, c, 2, l, 1, 1e-6, p);
            test::check_cov_case(d, "cuda.herk_tc", SignalKind::Offset, t, c, 1000 + 33, l, 1, 1e-6,
                                 p);
            test::check_cov_case(d, "cuda.herk_tc", SignalKind::Random, t, c, 95, l, 3, 1e-6, p);
          }
        }
        for (std::int64_t n : {31, 33, 64, 65, 97, 4099})
          test::check_cov_case(d, "cuda.herk_tc", SignalKind::Offset, t, 100 / comps, n,
                               SampleLayout::Planar, 2, 1e-6, p);
        for (std::int64_t flush : {1, 3})
          test::check_cov_case(d, "cuda.herk_tc", SignalKind::Offset, t, 128 / comps, 20011,
                               SampleLayout::Planar, 1, 1e-6, {{"SPLIT", split}, {"FLUSH", flush}});
        test::check_cov_case(d, "cuda.herk_tc", SignalKind::Offset, t, 128 / comps,
                             comps == 2 ? 1048573 : 262147, SampleLayout::Planar, 1, 1e-6, p);
        test::check_cov_case(d, "cuda.herk_tc", SignalKind::Offset, t, 80 / comps, 16411,
                             SampleLayout::Interleaved, 37, 1e-6, p);
        test::check_cov_case(d, "cuda.herk_tc", SignalKind::Offset, t, 40 / comps, 5003,
                             SampleLayout::Planar, 2, 1e-6, {{"SPLIT", split}, {"TILE", 2}});
        for (float v : {std::nanf(""), INFINITY, -INFINITY})
          EXPECT_TRUE(only_channel_non_finite(d, "cuda.herk_tc", p, t, 100 / comps, 5000, 13, v));
      }
      // Growth past 2^8 times the first samples after sample 9000, and channels whose first
      // 100 samples are silent: every other channel pair of 50 complex channels.
      for (int kind = 0; kind < 2; ++kind)
        EXPECT_LE(cov_error(d, "cuda.herk_tc", p, scale_breaking_samples(50, 20000, kind, 100)),
                  1e-6)
            << d.id << " SPLIT " << split << (kind ? " silent start" : " growth");
      // Only the f16 split scales its lanes: the tf32 one keeps float's range for the products
      // (|x - pilot| from about 1e-19 to 1e19), as the kernels that sum in float do.
      for (float magnitude : {1e-30f, 1e-6f, 1e6f, 1e30f}) {
        if (split == 1 && (magnitude < 1e-20f || magnitude > 1e20f)) continue;
        EXPECT_LE(cov_error(d, "cuda.herk_tc", p, scaled_samples(100, 5000, magnitude)), 1e-6)
            << d.id << " SPLIT " << split << " magnitude " << magnitude;
      }
    }
  }
}

// Launches of several 128-lane tiles with both splits (sm_90a): the f16 split's off-diagonal
// tiles take one chunk of both panels an item, their lanes' scales found by every block that
// reads them. Lane counts of two and three tile rows, the last one full or part-filled, chunk
// tails, long runs with offset means, batches, flushes of one and of an odd count of chunks;
// lanes of many magnitudes in every tile, scales from the first samples that do not hold in
// lanes of every tile row (the tf32 split then computes the block), and a NaN or an infinity in
// a lane of the second tile row.
TEST(CovArrayCuda, HerkTcManyTilesBothSplits) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs) {
    if (!d.caps.has(Cap::wgmma_sm90a)) continue;
    for (std::int64_t split : {1, 2}) {  // tf32, f16
      const Params p{{"SPLIT", split}};
      const char* name = split == 1 ? " SPLIT tf32" : " SPLIT f16";
      for (DType t : kFloatTypes) {
        const std::int64_t comps = t == DType::c64 ? 2 : 1;
        for (std::int64_t lanes : {130, 256, 300, 384})
          for (SampleLayout l : {SampleLayout::Planar, SampleLayout::Interleaved}) {
            test::check_cov_case(d, "cuda.herk_tc", SignalKind::Offset, t, lanes / comps, 2, l, 1,
                                 1e-6, p);
            test::check_cov_case(d, "cuda.herk_tc", SignalKind::Offset, t, lanes / comps, 1033, l,
                                 1, 1e-6, p);
            test::check_cov_case(d, "cuda.herk_tc", SignalKind::Random, t, lanes / comps, 95, l, 3,
                                 1e-6, p);
          }
        for (std::int64_t n : {31, 33, 65, 97, 4099})
          test::check_cov_case(d, "cuda.herk_tc", SignalKind::Offset, t, 300 / comps, n,
                               SampleLayout::Planar, 2, 1e-6, p);
        for (std::int64_t flush : {1, 3})
          test::check_cov_case(d, "cuda.herk_tc", SignalKind::Offset, t, 136 / comps, 20011,
                               SampleLayout::Planar, 1, 1e-6, {{"SPLIT", split}, {"FLUSH", flush}});
        test::check_cov_case(d, "cuda.herk_tc", SignalKind::Offset, t, 160 / comps, 65599,
                             SampleLayout::Planar, 1, 1e-6, p);
        test::check_cov_case(d, "cuda.herk_tc", SignalKind::Offset, t, 144 / comps, 4099,
                             SampleLayout::Interleaved, 5, 1e-6, p);
        for (float v : {std::nanf(""), INFINITY, -INFINITY})
          EXPECT_TRUE(
              only_channel_non_finite(d, "cuda.herk_tc", p, t, 300 / comps, 5000, 200 / comps, v));
      }
      for (int kind = 0; kind < 2; ++kind)
        EXPECT_LE(cov_error(d, "cuda.herk_tc", p, scale_breaking_samples(150, 20000, kind, 100)),
                  1e-6)
            << d.id << name << (kind ? " silent start" : " growth");
      for (float magnitude : {1e-30f, 1e-6f, 1e6f, 1e30f}) {
        if (split == 1 && (magnitude < 1e-20f || magnitude > 1e20f)) continue;
        EXPECT_LE(cov_error(d, "cuda.herk_tc", p, scaled_samples(300, 5000, magnitude)), 1e-6)
            << d.id << name << " magnitude " << magnitude;
      }
    }
  }
}

// Long runs (several sample ranges, each of at most 8192 samples in float), offset means, tails
// that are not whole k-tiles, lanes that are not whole tiles, batches, given split counts, and
// samples of every magnitude (each lane takes its own power-of-two scale).
TEST(CovArrayCuda, HerkH3LongRunsScalesAndBatches) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs) {
    if (!d.caps.has(Cap::wgmma_sm90a)) continue;
    const std::string k = "cuda.herk_h3";
    test::check_cov_case(d, k, SignalKind::Offset, DType::f32, 300, 65537, SampleLayout::Planar);
    test::check_cov_case(d, k, SignalKind::Offset, DType::c64, 33, 1048573, SampleLayout::Planar);
    test::check_cov_case(d, k, SignalKind::Offset, DType::c64, 300, 20011,
                         SampleLayout::Interleaved);
    test::check_cov_case(d, k, SignalKind::Random, DType::c64, 64, 4096, SampleLayout::Planar, 5);
    // More than 256 ranges of 8192 samples: the ranges grow (the GEMM takes at most 256).
    test::check_cov_case(d, k, SignalKind::Offset, DType::c64, 4, 2500003, SampleLayout::Planar);
    for (std::int64_t splits : {1, 7, 32})
      test::check_cov_case(d, k, SignalKind::Offset, DType::f32, 129, 40001, SampleLayout::Planar,
                           1, 1e-6, {{"SPLITK", splits}});
    // Scales from the first 8192 samples that later samples break: growth past 2^8 (overflow
    // of the scaled value), and silent first samples (no scale to take): both redo the block
    // with exact peaks.
    for (int kind = 0; kind < 2; ++kind)
      EXPECT_LE(cov_error(d, k, {}, scale_breaking_samples(40, 20000, kind, 8192)), 1e-6)
          << d.id << (kind ? " silent start" : " growth");
    for (float magnitude : {1e-30f, 1e-6f, 1e6f, 1e30f})
      EXPECT_LE(cov_error(d, k, {}, scaled_samples(40, 5000, magnitude)), 1e-6)
          << d.id << " magnitude " << magnitude;
  }
}

// Past four rows of 128-lane tiles (512 real lanes), Hopper takes the f16-split GEMM; up to
// there cuda.herk_tc's f16 tiles (513 real channels, 257 complex).
TEST(CovArrayCuda, HerkH3IsTheDefaultPast512Lanes) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs) {
    if (!d.caps.has(Cap::wgmma_sm90a)) continue;
    EXPECT_EQ(choose_cov(d, CovDesc{1024, 1000}).kernel, "cuda.herk_h3");
    EXPECT_EQ(choose_cov(d, CovDesc{513, 1000}).kernel, "cuda.herk_h3");
    EXPECT_EQ(choose_cov(d, CovDesc{257, 1000, SampleLayout::Planar, 1, DType::c64}).kernel,
              "cuda.herk_h3");
    EXPECT_EQ(choose_cov(d, CovDesc{512, 1000}).kernel, "cuda.herk_tc");
    EXPECT_EQ(choose_cov(d, CovDesc{256, 1000}).kernel, "cuda.herk_tc");
    EXPECT_EQ(choose_cov(d, CovDesc{256, 1000, SampleLayout::Planar, 1, DType::c64}).kernel,
              "cuda.herk_tc");
    EXPECT_EQ(choose_cov(d, CovDesc{64, 1000, SampleLayout::Planar, 1, DType::c64}).kernel,
              "cuda.herk_tc");
  }
}

TEST(CovArrayCuda, TensorKernelsWindows) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs)
    for (const auto& [kernel, need] : kTensorKernels)
      if (d.caps.has(need))
        for (DType t : kFloatTypes) test::check_cov_windows(d, kernel, t);
}

TEST(CovArrayCuda, HerkOffsetMeanLongRuns) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs) {
    test::check_cov_case(d, "cuda.herk", SignalKind::Offset, DType::c64, 64, 1048576,
                         SampleLayout::Interleaved);
    test::check_cov_case(d, "cuda.herk", SignalKind::Offset, DType::f32, 256, 65537,
                         SampleLayout::Planar);
    test::check_cov_case(d, "cuda.herk", SignalKind::Offset, DType::ci8, 64, 262147,
                         SampleLayout::Planar);
    test::check_cov_case(d, "cuda.herk", SignalKind::Random, DType::c64, 64, 4096,
                         SampleLayout::Planar, 256);
  }
}

TEST(CovArrayCuda, HerkWindows) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs)
    for (DType t : kTypes) test::check_cov_windows(d, "cuda.herk", t);
}

TEST(CovArrayCuda, TiledIsTheDefaultPastTheOnePassKernels) {
  REQUIRE_CUDA(devs);
  for (const Device& d : devs) {
    EXPECT_EQ(choose_cov(d, CovDesc{10, 1000}).kernel, "cuda.onepass");
    EXPECT_EQ(choose_cov(d, CovDesc{24, 1000}).kernel, "cuda.onepass32");
    EXPECT_EQ(choose_cov(d, CovDesc{100, 1000}).kernel, tiled_default(d, DType::f32));
    EXPECT_EQ(choose_cov(d, CovDesc{16, 1000, SampleLayout::Planar, 1, DType::c64}).kernel,
              "cuda.onepass32");
    EXPECT_EQ(choose_cov(d, CovDesc{17, 1000, SampleLayout::Planar, 1, DType::c64}).kernel,
              "cuda.onepass64");
    EXPECT_EQ(choose_cov(d, CovDesc{33, 1000}).kernel, "cuda.onepass64");
    EXPECT_EQ(choose_cov(d, CovDesc{64, 1000}).kernel, "cuda.onepass64");
    // cuda.onepass64 up to 65,536 samples over all batches, the tensor-core kernel past them.
    EXPECT_EQ(choose_cov(d, CovDesc{64, 65536}).kernel, "cuda.onepass64");
    EXPECT_EQ(choose_cov(d, CovDesc{64, 65537}).kernel, tiled_default(d, DType::f32));
    EXPECT_EQ(choose_cov(d, CovDesc{64, 2048, SampleLayout::Planar, 1, DType::f32, 32}).kernel,
              "cuda.onepass64");
    EXPECT_EQ(choose_cov(d, CovDesc{64, 2048, SampleLayout::Planar, 1, DType::f32, 33}).kernel,
              tiled_default(d, DType::f32));
    EXPECT_EQ(choose_cov(d, CovDesc{64, 1048576}).kernel, tiled_default(d, DType::f32));
    EXPECT_EQ(choose_cov(d, CovDesc{64, 4096, SampleLayout::Planar, 1, DType::f32, 256}).kernel,
              tiled_default(d, DType::f32));
    EXPECT_EQ(choose_cov(d, CovDesc{65, 1000}).kernel, tiled_default(d, DType::f32));
    EXPECT_EQ(choose_cov(d, CovDesc{32, 1000, SampleLayout::Planar, 1, DType::c64}).kernel,
              "cuda.onepass64");
    EXPECT_EQ(choose_cov(d, CovDesc{33, 1000, SampleLayout::Planar, 1, DType::c64}).kernel,
              tiled_default(d, DType::c64));
    EXPECT_EQ(choose_cov(d, CovDesc{10, 1000, SampleLayout::Planar, 1, DType::f32, 4}).kernel,
              "cuda.onepass32");
    EXPECT_EQ(choose_cov(d, CovDesc{64, 1000, SampleLayout::Planar, 1, DType::ci8}).kernel,
              d.caps.has(Cap::wgmma_sm90a) ? "cuda.herk_i8" : "cuda.herk");
    EXPECT_EQ(choose_cov(d, CovDesc{8, 1000, SampleLayout::Planar, 1, DType::ci8}).kernel,
              "cuda.herk");
    EXPECT_EQ(choose_cov(d, CovDesc{64, 4096, SampleLayout::Planar, 1, DType::ci8, 16}).kernel,
              "cuda.herk");
  }
}

}  // namespace
}  // namespace kafel
