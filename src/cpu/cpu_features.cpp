// CPU feature detection (cpuid through the compiler's builtins), cache sizes from the OS, and
// the environment overrides KAFEL_CPU_ISA / KAFEL_NUM_THREADS.
#include "cpu/cpu_features.hpp"

#if defined(__linux__)
#include <sched.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "kafel/error.hpp"

namespace kafel::cpu {

namespace {

bool cpu_has_avx512() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

bool cpu_has_avx2() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

// "32K", "1024K", "32M" as written in /sys/.../cache/index*/size.
std::int64_t parse_size(const std::string& s) {
  if (s.empty()) return 0;
  std::int64_t v = std::strtoll(s.c_str(), nullptr, 10);
  const char unit = s.back();
  if (unit == 'K') v *= 1024;
  if (unit == 'M') v *= 1024 * 1024;
  return v;
}

std::string read_line(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

CacheSizes read_cache_sizes() {
  CacheSizes c;
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    const std::string level = read_line(dir + "level"), type = read_line(dir + "type");
    if (level.empty()) break;
    const std::int64_t size = parse_size(read_line(dir + "size"));
    if (level == "1" && type == "Data") c.l1d = size;
    if (level == "2") c.l2 = size;
    if (level == "3") c.l3 = size;
  }
#if defined(__linux__) && defined(_SC_LEVEL1_DCACHE_SIZE)
  // sysconf is the fallback only: under some hypervisors it reports the host's L3 (10x too big).
  if (c.l1d <= 0) c.l1d = std::max<long>(0, sysconf(_SC_LEVEL1_DCACHE_SIZE));
  if (c.l2 <= 0) c.l2 = std::max<long>(0, sysconf(_SC_LEVEL2_CACHE_SIZE));
  if (c.l3 <= 0) c.l3 = std::max<long>(0, sysconf(_SC_LEVEL3_CACHE_SIZE));
#endif
  return c;
}

}  // namespace

std::string_view to_string(Isa isa) {
  switch (isa) {
    case Isa::automatic:
      return "auto";
    case Isa::generic:
      return "generic";
    case Isa::avx2:
      return "avx2";
    case Isa::avx512:
      return "avx512";
  }
  return "?";
}

Isa parse_isa(std::string_view s) {
  for (Isa i : {Isa::automatic, Isa::generic, Isa::avx2, Isa::avx512})
    if (s == to_string(i)) return i;
  throw InvalidArgument("unknown CPU ISA '" + std::string(s) +
                        "' (expected auto, generic, avx2 or avx512)");
}

bool isa_supported(Isa isa) {
  static const bool avx512 = cpu_has_avx512(), avx2 = cpu_has_avx2();
  switch (isa) {
    case Isa::automatic:
    case Isa::generic:
      return true;
#if defined(__x86_64__)
    case Isa::avx2:
      return avx2;
    case Isa::avx512:
      return avx512;
#else
    default:
      return false;
#endif
  }
  return false;
}

Isa default_isa() {
  static const Isa isa = [] {
    Isa best = isa_supported(Isa::avx512) ? Isa::avx512
               : isa_supported(Isa::avx2) ? Isa::avx2
                                          : Isa::generic;
    if (const char* env = std::getenv("KAFEL_CPU_ISA"); env && *env) {
      const Isa forced = parse_isa(env);
      if (forced != Isa::automatic) best = std::min(best, forced);
    }
    return best;
  }();
  return isa;
}

Isa resolve_isa(Isa requested) {
  if (requested == Isa::automatic) return default_isa();
  if (!isa_supported(requested))
    throw Unsupported("this CPU cannot run the " + std::string(to_string(requested)) +
                      " micro-kernels");
  return requested;
}

const CacheSizes& cache_sizes() {
  static const CacheSizes c = read_cache_sizes();
  return c;
}

int hardware_threads() {
  static const int n = [] {
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }();
  return n;
}

int default_threads() {
  if (const char* env = std::getenv("KAFEL_NUM_THREADS"); env && *env) {
    const long v = std::strtol(env, nullptr, 10);
    if (v > 0) return static_cast<int>(std::min<long>(v, 1024));
  }
  return hardware_threads();
}

}  // namespace kafel::cpu
