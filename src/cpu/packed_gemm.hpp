// The BLIS-style CPU fast path: cache blocks (MC, KC, NC) around a register micro-kernel,
// operands packed into aligned panels, threads from a persistent pool. Kernel `cpu.packed`.
#pragma once

#include <cstdint>
#include <string>

#include "core/backend.hpp"
#include "cpu/cpu_features.hpp"
#include "cpu/ukernel.hpp"

namespace kafel::cpu {

// What bf16 inputs run on: automatic = the dot-product pairs where this ISA has a micro-kernel
// for them and, on AVX-512, vdpbf16ps pays (cpu_bf16_dot_pays); f32 = widened to f32 for the
// f32 micro-kernel; dot = the pairs (only where the ISA's set has them). Parameter BF16.
enum class Bf16Path : int { automatic = 0, f32 = 1, dot = 2 };

// Whether bf16 and i8 inputs run on AMX tiles: automatic = where the CPU has them (and BF16 is
// auto), off = never, on = always (refused where there are none). Parameter AMX.
enum class AmxUse : int { automatic = 0, off = 1, on = 2 };

struct PackedOptions {
  Isa isa = Isa::automatic;  // automatic: the best this CPU has (or $KAFEL_CPU_ISA)
  int threads = 0;           // 0: $KAFEL_NUM_THREADS or all cores, fewer for tiny problems
  std::int64_t kc = 0, mc = 0, nc = 0;  // 0: derived from the cache sizes (blocking.hpp)
  // Software prefetch distances of the micro-kernel in k steps (0 = off, -1 = the default of
  // this micro-architecture, prefetch_for in blocking.hpp): A's and B's panels.
  int prefetch_a = -1, prefetch_b = -1;
  // false: full MR-row panels of a row-major A whose values the micro-kernel computes in (f32,
  // f64, i32 as uint32) are read in place instead of packed; edge panels and transposed,
  // widened or grouped A are always packed.
  bool pack_a = false;
  Bf16Path bf16 = Bf16Path::automatic;
  AmxUse amx = AmxUse::automatic;
};

// The packed format cpu.packed uses for inputs stored as `storage` on `isa` (resolved): AMX
// tiles for bf16 and i8 where `amx` and the ISA's set allow, else the dot-product formats for
// bf16 (as `bf16` says) and i8 where the set has them, else the compute type (f32, f64, u32).
// Throws Unsupported where bf16_path_refusal or amx_refusal says no.
Format packed_format(Isa isa, DType storage, Bf16Path bf16 = Bf16Path::automatic,
                     AmxUse amx = AmxUse::automatic);
// "" when `isa` (resolved) can run bf16 inputs on `path`, else why not (BF16=dot where its
// micro-kernel set has no bf16-pair kernel).
std::string bf16_path_refusal(Isa isa, Bf16Path path);
// "" when `isa` (resolved) can honour `amx` with `bf16`, else why not (AMX=on without AMX
// micro-kernels in the set, or with BF16 asking for another path).
std::string amx_refusal(Isa isa, AmxUse amx, Bf16Path bf16 = Bf16Path::automatic);

// C = alpha op(A) op(B) + beta C on normalised row-major operands, any type kafel has.
void packed_gemm(const GemmArgs& args, const PackedOptions& opt = {});

}  // namespace kafel::cpu
