// Which SIMD instruction sets this CPU has, which one the packed GEMM uses, and cache sizes.
// Detection happens once; KAFEL_CPU_ISA (or the kernel parameter `isa`) can force a weaker ISA.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kafel::cpu {

// Micro-kernel families, weakest first. The numeric values are the `isa` kernel parameter.
enum class Isa : int { automatic = 0, generic = 1, avx2 = 2, avx512 = 3 };

std::string_view to_string(Isa isa);
// "generic", "avx2", "avx512" or "auto"; throws InvalidArgument otherwise.
Isa parse_isa(std::string_view s);

// True when the CPU (and this build) can run the micro-kernels of `isa`.
bool isa_supported(Isa isa);
// The best ISA of this CPU, lowered to $KAFEL_CPU_ISA when that is set.
Isa default_isa();
// Resolves Isa::automatic to default_isa(); throws Unsupported for an ISA this CPU lacks.
Isa resolve_isa(Isa requested);

// Data cache sizes in bytes of one core (L1d, L2) and of the whole chip (L3); 0 when unknown.
struct CacheSizes {
  std::int64_t l1d = 0, l2 = 0, l3 = 0;
};
// Read once from /sys/devices/system/cpu/cpu0/cache, else sysconf, else left 0.
const CacheSizes& cache_sizes();

// Threads the packed GEMM uses by default: $KAFEL_NUM_THREADS when set (> 0), else all cores.
int default_threads();
// Cores the OS lets this process use (at least 1).
int hardware_threads();

}  // namespace kafel::cpu
