// Describes the host CPU as a kafel Device: name, cores, clock, caches and a peak estimate.
// Peak = cores x FLOP/cycle of the widest FMA unit x clock; the clock is the OS's nominal one.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "cpu/cpu_device.hpp"

namespace kafel::cpu {
namespace {

std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string v = line.substr(colon + 1);
    const auto b = v.find_first_not_of(" \t");
    return b == std::string::npos ? std::string() : v.substr(b);
  }
  return {};
}

std::uint64_t physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? std::uint64_t(pages) * std::uint64_t(size) : 0;
}

// Cache size of `level` from sysfs (what the hypervisor really exposes), else sysconf.
std::uint64_t cache_size(int level, int sysconf_name) {
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    std::ifstream lvl(dir + "/level"), type(dir + "/type"), size(dir + "/size");
    int l = 0;
    std::string t, s;
    if (!(lvl >> l) || !(type >> t) || !(size >> s)) break;
    if (l != level || t == "Instruction") continue;
    std::uint64_t v = std::strtoull(s.c_str(), nullptr, 10);
    if (s.back() == 'K') v <<= 10;
    if (s.back() == 'M') v <<= 20;
    if (v) return v;
  }
  const long v = sysconf(sysconf_name);
  return v > 0 ? std::uint64_t(v) : 0;
}

}  // namespace

SimdLevel simd_level() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
    return SimdLevel::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return SimdLevel::Avx2;
#endif
  return SimdLevel::Generic;
}

const char* to_string(SimdLevel s) {
  switch (s) {
    case SimdLevel::Avx512:
      return "avx512";
    case SimdLevel::Avx2:
      return "avx2";
    case SimdLevel::Generic:
      return "generic";
  }
  return "generic";
}

Device cpu_device() {
  Device d;
  d.id = "cpu";
  d.backend = "cpu";
  d.name = cpuinfo_field("model name");
  if (d.name.empty()) d.name = "host CPU";
  d.vendor = cpuinfo_field("vendor_id");
  d.driver = "native";
  d.compute_units = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  try {
    d.clock_mhz = std::stod(cpuinfo_field("cpu MHz"));
  } catch (const std::exception&) {
    d.clock_mhz = 0;
  }
  d.global_memory = physical_memory();
  d.local_memory = cache_size(1, _SC_LEVEL1_DCACHE_SIZE);
  d.cache_bytes = cache_size(3, _SC_LEVEL3_CACHE_SIZE);
  if (!d.cache_bytes) d.cache_bytes = cache_size(2, _SC_LEVEL2_CACHE_SIZE);
  // FLOP per cycle per core in f32: two 256-bit FMA pipes (AVX2; AVX-512 on Zen 4 and
  // one-port Intel parts also retire 16 f32 FMAs per cycle), SSE otherwise.
  const SimdLevel simd = simd_level();
  const double f32_per_cycle = simd == SimdLevel::Generic ? 8.0 : 32.0;
  d.peak_gflops_f32 = d.compute_units * f32_per_cycle * d.clock_mhz / 1000.0;
  d.peak_gflops_f64 = d.peak_gflops_f32 / 2.0;
  d.details = {{"simd", to_string(simd)},
               {"l1d", std::to_string(cache_size(1, _SC_LEVEL1_DCACHE_SIZE))},
               {"l2", std::to_string(cache_size(2, _SC_LEVEL2_CACHE_SIZE))},
               {"l3", std::to_string(cache_size(3, _SC_LEVEL3_CACHE_SIZE))},
               {"peak", "estimate from the nominal clock; turbo may exceed it"}};
  return d;
}

}  // namespace kafel::cpu
