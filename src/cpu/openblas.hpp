// What the cpu.openblas baseline runs on this CPU: its version and the kernel set ("core") its
// run-time dispatch picked, and a warning where that set is for an older ISA than the CPU's.
#pragma once

#include <string>
#include <string_view>

#include "cpu/cpu_features.hpp"

namespace kafel::cpu {

struct OpenblasCore {
  std::string core;     // the kernel set's name ("Prescott"); empty when not built with OpenBLAS
  std::string text;     // "OpenBLAS 0.3.21, Prescott kernels"
  std::string warning;  // "" or why the baseline is slower than OpenBLAS can be, and the fix
};

// OpenBLAS chooses its kernels by CPU model when it is loaded, before kafel runs; a library older
// than the CPU falls back to a generic set (Debian's 0.3.21 runs its SSE3 "Prescott" kernels on
// an Emerald Rapids Xeon: sgemm at 64 GFLOP/s, 300 with OPENBLAS_CORETYPE=Cooperlake). The
// warning names the OPENBLAS_CORETYPE that selects its kernels for this CPU's ISA.
const OpenblasCore& openblas_core();

// The ISA an OpenBLAS x86 kernel set (a name of its DYNAMIC_ARCH table) is written for: avx512
// for SkylakeX / Cooperlake / SapphireRapids, avx2 for Haswell / Zen / Excavator, generic for
// every older (or unknown) name.
Isa openblas_core_isa(std::string_view core);

}  // namespace kafel::cpu
