// The one place that knows this CPU: SIMD instruction sets (and which ones every CPU kernel may
// use), caches, usable cores, clock and /proc/cpuinfo; KAFEL_CPU_ISA / KAFEL_NUM_THREADS apply.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kafel::cpu {

// Kernel families, weakest first. The numeric values are the `isa` parameter of cpu.packed and
// the `ISA` parameter of cpu.fast.
enum class Isa : int { automatic = 0, generic = 1, avx2 = 2, avx512 = 3 };

std::string_view to_string(Isa isa);
// "generic", "avx2", "avx512" or "auto"; throws InvalidArgument otherwise.
Isa parse_isa(std::string_view s);

// The widest ISA the CPU itself has (avx512: avx512f/bw/dq/vl + fma; avx2: avx2 + fma), even
// where this build has no kernels for it: it describes the hardware (peak estimate, devices).
Isa cpu_isa();
// True when the CPU has `isa` and this build compiled kernels for it. The GEMM micro-kernels
// and the covariance workers both ask this, so they always agree on what may run.
bool isa_supported(Isa isa);
// The best supported ISA, lowered to $KAFEL_CPU_ISA when that is set.
Isa default_isa();
// Resolves Isa::automatic to default_isa(); throws Unsupported for an ISA this CPU lacks.
Isa resolve_isa(Isa requested);

// Data cache sizes in bytes of one core (L1d, L2) and of the whole chip (L3); 0 when unknown.
struct CacheSizes {
  std::int64_t l1d = 0, l2 = 0, l3 = 0;
};
// Read once from /sys/devices/system/cpu/cpu0/cache, else sysconf, else left 0.
const CacheSizes& cache_sizes();

// Physical cores among those CPUs (SMT siblings share one core's FMA units; at least 1).
int physical_cores();

// The clock the peak estimate uses, in MHz (0 when none could be read), and where it came
// from: the highest cpufreq cpuinfo_max_freq of the usable CPUs, else the highest "cpu MHz" of
// /proc/cpuinfo (the current clock, so boost can exceed it). Read once.
struct CpuClock {
  double mhz = 0;
  std::string source;
};
const CpuClock& cpu_clock();

// Vendor string and CPUID display family / model (as /proc/cpuinfo prints them; 0 off x86).
struct CpuIdent {
  std::string vendor;
  int family = 0, model = 0;
};
const CpuIdent& cpu_ident();

// Micro-architectures whose micro-kernels, blocking or peak differ. zen: Zen 1-3 (AVX2, two
// 256-bit FMA pipes from Zen 2 on); zen4: AVX-512 executed as two 256-bit halves; zen5:
// full-width AVX-512 (two 512-bit FMA pipes); intel: any Intel core; other: anything else.
enum class Uarch : int { other, zen, zen4, zen5, intel };
std::string_view to_string(Uarch u);
Uarch cpu_uarch();

// Nominal f32 FLOP per cycle of one core's FMA units (2 per multiply-add): what the peak
// estimate assumes before anything is measured.
double nominal_f32_flops_per_cycle();

// AVX-512 dot-product extensions, true only when the CPU has them and AVX-512 kernels are
// supported here (isa_supported(Isa::avx512)) and this build compiled kernels for them.
bool cpu_has_avx512_bf16();  // vdpbf16ps
bool cpu_has_avx512_vnni();  // vpdpbusd
// Whether bf16 GEMMs should run on vdpbf16ps rather than on bf16 widened to f32 for the f32
// FMA: true where the CPU has AVX512_BF16 and vdpbf16ps out-runs the FMA pipes (AMD Zen 4 / 5:
// 2x the f32 rate), false on Intel cores (an Emerald Rapids Xeon issues one vdpbf16ps every
// other cycle: 86 against 174 GFLOP/s per core for two 512-bit FMAs, docs/cpu.md).
bool cpu_bf16_dot_pays();
// AMX tiles (tdpbf16ps, tdpbssd): the CPU has them, the OS lets this process use them (asked
// on the first call) and this build compiled the AMX micro-kernels (ukernel_amx.cpp).
bool cpu_has_amx();

// One usable logical CPU of every physical core (the first of its SMT siblings), ascending.
const std::vector<int>& one_cpu_per_core();

// The first value of `key` in /proc/cpuinfo ("model name", "vendor_id"); empty when absent.
std::string cpuinfo_field(std::string_view key);

}  // namespace kafel::cpu
