// CPU feature detection (cpuid through the compiler's builtins), caches, cores and clock from
// the OS, and the environment overrides KAFEL_CPU_ISA / KAFEL_NUM_THREADS.
#include "cpu/cpu_features.hpp"

#include "core/thread_pool.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__linux__)
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <thread>
#include <utility>
#include <vector>

#include "kafel/error.hpp"

namespace kafel::cpu {

namespace {

// The rules every CPU kernel follows. AVX-512 needs BW/DQ/VL as well as F because the
// *_avx512.cpp files are compiled with all four (src/cpu/CMakeLists.txt), so the compiler may
// use any of them anywhere in those files.
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

// CPUID leaf `leaf`, sub-leaf `sub`: {eax, ebx, ecx, edx}, all 0 when absent (or off x86).
struct CpuidRegs {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
};
CpuidRegs cpuid(unsigned leaf, unsigned sub) {
  CpuidRegs r;
#if defined(__x86_64__) || defined(__i386__)
  if (__get_cpuid_max(0, nullptr) >= leaf) __cpuid_count(leaf, sub, r.eax, r.ebx, r.ecx, r.edx);
#else
  (void)leaf;
  (void)sub;
#endif
  return r;
}

CpuIdent read_ident() {
  CpuIdent id;
  const CpuidRegs v = cpuid(0, 0);
  char vendor[13] = {};
  for (int i = 0; i < 4; ++i) {
    vendor[i] = char(v.ebx >> (8 * i));
    vendor[4 + i] = char(v.edx >> (8 * i));
    vendor[8 + i] = char(v.ecx >> (8 * i));
  }
  id.vendor = vendor;
  // Display family / model: the extended fields count only for family 15 (and 6 for model).
  const unsigned eax = cpuid(1, 0).eax;
  const int base_family = int(eax >> 8 & 0xf), base_model = int(eax >> 4 & 0xf);
  id.family = base_family == 15 ? base_family + int(eax >> 20 & 0xff) : base_family;
  id.model =
      base_family == 15 || base_family == 6 ? (int(eax >> 16 & 0xf) << 4) + base_model : base_model;
  return id;
}

// src/cpu/CMakeLists.txt defines this (for this file only) when it compiles the *_avx2.cpp and
// *_avx512.cpp files with their ISA flags; otherwise those files hold no kernels.
#if defined(KAFEL_CPU_X86_KERNELS)
constexpr bool kBuiltX86Kernels = true;
#else
constexpr bool kBuiltX86Kernels = false;
#endif

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

std::string cpu_dir(int cpu) {
  return "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/";
}

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// /proc/cpuinfo as (key, value) pairs in file order, read once: only "cpu MHz" changes, and
// one reading of it is all the clock estimate needs.
const std::vector<std::pair<std::string, std::string>>& cpuinfo() {
  static const auto entries = [] {
    std::vector<std::pair<std::string, std::string>> v;
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
      const auto colon = line.find(':');
      if (colon != std::string::npos)
        v.emplace_back(trim(line.substr(0, colon)), trim(line.substr(colon + 1)));
    }
    return v;
  }();
  return entries;
}

double to_double(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  return end != s.c_str() && v > 0 ? v : 0;
}

CpuClock read_clock() {
  const std::vector<int>& cpus = allowed_cpus();
  // cpufreq's cpuinfo_max_freq (kHz) is the highest clock the governor may pick, boost
  // included on most drivers. Absent under most hypervisors.
  CpuClock c;
  for (int cpu : cpus)
    c.mhz = std::max(c.mhz, to_double(read_line(cpu_dir(cpu) + "cpufreq/cpuinfo_max_freq")) / 1e3);
  if (c.mhz > 0) {
    c.source = "cpufreq cpuinfo_max_freq (maximum clock)";
    return c;
  }
  // /proc/cpuinfo's "cpu MHz" is a current clock (under KVM the nominal TSC rate); the cores
  // may boost above it, so a measured rate can exceed the peak estimated from it.
  int processor = -1;
  for (const auto& [key, value] : cpuinfo()) {
    if (key == "processor") processor = std::atoi(value.c_str());
    if (key == "cpu MHz" && std::binary_search(cpus.begin(), cpus.end(), processor))
      c.mhz = std::max(c.mhz, to_double(value));
  }
  c.source = c.mhz > 0 ? "/proc/cpuinfo \"cpu MHz\" (current clock; boost may be higher)"
                       : "unknown (no cpufreq, no \"cpu MHz\" in /proc/cpuinfo)";
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

Isa cpu_isa() {
  static const Isa isa = cpu_has_avx512() ? Isa::avx512 : cpu_has_avx2() ? Isa::avx2 : Isa::generic;
  return isa;
}

bool isa_supported(Isa isa) {
  switch (isa) {
    case Isa::automatic:
    case Isa::generic:
      return true;
    case Isa::avx2:
    case Isa::avx512:
      return kBuiltX86Kernels && cpu_isa() >= isa;
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
    throw Unsupported("this CPU cannot run the " + std::string(to_string(requested)) + " kernels" +
                      (kBuiltX86Kernels ? "" : " (not in this build)"));
  return requested;
}

const CpuIdent& cpu_ident() {
  static const CpuIdent id = read_ident();
  return id;
}

std::string_view to_string(Uarch u) {
  switch (u) {
    case Uarch::zen:
      return "zen";
    case Uarch::zen4:
      return "zen4";
    case Uarch::zen5:
      return "zen5";
    case Uarch::intel:
      return "intel";
    case Uarch::other:
      break;
  }
  return "other";
}

Uarch cpu_uarch() {
  static const Uarch u = [] {
    const CpuIdent& id = cpu_ident();
    if (id.vendor == "GenuineIntel") return Uarch::intel;
    if (id.vendor != "AuthenticAMD") return Uarch::other;
    // Family 0x19 is Zen 3 without AVX-512 and Zen 4 with it; 0x1a is Zen 5.
    if (id.family >= 0x1a) return Uarch::zen5;
    if (id.family == 0x19 && cpu_isa() == Isa::avx512) return Uarch::zen4;
    return id.family >= 0x17 ? Uarch::zen : Uarch::other;
  }();
  return u;
}

double nominal_f32_flops_per_cycle() {
  const Isa isa = cpu_isa();
  if (isa == Isa::generic) return 8.0;  // SSE: one 128-bit multiply and one add per cycle
  const CpuIdent& id = cpu_ident();
  // Zen 1 (family 0x17, models below 0x30) splits 256-bit FMAs over two 128-bit pipes.
  if (id.vendor == "AuthenticAMD" && id.family == 0x17 && id.model < 0x30) return 16.0;
  // Two 512-bit FMA pipes: Zen 5 and the Intel server cores with two AVX-512 FMA ports (the
  // one-port parts measure half of this; the measured peak is what "% peak" uses).
  if (isa == Isa::avx512 && cpu_uarch() != Uarch::zen4) return 64.0;
  return 32.0;  // two 256-bit FMA pipes (Zen 2-4, Intel AVX2 cores)
}

bool cpu_has_avx512_bf16() {
  static const bool yes =
      kBuiltX86Kernels && isa_supported(Isa::avx512) && (cpuid(7, 1).eax >> 5 & 1u);
  return yes;
}

bool cpu_bf16_dot_pays() {
  return cpu_has_avx512_bf16() && cpu_uarch() != Uarch::intel;
}

bool cpu_has_avx512_vnni() {
  static const bool yes =
      kBuiltX86Kernels && isa_supported(Isa::avx512) && (cpuid(7, 0).ecx >> 11 & 1u);
  return yes;
}

namespace {

// AMX needs the CPU's tile units (CPUID 7.0 EDX: AMX-BF16 bit 22, AMX-TILE 24, AMX-INT8 25),
// the OS's tile state in XCR0 (bits 17, 18) and, on Linux, this process's permission to use
// the 8 KB tile data (arch_prctl ARCH_REQ_XCOMP_PERM; without it the first tile instruction
// raises SIGILL). Asked for once, process-wide.
bool detect_amx() {
#if defined(KAFEL_CPU_AMX_KERNELS) && defined(__x86_64__) && defined(__linux__)
  const CpuidRegs r = cpuid(7, 0);
  const bool units = (r.edx >> 22 & 1u) && (r.edx >> 24 & 1u) && (r.edx >> 25 & 1u);
  if (!units || !(cpuid(1, 0).ecx >> 27 & 1u)) return false;  // OSXSAVE: xgetbv is allowed
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  if ((lo >> 17 & 3u) != 3u) return false;
  constexpr long kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

}  // namespace

bool cpu_has_amx() {
  static const bool yes = kBuiltX86Kernels && isa_supported(Isa::avx512) && detect_amx();
  return yes;
}

const CacheSizes& cache_sizes() {
  static const CacheSizes c = read_cache_sizes();
  return c;
}

const std::vector<int>& one_cpu_per_core() {
  static const std::vector<int> cpus = [] {
    // One entry per core, keyed by the list of its SMT siblings (core_cpus_list on newer
    // kernels); allowed_cpus() is ascending, so the first CPU seen of each core is kept.
    std::map<std::string, int> cores;
    for (int cpu : allowed_cpus()) {
      std::string s = read_line(cpu_dir(cpu) + "topology/core_cpus_list");
      if (s.empty()) s = read_line(cpu_dir(cpu) + "topology/thread_siblings_list");
      cores.emplace(s.empty() ? "cpu" + std::to_string(cpu) : s, cpu);
    }
    std::vector<int> v;
    for (const auto& entry : cores) v.push_back(entry.second);
    std::sort(v.begin(), v.end());
    if (v.empty()) v.push_back(allowed_cpus().front());
    return v;
  }();
  return cpus;
}

int physical_cores() {
  return static_cast<int>(one_cpu_per_core().size());
}

const CpuClock& cpu_clock() {
  static const CpuClock c = read_clock();
  return c;
}

std::string cpuinfo_field(std::string_view key) {
  for (const auto& [k, value] : cpuinfo())
    if (k == key) return value;
  return {};
}

}  // namespace kafel::cpu
