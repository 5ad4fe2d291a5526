// The measured CPU peak: the probe is bounded (< 1 s) and sane, the device reports what it
// measured (peaks, bandwidth, dot-product capabilities), and the cache lives beside the DB.
#include <gtest/gtest.h>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <string>

#include "common/tuning_db_scope.hpp"
#include "core/tuning_db.hpp"
#include "cpu/cpu_features.hpp"
#include "cpu/peak.hpp"
#include "kafel/device.hpp"

namespace kafel {
namespace {

// Far above any CPU kafel may meet: 2 x 512-bit FMA pipes (64 f32 FLOP/cycle) at 6 GHz.
double generous_f32_bound() {
  return cpu::physical_cores() * 64.0 * 6.0;
}

TEST(PeakProbe, IsBoundedAndSane) {
  const cpu::PeakMeasurement m = cpu::measure_peak();
  EXPECT_LT(m.seconds, 1.0);
  EXPECT_EQ(m.threads, cpu::physical_cores());
  EXPECT_GT(m.f32, 0.5);  // even a generic build on a busy machine does this much
  EXPECT_LT(m.f32, generous_f32_bound());
  EXPECT_GT(m.f64, 0.25);
  EXPECT_LT(m.f64, 0.75 * m.f32 + 1.0) << "f64 is half of f32 per FMA on every CPU kafel knows";
  // 0 = unmeasured: a machine too busy to touch the buffer in time (the deadline).
  EXPECT_GE(m.read_gbs, 0.0);
  EXPECT_LT(m.read_gbs, 5000.0);
  // bf16 and i8 are measured exactly where a micro-kernel uses their instruction.
  EXPECT_EQ(m.bf16 > 0, cpu::cpu_has_avx512_bf16() && cpu::isa_supported(cpu::Isa::avx512));
  EXPECT_EQ(m.i8 > 0, cpu::cpu_has_avx512_vnni() || (cpu::isa_supported(cpu::Isa::avx2) &&
                                                     !cpu::isa_supported(cpu::Isa::avx512)));
  if (m.bf16 > 0) {
    EXPECT_LT(m.bf16, 4 * generous_f32_bound());
  }
  if (m.i8 > 0) {
    EXPECT_LT(m.i8, 8 * generous_f32_bound());
  }
  // AMX tiles: measured exactly where the tile micro-kernels may run; a core's tile unit does
  // 1024 bf16 / 2048 i8 operations per cycle (Sapphire Rapids on), at most 6 GHz.
  EXPECT_EQ(m.amx_bf16 > 0, cpu::cpu_has_amx());
  EXPECT_EQ(m.amx_i8 > 0, cpu::cpu_has_amx());
  EXPECT_LT(m.amx_bf16, cpu::physical_cores() * 1024.0 * 6.0);
  EXPECT_LT(m.amx_i8, cpu::physical_cores() * 2048.0 * 6.0);
  EXPECT_EQ(m.source, "measured now");
}

#if defined(__linux__)
// The probe pins the calling thread to a core while it runs; the thread pool's workers, made
// later by that thread, inherit its mask, so it must be the caller's own again afterwards.
TEST(PeakProbe, LeavesTheCallersAffinityAsItWas) {
  cpu_set_t before, after;
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(before), &before), 0);
  (void)cpu::measure_compute_peak(0.02);
  (void)cpu::measure_peak(0.02);
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(after), &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}
#endif

TEST(PeakProbe, ATinyBudgetStillMeasures) {
  const cpu::PeakMeasurement m = cpu::measure_peak(0.02);
  EXPECT_GT(m.f32, 0);
  EXPECT_GT(m.f64, 0);
  EXPECT_LT(m.seconds, 1.0);
}

