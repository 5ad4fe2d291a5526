// The CPU facts every CPU kernel shares: one ISA rule for the GEMM micro-kernels and the
// covariance workers, the device's clock and peak, and the pool's parallel_parts.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/thread_pool.hpp"
#include "cpu/cov_fast.hpp"
#include "cpu/cpu_features.hpp"
#include "cpu/peak.hpp"
#include "cpu/ukernel.hpp"
#include "kafel/bench.hpp"
#include "kafel/cov.hpp"
#include "kafel/error.hpp"
#include "kafel/signal.hpp"

namespace kafel {
namespace {

using cpu::Isa;

std::string detail(const Device& d, const std::string& key) {
  for (const auto& [k, v] : d.details)
    if (k == key) return v;
  return {};
}

// Whatever this CPU has, cpu.packed and cpu.fast accept and refuse the same ISAs, and "auto"
// picks the same one for both.
TEST(CpuFeatures, GemmAndCovarianceAgreeOnEveryIsa) {
  const char* worker_name[] = {"", "portable", "avx2", "avx512"};
  for (Isa isa : {Isa::generic, Isa::avx2, Isa::avx512}) {
    if (cpu::isa_supported(isa)) {
      EXPECT_EQ(cpu::resolve_isa(isa), isa);
      EXPECT_NO_THROW(cpu::ukernels_for(isa)) << cpu::to_string(isa);
      EXPECT_STREQ(cpu::covfast::choose_worker(isa).name, worker_name[int(isa)]);
      EXPECT_LE(isa, cpu::cpu_isa());
    } else {
      EXPECT_THROW(cpu::resolve_isa(isa), Unsupported);
      EXPECT_THROW(cpu::covfast::choose_worker(isa), Unsupported) << cpu::to_string(isa);
    }
  }
  const Isa auto_isa = cpu::resolve_isa(Isa::automatic);
  EXPECT_EQ(auto_isa, cpu::default_isa());
  EXPECT_STREQ(cpu::covfast::choose_worker(Isa::automatic).name, worker_name[int(auto_isa)]);
}

TEST(CpuFeatures, CoresAndThreads) {
  EXPECT_GE(hardware_threads(), 1);
  EXPECT_GE(cpu::physical_cores(), 1);
  EXPECT_LE(cpu::physical_cores(), hardware_threads());
  setenv("KAFEL_NUM_THREADS", "3", 1);
  EXPECT_EQ(default_threads(), 3);
  unsetenv("KAFEL_NUM_THREADS");
  EXPECT_EQ(default_threads(), hardware_threads());
}

// The nominal peak is exactly cores x FLOP/cycle x the clock that was read, and says where
// that clock came from; the peak fields hold the measured figures whenever there are some.
TEST(CpuDevice, NominalPeakComesFromTheClockThatWasRead) {
  const Device d = select_device("cpu");
  const cpu::CpuClock& clock = cpu::cpu_clock();
  EXPECT_EQ(d.clock_mhz, clock.mhz);
  EXPECT_FALSE(clock.source.empty());
  EXPECT_EQ(detail(d, "clock source"), clock.source);
  EXPECT_EQ(d.compute_units, hardware_threads());
  const double nominal =
      cpu::physical_cores() * cpu::nominal_f32_flops_per_cycle() * clock.mhz / 1000.0;
  if (clock.mhz > 0) {
    EXPECT_NE(detail(d, "nominal peak").find(format_num("%.1f GFLOP/s", nominal)),
              std::string::npos)
        << detail(d, "nominal peak");
  }
  const cpu::PeakMeasurement& m = cpu::machine_peak();
  if (m.f32 > 0) {
    EXPECT_EQ(d.peak_gflops_f32, m.f32);
    EXPECT_EQ(d.peak_gflops_f64, m.f64);
    EXPECT_FALSE(detail(d, "measured peak").empty());
  } else {
    EXPECT_DOUBLE_EQ(d.peak_gflops_f32, nominal);
    EXPECT_DOUBLE_EQ(d.peak_gflops_f64, nominal / 2);
  }
}

TEST(ThreadPool, ParallelPartsRunsEveryPartOnce) {
  for (int parts : {1, 2, 5, 64})
    for (int threads : {1, 2, 3, 8}) {
      std::vector<std::atomic<int>> runs(static_cast<std::size_t>(parts));
      std::atomic<int> bad_tid{0};
      parallel_parts(parts, threads, [&](int part, int tid) {
        runs[part].fetch_add(1);
        if (tid < 0 || tid >= threads) bad_tid.fetch_add(1);
      });
      for (int p = 0; p < parts; ++p) EXPECT_EQ(runs[p].load(), 1) << parts << " " << threads;
      EXPECT_EQ(bad_tid.load(), 0);
    }
  parallel_parts(0, 4, [](int, int) { FAIL() << "no parts, no calls"; });
}

// Covariance merges its partial sums by part, not by thread: calls from several user threads
// (all but one find the pool busy and run alone) give bit-identical results.
TEST(ThreadPool, CovarianceIsTheSameWhenThePoolIsBusy) {
  const std::int64_t c = 10, n = 300007;
  std::vector<float> x(static_cast<std::size_t>(c * n));
  generate_signal(SignalKind::Offset, x.data(), c, n, SampleLayout::Planar, 5);
  const SamplesView v{x.data(), c, n};
  const Device dev = select_device("cpu");
  for (const char* kernel : {"cpu.fast", "cpu.reference"}) {
    CovOptions o;
    o.kernel = kernel;
    if (o.kernel == "cpu.fast") o.params = {{"THREADS", 3}};
    const CovResult alone = covariance(dev, v, o);
    std::vector<CovResult> got(3);
    std::vector<std::thread> callers;
    for (std::size_t i = 0; i < got.size(); ++i)
      callers.emplace_back([&, i] { got[i] = covariance(dev, v, o); });
    for (auto& t : callers) t.join();
    for (const CovResult& r : got) {
      ASSERT_EQ(r.cov.size(), alone.cov.size());
      EXPECT_EQ(std::memcmp(r.cov.data(), alone.cov.data(), r.cov.size() * sizeof(double)), 0)
          << kernel;
      EXPECT_EQ(std::memcmp(r.mean.data(), alone.mean.data(), r.mean.size() * sizeof(double)), 0)
          << kernel;
    }
  }
}

}  // namespace
}  // namespace kafel
