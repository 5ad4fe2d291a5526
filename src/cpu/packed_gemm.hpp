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
};

// The packed format cpu.packed uses for inputs stored as `storage` on `isa` (resolved): the
// dot-product formats for bf16 (as `bf16` says) and i8 where the ISA's micro-kernel set has
// them, else the compute type (f32, f64, u32). Throws Unsupported for Bf16Path::dot on an ISA
// without a bf16-pair micro-kernel.
Format packed_format(Isa isa, DType storage, Bf16Path bf16 = Bf16Path::automatic);
// "" when `isa` (resolved) can run bf16 inputs on `path`, else why not (BF16=dot where its
// micro-kernel set has no bf16-pair kernel).
std::string bf16_path_refusal(Isa isa, Bf16Path path);

// C = alpha op(A) op(B) + beta C on normalised row-major operands, any type kafel has.
void packed_gemm(const GemmArgs& args, const PackedOptions& opt = {});

}  // namespace kafel::cpu