TEST(PeakProbe, DeviceReportsTheMeasurement) {
  const Device d = select_device("cpu");
  const cpu::PeakMeasurement& m = cpu::machine_peak();
  if (m.f32 <= 0) GTEST_SKIP() << "no measurement: " << m.source;
  EXPECT_EQ(d.peak_gflops_f32, m.f32);
  EXPECT_EQ(d.peak_gflops_f64, m.f64);
  EXPECT_EQ(d.bandwidth_gbs, m.read_gbs);
  double bf16 = 0, i8 = 0;
  for (const auto& [name, value] : d.tensor_peaks) {
    if (name == "bf16") bf16 = value;
    if (name == "i8") i8 = value;
  }
  // bf16 and i8 GEMMs are priced on the unit they run on: AMX tiles where the CPU has them,
  // else vdpbf16ps only where it pays and the i8 dot-product instruction.
  const bool tiles = cpu::cpu_has_amx() && m.amx_bf16 > 0;
  EXPECT_EQ(bf16, tiles ? m.amx_bf16 : cpu::cpu_bf16_dot_pays() ? m.bf16 : 0.0);
  EXPECT_EQ(i8, tiles ? m.amx_i8 : m.i8);
  // "% peak" of bf16 / i8 GEMMs uses these figures where they exist.
  GemmTypes t = DType::i8;
  EXPECT_EQ(d.peak_gflops(t), i8 > 0 ? i8 : m.f32);
  GemmTypes bf = DType::bf16;
  bf.c = DType::f32;
  EXPECT_EQ(d.peak_gflops(bf), bf16 > 0 ? bf16 : m.f32);
}

TEST(PeakProbe, ProbeNowReplacesTheCachedFigures) {
  Device d = select_device("cpu");
  const std::size_t details = d.details.size(), tensor_peaks = d.tensor_peaks.size();
  ASSERT_TRUE(probe_peak(d));
  EXPECT_GT(d.peak_gflops_f32, 0.5);
  EXPECT_LT(d.peak_gflops_f32, generous_f32_bound());
  EXPECT_GT(d.peak_gflops_f64, 0.25);
  EXPECT_LT(d.peak_gflops_f64, 0.75 * d.peak_gflops_f32 + 1.0);
  // The dot-product figures are replaced, not listed twice; one line says what was probed.
  EXPECT_LE(d.tensor_peaks.size(), std::max<std::size_t>(tensor_peaks, 2));
  ASSERT_EQ(d.details.size(), details + 1);
  EXPECT_EQ(d.details.back().first, "peak probed");
  const cpu::PeakMeasurement m = cpu::measure_compute_peak(0.02);
  EXPECT_EQ(m.read_gbs, 0.0) << "the run probe leaves the bandwidth alone";
  EXPECT_LT(m.seconds, 0.5);
}

TEST(PeakProbe, DotProductCapabilitiesFollowCpuid) {
  const Device d = select_device("cpu");
  EXPECT_EQ(d.caps.has(Cap::avx512_bf16), cpu::cpu_has_avx512_bf16());
  EXPECT_EQ(d.caps.has(Cap::avx512_vnni), cpu::cpu_has_avx512_vnni());
  EXPECT_EQ(d.caps.has(Cap::avx512), cpu::isa_supported(cpu::Isa::avx512));
  EXPECT_EQ(d.caps.has(Cap::amx), cpu::cpu_has_amx());
  if (cpu::cpu_has_amx()) {
    EXPECT_TRUE(cpu::isa_supported(cpu::Isa::avx512)) << "the tile kernels' epilogue is AVX-512";
  }
  // The extensions are offered only on top of AVX-512 kernels.
  if (cpu::cpu_has_avx512_bf16() || cpu::cpu_has_avx512_vnni()) {
    EXPECT_TRUE(cpu::isa_supported(cpu::Isa::avx512));
  }
  const cpu::CpuIdent& id = cpu::cpu_ident();
#if defined(__x86_64__)
  EXPECT_FALSE(id.vendor.empty());
  EXPECT_GT(id.family, 0);
#endif
}

TEST(PeakProbe, CacheLivesBesideTheTuningDatabase) {
  {
    test::TuningDbScope scope("/tmp/kafel-peak-test/tuning.json");
    EXPECT_EQ(cpu::peak_cache_path(), "/tmp/kafel-peak-test/cpu_peak.json");
  }
  const std::string key = cpu::machine_key();
  EXPECT_NE(key.find(std::to_string(cpu::physical_cores()) + " cores"), std::string::npos);
}

}  // namespace
}  // namespace kafel
