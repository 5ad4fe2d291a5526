// The fast one-pass CPU covariance: per-ISA range workers (AVX-512, AVX2, portable) and the
// threaded driver that picks one at run time and merges the threads' float64 partials.
#pragma once

#include <cstdint>

#include "core/cov_backend.hpp"

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

struct Isa {
  const char* name;
  int lanes;
  int tile;
  RangeFn fn;
};

Isa isa_avx512();
Isa isa_avx2();
Isa isa_portable();
// The best one this CPU supports (0 = auto), or 1 portable, 2 AVX2, 3 AVX-512 (Unsupported
// when the CPU lacks it).
Isa choose_isa(int which);

// The one-pass moments with `threads` threads (0 = all cores) and `block` samples per block
// (0 = chosen from the channel count).
void fast_moments(const CovArgs& args, const Isa& isa, int threads, std::int64_t block,
                  std::int64_t prefetch_blocks, bool direct, CovMoments& out);

}  // namespace kafel::cpu::covfast
