// Cache block sizes (KC, MC, NC) of the packed GEMM, derived from the register tile of the ISA
// and the cache sizes the OS reports; parameters of the kernel may override each one.
#pragma once

#include <cstdint>

#include "cpu/cpu_features.hpp"
#include "cpu/ukernel.hpp"
#include "kafel/types.hpp"

namespace kafel::cpu {

// mr x nr: register tile. kc: depth of packed panels (an mr x kc panel of A stays in L1).
// nc: columns of a packed B block (kc x nc stays in the core's L2). mc: rows of a packed A
// block (mc x kc, shared by the threads, stays in L3). mc % mr == 0 and nc % nr == 0.
struct Blocking {
  int mr = 0, nr = 0;
  std::int64_t kc = 0, mc = 0, nc = 0;
};

// Block sizes for `isa` and packed format `f`. A non-zero kc/mc/nc overrides the derived value
// (rounded up to a multiple of mr / nr).
Blocking blocking_for(Isa isa, Format f, const CacheSizes& caches, std::int64_t kc = 0,
                      std::int64_t mc = 0, std::int64_t nc = 0);

// The micro-kernel's prefetch distances for `isa` and format `f` on this CPU's
// micro-architecture (what PFA / PFB = -1 of cpu.packed mean).
Prefetch prefetch_for(Isa isa, Format f);

}  // namespace kafel::cpu
