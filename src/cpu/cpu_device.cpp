// Describes the host CPU as a kafel Device. Peak = physical cores x FLOP/cycle of the widest
// FMA unit x the clock cpu_features read; `details` says where that clock came from.
#include "cpu/cpu_device.hpp"

#include <unistd.h>

#include <string>

#include "core/registry.hpp"
#include "core/thread_pool.hpp"
#include "kafel/bench.hpp"
#include "cpu/cpu_features.hpp"
#include "kafel/error.hpp"

namespace kafel::cpu {
namespace {

std::uint64_t physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? std::uint64_t(pages) * std::uint64_t(size) : 0;
}

}  // namespace

Device cpu_device() {
  Device d;
  d.id = "cpu";
  d.backend = "cpu";
  d.name = cpuinfo_field("model name");
  if (d.name.empty()) d.name = "host CPU";
  d.vendor = cpuinfo_field("vendor_id");
  d.driver = "native";
  d.compute_units = hardware_threads();
  const CpuClock& clock = cpu_clock();
  d.clock_mhz = clock.mhz;
  d.global_memory = physical_memory();
  const CacheSizes& cache = cache_sizes();
  d.local_memory = static_cast<std::uint64_t>(cache.l1d);
  d.cache_bytes = static_cast<std::uint64_t>(cache.l3 ? cache.l3 : cache.l2);
  // f32 FLOP per cycle per core: two 256-bit FMA pipes with AVX2 (AVX-512 on Zen 4 and on
  // one-FMA-port Intel parts also retires 16 f32 FMAs per cycle), SSE otherwise. Only physical
  // cores count: SMT siblings share the FMA pipes. Intel parts with two AVX-512 FMA ports
  // reach twice this figure.
  const Isa isa = cpu_isa();
  const double f32_per_cycle = isa == Isa::generic ? 8.0 : 32.0;
  const int cores = physical_cores();
  d.peak_gflops_f32 = cores * f32_per_cycle * clock.mhz / 1000.0;
  d.peak_gflops_f64 = d.peak_gflops_f32 / 2.0;
  if (isa_supported(Isa::avx2)) d.caps |= Cap::avx2;
  if (isa_supported(Isa::avx512)) d.caps |= Cap::avx512;
  std::string simd(to_string(isa));
  try {
    if (default_isa() != isa)
      simd += " (kernels use " + std::string(to_string(default_isa())) + ")";
  } catch (const InvalidArgument& e) {  // a bad $KAFEL_CPU_ISA fails the kernels, not the listing
    simd += std::string(" ($KAFEL_CPU_ISA: ") + e.what() + ")";
  }
  d.details = {
      {"simd", simd},
      {"l1d", std::to_string(cache.l1d)},
      {"l2", std::to_string(cache.l2)},
      {"l3", std::to_string(cache.l3)},
      {"clock source", clock.source},
      {"peak", clock.mhz > 0
                   ? std::to_string(cores) + " cores x " + format_num("%.0f", f32_per_cycle) +
                         " f32 FLOP/cycle x " + format_num("%.0f MHz", clock.mhz) + " (f64: half)"
                   : "unknown (no clock)"}};
  return d;
}

namespace {
const Register registered{Backend{"cpu", 0, [] { return std::vector<Device>{cpu_device()}; }}};
}  // namespace

}  // namespace kafel::cpu
