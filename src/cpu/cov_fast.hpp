// The fast one-pass CPU covariance: per-ISA range workers (AVX-512, AVX2, portable) and the
// driver that picks one by cpu_features' rules and runs it on the CPU thread pool.
#pragma once

#include <cstdint>

#include "core/cov_backend.hpp"
#include "cpu/cpu_features.hpp"

namespace kafel::cpu::covfast {

// What one worker needs; plain pointers only, so ISA-specific files instantiate no std code.
struct Job {
  const float* data = nullptr;
  std::int64_t stride = 0;
  std::int64_t channels = 0;
  std::int64_t padded = 0;  // channels rounded up to the ISA's tile size
  bool planar = true;
  const float* pilot = nullptr;      // per channel
  std::int64_t block = 0;            // samples per scratch block, a multiple of the lane count
  std::int64_t prefetch_blocks = 1;  // software prefetch this many blocks ahead (0: off)
  bool direct = true;  // planar, C a multiple of the tile: tiles read the rows in place
  // Scratch row stride in floats: block + 16, so the rows of a transposing (interleaved) fill
  // do not all fall into the same L1 set (a 4 KB stride would).
  std::int64_t ld = 0;
};

// Adds, over samples [n0, n1): sum[c] += sum(x_c - p_c); q[i*padded + j] += sum of products
// of shifted values (lower tiles, j <= i within the tile grid). Scratch: padded*ld floats,
// 64-byte aligned, zeroed by the caller (padding rows stay zero).
using RangeFn = void (*)(const Job& job, std::int64_t n0, std::int64_t n1, float* scratch,
                         double* sum, double* q);

// One ISA's worker: its vector width, its square tile of channel pairs and its range function
// (nullptr when this build has no such worker, e.g. AVX-512 on a non-x86 build).
struct Worker {
  const char* name;
  int lanes;
  int tile;
  RangeFn fn;
};

Worker worker_avx512();
Worker worker_avx2();
Worker worker_portable();
// The worker of `isa` after resolve_isa (automatic: the ISA the GEMM micro-kernels use too,
// $KAFEL_CPU_ISA included); Unsupported when this CPU or build lacks it.
Worker choose_worker(Isa isa);

// The one-pass moments with `threads` threads (0 = default_threads(): $KAFEL_NUM_THREADS or
// the usable cores) and `block` samples per block (0 = chosen from the channel count).
void fast_moments(const CovArgs& args, const Worker& worker, int threads, std::int64_t block,
                  std::int64_t prefetch_blocks, bool direct, CovMoments& out);

}  // namespace kafel::cpu::covfast
